"""Reading a job's Kafka outputs back as a consumer with read_committed would, and the REST calls
the Kafka tests share."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from ais_pipeline.config import OUTPUT_KEYS
from ais_pipeline.pipeline.progress import NO_WATERMARK
from tests.support.servers import CLUSTER, FAULT_FEED_COPIES, ROOT, TASKMANAGERS

FAULT_FEED_LINES = FAULT_FEED_COPIES * 10_000


def replay(kafka: str, topic: str, path: Path, lines: int, partitions: int = 1) -> None:
    """``ais-pipeline replay`` of a capture into a topic (made with ``partitions`` when it is
    missing); it must report every line."""
    cmd = [
        sys.executable,
        "-m",
        "ais_pipeline.cli",
        "replay",
        str(path),
        "--topic",
        topic,
        "--bootstrap-servers",
        kafka,
        "--partitions",
        str(partitions),
    ]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"replayed {lines} lines"), proc.stdout


def submit(kafka: str, topic: str, name: str, *flags: str, run_args: str = "") -> str:
    """Submit the Kafka job to the standalone cluster with ``flink run`` (``run_args`` are flink run
    options, such as ``-s <savepoint>``), reading from the earliest offsets as group ``name`` into
    topics ``<name>.*``; returns its job id."""
    cmd = ["bash", str(CLUSTER), "submit", "--source", "kafka", "--bootstrap-servers", kafka, "--topic", topic]
    cmd += ["--starting-offsets", "earliest", "--group-id", name, "--output-topic-prefix", f"{name}.", *flags]
    env = dict(os.environ, FLINK_RUN_ARGS=run_args)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    found = re.search(r"submitted job ([0-9a-f]{32})", proc.stdout)
    assert found, proc.stdout[-2000:]
    return found.group(1)


def read_topic(
    bootstrap: str, topic: str, timeout_s: float = 30, conf: dict[str, str] | None = None
) -> list[tuple[str | None, str]]:
    """Every committed record of a topic, partition by partition in offset order: (key, value)."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    consumer = Consumer(
        {
            **(conf or {}),
            "bootstrap.servers": bootstrap,
            "group.id": f"test-reader-{time.monotonic_ns()}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "fetch.wait.max.ms": 100,  # an empty fetch (the partition's end) answers at once
            "auto.offset.reset": "earliest",
            "log_level": 0,
        }
    )
    try:
        metadata = consumer.list_topics(topic, timeout=timeout_s)
        partitions = sorted(metadata.topics[topic].partitions)
        records: list[tuple[str | None, str]] = []
        for p in partitions:
            tp = TopicPartition(topic, p, 0)
            _, end = consumer.get_watermark_offsets(tp, timeout=timeout_s)
            if end <= 0:
                continue
            consumer.assign([tp])
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                if records and consumer.position([tp])[0].offset >= end:
                    break  # the last record read (a topic written without transactions)
                msg = consumer.poll(0.5)
                if msg is None:
                    continue
                if msg.error():
                    # With read_committed the partition ends at its last stable offset: records
                    # of transactions still open (or aborted) are never returned, and the
                    # transaction markers after the last record are read past.
                    if msg.error().code() == KafkaError._PARTITION_EOF:
                        break
                    continue
                key = msg.key()
                records.append((None if key is None else key.decode(), msg.value().decode()))
        return records
    finally:
        consumer.close()


def write_outputs(bootstrap: str, prefix: str, dest: Path) -> dict[str, list[tuple[str | None, str]]]:
    """Every output topic of a run, read back, and written as a file run lays out its outputs."""
    outputs = {}
    for name in OUTPUT_KEYS:
        records = read_topic(bootstrap, prefix + name)
        (dest / name).mkdir(parents=True, exist_ok=True)
        (dest / name / "part-0.jsonl").write_text("".join(v + "\n" for _, v in records))
        outputs[name] = records
    return outputs


def rest(base: str, path: str, method: str = "GET") -> Any:
    request = urllib.request.Request(base + path, method=method)
    with urllib.request.urlopen(request, timeout=10) as resp:
        body = resp.read()
    return json.loads(body) if body else None


def wait_for_state(base: str, job: str, states: set[str], timeout_s: float = 300) -> str:
    deadline = time.monotonic() + timeout_s
    state = ""
    while time.monotonic() < deadline:
        state = rest(base, f"/jobs/{job}")["state"]
        if state in states:
            return state  # type: ignore[no-any-return]
        if state in {"FAILED", "CANCELED"}:
            break
        time.sleep(1)
    raise AssertionError(f"job {job} is {state}, not {states}\n{job_diagnostics(base, job)}")


