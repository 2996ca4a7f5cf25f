"""Vessel hours in the job: the golden cases of the rule (``tests/golden/vessel_hours.json``), all
in one feed, give each case's hours as the plain loop gives them for the case alone, at
parallelism 1 and 2; and the job's outputs equal the plain loop's on that feed."""

from __future__ import annotations

from pathlib import Path

import pytest

from ais_pipeline.files import read_records
from ais_pipeline.rules.windows import hours
from tests.support import golden_vessel_hours
from tests.support.jobs import assert_same_outputs, run_job, run_oracle

pytestmark = pytest.mark.flink

GOLDEN = golden_vessel_hours.load()


@pytest.mark.parametrize("parallelism", [1, 2])
def test_the_golden_vessel_hours_cases_give_their_hours_in_the_job(parallelism: int, tmp_path: Path):
    feed = tmp_path / "cases.nmea"
    feed.write_text("\n".join(golden_vessel_hours.feed(GOLDEN)) + "\n")
    knobs = GOLDEN["knobs"]
    flags = [f"--{name.removesuffix('_s').replace('_', '-')}={value}" for name, value in knobs.items()]
    summary = run_job(feed, tmp_path / "job", "--parallelism", str(parallelism), *flags)
    job = tmp_path / "job"
    got = golden_vessel_hours.hours_by_case(
        GOLDEN, read_records(job / "aggregates"), bad_fixes=read_records(job / "bad_fixes")
    )
    for case, hours_of_case in zip(GOLDEN["cases"], got, strict=True):
        assert hours_of_case["tumbling"] == case["expect"]["tumbling"], case["name"]
        assert hours_of_case["bad_fixes"] == case["expect"]["bad_fixes"], case["name"]
    late_ms = round(sum(c["expect"]["late_hours"] for c in GOLDEN["cases"]) * 3_600_000)
    assert summary["late_hours"] == hours(late_ms) == 0.05
    run_oracle(feed, tmp_path / "plain", **knobs)
    assert_same_outputs(tmp_path / "job", tmp_path / "plain")
