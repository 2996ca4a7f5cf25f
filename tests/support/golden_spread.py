"""The golden cases of the spread of a segment's time over the cells its line crosses
(``tests/golden/spread.json``): each a segment (two fixes, their times in seconds, the geohash
precision) and the pieces it must give (cell, pane start in seconds, milliseconds).

The expectations are worked out here by hand from the geometry, not by the function under test:
the fixes sit at exact binary fractions of the grid (a cell is 360 / 2^n degrees wide and
180 / 2^m high), so every crossing falls at a fraction of the way that is exact too.

    python -m tests.support.golden_spread --write    # rewrite tests/golden/spread.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pygeohash

from ais_pipeline.rules.spread import cell_size

GOLDEN = Path(__file__).parents[1] / "golden" / "spread.json"
PANE_S = 60


def grid(precision: int, lat: float, lon: float) -> tuple[float, float, float, float]:
    """The grid line west of ``lon`` and south of ``lat`` at ``precision``, and the cell size."""
    w, h = cell_size(precision)
    x = -180.0 + int((lon + 180.0) // w) * w
    y = -90.0 + int((lat + 90.0) // h) * h
    return x, y, w, h


def cell(precision: int, lat: float, lon: float) -> str:
    return str(pygeohash.encode(lat, lon, precision))


def case(name: str, why: str, precision: int, a: tuple[float, float, float], b: tuple[float, float, float],
         pieces: list[tuple[tuple[float, float], int, int]]) -> dict[str, Any]:  # fmt: skip
    """``a``, ``b``: (t seconds, lat, lon); ``pieces``: (a point inside the piece's cell, pane
    start in seconds, milliseconds)."""
    return {
        "name": name,
        "why": why,
        "precision": precision,
        "pane_s": PANE_S,
        "from": {"t": a[0], "lat": a[1], "lon": a[2]},
        "to": {"t": b[0], "lat": b[1], "lon": b[2]},
        "expect": [[cell(precision, *point), pane, ms] for point, pane, ms in pieces],
    }


def cases() -> list[dict[str, Any]]:
    x, y, w, h = grid(6, 54.0, 10.0)  # a grid corner in the Baltic: (53.99978, 9.99756)
    mid = y + h / 2
    x5, y5, w5, h5 = grid(5, 54.0, 10.0)
    x7, y7, w7, h7 = grid(7, 54.0, 10.0)
    east = 180.0 - w / 4
    return [
        case("a segment inside one cell", "both fixes in one cell, within one pane: all 40 s there", 6,
             (0, mid, x + w / 8), (40, mid + h / 4, x + w / 2), [((mid, x + w / 4), 0, 40_000)]),
        case("across two cells", "a quarter of the way in the west cell, three quarters in the east one:"
             " 10 s and 30 s of 40 s", 6, (0, mid, x - w / 4), (40, mid, x + 3 * w / 4),
             [((mid, x - w / 8), 0, 10_000), ((mid, x + w / 2), 0, 30_000)]),
        case("through a cell corner", "the diagonal through a corner: half in the south-west cell, half in the"
             " north-east one, nothing in the two it touches at the corner only", 6,
             (0, y - h / 2, x - w / 2), (60, y + h / 2, x + w / 2),
             [((y - h / 4, x - w / 4), 0, 30_000), ((y + h / 4, x + w / 4), 0, 30_000)]),
        case("along a cell edge", "a line along the edge between two rows of cells: a point on an edge belongs to"
             " the cell north of it, so half goes to each of the two cells north of the line", 6,
             (0, y, x - w / 2), (60, y, x + w / 2),
             [((y + h / 2, x - w / 4), 0, 30_000), ((y + h / 2, x + w / 4), 0, 30_000)]),
        case("across the antimeridian, the short way", "from a quarter of a cell west of 180 to three quarters east"
             " of -180: 10 s at the eastern edge of the map, 30 s at its western edge (not the long way round)", 6,
             (0, mid, east), (40, mid, -180.0 + 3 * w / 4),
             [((mid, 180.0 - w / 8), 0, 10_000), ((mid, -180.0 + w / 2), 0, 30_000)]),
        case("across a pane boundary", "inside one cell from 30 s to 90 s: 30 s in the pane at 0, 30 s in the pane"
             " at 60", 6, (30, mid, x + w / 8), (90, mid, x + w / 2),
             [((mid, x + w / 4), 0, 30_000), ((mid, x + w / 4), 60, 30_000)]),
        case("across two cells and a pane boundary", "from 30 s to 90 s, crossing into the east cell at 45 s: 15 s"
             " west, then 15 s east in the pane at 0 and 30 s east in the pane at 60", 6,
             (30, mid, x - w / 4), (90, mid, x + 3 * w / 4),
             [((mid, x - w / 8), 0, 15_000), ((mid, x + w / 2), 0, 15_000), ((mid, x + w / 2), 60, 30_000)]),
        case("a vessel that does not move", "the same fix twice, 120 s apart: a minute in each pane, in its cell", 6,
             (0, mid, x + w / 2), (120, mid, x + w / 2),
             [((mid, x + w / 2), 0, 60_000), ((mid, x + w / 2), 60, 60_000)]),
        case("precision 5", "across two cells of precision 5 (about 4.9 km wide): 10 s and 30 s of 40 s", 5,
             (0, y5 + h5 / 2, x5 - w5 / 4), (40, y5 + h5 / 2, x5 + 3 * w5 / 4),
             [((y5 + h5 / 2, x5 - w5 / 8), 0, 10_000), ((y5 + h5 / 2, x5 + w5 / 2), 0, 30_000)]),
        case("precision 7", "across four cells of precision 7 (about 150 m wide), from half a cell west of a grid"
             " line to two and a half east of it: a sixth, a third, a third and a sixth of 60 s", 7,
             (0, y7 + h7 / 2, x7 - w7 / 2), (60, y7 + h7 / 2, x7 + 5 * w7 / 2),
             [((y7 + h7 / 2, x7 - w7 / 4), 0, 10_000), ((y7 + h7 / 2, x7 + w7 / 2), 0, 20_000),
              ((y7 + h7 / 2, x7 + 3 * w7 / 2), 0, 20_000), ((y7 + h7 / 2, x7 + 9 * w7 / 4), 0, 10_000)]),
    ]  # fmt: skip


def load() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text())


def write() -> None:
    about = (
        "A segment's time spread over the geohash cells its straight line crosses, split at pane boundaries:"
        " each case's two fixes (t seconds, lat, lon), the precision, and the pieces it must give (cell, pane"
        " start in seconds, milliseconds), worked out by hand from the geometry in tests/support/golden_spread.py."
        " Run on the Python reference (tests/unit/test_spread.py)."
    )
    GOLDEN.write_text(json.dumps({"about": about, "cases": cases()}, indent=1) + "\n")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
