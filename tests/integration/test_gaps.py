"""Gap events in the stores users query: the generated gap cases into PostgreSQL (a row per gap,
its last word, with a PostGIS line) and into Kafka (every record, as the files hold them), also
across a stop with a savepoint in the middle of the gaps."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ais_pipeline import postgres
from ais_pipeline.config import PipelineConfig
from ais_pipeline.files import read_records
from ais_pipeline.rules.plain import run_plain
from tests.support import gap_cases
from tests.support.gap_cases import COASTAL, COVERED, EMPTY, OPEN, gap_case_lines
from tests.support.jobs import ROOT, assert_same_outputs, run_oracle
from tests.support.kafka import (
    drain_once_read,
    read_topic,
    replay,
    stop_with_savepoint,
    submit,
    submit_bounded,
    wait_for_state,
    write_outputs,
)

pytestmark = pytest.mark.integration

VERDICTS = {
    COVERED: (False, True, 168, 2),
    EMPTY: (False, True, 0, 0),
    OPEN: (True, False, 0, 0),
    COASTAL: (False, False, 0, 0),
}


@pytest.fixture(scope="module")
def gap_feed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gaps") / "gaps.nmea"
    path.write_text("\n".join(gap_case_lines()) + "\n")
    return path


def plain_gaps(feed: Path) -> list[str]:
    return run_plain(PipelineConfig(), feed.read_text().splitlines()).gaps


def test_the_gap_cases_into_postgresql_leave_a_row_per_gap_with_its_verdict_and_line(
    postgres_server, gap_feed: Path, tmp_path: Path
):
    target = postgres_server.create_database("gaps")
    url = postgres_server.url("gaps").replace("ais@", f"ais:{postgres_server.password}@")
    cmd = [sys.executable, "-m", "ais_pipeline.cli", "run", "--input", str(gap_feed), "--output", str(tmp_path / "o")]
    cmd += ["--postgres", url, "--no-wait", "--web-ui-port", "0"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with postgres.connect(target) as conn:
        rows = conn.execute(
            "SELECT mmsi, open, suspected_disabling, coverage_reports, coverage_vessels, ST_NPoints(line),"
            " round(ST_Length(line::geography) / 1852) FROM ais_gaps ORDER BY mmsi"
        ).fetchall()
    assert {r[0]: tuple(r[1:5]) for r in rows} == VERDICTS  # the open record replaced by the closed one
    # A line from start to end (its start twice while open): the vessels drifted a few nm.
    assert all(r[5] == 2 for r in rows) and {r[0] for r in rows if r[6] == 0} == {OPEN}


def test_the_gap_cases_through_kafka_give_the_plain_loops_gap_records(kafka: str, gap_feed: Path, tmp_path: Path):
    lines = len(gap_feed.read_text().splitlines())
    replay(kafka, "gap-cases", gap_feed, lines)
    cmd = [sys.executable, "-m", "ais_pipeline.jobs.ais_traffic", "--source", "kafka", "--web-ui-port", "0"]
    cmd += ["--bootstrap-servers", kafka, "--topic", "gap-cases", "--bounded", "--starting-offsets", "earliest"]
    cmd += ["--output-topic-prefix", "gapcases.", "--output", str(tmp_path / "summary-only")]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = read_topic(kafka, "gapcases.gaps")
    assert sorted(value for _, value in got) == sorted(plain_gaps(gap_feed))
    # Keyed by the gap's id: a compacted topic keeps each gap's last word, the closed one.
    last = {key: json.loads(value) for key, value in got}
    assert sorted((g["mmsi"], g["open"]) for g in last.values()) == sorted((m, v[0]) for m, v in VERDICTS.items())


def test_a_job_stopped_with_a_savepoint_mid_gap_goes_on_from_it_to_the_plain_loops_records(
    cluster: str, kafka: str, gap_feed: Path, tmp_path: Path
):
    """The first 24 hours of the cases, then a stop with a savepoint: four vessels are silent, their
    open gaps emitted and what their gaps need held (past the retention: for their gaps alone).
    The rest of the feed after a restore from it closes three of them: every record once, as the
    plain loop writes them from the whole feed."""
    lines = gap_feed.read_text().splitlines()
    hour_24 = gap_cases.T0 + 24 * gap_cases.HOUR
    cut = next(i for i, line in enumerate(lines) if int(line.split("c:")[1].split("*")[0]) >= hour_24)
    first, rest = tmp_path / "first.nmea", tmp_path / "rest.nmea"
    first.write_text("\n".join(lines[:cut]) + "\n")
    rest.write_text("\n".join(lines[cut:]) + "\n")
    name = "gaps-restore"
    replay(kafka, name, first, cut)
    job = submit(kafka, name, name, "--checkpoint-interval", "1", "--multipart-timeout", "600")
    deadline = time.monotonic() + 180
    while len(read_topic(kafka, f"{name}.gaps", timeout_s=5)) < 4:  # the open gaps, committed
        assert time.monotonic() < deadline, "no open gaps before the stop"
        time.sleep(1)
    location = stop_with_savepoint(cluster, job, tmp_path / "sp", drain=False)
    wait_for_state(cluster, job, {"FINISHED"}, timeout_s=60)
    replay(kafka, name, rest, len(lines) - cut)
    restored = submit_bounded(kafka, name, name, run_args=f"-s {location}")
    drain_once_read(cluster, restored, len(lines), tmp_path / "final", settle=True)
    write_outputs(kafka, f"{name}.", tmp_path / "job")
    run_oracle(gap_feed, tmp_path / "oracle")
    assert_same_outputs(tmp_path / "job", tmp_path / "oracle")
    last = {g["mmsi"]: g for g in read_records(tmp_path / "job" / "gaps")}
    assert {m: (g["open"], g["suspected_disabling"]) for m, g in last.items()} == {
        m: v[:2] for m, v in VERDICTS.items()
    }
