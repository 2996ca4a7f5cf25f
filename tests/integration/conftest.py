"""Real components for the integration tests: a Kafka broker in KRaft mode (scripts/kafka.sh, from
Maven Central jars) on free ports, and a standalone Flink cluster from the PyFlink package's own
bin/ scripts (scripts/cluster.sh). Each starts once per test session."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

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
