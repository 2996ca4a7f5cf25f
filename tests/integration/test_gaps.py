"""Gap events in the stores users query: the generated gap cases into PostgreSQL (a row per gap,
its last word, with a PostGIS line) and into Kafka (every record, as the files hold them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ais_pipeline import postgres
from ais_pipeline.config import PipelineConfig
from ais_pipeline.rules.plain import run_plain
from tests.support.gap_cases import COASTAL, COVERED, EMPTY, OPEN, gap_case_lines
from tests.support.jobs import ROOT
from tests.support.kafka import read_topic, replay

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
