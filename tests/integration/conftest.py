"""Real components for the integration tests: a Kafka broker in KRaft mode (scripts/kafka.sh, from
Maven Central jars) on free ports, a standalone Flink cluster from the PyFlink package's own bin/
scripts (scripts/cluster.sh), and a PostgreSQL server (scripts/postgres.sh). Each starts once per
test session."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ais_pipeline.tools.ports import unused_port as free_port

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = ROOT / "scripts" / "cluster.sh"
KAFKA = ROOT / "scripts" / "kafka.sh"


@pytest.fixture(scope="session")
def cluster() -> Iterator[str]:
    """The REST address of a running standalone cluster (its web UI)."""
    started = subprocess.run(["bash", str(CLUSTER), "start"], capture_output=True, text=True, timeout=180)
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        yield started.stdout.strip().splitlines()[-1].removeprefix("cluster up: ")
    finally:
        subprocess.run(["bash", str(CLUSTER), "stop"], capture_output=True, timeout=120)


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


def _broker(tmp_path_factory: pytest.TempPathFactory, **settings: str) -> Iterator[Broker]:
    broker = Broker(tmp_path_factory.mktemp("kafka"), **settings)
    broker.run("start")
    try:
        yield broker
    finally:
        broker.run("clean")


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    yield from _broker(tmp_path_factory)


@pytest.fixture(scope="session")
def kafka(broker: Broker) -> str:
    """The bootstrap address of a running broker, with its data in a scratch directory."""
    return broker.bootstrap


SASL_USER, SASL_PASSWORD = "ais", "s3cret-for-the-test"


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


@pytest.fixture(scope="session")
def sasl_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A broker whose client listener takes only SASL/PLAIN with the user above."""
    for broker in _broker(tmp_path_factory, KAFKA_SASL_USERS=f"{SASL_USER}:{SASL_PASSWORD}"):
        yield broker.bootstrap


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
        with self.target("ais").connect() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.target(name)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    import shutil

    directory = ROOT / "build" / f"test-postgres-{os.getpid()}"
    shutil.rmtree(directory, ignore_errors=True)
    server = PostgresServer(directory)
    server.run("start")
    try:
        yield server
    finally:
        subprocess.run(["bash", str(POSTGRES), "stop"], capture_output=True, timeout=120, env=server.env)
        shutil.rmtree(directory, ignore_errors=True)


FAULT_FEED_COPIES = 5  # the bundled capture x5, shifted in time: 50,000 lines


@pytest.fixture(scope="session")
def feed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fault tests' feed (test_faults.py, test_postgres.py)."""
    import sys

    path = tmp_path_factory.mktemp("feed") / "feed50k.nmea"
    with path.open("w") as out:
        subprocess.run(
            [sys.executable, "-m", "ais_pipeline.tools.make_feed", "--copies", str(FAULT_FEED_COPIES)],
            stdout=out,
            check=True,
        )
    return path


@pytest.fixture(scope="session")
def oracle(feed: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The feed's uninterrupted outputs: the plain loop's."""
    from tests.flink.test_job import run_oracle

    out = tmp_path_factory.mktemp("oracle")
    run_oracle(feed, out)
    return out