def job_diagnostics(base: str, job: str) -> str:
    """What a job stuck in a state shows: each vertex's status and records, the exceptions it
    had, its checkpoint counts, and the cluster's TaskManagers (for a failed test's message)."""
    out = []
    try:
        for vertex in rest(base, f"/jobs/{job}")["vertices"]:
            m = vertex.get("metrics", {})
            out.append(
                f"{vertex['name'][:60]}: {vertex['status']} {vertex.get('tasks')} read {m.get('read-records')}"
                f" written {m.get('write-records')}"
            )
        out.append(f"checkpoints: {rest(base, f'/jobs/{job}/checkpoints')['counts']}")
        for entry in rest(base, f"/jobs/{job}/exceptions")["exceptionHistory"]["entries"][:5]:
            out.append(f"exception: {entry['exceptionName']}: {entry['stacktrace'][:1500]}")
        tms = rest(base, "/taskmanagers")["taskmanagers"]
        out.append(f"taskmanagers: {[(tm['id'][-12:], tm['slotsNumber'], tm['freeSlots']) for tm in tms]}")
        for log in sorted((ROOT / "log" / "flink").glob("*.log")):
            lines = [x for x in log.read_text(errors="replace").splitlines() if " WARN " in x or " ERROR " in x]
            out += [f"{log.name}: {x[:300]}" for x in lines[-8:]]
    except Exception as e:  # the diagnosis must not hide the failure
        out.append(f"(no more: {e!r})")
    return "\n".join(out)


def operator_metrics(base: str, job: str, names: set[str]) -> dict[str, float]:
    """The job's metrics of these names, summed over every operator and subtask that has them,
    as the web UI lists them (metric ids ``<subtask>.<operator>.<name>``)."""
    totals: dict[str, float] = {}
    for vertex in rest(base, f"/jobs/{job}")["vertices"]:
        path = f"/jobs/{job}/vertices/{vertex['id']}/metrics"
        ids = [m["id"] for m in rest(base, path) if m["id"].rsplit(".", 1)[-1] in names]
        for start in range(0, len(ids), 40):
            for metric in rest(base, f"{path}?get={','.join(ids[start : start + 40])}"):
                name = metric["id"].rsplit(".", 1)[-1]
                totals[name] = totals.get(name, 0.0) + float(metric["value"])
    return totals


# -- the fault tests' runs (test_faults.py, test_postgres.py) -------------------------------


def replay_feed(kafka: str, topic: str, feed: Path) -> None:
    """The fault tests' feed (FAULT_FEED_COPIES x the sample) into a topic."""
    replay(kafka, topic, feed, FAULT_FEED_LINES)


def submit_bounded(kafka: str, topic: str, name: str, *flags: str, run_args: str = "") -> str:
    """The job, bounded, with checkpoints every second (and multipart groups that never time out
    before the end of the input, as in the uninterrupted result)."""
    flags = ("--bounded", "--checkpoint-interval", "1", "--multipart-timeout", "600", *flags)
    return submit(kafka, topic, name, *flags, run_args=run_args)


# The dedup operator's counters: every report it has decided, kept or dropped.
DECIDED = {"positions_kept", "static_kept", "duplicates_exact", "duplicates_near", "static_duplicates", "no_position"}


def wait_until_midstream(cluster: str, job: str, lines: int = FAULT_FEED_LINES) -> None:
    """Until a checkpoint has completed and the dedup operator has decided reports, well before
    the end of the feed: as early as the metrics (refreshed every second) tell. Lines read say
    less: parsed records wait in network buffers in front of the dedup operator."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if rest(cluster, f"/jobs/{job}")["state"] == "RUNNING":
            done = rest(cluster, f"/jobs/{job}/checkpoints")["counts"]["completed"]
            decided = sum(operator_metrics(cluster, job, DECIDED).values())
            if done >= 1 and decided > 0:
                assert decided < lines * 0.9, "the job decided most of the feed before the failure"
                return
        time.sleep(0.2)
    raise AssertionError("the job did not get going")


def wait_until_only_live_taskmanagers(cluster: str) -> None:
    """Until the cluster has forgotten the killed TaskManager (after its heartbeat timeout) and
    every slot it lists is free: the next test's job would otherwise be offered the dead one's
    slots, and wait for them."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        tms = rest(cluster, "/taskmanagers")["taskmanagers"]
        if len(tms) == TASKMANAGERS and all(tm["freeSlots"] == tm["slotsNumber"] for tm in tms):
            return
        time.sleep(1)
    raise AssertionError(f"the cluster still lists {len(tms)} TaskManagers")


def stop_with_savepoint(cluster: str, job: str, directory: Path, drain: bool) -> str:
    """``flink stop [--drain]`` through the REST API; returns the savepoint's location."""
    request = urllib_post(cluster, f"/jobs/{job}/stop", {"targetDirectory": directory.as_uri(), "drain": drain})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = rest(cluster, f"/jobs/{job}/savepoints/{request['request-id']}")
        if status["status"]["id"] == "COMPLETED":
            assert "failure-cause" not in status["operation"], status
            return str(status["operation"]["location"])
        time.sleep(0.5)
    raise AssertionError("no savepoint")


