"""The Python operators of the job, around the rules of :mod:`ais_pipeline.rules`.

Each class holds Flink's handles (state, timers, metrics, side outputs) and hands the decisions to
:mod:`ais_pipeline.rules.parse`, :mod:`~ais_pipeline.rules.multipart` and
:mod:`~ais_pipeline.rules.dedup`. The windows run in Java (``ais.flink.CellWindows``).
Every figure of the run summary is a metric counter of the operator that decides it, and, for a
run that writes a summary, a tally record on the ``tally`` side output.
"""

from __future__ import annotations

import logging
import time
from bisect import bisect_left
from collections.abc import Iterator
from typing import Any

from pyflink.common import Row, Types
from pyflink.datastream import OutputTag
from pyflink.datastream.functions import KeyedProcessFunction, RuntimeContext

from ais_pipeline.build import check_job_build, this_build
from ais_pipeline.config import PipelineConfig
from ais_pipeline.functions.rows import from_row, in_lane_order, parsed_entry, to_columns, wire_reports
from ais_pipeline.functions.state import LaneCsv, LaneGroups, ShardVessels
from ais_pipeline.jvm import metrics
from ais_pipeline.jvm.state import key_switch
from ais_pipeline.rules import outputs
from ais_pipeline.rules.dedup import DUPLICATE_EXACT, LATE, LATE_VESSEL_MS, STATIC_FROM_ROWS, minute_tally, vessel_logic
from ais_pipeline.rules.encounters import MARKS
from ais_pipeline.rules.feeds import stamped_on_receipt
from ais_pipeline.rules.lane import LaneParser
from ais_pipeline.rules.parse import DeadLetter
from ais_pipeline.rules.records import LaneBatch, VesselPane

log = logging.getLogger(__name__)


def _tag(name: str) -> OutputTag:
    return OutputTag(name, Types.STRING())


# Side outputs: every one carries JSON Lines text (or a tally name), so a plain string type.
POSITIONS = _tag("positions")
STATIC = _tag("static")
LATE_OUT = _tag("late")
DEAD = _tag("dead_letter")
TALLY = _tag("tally")
BAD_FIXES = _tag("bad_fixes")
GAPS = _tag("gaps")
PORT_VISITS = _tag("port_visits")
LOITERING = _tag("loitering")
ENCOUNTER_MARKS = _tag(MARKS)  # each transmitter's marks, to the encounters' operators
_OUTCOME_TAGS = {
    "positions": POSITIONS, "static": STATIC, "late": LATE_OUT, "bad_fixes": BAD_FIXES, "gaps": GAPS,
    "port_visits": PORT_VISITS, "loitering": LOITERING, MARKS: ENCOUNTER_MARKS,
}  # fmt: skip


class _Tallies:
    """Metric counters of one operator, and the tally records behind summary.json."""

    def __init__(self, ctx: RuntimeContext, emit: bool, names: tuple[str, ...] = ()) -> None:
        self._group = ctx.get_metrics_group()
        self._counters: dict[str, Any] = {}
        self._emit = emit
        for name in names:  # registered up front, so that the web UI lists them from the start
            self._counters[name] = self._group.counter(name)

    def duplicate_ratio_gauge(self) -> None:
        """``duplicate_ratio``: exact and near duplicates over all valid positions decided (the
        kept ones counted as they arrive, before their judgement), over this operator's counters,
        computed in Java (PyFlink's Python gauges report whole numbers
        only). Thread mode only (PyFlink's embedded metric classes); skipped otherwise."""
        names = (POSITIONS_ARRIVED, "duplicates_exact", "duplicates_near")
        metrics.duplicate_ratio_gauge(self._group, [self._counters[n] for n in names])

    def count(self, name: str, n: int = 1) -> Iterator[tuple[OutputTag, str]]:
        """Count in the metrics, and emit the tally records a run summary adds up."""
        self.metric(name, n)
        if self._emit:
            for _ in range(n):
                yield TALLY, name

    def metric(self, name: str, n: int = 1) -> None:
        """Count in the operator's metrics only: for figures whose records are an output anyway."""
        counter = self._counters.get(name)
        if counter is None:
            counter = self._counters[name] = self._group.counter(name)
        counter.inc(n)

    def dead(self, dead: DeadLetter) -> Iterator[tuple[OutputTag, str]]:
        """Dead-letter a record, and count it by reason in the metrics (the summary counts the
        dead-letter output itself)."""
        self.metric("dead_letter_" + dead.reason)
        yield DEAD, outputs.dead_letter_json(dead)


