"""Gap events through the job: the generated cases and two real GFW tracks give the plain loop's
gap records (with their coverage) at parallelism 1 and 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from ais_pipeline.files import read_records
from tests.support.gap_cases import COASTAL, COVERED, EMPTY, OPEN, gap_case_lines
from tests.support.jobs import assert_same_outputs, run_job, run_oracle

pytestmark = pytest.mark.flink


@pytest.mark.parametrize("parallelism", [1, 2])
def test_the_generated_gap_cases_give_their_verdicts_and_coverage_in_the_job(parallelism: int, tmp_path: Path):
    feed = tmp_path / "gaps.nmea"
    feed.write_text("\n".join(gap_case_lines()) + "\n")
    out, oracle = tmp_path / "out", tmp_path / "oracle"
    run_job(feed, out, "--parallelism", str(parallelism))
    run_oracle(feed, oracle)
    assert_same_outputs(out, oracle)
    last = {g["mmsi"]: g for g in read_records(out / "gaps")}
    verdicts = {m: (g["open"], g["suspected_disabling"], g["coverage_vessels"]) for m, g in last.items()}
    assert verdicts == {
        COVERED: (False, True, 2),
        EMPTY: (False, True, 0),
        OPEN: (True, False, 0),
        COASTAL: (False, False, 0),
    }


@pytest.mark.parametrize(
    ("name", "six", "twelve"),
    [("gpsdiosegment__416000000.json", 27, 9), ("gpsdiosegment__263576000.json", 1, 0)],
    ids=["a month along Taiwan's coast", "a day and a half in the Indian Ocean"],
)
def test_a_gfw_track_gives_the_gaps_of_its_rows_in_the_job(
    name: str, six: int, twelve: int, fixtures: Path, tmp_path: Path
):
    src = fixtures / name
    out, oracle = tmp_path / "out", tmp_path / "oracle"
    run_job(src, out, "--parallelism", "2")
    run_oracle(src, oracle)
    assert_same_outputs(out, oracle)  # the plain loop's gaps are those of the rows (tests/unit/test_gaps.py)
    closed = [g for g in read_records(out / "gaps") if not g["open"]]
    assert (len(closed), sum(g["hours"] >= 12 for g in closed)) == (six, twelve)
    assert not any(g["suspected_disabling"] for g in closed)  # near the coast, or short
