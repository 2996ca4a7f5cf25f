"""Kinesis in, DynamoDB out, on moto's server (scripts/moto.sh, Kinesis's resharding as Kinesis
does it): the bundled capture in a 2-shard stream read --bounded gives the file run's outputs and a
table of its final aggregates, a second run leaves the table as it was, a shard split while the
job reads loses and repeats nothing, throttling is ridden out, and bad input and a table of another
key end in dead letters or one-line errors.

The runs use small windows and cells (``WINDOWS``): moto takes a few hundred writes a second, and
the sample's default windows make 100,000 firings."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ais_pipeline.config import SAMPLE_INPUT
from ais_pipeline.files import read_lines, read_records
from ais_pipeline.rules.lane import parse_line
from ais_pipeline.rules.records import Report
from tests.support.jobs import ROOT, assert_same_outputs, run_oracle
from tests.support.kafka import operator_metrics, rest
from tests.support.kinesis import (
    REGION,
    client,
    create_stream,
    expected_items,
    item_figures,
    put_lines,
    table_items,
    write_faults,
)
from tests.support.servers import MotoServer, free_port

pytestmark = pytest.mark.integration

WINDOWS = ("--geohash-precision", "2", "--slide-size", "120")
KNOBS = {"geohash_precision": 2, "slide_size_s": 120}


@pytest.fixture(scope="module")
def sample_oracle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("kinesis-oracle")
    run_oracle(SAMPLE_INPUT, out, **KNOBS)
    return out


def run_job(moto: MotoServer, *flags: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "ais_pipeline.jobs.ais_traffic", "--source", "kinesis", "--region", REGION]
    cmd += ["--kinesis-endpoint", moto.endpoint, "--dynamodb-endpoint", moto.endpoint, "--web-ui-port", "0"]
    return subprocess.run([*cmd, *flags], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def assert_table_is_the_final_aggregates(moto: MotoServer, table: str, oracle: Path) -> dict[Any, Any]:
    items = table_items(moto.endpoint, table)
    want = expected_items(read_records(oracle / "aggregates"))
    assert sorted(items) == sorted(want)
    assert {k: item_figures(v) for k, v in items.items()} == want
    return items


def test_a_two_shard_stream_read_bounded_gives_the_file_runs_outputs_and_table_and_a_replay_changes_nothing(
    moto: MotoServer, sample_oracle: Path, tmp_path: Path
):
    create_stream(moto.endpoint, "sample", 2)
    assert put_lines(moto.endpoint, "sample", read_lines(SAMPLE_INPUT)) == 10000
    flags = ["--stream", "sample", "--starting-position", "trim-horizon", "--bounded", *WINDOWS]
    flags += ["--dynamodb-table", "ais_window_agg", "--dynamodb-create"]
    first = run_job(moto, *flags, "--output", str(tmp_path / "first"))
    assert first.returncode == 0, first.stderr[-3000:]
    assert "lines accounted for 10000 of 10000" in first.stdout
    # The reader merges the two shards by arrival time: the lines come in the file's order.
    assert_same_outputs(tmp_path / "first", sample_oracle)
    before = assert_table_is_the_final_aggregates(moto, "ais_window_agg", sample_oracle)
    summary = json.loads((tmp_path / "first" / "summary.json").read_text())
    assert summary["dead_letter"] == {"incomplete_multipart": 1}

    # A replay of the whole stream: every write is a firing the table has, or an older one.
    again = run_job(moto, *flags, "--output", str(tmp_path / "again"))
    assert again.returncode == 0, again.stderr[-3000:]
    assert table_items(moto.endpoint, "ais_window_agg") == before


def test_throttled_reads_and_writes_are_ridden_out_a_refused_item_is_a_dead_letter_and_only_tumbling_windows_written(
    moto: MotoServer, tmp_path: Path
):
    lines = list(read_lines(SAMPLE_INPUT))[:3000]
    capture = tmp_path / "part.nmea"
    capture.write_text("".join(line + "\n" for line in lines))
    oracle = tmp_path / "oracle"
    run_oracle(capture, oracle, **KNOBS)
    refused = str(read_records(oracle / "aggregates")[0]["cell"])
    create_stream(moto.endpoint, "throttled", 1)
    put_lines(moto.endpoint, "throttled", lines, lines_per_record=4)  # several lines per record
    write_faults(moto.faults, {"GetRecords": {"throttle": 6}, "PutItem": {"throttle": 24, "reject_cell": refused}})
    try:
        proc = run_job(
            moto, "--stream", "throttled", "--starting-position", "trim-horizon", "--bounded", *WINDOWS,
            "--dynamodb-table", "throttled", "--dynamodb-create", "--output", str(tmp_path / "out"),
            "--dynamodb-windows", "tumbling",
        )  # fmt: skip
        faults = json.loads(moto.faults.read_text())
    finally:
        moto.faults.unlink()
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert faults["GetRecords"]["throttled"] == 6 and faults["PutItem"]["throttled"] == 24
    for name in ("positions", "static", "late"):
        assert sorted(map(json.dumps, read_records(tmp_path / "out" / name))) == sorted(
            map(json.dumps, read_records(oracle / name))
        )
    items = table_items(moto.endpoint, "throttled")
    want = expected_items(read_records(oracle / "aggregates"))
    # Only the tumbling windows are written (--dynamodb-windows); the files have both kinds.
    assert {str(r["window"]) for r in read_records(tmp_path / "out" / "aggregates")} == {"tumbling", "sliding"}
    tumbling = {k: v for k, v in want.items() if k[0] != refused and k[1].startswith("tumbling#")}
    assert len(tumbling) > 24 and {k: item_figures(v) for k, v in items.items()} == tumbling
    dead = [d for d in read_records(tmp_path / "out" / "dead_letter") if d["reason"] == "dynamodb_rejected"]
    assert dead and all(json.loads(str(d["raw"]))["cell"] == refused for d in dead)
    assert all("ValidationException" in str(d["detail"]) for d in dead)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["accounted_lines"] == summary["lines"] == 3000  # a store's dead letters hold no input line


def test_bad_records_become_dead_letters_and_bad_tables_and_streams_one_line_errors(moto: MotoServer, tmp_path: Path):
    create_stream(moto.endpoint, "odd", 1)
    line = next(x for x in SAMPLE_INPUT.read_text().splitlines() if isinstance(parse_line(x, "nmea"), Report))
    kinesis = client(moto.endpoint, "kinesis")
    for data in (line.encode(), b"\xff\xfe\x00\x01binary", b"!" * 9000, f"{line}\r\n{line}\n".encode()):
        kinesis.put_record(StreamName="odd", Data=data, PartitionKey="k")
    proc = run_job(
        moto, "--stream", "odd", "--starting-position", "trim-horizon", "--bounded", "--output", str(tmp_path / "odd")
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    dead = read_records(tmp_path / "odd" / "dead_letter")
    assert ("not_text", "\ufffd\ufffd\x00\x01binary") in [(d["reason"], d["raw"]) for d in dead]
    assert len(read_records(tmp_path / "odd" / "positions")) == 1  # the same report three times: kept once
    summary = json.loads((tmp_path / "odd" / "summary.json").read_text())
    # The oversized record is cut into lines of 4,096 bytes (three), each counted, none lost.
    assert summary["not_ais"] == 3 and summary["duplicates_exact"] == 2
    assert summary["accounted_lines"] == summary["lines"] == 1 + 1 + 3 + 2

    dynamo = client(moto.endpoint, "dynamodb")
    dynamo.create_table(
        TableName="numbered",
        KeySchema=[{"AttributeName": "cell", "KeyType": "HASH"}, {"AttributeName": "window_start", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "cell", "AttributeType": "S"},
            {"AttributeName": "window_start", "AttributeType": "N"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    wrong = run_job(moto, "--stream", "odd", "--bounded", "--dynamodb-table", "numbered", timeout=120)
    assert wrong.returncode == 2
    assert wrong.stderr.strip().splitlines()[-1] == (
        "ais-pipeline: error: --dynamodb-table (DYNAMODB_TABLE): table numbered has the key cell (S, partition key),"
        " window_start (N, sort key); the job writes cell (S, partition key), window_start (S, sort key)"
        " (a table of the job's own, or --dynamodb-create with a new name)"
    )
    missing = run_job(moto, "--stream", "odd", "--bounded", "--dynamodb-table", "nowhere", timeout=120)
    assert missing.returncode == 2
    assert (
        missing.stderr.strip()
        .splitlines()[-1]
        .startswith("ais-pipeline: error: --dynamodb-table (DYNAMODB_TABLE): table nowhere does not exist")
    )
    no_stream = run_job(moto, "--stream", "no-such-stream", "--bounded", timeout=120)
    assert no_stream.returncode == 2
    assert no_stream.stderr.strip().splitlines()[-1] == (
        f"ais-pipeline: error: --stream (KINESIS_STREAM): stream no-such-stream does not exist in AWS {REGION}"
        f" at {moto.endpoint}"
    )


def test_a_shard_split_while_the_job_reads_loses_no_line_and_reads_none_twice(
    moto: MotoServer, sample_oracle: Path, tmp_path: Path
):
    lines = list(read_lines(SAMPLE_INPUT))
    create_stream(moto.endpoint, "resharded", 1)
    put_lines(moto.endpoint, "resharded", lines[:5000])
    port = free_port()
    cmd = [sys.executable, "-m", "ais_pipeline.jobs.ais_traffic", "--source", "kinesis", "--region", REGION]
    cmd += ["--kinesis-endpoint", moto.endpoint, "--stream", "resharded", "--starting-position", "trim-horizon"]
    cmd += [*WINDOWS, "--checkpoint-interval", "2", "--web-ui-port", str(port), "--output", str(tmp_path / "out")]
    job = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        job_id = wait_for_records(base, at_least=1, timeout_s=240)
        kinesis = client(moto.endpoint, "kinesis")
        shard = kinesis.list_shards(StreamName="resharded")["Shards"][0]
        middle = str(int(shard["HashKeyRange"]["EndingHashKey"]) // 2)
        kinesis.split_shard(StreamName="resharded", ShardToSplit=shard["ShardId"], NewStartingHashKey=middle)
        put_lines(moto.endpoint, "resharded", lines[5000:])
        wait_for_records(base, at_least=10000, timeout_s=240, job_id=job_id)
        time.sleep(3)
        job.send_signal(signal.SIGINT)  # drained: every window fires, every sink commits
        out, err = job.communicate(timeout=240)
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
    assert job.returncode == 0, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    assert "lines accounted for 10000 of 10000" in out
    canonical = lambda d: sorted(json.dumps(r, sort_keys=True) for r in read_records(d / "positions"))  # noqa: E731
    assert canonical(tmp_path / "out") == canonical(sample_oracle)


def wait_for_records(base: str, at_least: int, timeout_s: float, job_id: str = "") -> str:
    """Until the running job's Kinesis source has emitted ``at_least`` records; its id."""
    deadline = time.monotonic() + timeout_s
    read = 0.0
    while time.monotonic() < deadline:
        try:
            if not job_id:
                running = [j["jid"] for j in rest(base, "/jobs/overview")["jobs"] if j["state"] == "RUNNING"]
                job_id = running[0] if running else ""
            if job_id:
                read = operator_metrics(base, job_id, {"kinesisRecords"}).get("kinesisRecords", 0.0)
                if read >= at_least:
                    return job_id
        except OSError:
            pass
        time.sleep(1)
    raise AssertionError(f"the job read {read} records, not {at_least}, within {timeout_s} s")