END_OF_INPUT_TIMER = 2**63 - 2
# Kept positions as they arrive, before their judgement (the duplicate ratio's base, a metric).
POSITIONS_ARRIVED = "positions_arrived"  # fires only on Flink's final watermark, at the end of a bounded input


class ParseLines(KeyedProcessFunction):
    """Keyed by lane (``ais.flink.LineBatches`` keys each source subtask's batches so that they
    stay on the subtask that reads them): batches of raw lines (``LaneBatch``: the lines Java's
    ``ais.flink.FastSentences`` left, and the entries of those it parsed) to the lane's entries
    for the watermark stage, in the lane's order (:class:`ais_pipeline.rules.lane.LaneParser`,
    which reassembles multipart groups in the lane's order); everything else is counted or
    dead-lettered with a reason.

    Output: one batch of columns per batch of lines (``ais_pipeline.functions.rows.parsed_type``): each
    entry's ``assigned`` event time (what it moves the watermark with; ``TIME_UNKNOWN`` for
    none), its ``source`` (receiver), and its report, if it has one (single-sentence, or a
    multipart group's last fragment), for ``ais.flink.ReceiverWatermarks``, which stamps each
    report with the watermark it was read under. Reports further ahead of the wall clock than
    the maximum clock skew are dead-lettered here and never reach the watermark. Pending groups
    are in keyed map state; a group whose deadline (wall clock) passes, or that is pending when
    the input ends, is dead-lettered.
    """

    def __init__(self, config: PipelineConfig, emit_tallies: bool) -> None:
        self.config = config.without_secrets()  # pickled into the job graph: no passwords in it
        self.emit_tallies = emit_tallies
        self.job_build = this_build()
        marker, _, text = config.test_fail_once.partition("=")
        self.fail_marker, self.fail_text = marker, text

    def _injected_failure(self, line: str) -> None:
        """Test-only (--test-fail-once MARKER=TEXT): throw once on a line containing TEXT."""
        import os

        if self.fail_text in line and not os.path.exists(self.fail_marker):
            with open(self.fail_marker, "w") as fh:
                fh.write(line)
            raise RuntimeError(f"injected failure on a line containing {self.fail_text!r} (--test-fail-once)")

    def open(self, runtime_context: RuntimeContext) -> None:
        check_job_build(self.job_build)
        config = self.config
        self.parser = LaneParser(
            config.input_format, config.max_clock_skew_ms, config.multipart_timeout_ms, config.input_time_ms
        )
        self.groups = LaneGroups(runtime_context)
        self.csv = LaneCsv(runtime_context)
        self.end_timer_armed = False
        self.tallies = _Tallies(
            runtime_context,
            self.emit_tallies,
            (
                "lines",
                "skipped",
                "not_ais",
                "other_types",
                "no_time",
                "stamped_on_receipt",
                "time_disagreements",
                "fragments_joined",
            ),
        )

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Iterator[Any]:
        # The batch of Row(lane, LaneBatch): PyFlink hands a keyed operator the record alone.
        batch = from_row(LaneBatch, value)
        self.tallies.metric("lines", batch.total)
        timers = ctx.timer_service()
        self.groups.timers = timers
        if not self.end_timer_armed:
            timers.register_event_time_timer(END_OF_INPUT_TIMER)
            self.end_timer_armed = True
        parser, groups = self.parser, self.groups
        self.csv.load(parser)
        now = int(time.time() * 1000)
        entries: list[tuple[int, tuple[Any, ...]]] = []
        stamped = 0
        # A file's lane clock: the plain sentences Java parsed tell their times too, in line order.
        fast_at = batch.fast_at if parser.untimed_ms is not None else []
        told_at = -1  # the place in the batch of the latest line that told the lane a time
        for at, line in zip(batch.line_at, batch.lines, strict=True):
            if self.fail_text:
                self._injected_failure(line)
            if fast_at:
                i = bisect_left(fast_at, at) - 1
                if i >= 0 and fast_at[i] > told_at:
                    parser.told_by(batch.assigned[i])
                    told_at = fast_at[i]
            received = stamped_on_receipt(line)
            stamped += received
            tells = parser.tells
            entry = parser.line(line, now, groups)
            if parser.tells != tells:
                told_at = at
            if entry is not None:
                entries.append((at, parsed_entry(entry.assigned, entry.source, entry.report, received)))
        if fast_at and fast_at[-1] > told_at:
            parser.told_by(batch.assigned[-1])
        stamped += sum(batch.received)  # the plain sentences stamped on receipt, parsed in Java
        self.csv.save(parser)
        if stamped:
            self.tallies.metric("stamped_on_receipt", stamped)
        if self.emit_tallies:  # the lines the summary accounts for, as the source read them
            yield TALLY, outputs.counted_tally("lines", batch.total)
            if stamped:
                yield TALLY, outputs.counted_tally("stamped_on_receipt", stamped)
        yield from self._drain()
        merged = in_lane_order(batch, entries)
        if merged[0]:
            yield Row(*merged)

    def _drain(self) -> Iterator[Any]:
        parser = self.parser
        for tally in parser.tallies:
            yield from self.tallies.count(tally)
        parser.tallies.clear()
        for dead in parser.dead:
            yield from self.tallies.dead(dead)
        parser.dead.clear()

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Iterator[Any]:
        self.groups.timers = ctx.timer_service()
        if timestamp == END_OF_INPUT_TIMER:
            self.parser.expire(self.groups, self.groups.pending(), end_of_input=True)
        else:
            self.parser.expire(self.groups, self.groups.expired(timestamp), end_of_input=False)
        yield from self._drain()


