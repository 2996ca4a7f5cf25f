"""Kafka in, Kafka out, on a real standalone cluster and a real KRaft broker: the bundled capture
replayed into a topic gives the same outputs as the file run (read back with read_committed), the
running job shows its operators, checkpoints and counts in the web UI's REST API and to
Prometheus, and bad conditions end in one-line errors or dead letters, not hangs."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from ais_pipeline.config import SAMPLE_INPUT
from ais_pipeline.rules.lane import parse_line
from ais_pipeline.rules.records import Report
from tests.support.jobs import (
    ROOT,
    RUNNING_KEPT,
    RUNNING_LATE_TUMBLING,
    SAMPLE_SUMMARY,
    assert_same_outputs,
    run_oracle,
    sample_while_running,
)
from tests.support.kafka import (
    operator_metrics,
    read_topic,
    replay,
    rest,
    submit,
    wait_for_state,
    write_outputs,
)
from tests.support.servers import free_port

pytestmark = pytest.mark.integration

# The bundled sample's figures as the operators' metric counters name them.
SAMPLE_COUNTS = {k: v for k, v in SAMPLE_SUMMARY.items() if isinstance(v, int) and k not in ("late", "accounted_lines")}
SAMPLE_COUNTS["late_records_tumbling"] = SAMPLE_SUMMARY["late_records"]["tumbling"]
SAMPLE_COUNTS["dead_letter_incomplete_multipart"] = SAMPLE_SUMMARY["dead_letter"]["incomplete_multipart"]
# A running job that has read the sample: positions (and their late records) judged so far.
RUNNING_COUNTS = SAMPLE_COUNTS | {"positions_kept": RUNNING_KEPT, "late_records_tumbling": RUNNING_LATE_TUMBLING}


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("oracle")
    run_oracle(SAMPLE_INPUT, out)
    return out


@pytest.fixture
def cancel_afterwards(cluster: str) -> Iterator[list[str]]:
    jobs: list[str] = []
    yield jobs
    for job in jobs:
        if rest(cluster, f"/jobs/{job}")["state"] == "RUNNING":
            rest(cluster, f"/jobs/{job}?mode=cancel", method="PATCH")
            wait_for_state(cluster, job, {"CANCELED"}, timeout_s=60)


def test_bounded_kafka_run_on_the_cluster_equals_the_file_run(cluster: str, kafka: str, oracle: Path, tmp_path: Path):
    replay(kafka, "sample-bounded", SAMPLE_INPUT, 10000)
    job = submit(kafka, "sample-bounded", "bounded", "--bounded")
    assert wait_for_state(cluster, job, {"FINISHED"}) == "FINISHED"

    got = write_outputs(kafka, "bounded.", tmp_path)
    assert_same_outputs(tmp_path, oracle)
    assert len(got["positions"]) == 7294 and len(got["dead_letter"]) == 1
    assert len(got["late"]) == SAMPLE_SUMMARY["late_records"]["tumbling"]

    # Keys an upsert reader or a compacted topic can use.
    for key, value in got["positions"]:
        assert key == str(json.loads(value)["mmsi"])
    last: dict[str | None, int] = {}
    highest: dict[str | None, int] = {}
    for key, value in got["aggregates"]:
        agg = json.loads(value)
        window = f"{agg['window']}|{agg['window_seconds']}|{agg['slide_seconds']}|{agg['precision']}"
        assert key == f"{window}|{agg['cell']}|{agg['window_start']}"
        last[key] = agg["revision"]
        highest[key] = max(highest.get(key, 0), agg["revision"])
    assert last == highest  # the record a compacted topic keeps is the final aggregate
    assert [k for k, _ in got["dead_letter"]] == [None]


def test_running_job_shows_names_checkpoints_and_counts_in_the_web_ui_and_to_prometheus(
    cluster: str, kafka: str, oracle: Path, cancel_afterwards: list[str]
):
    replay(kafka, "sample-live", SAMPLE_INPUT, 10000)
    # The one incomplete multipart group is dead-lettered after a 5 s wall-clock wait (an
    # unbounded input never ends).
    job = submit(kafka, "sample-live", "live", "--multipart-timeout", "5")
    cancel_afterwards.append(job)
    wait_for_state(cluster, job, {"RUNNING"}, timeout_s=120)

    names = set(RUNNING_COUNTS) | {"duplicate_ratio", "dedup_keys_held", "late", "positions_arrived"}
    counts: dict[str, float] = {}
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        counts = operator_metrics(cluster, job, names)
        if all(counts.get(k) == v for k, v in RUNNING_COUNTS.items()):
            break
        time.sleep(2)
    assert {k: counts.get(k) for k in RUNNING_COUNTS} == {k: float(v) for k, v in RUNNING_COUNTS.items()}
    assert counts["positions_arrived"] == 7294  # kept, most of them waiting for the watermark
    assert counts["duplicate_ratio"] == 0.1081  # (881 + 3) / (7294 + 881 + 3), as summary.json
    assert counts["late"] == 0
    assert counts["dedup_keys_held"] > 6588  # vessels with a position, and some with static reports only

    overview = rest(cluster, f"/jobs/{job}")
    assert overview["state"] == "RUNNING"
    vertex_names = " | ".join(v["name"] for v in overview["vertices"])
    for operator in (
        "read Kafka sample-live",
        "batch lines",
        "plain sentences",
        "parse lines",
        "watermarks (per lane, following receivers)",
        "dedup by MMSI",
        "cell windows (keyed by cell)",
        "write Kafka live.positions",
        "write Kafka live.aggregates",
        "write Kafka live.dead_letter",
    ):
        assert operator in vertex_names

    # Exactly once: outputs become visible to read_committed readers when a checkpoint completes.
    positions: list[tuple[str | None, str]] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        positions = read_topic(kafka, "live.positions", timeout_s=10)
        if len(positions) >= RUNNING_KEPT:
            break
        time.sleep(3)
    canonical = lambda rows: sorted(json.dumps(r, sort_keys=True) for r in rows)  # noqa: E731
    running = sample_while_running().positions
    assert canonical(json.loads(v) for _, v in positions) == canonical(json.loads(p) for p in running)
    checkpoints = rest(cluster, f"/jobs/{job}/checkpoints")["counts"]
    assert checkpoints["completed"] >= 1

    # The Prometheus reporter of flink-conf/: each cluster process serves the first free port of
    # 9249-9259; the TaskManager's carries the job's operator metrics.
    scraped = prometheus_values(job, "flink_taskmanager_job_task_operator_positions_kept")
    assert sum(scraped) == RUNNING_KEPT


def prometheus_values(job: str, metric: str) -> list[float]:
    values: list[float] = []
    for port in range(9249, 9260):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
                text = resp.read().decode()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith(metric + "{") and f'job_id="{job}"' in line:
                values.append(float(line.rsplit(" ", 1)[1]))
    return values


def run_local(*flags: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "ais_pipeline.jobs.ais_traffic", "--source", "kafka", "--web-ui-port", "0", *flags]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_unreachable_broker_and_missing_topic_get_one_line_errors(kafka: str):
    started = time.monotonic()
    proc = run_local("--bootstrap-servers", f"127.0.0.1:{free_port()}", timeout=120)
    assert proc.returncode == 2
    error = proc.stderr.strip().splitlines()[-1]
    assert error.startswith("ais-pipeline: error: --bootstrap-servers (KAFKA_BOOTSTRAP_SERVERS): no Kafka broker")
    assert time.monotonic() - started < 60

    proc = run_local("--bootstrap-servers", kafka, "--topic", "no-such-topic", timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        f"ais-pipeline: error: --topic (KAFKA_TOPIC): topic 'no-such-topic' does not exist on {kafka}"
    )


def test_records_that_are_not_text_are_dead_lettered_and_tombstones_skipped(kafka: str, tmp_path: Path):
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": kafka})
    admin.create_topics([NewTopic("odd", num_partitions=1)])["odd"].result(10)
    line = next(x for x in SAMPLE_INPUT.read_text().splitlines() if isinstance(parse_line(x, "nmea"), Report))
    producer = Producer({"bootstrap.servers": kafka})
    for value in (line.encode(), b"\xff\xfe\x00\x01binary", None, b""):
        producer.produce("odd", value=value)
    assert producer.flush(10) == 0

    proc = run_local("--bootstrap-servers", kafka, "--topic", "odd", "--bounded", "--starting-offsets", "earliest")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = write_outputs(kafka, "ais.", tmp_path)
    dead = [json.loads(v) for _, v in out["dead_letter"]]
    assert [(d["reason"], d["raw"]) for d in dead] == [("not_text", "\ufffd\ufffd\x00\x01binary")]
    assert len(out["positions"]) == 1


def test_sasl_credentials_pass_through_from_a_properties_file_and_are_never_printed(sasl_kafka: str, tmp_path: Path):
    import pyflink

    from tests.support.servers import SASL_PASSWORD, SASL_USER, sasl_client_properties

    props = sasl_client_properties(tmp_path / "client.properties")
    cmd = [sys.executable, "-m", "ais_pipeline.cli", "replay", str(SAMPLE_INPUT), "--topic", "secured"]
    cmd += ["--bootstrap-servers", sasl_kafka, "--kafka-properties", str(props)]
    replayed = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert replayed.returncode == 0, replayed.stderr

    flags = ["--bootstrap-servers", sasl_kafka, "--topic", "secured", "--bounded", "--starting-offsets", "earliest"]
    proc = run_local(*flags, "--kafka-properties", str(props))
    assert proc.returncode == 0, proc.stderr[-3000:]
    conf = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}
    conf |= {"sasl.username": SASL_USER, "sasl.password": SASL_PASSWORD}
    assert len(read_topic(sasl_kafka, "ais.positions", conf=conf)) == 7294
    logs = Path(pyflink.__file__).parent / "log"
    for text in (proc.stdout, proc.stderr, *(p.read_text(errors="replace") for p in logs.glob("*.log"))):
        assert SASL_PASSWORD not in text

    props.write_text(props.read_text().replace(SASL_PASSWORD, "wrong"))
    refused = run_local(*flags, "--kafka-properties", str(props))
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines()[-1] == (
        f"ais-pipeline: error: --kafka-properties (KAFKA_PROPERTIES_FILE): the broker at {sasl_kafka} "
        "refused the client's credentials (Invalid username or password)"
    )


def test_a_local_bounded_kafka_run_gives_the_file_runs_summary(kafka: str, tmp_path: Path):
    replay(kafka, "sample-local", SAMPLE_INPUT, 10000)
    out = tmp_path / "summary-only"
    proc = run_local(
        "--bootstrap-servers", kafka, "--topic", "sample-local", "--bounded", "--starting-offsets", "earliest",
        "--output-topic-prefix", "local.", "--output", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert {k: summary[k] for k in SAMPLE_SUMMARY} == SAMPLE_SUMMARY
    assert "lines accounted for 10000 of 10000" in proc.stdout and f"summary in {out / 'summary.json'}" in proc.stdout
    assert sorted(p.name for p in out.iterdir()) == ["summary.json"]  # the outputs are the topics
    assert len(read_topic(kafka, "local.positions")) == SAMPLE_SUMMARY["positions_kept"]


@pytest.mark.parametrize("partitions", [2, 4])
def test_a_capture_replayed_into_several_partitions_keeps_every_multipart_group_whole(
    partitions: int, kafka: str, tmp_path: Path
):
    # The replay keys each line by its receiver, a later fragment by its group's first: a group is
    # never split across partitions, whichever lane (source subtask) reads them.
    topic = f"sample-partitions-{partitions}"
    replay(kafka, topic, SAMPLE_INPUT, 10000, partitions=partitions)
    out = tmp_path / "summary-only"
    proc = run_local(
        "--bootstrap-servers", kafka, "--topic", topic, "--bounded", "--starting-offsets", "earliest",
        "--output-topic-prefix", f"parts{partitions}.", "--output", str(out), "--parallelism", "2",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["static_kept"] == SAMPLE_SUMMARY["static_kept"] == 926
    assert summary["dead_letter"] == {"incomplete_multipart": 1}  # the file run's one
    assert summary["fragments_joined"] == SAMPLE_SUMMARY["fragments_joined"]
    assert summary["positions_kept"] == SAMPLE_SUMMARY["positions_kept"]


def test_a_local_bounded_kafka_run_on_taskmanagers_of_its_own_gives_the_file_runs_summary(kafka: str, tmp_path: Path):
    replay(kafka, "sample-taskmanagers", SAMPLE_INPUT, 10000, partitions=2)
    out = tmp_path / "summary-only"
    proc = run_local(
        "--bootstrap-servers", kafka, "--topic", "sample-taskmanagers", "--bounded", "--starting-offsets", "earliest",
        "--output-topic-prefix", "tms.", "--output", str(out), "--taskmanagers", "2", "--parallelism", "2",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    figures = ("lines", "positions_kept", "static_kept", "duplicates_exact", "fragments_joined", "dead_letter")
    assert {k: summary[k] for k in figures} == {k: SAMPLE_SUMMARY[k] for k in figures}
    assert len(read_topic(kafka, "tms.positions")) == SAMPLE_SUMMARY["positions_kept"]
