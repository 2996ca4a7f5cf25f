"""The formats receivers and tools log, through the whole job in a mini-cluster, against the plain
loop: the golden lines of every dialect (``tests/golden/dialects.json``) in one file, and the
go-ais capture (NMEA behind unix-nanosecond timestamps) whole."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from ais_pipeline.files import read_records
from ais_pipeline.rules.outputs import parse_iso_ms
from tests.support import golden_dialects
from tests.support.jobs import assert_same_outputs, run_job, run_oracle

pytestmark = pytest.mark.flink


def records(directory: Path, since_ms: int) -> dict[str, list[str]]:
    """The records of a run, canonical and sorted; a record stamped at or after ``since_ms`` (a line
    without a time, stamped on ingestion) loses its time and the id made from it."""

    def canonical(r: dict[str, Any]) -> str:
        if "timestamp" in r and parse_iso_ms(str(r["timestamp"])) >= since_ms:
            r = {k: v for k, v in r.items() if k not in ("timestamp", "id")}
        return json.dumps(r, sort_keys=True)

    return {
        n: sorted(canonical(r) for r in read_records(directory / n)) for n in ("positions", "static", "dead_letter")
    }


def test_golden_lines_of_every_dialect_give_the_plain_loops_records(tmp_path: Path):
    cases = [c for c in golden_dialects.load()["cases"] if "input_format" not in c]

    def first_time(case: dict[str, Any]) -> str:
        stamps = [p[2] for p in case["expect"]["positions"] if p[2] != golden_dialects.INGESTION]
        return min(stamps, default="9999")  # lines without a time last

    feed = tmp_path / "dialects.txt"
    feed.write_text("".join(line + "\n" for case in sorted(cases, key=first_time) for line in case["lines"]))
    started = int(time.time() * 1000) - 1000
    summary = run_job(feed, tmp_path / "job", "--parallelism", "2")
    run_oracle(feed, tmp_path / "oracle")
    assert records(tmp_path / "job", started) == records(tmp_path / "oracle", started)
    assert summary["accounted_lines"] == summary["lines"] == sum(len(c["lines"]) for c in cases)
    assert summary["time_disagreements"] == 1
    reasons = {"bad_json": 2, "checksum": 1, "malformed": 6}
    assert summary["dead_letter"] == reasons


def test_the_go_ais_capture_reads_as_the_plain_loop_reads_it(fixtures: Path, tmp_path: Path):
    summary = run_job(fixtures / "goais__aistest.nmea", tmp_path / "job")
    run_oracle(fixtures / "goais__aistest.nmea", tmp_path / "oracle")
    assert_same_outputs(tmp_path / "job", tmp_path / "oracle")
    assert summary["dead_letter"] == {"incomplete_multipart": 8} and summary["positions_kept"] == 575