def urllib_post(base: str, path: str, body: dict[str, object]) -> dict[str, str]:
    request = urllib.request.Request(
        base + path, data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as resp:
        return json.load(resp)  # type: ignore[no-any-return]


def drain_once_read(cluster: str, job: str, lines: int, directory: Path, settle: bool = False) -> None:
    """Stop a bounded job restored from a savepoint once it has read ``lines`` records of its one
    partition (and, with ``settle``, once the operators' watermark has stood still for 5 s). A
    bounded Kafka source restored from a savepoint reads up to its stopping offsets but does not
    finish (connector 5.0.0-2.2): once it has read the whole feed, the job is stopped with
    --drain, which ends the input as the end of a bounded source does (final watermark). Without
    the wait for the watermark the drain can come first: at parallelism 2 the subtask without a
    partition holds the watermark until its idle timeout (30 s), and what a live job emits as
    the watermark passes (open gaps) would never be written."""
    deadline = time.monotonic() + 400
    while time.monotonic() < deadline:
        if operator_metrics(cluster, job, {"currentOffset"}).get("currentOffset", -1) >= lines - 1:
            break
        time.sleep(1)
    else:
        raise AssertionError("the restored job did not read the rest of the feed")
    if settle:  # a watermark, then still for 5 s: where the job's lines take it
        still_since, last = time.monotonic(), NO_WATERMARK
        while (low := low_watermark(cluster, job)) == NO_WATERMARK or time.monotonic() - still_since < 5:
            assert time.monotonic() < deadline, f"the restored job's watermark did not settle (at {low})"
            if low != last:
                still_since, last = time.monotonic(), low
            time.sleep(0.5)
    stop_with_savepoint(cluster, job, directory, drain=True)
    assert wait_for_state(cluster, job, {"FINISHED"}, timeout_s=120) == "FINISHED"


def low_watermark(cluster: str, job: str) -> int:
    """The lowest input watermark of the job's operators. Sources have no input, and an operator
    that has had none (one fed only by dead letters) does not count, unless none has had one."""
    lows = []
    for node in rest(cluster, f"/jobs/{job}/plan")["plan"]["nodes"]:
        if not node.get("inputs"):
            continue
        values = [
            int(m["value"])
            for m in rest(cluster, f"/jobs/{job}/vertices/{node['id']}/watermarks")
            if m["id"].endswith(".currentInputWatermark") and int(m["value"]) > NO_WATERMARK
        ]
        if values:
            lows.append(min(values))
    return min(lows, default=NO_WATERMARK)


def line_times(lines: list[str]) -> list[int]:
    """Each tagged line's ``c:`` time (epoch seconds); a line without one (a multipart group's
    second sentence) has the time of the line before it."""
    times, last = [], 0
    for line in lines:
        if "c:" in line.split("\\!", 1)[0]:
            last = int(line.split("c:")[1].split("*")[0].split(",")[0])
        times.append(last)
    return times


def restored_mid_feed(
    cluster: str, kafka: str, name: str, lines: list[str], cut_s: int, written: tuple[str, int], out: Path, *flags: str
) -> Path:
    """A job stopped with a savepoint mid-feed and restored from it, on the standalone cluster,
    Kafka to Kafka: ``lines`` (tagged, in time order) up to ``cut_s`` (epoch seconds) into topic
    ``name``; the job runs on them until its output ``written[0]`` holds ``written[1]`` records,
    is stopped with a savepoint (no drain), the rest of the feed is replayed and the job restored
    from the savepoint, bounded, until it has read the whole feed. ``flags`` go to both
    submissions. Returns the folder of its outputs, read back from the topics."""
    cut = next(i for i, t in enumerate(line_times(lines)) if t >= cut_s)
    out.mkdir(parents=True, exist_ok=True)
    first, rest_feed = out / "first.nmea", out / "rest.nmea"
    first.write_text("\n".join(lines[:cut]) + "\n")
    rest_feed.write_text("\n".join(lines[cut:]) + "\n")
    replay(kafka, name, first, cut)
    job = submit(kafka, name, name, "--checkpoint-interval", "1", "--multipart-timeout", "600", *flags)
    output, count = written
    deadline = time.monotonic() + 180
    while len(read_topic(kafka, f"{name}.{output}", timeout_s=5)) < count:
        assert time.monotonic() < deadline, f"the first {count} {output} records were not written before the stop"
        time.sleep(1)
    location = stop_with_savepoint(cluster, job, out / "sp", drain=False)
    wait_for_state(cluster, job, {"FINISHED"}, timeout_s=60)
    replay(kafka, name, rest_feed, len(lines) - cut)
    restored = submit_bounded(kafka, name, name, *flags, run_args=f"-s {location}")
    drain_once_read(cluster, restored, len(lines), out / "final", settle=True)
    write_outputs(kafka, f"{name}.", out / "job")
    return out / "job"
