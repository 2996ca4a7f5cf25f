"""Coverage around a gap: the reports of other vessels in the 1-degree cell of its start while it
lasted, counted once those hours are final, and no hour kept longer than a gap can need it."""

from __future__ import annotations

import pytest

from ais_pipeline.rules.coverage import HOUR_MS, CellCoverage, Coverage, CoverageRules, GapHours, cell_of, hour_of
from tests.support.golden_coverage import load as load_golden

pytestmark = pytest.mark.unit

T0 = 1_700_000_000_000 - 1_700_000_000_000 % HOUR_MS  # an hour's start
MIN = 60_000
RULES = CoverageRules(lateness_ms=2 * MIN, grace_ms=11 * MIN, reach_ms=6 * HOUR_MS + 11 * MIN, ttl_ms=72 * HOUR_MS)
GONE = 244000001


def test_a_cell_is_named_by_its_south_west_corner_on_both_sides_of_both_zeros():
    assert [cell_of(54.3, 10.9), cell_of(-8.2, 60.0), cell_of(0.5, -0.5), cell_of(-0.5, -179.5)] == [
        "N54E010",
        "S09E060",
        "N00W001",
        "S01W180",
    ]
    assert cell_of(90.0, 180.0) == "N89W180"  # the pole's row and the antimeridian fold in


def test_a_closed_gap_counts_the_other_vessels_of_its_hours_once_they_are_final():
    cell = CellCoverage()
    cell.report(T0 - 1, 244000009)  # the hour before the gap's: not counted
    cell.report(T0 + 5 * MIN, GONE)  # the gap's own vessel: not counted
    for h in range(13):
        cell.report(T0 + h * HOUR_MS + 30 * MIN, 244000002)
    cell.report(T0 + 3 * HOUR_MS, 244000003, 4)
    cell.report(T0 + 14 * HOUR_MS, 244000004)  # the hour after the gap's end: not counted
    gap = GapHours("g1", GONE, T0 + 10 * MIN, T0 + 12 * HOUR_MS + 50 * MIN, T0 + 12 * HOUR_MS + 50 * MIN)
    due = cell.gap(RULES, gap, "the gap's record")
    assert due == T0 + 13 * HOUR_MS - 1 + 13 * MIN  # the end's hour, plus lateness and grace
    assert cell.advance(RULES, "N54E010", due - 1) == []
    assert cell.advance(RULES, "N54E010", due) == [("the gap's record", Coverage("N54E010", 13 + 4, 2))]


def test_an_empty_cell_gives_zero_coverage():
    cell = CellCoverage()
    gap = GapHours("g1", GONE, T0, T0 + 13 * HOUR_MS, T0 + 13 * HOUR_MS)
    cell.gap(RULES, gap, "r")
    assert cell.advance(RULES, "S09E060", T0 + 20 * HOUR_MS) == [("r", Coverage("S09E060", 0, 0))]
    assert cell.empty


def test_an_open_gap_counts_to_the_hour_before_it_was_revealed_and_pins_its_hours_until_it_closes():
    cell = CellCoverage()
    for h in range(30):
        cell.report(T0 + h * HOUR_MS, 244000002)
    start, revealed = T0 + 20 * MIN, T0 + 6 * HOUR_MS + 40 * MIN
    opened = GapHours("g1", GONE, start, None, revealed)
    assert opened.last_hour == T0 + 5 * HOUR_MS
    due = cell.gap(RULES, opened, "open")
    assert cell.advance(RULES, "c", due) == [("open", Coverage("c", 6, 1))]
    # A day later the hours from the start are still there: the open gap pins them.
    cell.advance(RULES, "c", T0 + 30 * HOUR_MS)
    assert min(cell.hours) == T0
    closed = GapHours("g1", GONE, start, T0 + 29 * HOUR_MS + 5 * MIN, T0 + 29 * HOUR_MS + 5 * MIN)
    due = cell.gap(RULES, closed, "closed")
    assert cell.advance(RULES, "c", due) == [("closed", Coverage("c", 30, 1))]
    assert cell.pinned == {} and min(cell.hours) == hour_of(RULES.keep_from(due))


def test_an_open_gap_whose_vessel_never_returns_unpins_at_the_ttl_and_the_cell_ends_empty():
    cell = CellCoverage()
    cell.report(T0 + HOUR_MS, 244000002)
    cell.gap(RULES, GapHours("g1", GONE, T0, None, T0 + 6 * HOUR_MS + 11 * MIN), "open")
    cell.advance(RULES, "c", T0 + 7 * HOUR_MS)
    assert cell.pinned and cell.hours
    at = cell.next_timer(RULES)
    steps = 0
    while at is not None:  # follow the cell's own timers, as the operator does
        cell.advance(RULES, "c", at)
        at = cell.next_timer(RULES)
        steps += 1
    assert cell.empty and steps <= 3


def test_hours_no_gap_can_need_are_forgotten_as_the_watermark_moves():
    cell = CellCoverage()
    for h in range(48):
        cell.report(T0 + h * HOUR_MS, 244000002)
    watermark = T0 + 48 * HOUR_MS
    cell.advance(RULES, "c", watermark)
    # A gap not yet seen starts at most reach + lateness + grace before the watermark.
    assert min(cell.hours) == hour_of(watermark - RULES.reach_ms - 13 * MIN - HOUR_MS)
    assert cell.next_timer(RULES) == min(cell.hours) + 2 * HOUR_MS + 13 * MIN + RULES.reach_ms


GOLDEN_CASES = load_golden()["cases"]


@pytest.mark.parametrize("case", GOLDEN_CASES, ids=[c["name"][:60] for c in GOLDEN_CASES])
def test_golden_coverage_case_gives_its_records_and_leaves_no_state(case):
    from tests.support.golden_coverage import run_case

    assert run_case(case) == [step["emits"] for step in case["steps"]]
