"""The speed baseline: the job's work in one Python process, written for speed rather than to
mirror the job's operators.

    python -m bench.lean_loop --input FILE --output DIR [flags of ais-pipeline run]

Per line it does what the job does in Python: the lane's parse and multipart groups, the
receivers' watermark, pyais decoding, exact and near dedup, static supersede and vessel hours
(the project's rule objects, :mod:`ais_pipeline.rules`). The windows, which the job runs in Java,
are dicts of pane accumulators here, added up once at the end: every window's final aggregate,
without the firings before it (revision 0; a store that upserts on the window keeps the same
row). Its outputs are the job's: the same positions, static reports, late records and dead
letters, the same final aggregates (the tests compare them with the plain loop's).
"""

from __future__ import annotations

import heapq
import json
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from ais_pipeline.config import PipelineConfig, parse_config
from ais_pipeline.errors import guarded
from ais_pipeline.files import read_lines, summarize, write_outputs
from ais_pipeline.rules import outputs
from ais_pipeline.rules.plain import END_OF_INPUT, PlainPipeline, PlainResult
from ais_pipeline.rules.records import VesselPane
from ais_pipeline.rules.windows import SLIDING, TUMBLING, PaneAcc, _aggregate


class LeanPipeline(PlainPipeline):
    """The plain loop with its windows replaced by pane accumulators added up at the end."""

    def __init__(self, config: PipelineConfig, now_ms: int | None = None) -> None:
        super().__init__(config, now_ms)
        self.panes: defaultdict[str, dict[int, PaneAcc]] = defaultdict(dict)

    def _pane(self, pane: VesselPane) -> None:
        cell = self.panes[pane.cell]
        acc = cell.get(pane.pane_start)
        if acc is None:
            acc = cell[pane.pane_start] = PaneAcc()
        acc.add(pane)

    def _advance(self, watermark: int) -> None:
        """The watermark moves: the vessels' timers that fall due fire (there are no cell timers)."""
        self.watermark = watermark
        self.op_watermark["vessels"] = watermark
        heap = self._timers["vessels"]
        while heap and heap[0][0] <= watermark:
            ts, key = heapq.heappop(heap)
            self._queued["vessels"].discard((ts, key))
            store = self.vessels[key]  # type: ignore[index]
            self.vessel_logic.on_timer(store, ts, key)  # type: ignore[arg-type]
            self._released()
            self._collect_timers("vessels", key, store)
            if store.meta() is None:
                self.vessels.pop(key, None)  # type: ignore[call-overload]

    def finish(self) -> PlainResult:
        self.parser.expire(self.groups, self.groups.pending(), end_of_input=True)
        self._drain()
        self._advance(END_OF_INPUT)
        spec = self.windows.spec
        size, slide_size, slide = spec.window_ms, spec.slide_size_ms, spec.slide_ms
        out = self.out.aggregates
        for cell in sorted(self.panes):
            panes = self.panes[cell]
            starts = sorted(panes)
            windows: set[tuple[str, int]] = set()
            for p in starts:
                windows.add((TUMBLING, p - p % size))
                first = p - p % slide - slide_size + slide
                windows.update((SLIDING, s) for s in range(first, p + 1, slide))
            for kind, start in sorted(windows):
                end = start + (size if kind == TUMBLING else slide_size)
                inside = [panes[p] for p in starts if start <= p < end]
                agg = _aggregate(kind, cell, start, end, inside, 0)
                if agg is not None:
                    out.append(outputs.aggregate_json(agg, slide))
        return self.out


def main(argv: Sequence[str]) -> int:
    config = parse_config(argv)
    started = time.monotonic()
    lines = 0

    def counted() -> object:
        nonlocal lines
        for line in read_lines(config.input_path):
            lines += 1
            yield line

    pipeline = LeanPipeline(config)
    pipeline.feed(counted())  # type: ignore[arg-type]
    result = pipeline.finish()
    output_dir = config.output_dir or Path("out/lean")
    write_outputs(result, output_dir)
    summary = summarize(result.tallies, lines, output_dir)
    summary["seconds"] = round(time.monotonic() - started, 3)
    (output_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(outputs.format_summary(summary))
    return 0


if __name__ == "__main__":
    sys.exit(guarded(main, sys.argv[1:]))
