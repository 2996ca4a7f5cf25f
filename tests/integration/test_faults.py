"""Failures lose nothing and duplicate nothing. Each test replays a 30,000-line feed (the bundled
capture x3, shifted in time) into Kafka, runs the job on the standalone cluster with exactly-once
sinks (checkpoints every 2 s), injects a failure mid-stream, lets the job recover, and compares
what read_committed readers see with the uninterrupted result (the plain pipeline, which the
bounded Kafka run equals; test_kafka.py): the same positions, static reports, final aggregates,
late records and dead letters, each exactly once, and every window's revisions 0, 1, 2, ...
without a gap or a repeat.

Recovery time is measured from the failure to the first checkpoint completed after it (each
completed checkpoint commits the sinks' transactions: the first new committed output) and
written to build/reliability/recovery.json.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.jobs import ROOT, assert_same_outputs
from tests.support.kafka import (
    FAULT_FEED_LINES,
    drain_once_read,
    replay_feed,
    rest,
    stop_with_savepoint,
    submit_bounded,
    wait_for_state,
    wait_until_midstream,
    wait_until_only_live_taskmanagers,
    write_outputs,
)
from tests.support.servers import CLUSTER, TASKMANAGERS, Broker, MotoServer

pytestmark = pytest.mark.integration
RESULTS = ROOT / "build" / "reliability" / "recovery.json"


@pytest.fixture(scope="module")
def recovery_times() -> Iterator[dict[str, float]]:
    times: dict[str, float] = {}
    yield times
    if times:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        previous = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        RESULTS.write_text(json.dumps(previous | times, indent=2) + "\n")


def first_commit_after(cluster: str, jobs: list[str], since_ms: int) -> float:
    """Seconds from ``since_ms`` to the first checkpoint completed after it among ``jobs``."""
    acks = []
    for job in jobs:
        history = rest(cluster, f"/jobs/{job}/checkpoints")["history"]
        acks += [c["latest_ack_timestamp"] for c in history if c["status"] == "COMPLETED"]
    later = [a for a in acks if a > since_ms]
    assert later, "no checkpoint completed after the failure"
    return round((min(later) - since_ms) / 1000, 1)


def restarts(cluster: str, job: str) -> int:
    return sum(1 for e in rest(cluster, f"/jobs/{job}/exceptions")["exceptionHistory"]["entries"])


def check_outputs(kafka: str, name: str, oracle: Path, tmp_path: Path) -> None:
    # Multisets of records: a record lost or written twice shows as a difference.
    write_outputs(kafka, f"{name}.", tmp_path / name)
    assert_same_outputs(tmp_path / name, oracle)


def test_taskmanager_killed_with_sigkill_restores_from_the_last_checkpoint(
    cluster: str, kafka: str, feed: Path, oracle: Path, tmp_path: Path, recovery_times: dict[str, float]
):
    replay_feed(kafka, "faults-kill", feed)
    job = submit_bounded(kafka, "faults-kill", "kill")
    wait_until_midstream(cluster, job)
    failed_at = int(time.time() * 1000)
    subprocess.run(["bash", str(CLUSTER), "kill-taskmanager"], check=True, capture_output=True)
    subprocess.run(["bash", str(CLUSTER), "add-taskmanager", str(TASKMANAGERS)], check=True, capture_output=True)
    assert wait_for_state(cluster, job, {"FINISHED"}, timeout_s=400) == "FINISHED"
    assert restarts(cluster, job) >= 1
    recovery_times["taskmanager killed (kill -9), new TaskManager started"] = first_commit_after(
        cluster, [job], failed_at
    )
    check_outputs(kafka, "kill", oracle, tmp_path)
    wait_until_only_live_taskmanagers(cluster)


# (parallelism after the restore, state backend before, after): RocksDB's savepoint restored on
# RocksDB, and a savepoint of the heap backend restored on RocksDB, as a job whose fleet outgrew
# the heap moves (Flink's canonical savepoint format is the same for every backend), each at a
# parallelism of its own. The heap backend's own restores: the other tests of this module.
@pytest.mark.parametrize(
    ("parallelism", "before", "after"),
    [pytest.param(1, "rocksdb", "rocksdb", marks=pytest.mark.slow), (2, "hashmap", "rocksdb")],
)
def test_stop_with_savepoint_and_start_again_from_it(
    parallelism: int,
    before: str,
    after: str,
    cluster: str,
    kafka: str,
    feed: Path,
    oracle: Path,
    tmp_path: Path,
    recovery_times: dict[str, float],
):
    name = f"savepoint-p{parallelism}-{before}-{after}"
    replay_feed(kafka, name, feed)
    job = submit_bounded(kafka, name, name, "--state-backend", before)
    wait_until_midstream(cluster, job)
    stopped_at = int(time.time() * 1000)
    location = stop_with_savepoint(cluster, job, tmp_path / "sp", drain=False)
    wait_for_state(cluster, job, {"FINISHED"}, timeout_s=60)
    # The same job file at another parallelism: every stateful operator has a stable uid.
    flags = ("--parallelism", str(parallelism), "--state-backend", after)
    restored = submit_bounded(kafka, name, name, *flags, run_args=f"-s {location}")
    drain_once_read(cluster, restored, FAULT_FEED_LINES, tmp_path / "final")
    recovery_times[f"stop with savepoint on {before}, started again on {after} at parallelism {parallelism}"] = (
        first_commit_after(cluster, [restored], stopped_at)
    )
    check_outputs(kafka, name, oracle, tmp_path)


def test_kafka_broker_restarted_while_the_job_runs(
    cluster: str, broker: Broker, feed: Path, oracle: Path, tmp_path: Path, recovery_times: dict[str, float]
):
    kafka = broker.bootstrap
    replay_feed(kafka, "faults-broker", feed)
    job = submit_bounded(kafka, "faults-broker", "broker")
    wait_until_midstream(cluster, job)
    failed_at = int(time.time() * 1000)
    broker.run("stop")
    broker.run("start")
    assert wait_for_state(cluster, job, {"FINISHED"}, timeout_s=600) == "FINISHED"
    recovery_times["Kafka broker stopped and started again"] = first_commit_after(cluster, [job], failed_at)
    check_outputs(kafka, "broker", oracle, tmp_path)


def test_an_operator_that_throws_recovers_with_the_restart_strategy(
    cluster: str, kafka: str, feed: Path, oracle: Path, tmp_path: Path, recovery_times: dict[str, float]
):
    replay_feed(kafka, "faults-throw", feed)
    # A line of the third copy of the capture (the one at 20,000): the job throws on it once.
    text = feed.read_text().splitlines()[20_000].strip()
    marker = tmp_path / "failed-once"
    job = submit_bounded(kafka, "faults-throw", "throw", "--test-fail-once", f"{marker}={text}")
    assert wait_for_state(cluster, job, {"FINISHED"}, timeout_s=400) == "FINISHED"
    assert marker.exists(), "the injected failure did not happen"
    failed_at = int(marker.stat().st_mtime * 1000)
    entries = rest(cluster, f"/jobs/{job}/exceptions")["exceptionHistory"]["entries"]
    assert any("injected failure" in e["exceptionName"] + e["stacktrace"] for e in entries)
    recovery_times["operator threw on a record (restart strategy)"] = first_commit_after(cluster, [job], failed_at)
    check_outputs(kafka, "throw", oracle, tmp_path)


# Few cells and windows, and a gap cap of a second: moto takes a few hundred DynamoDB writes a
# second (test_kinesis.py), and with the default cap vessel time reaches a window after its end
# with nearly every position, each a firing and a write: 128,665 aggregates for 6,829 windows of
# this feed, against 6,253 for 3,434 with the cap at a second (vessel hours in DynamoDB are
# checked on the sample in test_kinesis.py).
KINESIS_WINDOWS = ("--geohash-precision", "2", "--slide-size", "120", "--max-gap", "1")


# The first two copies of the fault feed: the DynamoDB writes a replay repeats after the restart
# take moto minutes for the whole feed.
KINESIS_FEED_LINES = 20_000


@pytest.fixture(scope="module")
def kinesis_feed(feed: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from itertools import islice

    path = tmp_path_factory.mktemp("kinesis-feed") / "feed20k.nmea"
    with feed.open("rb") as src, path.open("wb") as out:
        out.writelines(islice(src, KINESIS_FEED_LINES))
    return path


@pytest.fixture(scope="module")
def kinesis_oracle(kinesis_feed: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.support.jobs import run_oracle

    out = tmp_path_factory.mktemp("kinesis-oracle")
    run_oracle(kinesis_feed, out, geohash_precision=2, slide_size_s=120, max_gap_s=1)
    return out


def test_taskmanager_killed_mid_kinesis_stream_leaves_the_dynamodb_table_as_an_uninterrupted_run(
    cluster: str,
    moto: MotoServer,
    kinesis_feed: Path,
    kinesis_oracle: Path,
    tmp_path: Path,
    recovery_times: dict[str, float],
):
    from ais_pipeline.files import read_lines, read_records
    from tests.support.kinesis import REGION, create_stream, expected_items, item_figures, put_lines, table_items

    create_stream(moto.endpoint, "faults-kill", 1)
    put_lines(moto.endpoint, "faults-kill", read_lines(kinesis_feed))
    out = tmp_path / "kill"
    cmd = ["bash", str(CLUSTER), "submit", "--source", "kinesis", "--stream", "faults-kill", "--region", REGION]
    cmd += ["--kinesis-endpoint", moto.endpoint, "--dynamodb-endpoint", moto.endpoint, "--starting-position"]
    cmd += ["trim-horizon", "--bounded", "--checkpoint-interval", "1", "--multipart-timeout", "600", *KINESIS_WINDOWS]
    cmd += ["--dynamodb-table", "faults_kill", "--dynamodb-create", "--output", str(out)]
    cmd += ["--output-format", "geoparquet"]  # bulk part files, committed with the checkpoints as JSON Lines are
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    job = proc.stdout.strip().splitlines()[-1].removeprefix("submitted job ")
    wait_until_midstream(cluster, job, KINESIS_FEED_LINES)
    failed_at = int(time.time() * 1000)
    subprocess.run(["bash", str(CLUSTER), "kill-taskmanager"], check=True, capture_output=True)
    subprocess.run(["bash", str(CLUSTER), "add-taskmanager", str(TASKMANAGERS)], check=True, capture_output=True)
    assert wait_for_state(cluster, job, {"FINISHED"}, timeout_s=600) == "FINISHED"
    assert restarts(cluster, job) >= 1
    recovery_times["Kinesis to DynamoDB: taskmanager killed (kill -9), new TaskManager started"] = first_commit_after(
        cluster, [job], failed_at
    )
    # Nothing missing, nothing counted twice: the outputs (GeoParquet rows) are the uninterrupted
    # run's, and the table holds exactly its final aggregates.
    assert not list(out.glob("*/part-*.jsonl")) and list(out.glob("positions/part-*.parquet"))
    assert_same_outputs(out, kinesis_oracle)
    items = table_items(moto.endpoint, "faults_kill")
    assert {k: item_figures(v) for k, v in items.items()} == expected_items(read_records(kinesis_oracle / "aggregates"))
    wait_until_only_live_taskmanagers(cluster)
