"""The golden window cases (``tests/golden/windows.json``), run on the Python reference.

A case is a window spec and steps: a contribution (a ``VesselPane``, judged against the current
watermark) or a watermark (every cell timer at or below it fires, oldest first, as Flink fires
event-time timers). Each step lists the aggregates it emits, and may give ``timers_pending``, the
number of event-time timers (distinct cell and time) registered and not yet fired after it. The
same file is run against the Java operator (``java/src/test/java/ais/flink/CellWindowsTest.java``),
so the two cannot drift.

    python -m tests.support.golden_windows --write    # rewrite the expected outputs from the reference
"""

from __future__ import annotations

import heapq
import json
import sys
from pathlib import Path
from typing import Any

from ais_pipeline.rules.outputs import aggregate_json
from ais_pipeline.rules.records import VesselPane
from ais_pipeline.rules.windows import CellWindows, DictCellStore, WindowSpec
from tests.support import golden_steps

GOLDEN = Path(__file__).parents[1] / "golden" / "windows.json"
TIME_UNKNOWN = -(2**63)


def run_case(case: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """The aggregates each step emits (as parsed JSON), in the order they are emitted."""
    s = case["spec"]
    kinds = s.get("kinds", ["tumbling", "sliding"])  # the window kinds computed (--windows)
    spec = WindowSpec(
        s["window_ms"], s["slide_size_ms"], s["slide_ms"], s["lateness_ms"], s.get("grace_ms", 0),
        tumbling="tumbling" in kinds, sliding="sliding" in kinds,
    )  # fmt: skip
    windows = CellWindows(spec)
    cells: dict[str, DictCellStore] = {}
    heap: list[tuple[int, str]] = []
    queued: set[tuple[int, str]] = set()
    watermark = TIME_UNKNOWN
    emitted: list[list[dict[str, Any]]] = []

    def collect(cell: str, store: DictCellStore) -> None:
        for ts in store.timers:
            if (ts, cell) not in queued:
                queued.add((ts, cell))
                heapq.heappush(heap, (ts, cell))
        store.timers.clear()

    for step in case["steps"]:
        out: list[dict[str, Any]] = []
        if "contribution" in step:
            v = VesselPane(**step["contribution"])
            store = cells.setdefault(v.cell, DictCellStore())
            out = [json.loads(aggregate_json(a, s["slide_ms"])) for a in windows.on_contribution(store, v, watermark)]
            collect(v.cell, store)
        else:
            watermark = max(watermark, step["watermark"])
            while heap and heap[0][0] <= watermark:
                ts, cell = heapq.heappop(heap)
                queued.discard((ts, cell))
                store = cells[cell]
                out.extend(json.loads(aggregate_json(a, s["slide_ms"])) for a in windows.on_timer(store, cell, ts))
                collect(cell, store)
        if "timers_pending" in step and len(heap) != step["timers_pending"]:
            raise AssertionError(f"{case['name']}: {len(heap)} timers pending, not {step['timers_pending']}: {heap}")
        emitted.append(out)
    leftover = {c: (st.panes(), st.revisions()) for c, st in cells.items() if st.panes() or st.revisions()}
    if case.get("state_left_at_end") is False and (leftover or heap):
        raise AssertionError(f"{case['name']}: state or timers left: {leftover} {heap}")
    return emitted


def load() -> dict[str, Any]:
    return golden_steps.load(GOLDEN)


def write() -> None:
    golden_steps.write_emits(GOLDEN, run_case)


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
