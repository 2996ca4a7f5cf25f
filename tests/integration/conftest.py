"""The real components of the integration tests, each started once per test session: a Kafka
broker in KRaft mode on free ports, a standalone Flink cluster from the PyFlink package's own
bin/ scripts, an MQTT broker (mosquitto), a PostgreSQL server and moto's server for Kinesis and
DynamoDB (tests/support/servers.py says how), and the fault tests' feed and its plain-loop result.

The AWS SDK's default credentials chain finds moto's test credentials in the environment: set
here, before any server or cluster starts, so that the job's JVMs (local, and the cluster's
TaskManagers) inherit them; never a real account's."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_EC2_METADATA_DISABLED="true")
os.environ.pop("AWS_PROFILE", None)
os.environ.pop("AWS_SESSION_TOKEN", None)

from tests.support.servers import (
    CLUSTER,
    FAULT_FEED_COPIES,
    POSTGRES,
    ROOT,
    SASL_PASSWORD,
    SASL_USER,
    Broker,
    MotoServer,
    MqttBroker,
    PostgresServer,
)


@pytest.fixture(scope="session")
def cluster() -> Iterator[str]:
    """The REST address of a running standalone cluster (its web UI)."""
    started = subprocess.run(["bash", str(CLUSTER), "start"], capture_output=True, text=True, timeout=180)
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        yield started.stdout.strip().splitlines()[-1].removeprefix("cluster up: ")
    finally:
        subprocess.run(["bash", str(CLUSTER), "stop"], capture_output=True, timeout=120)


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


@pytest.fixture(scope="session")
def sasl_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A broker whose client listener takes only SASL/PLAIN with the user above."""
    for broker in _broker(tmp_path_factory, KAFKA_SASL_USERS=f"{SASL_USER}:{SASL_PASSWORD}"):
        yield broker.bootstrap


@pytest.fixture(scope="session")
def mqtt_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MqttBroker]:
    """A running mosquitto on a free port of 127.0.0.1."""
    broker = MqttBroker(tmp_path_factory.mktemp("mosquitto"))
    broker.run("start")
    try:
        yield broker
    finally:
        broker.run("stop")


@pytest.fixture(scope="session")
def moto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MotoServer]:
    """moto's server for Kinesis and DynamoDB on a free port of 127.0.0.1."""
    server = MotoServer(tmp_path_factory.mktemp("moto"))
    server.run("start")
    try:
        yield server
    finally:
        server.run("stop")


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


@pytest.fixture(scope="session")
def feed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fault tests' feed (test_faults.py, test_postgres.py)."""
    import sys

    path = tmp_path_factory.mktemp("feed") / f"feed{FAULT_FEED_COPIES}0k.nmea"
    with path.open("w") as out:
        subprocess.run(
            [sys.executable, "-m", "bench.make_feed", "--copies", str(FAULT_FEED_COPIES)],
            stdout=out,
            check=True,
        )
    return path


@pytest.fixture(scope="session")
def oracle(feed: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The feed's uninterrupted outputs: the plain loop's."""
    from tests.support.jobs import run_oracle

    out = tmp_path_factory.mktemp("oracle")
    run_oracle(feed, out)
    return out
