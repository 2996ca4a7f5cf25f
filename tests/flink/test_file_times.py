"""A file whose lines mostly carry no time of their own gives the same outputs on every run, at
every parallelism, and the plain loop's: the Australian Maritime Safety Authority's raw feed
(44,687 lines, no tag blocks), whose lines take the time their lane told last (its receivers'
``$GPZDA`` GPS times, Gatehouse ``$PGHP`` times, trailing Unix times), never the clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.jobs import assert_same_outputs, run_job, run_oracle

pytestmark = pytest.mark.flink

RISKY = Path(__file__).parents[1] / "fixtures" / "risky__ais.txt.gz"


def test_the_amsa_capture_gives_the_plain_loops_outputs_at_parallelism_1_and_2(tmp_path: Path):
    oracle = tmp_path / "oracle"
    run_oracle(RISKY, oracle)
    summaries = [run_job(RISKY, tmp_path / f"p{p}", "--parallelism", str(p)) for p in (1, 2)]
    for p in (1, 2):
        assert_same_outputs(tmp_path / f"p{p}", oracle)
    figures = [{k: v for k, v in s.items() if k not in ("seconds", "per_minute")} for s in summaries]
    assert figures[0] == figures[1]
    assert summaries[0]["no_time"] > 20_000 and summaries[0]["accounted_lines"] == summaries[0]["lines"] == 44_687
