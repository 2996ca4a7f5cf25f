"""The generated gap cases through the plain loop: each verdict of the rule, with its coverage."""

from __future__ import annotations

import json

import pytest

from ais_pipeline.config import PipelineConfig
from ais_pipeline.rules.plain import run_plain
from tests.support.gap_cases import COASTAL, COVERED, EMPTY, NEIGHBOURS, OPEN, gap_case_lines

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def gaps() -> dict[int, list[dict]]:
    result = run_plain(PipelineConfig(), gap_case_lines())
    by_vessel: dict[int, list[dict]] = {}
    for line in result.gaps:
        record = json.loads(line)
        by_vessel.setdefault(record["mmsi"], []).append(record)
    return by_vessel


def test_a_well_received_vessel_silent_13_h_far_offshore_among_others_is_a_suspected_disabling(gaps):
    opened, closed = gaps[COVERED]
    assert opened["open"] and not closed["open"] and opened["id"] == closed["id"]
    assert (closed["hours"], closed["suspected_disabling"]) == (13.0, True)
    assert closed["positions_before"] >= 14 and closed["start_shore_nm"] > 50 and closed["end_shore_nm"] > 50
    # The two others, every 10 minutes, in the hours from the gap's start (13:00) to its end (02:00).
    assert (closed["coverage_cell"], closed["coverage_vessels"]) == ("S21E075", len(NEIGHBOURS))
    assert closed["coverage_reports"] == 2 * 14 * 6


def test_the_same_in_an_empty_cell_is_suspected_with_zero_coverage(gaps):
    closed = gaps[EMPTY][-1]
    assert closed["suspected_disabling"] and (closed["coverage_reports"], closed["coverage_vessels"]) == (0, 0)


def test_a_vessel_silent_until_the_end_of_input_is_an_open_gap_and_only_one(gaps):
    (opened,) = gaps[OPEN]
    assert opened["open"] and not opened["suspected_disabling"] and opened["end_time"] is None


def test_a_vessel_silent_near_the_coast_is_a_gap_but_not_suspected(gaps):
    closed = gaps[COASTAL][-1]
    assert closed["hours"] == 13.0 and closed["start_shore_nm"] < 50 and not closed["suspected_disabling"]


def test_the_vessels_heard_all_along_have_no_gap(gaps):
    assert not set(NEIGHBOURS) & set(gaps)
