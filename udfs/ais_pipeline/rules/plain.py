"""The same job as one plain Python loop: no Flink, dicts for state, a heap for timers.

It runs the very logic the Flink operators run (the lane's parse and multipart, the receivers'
watermark, exact copies, dedup, encounters, windows) with Flink's event-time rules at parallelism
1: a line is judged against the watermark of the lines before it; when a line moves the watermark,
the timers that fall due fire operator by operator: the exact copies', the vessels', the
encounters' steps', the cells'. It is the
alternative a user would write by hand, the oracle the Flink job is tested against, and the
benchmark's baseline. No file is read or written here: ``python -m ais_pipeline.tools.plain`` runs
it on files.
"""

from __future__ import annotations

import heapq
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from ais_pipeline.config import PipelineConfig
from ais_pipeline.rules import outputs
from ais_pipeline.rules.copies import SeenIdentities
from ais_pipeline.rules.coverage import CellCoverage, cell_of
from ais_pipeline.rules.dedup import (
    DUPLICATE_EXACT,
    LATE,
    LATE_VESSEL_MS,
    STATIC_FROM_ROWS,
    DictVesselStore,
    coverage_rules_of,
    encounter_steps,
    encounter_where,
    exact_copies,
    minute_tally,
    vessel_logic,
    window_spec,
)
from ais_pipeline.rules.encounters import MARKS, EncounterFlow
from ais_pipeline.rules.lane import DictGroupStores, LaneParser
from ais_pipeline.rules.parse import DeadLetter
from ais_pipeline.rules.records import TIME_UNKNOWN, Report, VesselPane
from ais_pipeline.rules.watermarks import ReceiverWatermarks
from ais_pipeline.rules.windows import CellWindows, DictCellStore

END_OF_INPUT = 2**63 - 1  # Flink's final watermark
TIMER_KINDS = ("copies", "vessels", "cells", "coverage")  # the operators with timers, upstream first


@dataclass
class PlainResult:
    positions: list[str] = field(default_factory=list)
    static: list[str] = field(default_factory=list)
    aggregates: list[str] = field(default_factory=list)
    late: list[str] = field(default_factory=list)
    dead_letter: list[str] = field(default_factory=list)
    bad_fixes: list[str] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)
    port_visits: list[str] = field(default_factory=list)
    loitering: list[str] = field(default_factory=list)
    encounters: list[str] = field(default_factory=list)
    tallies: Counter[str] = field(default_factory=Counter)

    @property
    def totals(self) -> Counter[str]:
        """The tallies per summary figure (per-minute tallies added up)."""
        return outputs.tally_totals(self.tallies)

    def named(self) -> dict[str, list[str]]:
        return {name: getattr(self, name) for name in outputs.OUTPUTS}


