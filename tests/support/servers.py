"""The real servers of the integration tests, as the project's scripts start them: a Kafka broker
in KRaft mode (scripts/kafka.sh), a standalone Flink cluster from the PyFlink package's own bin/
(scripts/cluster.sh), a PostgreSQL server (scripts/postgres.sh), an MQTT broker
(scripts/mosquitto.sh). The fixtures that start them once
per test session are in tests/integration/conftest.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from ais_pipeline import postgres
from ais_pipeline.pipeline.ports import unused_port as free_port

ROOT = Path(__file__).resolve().parents[2]  # the checkout
SASL_USER, SASL_PASSWORD = "ais", "s3cret-for-the-test"


CLUSTER = ROOT / "scripts" / "cluster.sh"
# The cluster's TaskManagers, one slot each (flink-conf/workers).
TASKMANAGERS = len((ROOT / "flink-conf" / "workers").read_text().split())


KAFKA = ROOT / "scripts" / "kafka.sh"


class Broker:
    """One broker of scripts/kafka.sh: its address, and stop/start on the same data."""

    def __init__(self, data_dir: Path, **settings: str) -> None:
        self.env = dict(
            os.environ,
            KAFKA_PORT=str(free_port()),
            KAFKA_CONTROLLER_PORT=str(free_port()),
            KAFKA_DIR=str(data_dir),
            **settings,
        )
        self.bootstrap = f"127.0.0.1:{self.env['KAFKA_PORT']}"

    def run(self, command: str) -> None:
        done = subprocess.run(["bash", str(KAFKA), command], capture_output=True, text=True, timeout=300, env=self.env)
        assert done.returncode == 0, done.stdout + done.stderr


def sasl_client_properties(path: Path, password: str = SASL_PASSWORD) -> Path:
    """One standard client properties file for both clients: the Java keys for the job (the
    unshaded PlainLoginModule, as Kafka documents it), the librdkafka keys for the replay tool."""
    path.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="{SASL_USER}" password="{password}";\n'
        f"sasl.username={SASL_USER}\nsasl.password={password}\n"
    )
    return path


MOTO = ROOT / "scripts" / "moto.sh"


class MotoServer:
    """moto's server of scripts/moto.sh (Kinesis and DynamoDB) on a free port of 127.0.0.1, with a
    faults file the tests write (scripts/moto_server.py)."""

    def __init__(self, data_dir: Path) -> None:
        self.port = free_port()
        self.faults = data_dir / "faults.json"
        self.env = dict(os.environ, MOTO_PORT=str(self.port), MOTO_DIR=str(data_dir), MOTO_FAULTS=str(self.faults))
        self.endpoint = f"http://127.0.0.1:{self.port}"

    def run(self, command: str) -> None:
        done = subprocess.run(["bash", str(MOTO), command], capture_output=True, text=True, timeout=120, env=self.env)
        assert done.returncode == 0, done.stdout + done.stderr


MOSQUITTO = ROOT / "scripts" / "mosquitto.sh"


class MqttBroker:
    """The MQTT broker of scripts/mosquitto.sh (Debian's mosquitto) on a free port; stop/start
    drops every session (the broker keeps none on disk)."""

    def __init__(self, data_dir: Path) -> None:
        self.port = free_port()
        self.env = dict(os.environ, MQTT_PORT=str(self.port), MQTT_DIR=str(data_dir))

    def run(self, command: str) -> None:
        cmd = ["bash", str(MOSQUITTO), command]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=self.env)
        assert done.returncode == 0, done.stdout + done.stderr


POSTGRES = ROOT / "scripts" / "postgres.sh"


class PostgresServer:
    """The project's own PostgreSQL server (scripts/postgres.sh) on a scratch directory under
    build/ (the server runs as the user postgres when the tests run as root, and pytest's own
    directories are private to root) and a free port; one database per test."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.env = dict(os.environ, PG_DIR=str(directory), PG_PORT=str(self.port))

    def run(self, command: str) -> str:
        cmd = ["bash", str(POSTGRES), command]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=self.env)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    @property
    def password(self) -> str:
        return (self.directory / "password").read_text()

    def url(self, database: str) -> str:
        """The URL of one database, without the password (PGPASSWORD or a file gives it)."""
        return f"postgresql://ais@127.0.0.1:{self.port}/{database}"

    def target(self, database: str) -> Any:
        from ais_pipeline.postgres import parse_url

        return parse_url(self.url(database), environ={"PGPASSWORD": self.password})

    def create_database(self, name: str) -> Any:
        """A new, empty database (an earlier one of the name dropped); its :class:`Target`."""
        with postgres.connect(self.target("ais")) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.target(name)


FAULT_FEED_COPIES = 3  # the bundled capture x3, shifted in time: 30,000 lines
