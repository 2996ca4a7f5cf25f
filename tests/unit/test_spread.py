"""The spread of a segment's time along its line (ais_pipeline.rules.spread) on the golden cases
worked out by hand (tests/golden/spread.json), and its sums on real segments."""

from __future__ import annotations

from typing import Any

import pytest

from ais_pipeline.rules.spread import MAX_PIECES, cell_size, spread
from tests.support import golden_spread

pytestmark = pytest.mark.unit

T0 = 1_700_000_040_000  # a pane boundary


def run(case: dict[str, Any]) -> list[list[object]]:
    a, b, precision = case["from"], case["to"], case["precision"]
    ends = []
    for f in (a, b):
        import pygeohash

        ends.append((T0 + f["t"] * 1000, f["lat"], f["lon"], pygeohash.encode(f["lat"], f["lon"], precision)))
    pieces = spread(*ends[0], *ends[1], case["pane_s"] * 1000)
    return [[c, (pane - T0) // 1000, ms] for c, pane, ms in pieces]


@pytest.mark.parametrize("case", golden_spread.load()["cases"], ids=lambda c: c["name"])
def test_spread_case_gives_the_pieces_worked_out_by_hand(case: dict[str, Any]):
    assert run(case) == case["expect"]


def test_the_golden_file_is_what_the_hand_worked_cases_say():
    assert golden_spread.load()["cases"] == golden_spread.cases()


def test_cell_sizes_are_those_of_the_geohash_grid():
    assert cell_size(6) == (360 / 2**15, 180 / 2**15)
    assert cell_size(5) == (360 / 2**13, 180 / 2**12)


def test_a_long_line_at_a_fine_precision_is_cut_into_equal_times_and_loses_none():
    import pygeohash

    a, b = (54.0, 10.0), (54.2, 10.4)  # about 19 km: tens of thousands of precision-9 cells
    pieces = spread(T0, *a, pygeohash.encode(*a, 9), T0 + 600_000, *b, pygeohash.encode(*b, 9), 60_000)
    assert sum(ms for _, _, ms in pieces) == 600_000
    assert len(pieces) <= MAX_PIECES + 10
