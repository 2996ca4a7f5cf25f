"""Golden cases of the gap coverage: steps of pane contributions, gap records and watermarks, and
what each step emits, from the Python reference (:mod:`ais_pipeline.rules.coverage`). The same
file is run against the Java operator (``java/src/test/java/ais/flink/GapCoverageTest.java``).
Run ``python -m tests.support.golden_coverage --write`` to write the emits of new cases; check
them by hand first.

A watermark step fires every cell timer at or below it, oldest first; each cell arms one timer,
its next step (:meth:`CellCoverage.next_timer`), after each input and timer. A case with
``state_left_at_end`` false must leave no hour, waiting gap, pin or timer behind.
"""

from __future__ import annotations

import heapq
import json
import sys
from pathlib import Path
from typing import Any

import pygeohash

from ais_pipeline.rules import outputs
from ais_pipeline.rules.coverage import CellCoverage, CoverageRules, cell_of
from tests.support import golden_steps

GOLDEN = Path(__file__).parents[1] / "golden" / "coverage.json"


def run_case(case: dict[str, Any]) -> list[list[str]]:
    r = case["rules"]
    rules = CoverageRules(r["lateness_ms"], r["grace_ms"], r["reach_ms"], r["ttl_ms"])
    cells: dict[str, CellCoverage] = {}
    heap: list[tuple[int, str]] = []
    emitted: list[list[str]] = []

    def arm(cell: str) -> None:
        at = cells[cell].next_timer(rules)
        if at is not None and (at, cell) not in heap:
            heapq.heappush(heap, (at, cell))

    for step in case["steps"]:
        out: list[str] = []
        if "pane" in step:
            p = step["pane"]
            lat, lon, _, _ = pygeohash.decode_exactly(p["cell"])
            cell = cell_of(lat, lon)
            if p["reports"] and p["tumbling"]:
                cells.setdefault(cell, CellCoverage()).report(p["pane_start"], p["mmsi"], p["reports"])
                arm(cell)
        elif "gap" in step:
            record = json.loads(step["gap"])
            cell = cell_of(record["start_lat"], record["start_lon"])
            cells.setdefault(cell, CellCoverage()).gap(rules, outputs.gap_hours(step["gap"]), step["gap"])
            arm(cell)
        else:
            watermark = step["watermark"]
            while heap and heap[0][0] <= watermark:
                ts, cell = heapq.heappop(heap)
                out.extend(outputs.with_coverage(line, c) for line, c in cells[cell].advance(rules, cell, ts))
                arm(cell)
        emitted.append(out)
    left = {c: cov for c, cov in cells.items() if not cov.empty}
    if case.get("state_left_at_end") is False and (left or heap):
        raise AssertionError(f"{case['name']}: state or timers left: {list(left)} {heap}")
    return emitted


def load() -> dict[str, Any]:
    return golden_steps.load(GOLDEN)


def write() -> None:
    golden_steps.write_emits(GOLDEN, run_case)


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
