"""The whole job on hostile input: the bundled capture with 2,000 damaged lines mixed in (random
and non-UTF-8 bytes, truncated sentences, wrong checksums, broken tag blocks, groups that never
complete, very long lines, invalid JSON, out-of-range values, times in 1970 and 2099; see
tests/fuzz.py). The job does not fail, every line is accounted for exactly once, and the outputs
equal the plain pipeline's, at parallelism 2."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.support.fuzz import hostile_feed
from tests.support.jobs import assert_same_outputs, run_job, run_oracle

pytestmark = pytest.mark.flink


def test_hostile_input_never_stops_the_job_and_every_line_is_accounted_for(tmp_path: Path):
    feed = tmp_path / "hostile.nmea"
    feed.write_bytes(hostile_feed(random.Random(20261130), damaged=2000))
    out, oracle = tmp_path / "out", tmp_path / "oracle"
    summary = run_job(feed, out, "--parallelism", "2")
    run_oracle(feed, oracle)
    assert summary["lines"] == summary["accounted_lines"] == 12000
    assert_same_outputs(out, oracle)
    reasons = summary["dead_letter"]
    assert {"checksum", "malformed", "not_text", "future_timestamp", "incomplete_multipart"} <= set(reasons)
    assert summary["late"] > 0  # the reports stamped 1970