class _Batch:
    """The records one call of a batched operator emits: one record per output, lines joined
    (split again in Java, ``ais.flink.SplitLines``), and metric counts added up."""

    __slots__ = ("counts", "lines")

    def __init__(self) -> None:
        self.lines: dict[OutputTag, list[str]] = {}
        self.counts: dict[str, int] = {}

    def add(self, tag: OutputTag, line: str) -> None:
        lines = self.lines.get(tag)
        if lines is None:
            lines = self.lines[tag] = []
        lines.append(line)

    def count(self, name: str, n: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + n

    def emit(self, tallies: _Tallies) -> Iterator[tuple[OutputTag, str]]:
        for name, n in self.counts.items():
            tallies.metric(name, n)
        for tag, lines in self.lines.items():
            yield tag, "\n".join(lines)


class DedupVessel(KeyedProcessFunction):
    """Keyed by vessel shard (MMSI mod the job's maximum parallelism): batches of reports of every
    shard of the subtask, each lane's in its order, and a marker per shard
    (``ais.flink.KeyedBatches``; :class:`ais_pipeline.functions.state.ShardVessels`). Its main
    output is the vessels' pane contributions, one batch of columns (``VesselPane``) per call, for the Java window
    operator; positions, static reports, late reports, dead letters and tallies go to side
    outputs, one record of JSON Lines per output and batch."""

    def __init__(self, config: PipelineConfig, emit_tallies: bool, shards: int) -> None:
        self.logic = vessel_logic(config)
        self.emit_tallies = emit_tallies
        self.shards = shards  # the vessel shards: the job's maximum parallelism
        self.cache_limit = config.vessel_cache  # vessels held as Python objects per subtask (0: all)
        self.vessels_held: Any = None  # the vessels_held gauge: every vessel in the subtask's state
        self.vessels_cached: Any = None  # the vessels_cached gauge: those held as Python objects
        self.shown: dict[str, int] = {}
        self.keys_held: Any = None  # the dedup_keys_held gauge (ais.flink.SetGauge)
        self.gap_keys_held: Any = None  # the gap_keys_held gauge: vessels kept only for their gap
        self.job_build = this_build()

    def open(self, runtime_context: RuntimeContext) -> None:
        check_job_build(self.job_build)
        logic, limit = self.logic, self.cache_limit
        switch = key_switch(runtime_context) if limit else None
        if limit and switch is None:
            log.warning(
                "--vessel-cache %d: no keyed state backend to reach here (process mode): every vessel is held", limit
            )
        self.store = ShardVessels(runtime_context, logic.new_track, logic.new_gaps, self.shards, limit, switch)
        self.tallies = _Tallies(
            runtime_context,
            self.emit_tallies,
            (
                POSITIONS_ARRIVED,
                "positions_kept",
                "bad_fixes",
                "static_kept",
                "duplicates_exact",
                "duplicates_near",
                "static_duplicates",
                "no_position",
                "late",
                LATE_VESSEL_MS,
            ),
        )
        group = runtime_context.get_metrics_group()
        self.keys_held = metrics.set_gauge(group, "dedup_keys_held")
        self.gap_keys_held = metrics.set_gauge(group, "gap_keys_held")
        self.vessels_held = metrics.set_gauge(group, "vessels_held")
        self.vessels_cached = metrics.set_gauge(group, "vessels_cached")
        self.tallies.duplicate_ratio_gauge()

    def process_element(self, batch: Any, ctx: Any) -> Iterator[Any]:
        self.store.bind(ctx.get_current_key(), ctx.timer_service())
        reports, copies = wire_reports(batch)
        if not reports and not copies:  # a marker (an empty batch) for the key's shard: load it, or write it behind
            self.store.marker()
            self.show_keys_held()
            return
        out = _Batch()
        if copies:  # decided in Java (ais.flink.ExactCopies): counted here, by minute
            out.count(DUPLICATE_EXACT, len(copies))
            if self.emit_tallies:
                for ts in copies:
                    out.add(TALLY, minute_tally(DUPLICATE_EXACT, ts))
        panes: list[VesselPane] = []
        logic, store, emit_tallies = self.logic, self.store, self.emit_tallies
        store.prefetch(report.mmsi for report in reports)
        for report in reports:
            # The watermark the report was parsed under is never behind this operator's own
            # (the minimum over all the channels the report's one is among), and reproducible.
            outcome, pane = logic.process(store.vessel(report.mmsi), report, report.watermark)
            for name, text in outcome.records():
                out.add(_OUTCOME_TAGS[name], text)
            if outcome.row_static is not None:
                out.count(STATIC_FROM_ROWS)
                if emit_tallies:
                    out.add(TALLY, STATIC_FROM_ROWS)
            dead = outcome.dead_letter()
            if dead is not None:
                out.count("dead_letter_" + dead.reason)
                out.add(DEAD, outputs.dead_letter_json(dead))
            elif outcome.held:  # a held position is counted as kept (or bad) when it is judged
                out.count(POSITIONS_ARRIVED)
            else:
                out.count(outcome.kind)
                tally = outcome.tally
                if tally is not None and emit_tallies:
                    out.add(TALLY, tally)
                    if outcome.kind == LATE:
                        out.add(TALLY, outputs.receiver_tally(LATE, report.receiver))
                for window in outcome.late_windows:
                    out.count("late_records_" + window)
            if pane is not None:
                panes.append(pane)
            if logic.released:
                panes.extend(logic.released)
                logic.released.clear()
        yield from self._emit(panes, out)

    def _emit(self, panes: list[VesselPane], out: _Batch) -> Iterator[Any]:
        """The pane contributions of one call, then its side outputs: what the rules released
        (accepted fixes, bad fixes), with what they counted (late time is a summary figure; the
        rest are metrics)."""
        logic = self.logic
        for name, line in logic.records:
            out.add(_OUTCOME_TAGS[name], line)
        logic.records.clear()
        for name, n in logic.counts.items():
            out.count(name, n)
            if name == LATE_VESSEL_MS and self.emit_tallies:
                out.add(TALLY, outputs.counted_tally(name, n))
        logic.counts.clear()
        self.store.evict()
        if panes:
            yield to_columns(panes)
        yield from out.emit(self.tallies)
        self.show_keys_held()

    def on_timer(self, timestamp: int, ctx: Any) -> Iterator[Any]:
        self.store.bind(ctx.get_current_key(), ctx.timer_service())
        panes: list[VesselPane] = []
        logic = self.logic
        watermark = ctx.timer_service().current_watermark()
        final = watermark > END_OF_INPUT_TIMER  # the input's end: no time passed

        def fire(vessel: Any, ts: int, mmsi: int) -> None:
            logic.on_timer(vessel, ts, mmsi, final)
            panes.extend(logic.released)
            logic.released.clear()

        # Every timer up to the watermark in one call (a watermark that jumps, as at the input's
        # end, may make every vessel due): each vessel's in their order, each vessel read once,
        # and what each chunk of vessels released emitted before the next one is read.
        for _ in self.store.fire(timestamp, watermark, fire):
            yield from self._emit(panes, _Batch())
            panes.clear()

    def show_keys_held(self) -> None:
        store = self.store
        for name, gauge, value in (
            ("dedup_keys_held", self.keys_held, store.keys_held()),
            ("gap_keys_held", self.gap_keys_held, store.gap_keys_held()),
            ("vessels_held", self.vessels_held, store.vessels_held),
            ("vessels_cached", self.vessels_cached, store.cached()),
        ):
            if gauge is not None and self.shown.get(name) != value:  # a JVM call only on change
                gauge.set(value)
                self.shown[name] = value