class PlainPipeline:
    def __init__(self, config: PipelineConfig, now_ms: int | None = None) -> None:
        self.config = config
        self.now_ms = now_ms
        spec = window_spec(config)
        self.parser = LaneParser(
            config.input_format, config.max_clock_skew_ms, config.multipart_timeout_ms, config.input_time_ms
        )
        self.clocks = ReceiverWatermarks(
            config.out_of_orderness_ms,
            config.idle_timeout_ms,
            config.max_clock_skew_ms,
            warm_up_lines=config.watermark_warm_up,
        )
        self.copies = exact_copies(config)
        self.vessel_logic = vessel_logic(config)
        self.windows = CellWindows(spec)
        # Keyed state: a store per key, made on first use, as Flink's keyed state is.
        self.groups = DictGroupStores()
        self.seen: dict[int, SeenIdentities] = {}
        self.vessels: defaultdict[int, DictVesselStore] = defaultdict(DictVesselStore)
        self.cells: defaultdict[str, DictCellStore] = defaultdict(DictCellStore)
        # Gaps on: what the stream heard around each gap, per 1-degree cell.
        self.coverage_rules = coverage_rules_of(config)
        self.coverage: defaultdict[str, CellCoverage] = defaultdict(CellCoverage)
        # Encounters on: their three keyed steps (cells, tracks, pairs), after the vessels'.
        steps = encounter_steps(config)
        self.encounters = None if steps is None else EncounterFlow(steps, encounter_where(config))
        # One heap of (time, key) per operator, and the set of (time, key) already queued.
        self._timers: dict[str, list[tuple[int, object]]] = {k: [] for k in TIMER_KINDS}
        self._queued: dict[str, set[tuple[int, object]]] = {k: set() for k in TIMER_KINDS}
        self.watermark = TIME_UNKNOWN  # the lane's
        # Each operator's own watermark: it moves when the watermark reaches that operator, after
        # the operators upstream have fired their timers (and sent on what those emitted).
        self.op_watermark = dict.fromkeys(TIMER_KINDS, TIME_UNKNOWN)
        self.out = PlainResult()

    # -- stores -------------------------------------------------------------------------------
    def _collect_timers(self, kind: str, key: object, store: DictVesselStore | DictCellStore) -> None:
        for ts in store.timers:
            if (ts, key) not in self._queued[kind]:
                self._queued[kind].add((ts, key))
                heapq.heappush(self._timers[kind], (ts, key))  # type: ignore[misc]
        store.timers.clear()

    # -- operators -----------------------------------------------------------------------------
    def _dead(self, dead: DeadLetter) -> None:
        self.out.dead_letter.append(outputs.dead_letter_json(dead))

    def _timer(self, kind: str, ts: int, key: object) -> None:
        if (ts, key) not in self._queued[kind]:
            self._queued[kind].add((ts, key))
            heapq.heappush(self._timers[kind], (ts, key))  # type: ignore[misc]

    def _report(self, report: Report) -> None:
        mmsi = report.mmsi
        copy, self.seen[mmsi], timer = self.copies.decide(
            self.seen.get(mmsi), report.ts, report.msg_type, report.identity
        )
        if timer is not None:
            self._timer("copies", timer, mmsi)
        if copy:
            self.out.tallies[minute_tally(DUPLICATE_EXACT, report.ts)] += 1
            return
        store = self.vessels[mmsi]
        outcome, pane = self.vessel_logic.process(store, report, self.watermark)
        self._collect_timers("vessels", report.mmsi, store)
        for name, text in outcome.records():
            self._record(name, text)
        if outcome.row_static is not None:
            self.out.tallies[STATIC_FROM_ROWS] += 1
        dead = outcome.dead_letter()
        if dead is not None:
            self._dead(dead)
        elif outcome.tally is not None:
            self.out.tallies[outcome.tally] += 1
            if outcome.kind == LATE:
                self.out.tallies[outputs.receiver_tally(LATE, report.receiver)] += 1
        if pane is not None:
            self._pane(pane)
        self._released()

    def _released(self) -> None:
        """What the dedup rules released: accepted and bad fixes to their outputs, reports and
        vessel time to the cells; the late part of the time to the tallies."""
        logic = self.vessel_logic
        for name, line in logic.records:
            self._record(name, line)
        logic.records.clear()
        for pane in logic.released:
            self._pane(pane)
        logic.released.clear()
        late_ms = logic.counts.get(LATE_VESSEL_MS)
        if late_ms:
            self.out.tallies[LATE_VESSEL_MS] += late_ms
        logic.counts.clear()

    def _record(self, name: str, line: str) -> None:
        if name == MARKS:
            if self.encounters is not None:
                self.encounters.mark(line)
        elif name == "gaps" and self.coverage_rules is not None:
            gap = outputs.gap_hours(line)
            start = cell_of(*gap_start(line))
            self.coverage[start].gap(self.coverage_rules, gap, line)
            self._coverage_timer(start)
        else:
            getattr(self.out, name).append(line)

    def _coverage_timer(self, cell: str) -> None:
        assert self.coverage_rules is not None
        at = self.coverage[cell].next_timer(self.coverage_rules)
        if at is not None and (at, cell) not in self._queued["coverage"]:
            self._queued["coverage"].add((at, cell))
            heapq.heappush(self._timers["coverage"], (at, cell))

    def _pane(self, pane: VesselPane) -> None:
        if self.coverage_rules is not None and pane.reports and pane.tumbling:
            cell = cell_of(*geohash_center(pane.cell))
            self.coverage[cell].report(pane.pane_start, pane.mmsi, pane.reports)
            self._coverage_timer(cell)
        store = self.cells[pane.cell]
        for agg in self.windows.on_contribution(store, pane, self.op_watermark["cells"]):
            self.out.aggregates.append(outputs.aggregate_json(agg, self.windows.spec.slide_ms))
        self._collect_timers("cells", pane.cell, store)

    def _advance(self, watermark: int) -> None:
        """The watermark moves: fire due timers operator by operator, as Flink forwards it."""
        self.watermark = watermark
        for kind in TIMER_KINDS:
            self.op_watermark[kind] = watermark
            heap = self._timers[kind]
            while heap and heap[0][0] <= watermark:
                ts, key = heapq.heappop(heap)
                self._queued[kind].discard((ts, key))
                if kind == "copies":
                    seen, timer = self.copies.on_timer(self.seen[key], ts)  # type: ignore[index]
                    if seen is None:
                        del self.seen[key]  # type: ignore[arg-type]
                    elif timer is not None:
                        self._timer("copies", timer, key)
                elif kind == "vessels":
                    vstore = self.vessels[key]  # type: ignore[index]
                    final = watermark == END_OF_INPUT
                    self.vessel_logic.on_timer(vstore, ts, key, final)  # type: ignore[arg-type]
                    self._released()
                    self._collect_timers("vessels", key, vstore)
                    if vstore.meta() is None:
                        self.vessels.pop(key, None)  # type: ignore[call-overload]
                elif kind == "coverage":
                    self._coverage(key, ts)  # type: ignore[arg-type]
                else:
                    cstore = self.cells[key]  # type: ignore[index]
                    for agg in self.windows.on_timer(cstore, key, ts):  # type: ignore[arg-type]
                        self.out.aggregates.append(outputs.aggregate_json(agg, self.windows.spec.slide_ms))
                    self._collect_timers("cells", key, cstore)
            if kind == "vessels" and self.encounters is not None:
                self.encounters.advance(watermark, final=watermark == END_OF_INPUT)
                self.out.encounters += [line for line, _ in self.encounters.records]
                self.encounters.records.clear()

    def _coverage(self, cell: str, ts: int) -> None:
        assert self.coverage_rules is not None
        coverage = self.coverage[cell]
        for line, counted in coverage.advance(self.coverage_rules, cell, ts):
            self.out.gaps.append(outputs.with_coverage(line, counted))
        if coverage.empty:
            del self.coverage[cell]
        else:
            self._coverage_timer(cell)

    # -- input ---------------------------------------------------------------------------------
    def feed(self, lines: Iterable[str]) -> None:
        parser, groups, clocks, out = self.parser, self.groups, self.clocks, self.out
        for line in lines:
            now = self.now_ms if self.now_ms is not None else int(time.time() * 1000)
            entry = parser.line(line, now, groups)
            self._drain()
            if entry is None:
                continue
            if entry.report is not None:
                self._report(entry.report)
            flag = clocks.observe(entry.source, entry.assigned)
            if flag is not None:
                out.tallies[outputs.receiver_tally(flag, entry.source)] += 1
            if clocks.watermark > self.watermark:
                self._advance(clocks.watermark)

    def _drain(self) -> None:
        parser = self.parser
        if parser.tallies:
            self.out.tallies.update(parser.tallies)
            parser.tallies.clear()
        if parser.dead:
            for dead in parser.dead:
                self._dead(dead)
            parser.dead.clear()

    def finish(self) -> PlainResult:
        """End of input: every pending group is dead-lettered; the final watermark fires every
        timer left."""
        self.parser.expire(self.groups, self.groups.pending(), end_of_input=True)
        self._drain()
        self._advance(END_OF_INPUT)
        return self.out


def run_plain(config: PipelineConfig, lines: Iterable[str], now_ms: int | None = None) -> PlainResult:
    pipeline = PlainPipeline(config, now_ms)
    pipeline.feed(lines)
    return pipeline.finish()


def geohash_center(cell: str) -> tuple[float, float]:
    import pygeohash

    lat, lon, _, _ = pygeohash.decode_exactly(cell)
    return lat, lon


def gap_start(line: str) -> tuple[float, float]:
    import json

    record = json.loads(line)
    return record["start_lat"], record["start_lon"]
