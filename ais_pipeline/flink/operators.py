"""The Python operators of the job, around the rules of :mod:`ais_pipeline.rules`.

Each class holds Flink's handles (state, timers, metrics, side outputs) and hands the decisions to
:mod:`ais_pipeline.rules.parse`, :mod:`~ais_pipeline.rules.multipart` and
:mod:`~ais_pipeline.rules.dedup`. The windows run in Java (``ais.flink.CellWindows``).
Every figure of the run summary is a metric counter of the operator that decides it, and, for a
run that writes a summary, a tally record on the ``tally`` side output.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from pyflink.common import Row, Types
from pyflink.datastream import OutputTag
from pyflink.datastream.functions import (
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    ProcessFunction,
    RuntimeContext,
)
from pyflink.datastream.state import MapStateDescriptor, ValueStateDescriptor

from ais_pipeline.config import PipelineConfig
from ais_pipeline.flink import jvm
from ais_pipeline.flink.rows import from_columns, from_row, parsed_fragment, parsed_report, to_columns, to_row
from ais_pipeline.rules import outputs
from ais_pipeline.rules.dedup import VesselLogic, VesselMeta
from ais_pipeline.rules.multipart import MultipartAssembler, PendingGroup
from ais_pipeline.rules.parse import DeadLetter, Skipped, event_time, parse_line, route_line
from ais_pipeline.rules.records import TIME_UNKNOWN, Fragment, Report, VesselPane
from ais_pipeline.rules.windows import WindowSpec


def _tag(name: str) -> OutputTag:
    return OutputTag(name, Types.STRING())


# Side outputs: every one carries JSON Lines text (or a tally name), so a plain string type.
POSITIONS = _tag("positions")
STATIC = _tag("static")
LATE_OUT = _tag("late")
DEAD = _tag("dead_letter")
TALLY = _tag("tally")
_OUTCOME_TAGS = {"positions": POSITIONS, "static": STATIC, "late": LATE_OUT}


def window_spec(config: PipelineConfig) -> WindowSpec:
    return WindowSpec(config.window_ms, config.slide_size_ms, config.slide_ms, config.lateness_ms)


class _Tallies:
    """Metric counters of one operator, and the tally records behind summary.json."""

    def __init__(self, ctx: RuntimeContext, emit: bool, names: tuple[str, ...] = ()) -> None:
        self._group = ctx.get_metrics_group()
        self._counters: dict[str, Any] = {}
        self._emit = emit
        for name in names:  # registered up front, so that the web UI lists them from the start
            self._counters[name] = self._group.counter(name)

    def duplicate_ratio_gauge(self) -> None:
        """``duplicate_ratio``: exact and near duplicates over all valid positions decided, over
        this operator's counters, computed in Java (PyFlink's Python gauges report whole numbers
        only). Thread mode only (PyFlink's embedded metric classes); skipped otherwise."""
        names = ("positions_kept", "duplicates_exact", "duplicates_near")
        jvm.duplicate_ratio_gauge(self._group, [self._counters[n] for n in names])

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


class ParseLines(ProcessFunction):
    """Batches of raw lines (``ais.flink.LineBatches``) to reports and multipart fragments, each
    with the event time it moves the watermark with; everything else is counted or
    dead-lettered with a reason.

    Output: one batch of columns per batch of lines (``ais_pipeline.rules.records.parsed_type``), each line a
    report or a fragment with its ``assigned`` event time, for ``ais.flink.StampedWatermarks``,
    which stamps each with the watermark it was read under and moves the watermark.
    ``assigned`` is the line's event time, ingestion time for a report without one, or
    ``TIME_UNKNOWN`` (never moves the watermark) for a later fragment without time; reports
    further ahead of the wall clock than the maximum clock skew are dead-lettered here and never
    reach the watermark.
    """

    def __init__(self, config: PipelineConfig, emit_tallies: bool) -> None:
        self.input_format = config.input_format
        self.max_clock_skew_ms = config.max_clock_skew_ms
        self.emit_tallies = emit_tallies
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
        self.tallies = _Tallies(
            runtime_context, self.emit_tallies, ("lines", "skipped", "not_ais", "other_types", "no_time")
        )

    def process_element(self, value: Any, ctx: ProcessFunction.Context) -> Iterator[Any]:
        self.tallies.metric("lines", len(value))
        parsed: list[tuple[Any, ...]] = []
        for line in value:
            yield from self._line(line, parsed)
        if parsed:
            yield Row(*[list(column) for column in zip(*parsed, strict=True)])

    def _line(self, line: str, parsed: list[tuple[Any, ...]]) -> Iterator[Any]:
        if self.fail_text:
            self._injected_failure(line)
        result = parse_line(line, self.input_format)
        assigned = event_time(result, int(time.time() * 1000), self.max_clock_skew_ms)
        # The watermark is stamped in Java (StampedWatermarks), which knows it.
        routed = route_line(result, assigned, _no_watermark)
        for tally in routed.tallies:
            yield from self.tallies.count(tally)
        record = routed.record
        if routed.dead is not None:
            yield from self.tallies.dead(routed.dead)
        elif isinstance(record, Report):
            parsed.append(parsed_report(assigned, record))
        elif record is not None:
            parsed.append(parsed_fragment(assigned, record))


def _no_watermark() -> int:
    return TIME_UNKNOWN


END_OF_INPUT_TIMER = 2**63 - 2  # fires only on Flink's final watermark, at the end of a bounded input


class _GroupState:
    """One multipart group in keyed state; arms a processing-time deadline and an end-of-input
    timer for a new group, and disarms both when the group is done (no timer outlives it)."""

    def __init__(self, ctx: RuntimeContext) -> None:
        row = Types.ROW_NAMED(
            ["frag_cnt", "next_num", "payload", "raw", "receiver", "ts", "deadline"],
            [Types.INT(), Types.INT(), Types.STRING(), Types.STRING(), Types.STRING(), Types.LONG(), Types.LONG()],
        )
        self.state = ctx.get_state(ValueStateDescriptor("pending", row))
        self.timers: Any = None

    def get(self) -> PendingGroup | None:
        row = self.state.value()
        return None if row is None else PendingGroup(*row)

    def put(self, group: PendingGroup) -> None:
        if self.state.value() is None:
            self.timers.register_processing_time_timer(group.deadline)
            self.timers.register_event_time_timer(END_OF_INPUT_TIMER)
        self.state.update(to_row(group))

    def clear(self) -> None:
        pending = self.get()
        if pending is not None:
            self.timers.delete_processing_time_timer(pending.deadline)
            self.timers.delete_event_time_timer(END_OF_INPUT_TIMER)
        self.state.clear()


class AssembleMultipart(KeyedProcessFunction):
    """Keyed by multipart group: fragments to whole reports, broken groups to the dead letters."""

    def __init__(self, timeout_ms: int, emit_tallies: bool) -> None:
        self.timeout_ms = timeout_ms
        self.emit_tallies = emit_tallies

    def open(self, runtime_context: RuntimeContext) -> None:
        self.logic = MultipartAssembler(self.timeout_ms)
        self.store = _GroupState(runtime_context)
        self.tallies = _Tallies(runtime_context, self.emit_tallies, ("fragments_joined", "other_types"))

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Iterator[Any]:
        frag = from_row(Fragment, value)
        timers = ctx.timer_service()
        self.store.timers = timers
        step = self.logic.on_fragment(self.store, frag, timers.current_processing_time())
        if step.dead is not None:
            yield from self.tallies.dead(step.dead)
        message = step.message
        if message is None:
            return
        yield from self.tallies.count("fragments_joined", step.joined)
        if isinstance(message, Report):
            yield Row(message.mmsi, to_row(message))
        elif isinstance(message, Skipped):
            yield from self.tallies.count(message.kind)
        else:
            yield from self.tallies.dead(message)

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Iterator[Any]:
        self.store.timers = ctx.timer_service()
        dead = self.logic.expire(self.store, end_of_input=timestamp == END_OF_INPUT_TIMER)
        if dead is not None:
            yield from self.tallies.dead(dead)


_VESSEL_NAMES = ["last_lat5", "last_lon5", "last_ts", "max_ts", "pruned_at", "cleanup_at", "ids", "static"]


def _vessel_row_type() -> Any:
    """One vessel's state in the dedup operator's map state: its :class:`ais_pipeline.rules.dedup.VesselMeta`,
    the identities it has seen (identity -> first event time) and its last kept static reports
    (kind -> content and event time)."""
    static = Types.ROW_NAMED(["content", "ts"], [Types.STRING(), Types.LONG()])
    return Types.ROW_NAMED(
        _VESSEL_NAMES,
        [*[Types.LONG()] * 6, Types.MAP(Types.STRING(), Types.LONG()), Types.MAP(Types.STRING(), static)],
    )


class _VesselEntry:
    """One vessel's state as Python objects."""

    __slots__ = ("ids", "meta", "static")

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.meta: VesselMeta | None = None
        self.static: dict[str, tuple[str, int]] = {}

    def to_row(self) -> Row:
        assert self.meta is not None
        static = {k: Row(content, ts) for k, (content, ts) in self.static.items()}
        return Row(*to_row(self.meta), dict(self.ids), static)

    @classmethod
    def from_row(cls, row: Any) -> _VesselEntry:
        entry = cls()
        entry.meta = VesselMeta(*row[:6])
        entry.ids = dict(row[6] or {})
        entry.static = {k: (v[0], v[1]) for k, v in (row[7] or {}).items()}
        return entry


class _Shard:
    """What one operator instance holds of one shard in Python: its vessels or cells, the keys
    changed since they were last written to keyed state, and its timers."""

    __slots__ = ("dirty", "items", "registered", "timers_due")

    def __init__(self) -> None:
        self.items: dict[Any, Any] = {}
        self.dirty: set[Any] = set()
        self.registered: set[int] = set()  # event-time timers registered in Flink
        self.timers_due: dict[int, set[Any]] = {}  # timer -> the items it is for


class _WriteBehind:
    """Flink keyed state (keyed by shard) with a write-behind copy in Python.

    Keyed state is the truth for checkpoints, restores and rescaling; the Python copy is loaded
    from it the first time a shard is used, takes every read and write, and writes the keys that
    changed back to keyed state when a marker for the shard arrives (``ais.flink.KeyedBatches``
    sends one for every shard before every checkpoint barrier; with aligned checkpoints the
    marker comes after everything before the barrier on each channel). Only this instance writes
    its shards, and a restore starts a new instance with an empty copy, so the copy never
    disagrees with the state it was loaded from.
    """

    def __init__(self) -> None:
        self.shards: dict[int, _Shard] = {}
        self.shard = _Shard()
        self.key = 0
        self.timer_service: Any = None

    def bind(self, shard: int, timer_service: Any) -> None:
        """Point at the current key's shard (the operator has already set the key in Flink)."""
        self.timer_service = timer_service
        self.key = shard
        held = self.shards.get(shard)
        if held is None:
            held = self.shards[shard] = _Shard()
            self.load(held)
        self.shard = held

    def load(self, shard: _Shard) -> None:
        raise NotImplementedError

    def write(self, shard: _Shard) -> None:
        raise NotImplementedError

    def flush(self) -> None:
        """Write the current shard's changed keys to keyed state."""
        if self.shard.dirty:
            self.write(self.shard)
            self.shard.dirty.clear()

    def timer(self, ts: int, item: Any) -> None:
        """An event-time timer of the current shard at ``ts`` for ``item``; Flink gets one per
        shard and time."""
        shard = self.shard
        shard.timers_due.setdefault(ts, set()).add(item)
        if ts not in shard.registered:
            shard.registered.add(ts)
            self.timer_service.register_event_time_timer(ts)

    def due(self, ts: int) -> set[Any]:
        """The items a timer of the current shard fired for."""
        self.shard.registered.discard(ts)
        return self.shard.timers_due.pop(ts, set())


class _ShardVessels(_WriteBehind):
    """The vessels of the dedup operator's shards: map state MMSI -> vessel, written behind."""

    def __init__(self, ctx: RuntimeContext) -> None:
        super().__init__()
        self._state = ctx.get_map_state(MapStateDescriptor("vessels", Types.LONG(), _vessel_row_type()))

    def load(self, shard: _Shard) -> None:
        for mmsi, row in self._state.items():
            entry = _VesselEntry.from_row(row)
            shard.items[mmsi] = entry
            assert entry.meta is not None
            if entry.meta.cleanup_at != TIME_UNKNOWN:
                shard.timers_due.setdefault(entry.meta.cleanup_at, set()).add(mmsi)

    def write(self, shard: _Shard) -> None:
        for mmsi in shard.dirty:
            entry = shard.items.get(mmsi)
            if entry is None:
                self._state.remove(mmsi)
            else:
                self._state.put(mmsi, entry.to_row())

    def vessel(self, mmsi: int) -> _VesselView:
        entry = self.shard.items.get(mmsi)
        if entry is None:
            entry = self.shard.items[mmsi] = _VesselEntry()
        return _VesselView(self, mmsi, entry)

    def keys_held(self) -> int:
        return sum(len(s.items) for s in self.shards.values())


class _VesselView:
    """:class:`ais_pipeline.rules.dedup.VesselStore` of one vessel of a shard."""

    __slots__ = ("_entry", "_mmsi", "_store")

    def __init__(self, store: _ShardVessels, mmsi: int, entry: _VesselEntry) -> None:
        self._store = store
        self._mmsi = mmsi
        self._entry = entry

    def _changed(self) -> None:
        self._store.shard.dirty.add(self._mmsi)

    def first_seen(self, identity: str) -> int | None:
        return self._entry.ids.get(identity)

    def remember(self, identity: str, ts: int) -> None:
        self._entry.ids[identity] = ts
        self._changed()

    def identities(self) -> list[tuple[str, int]]:
        return list(self._entry.ids.items())

    def forget(self, identity: str) -> None:
        del self._entry.ids[identity]
        self._changed()

    def meta(self) -> VesselMeta | None:
        return self._entry.meta

    def set_meta(self, meta: VesselMeta) -> None:
        if meta != self._entry.meta:
            self._entry.meta = meta
            self._changed()

    def static(self, kind: str) -> tuple[str, int] | None:
        return self._entry.static.get(kind)

    def set_static(self, kind: str, content: str, ts: int) -> None:
        self._entry.static[kind] = (content, ts)
        self._changed()

    def clear(self) -> None:
        self._store.shard.items.pop(self._mmsi, None)
        self._entry = _VesselEntry()
        self._changed()

    def register_timer(self, ts: int) -> None:
        self._store.timer(ts, self._mmsi)


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

    def count(self, name: str) -> None:
        self.counts[name] = self.counts.get(name, 0) + 1

    def emit(self, tallies: _Tallies) -> Iterator[tuple[OutputTag, str]]:
        for name, n in self.counts.items():
            tallies.metric(name, n)
        for tag, lines in self.lines.items():
            yield tag, "\n".join(lines)


class DedupVessel(KeyedCoProcessFunction):
    """Keyed by vessel shard (MMSI mod ``VESSEL_SHARDS``); input 1 is batches of single-sentence
    reports, input 2 batches of reassembled ones (both ``ais.flink.KeyedBatches``, with its state
    markers). Its main output is the vessels' pane contributions, one batch of columns
    (``VesselPane``) per call, for the Java window operator; positions, static reports, late
    reports, dead letters and tallies go to side outputs, one record of JSON Lines per output and
    batch."""

    def __init__(self, config: PipelineConfig, emit_tallies: bool) -> None:
        self.logic = VesselLogic(
            window_spec(config),
            config.dedup_ttl_ms,
            config.near_window_ms,
            config.static_ttl_ms,
            config.out_of_orderness_s * 1000,
            config.geohash_precision,
        )
        self.emit_tallies = emit_tallies

    def open(self, runtime_context: RuntimeContext) -> None:
        self.store = _ShardVessels(runtime_context)
        self.tallies = _Tallies(
            runtime_context,
            self.emit_tallies,
            (
                "positions_kept",
                "static_kept",
                "duplicates_exact",
                "duplicates_near",
                "static_duplicates",
                "no_position",
                "late",
            ),
        )
        runtime_context.get_metrics_group().gauge("dedup_keys_held", self.store.keys_held)
        self.tallies.duplicate_ratio_gauge()

    def _process(self, batch: Any, ctx: Any) -> Iterator[Any]:
        self.store.bind(ctx.get_current_key(), ctx.timer_service())
        reports = from_columns(Report, batch)
        if not reports:  # a marker (an empty batch): a checkpoint barrier follows
            self.store.flush()
            return
        out = _Batch()
        panes: list[VesselPane] = []
        logic, store, emit_tallies = self.logic, self.store, self.emit_tallies
        for report in reports:
            # The watermark the report was parsed under is never behind this operator's own
            # (the minimum over all the channels the report's one is among), and reproducible.
            outcome, pane = logic.process(store.vessel(report.mmsi), report, report.watermark)
            for name, text in outputs.outcome_records(outcome):
                out.add(_OUTCOME_TAGS[name], text)
            dead = outcome.dead_letter()
            if dead is not None:
                out.count("dead_letter_" + dead.reason)
                out.add(DEAD, outputs.dead_letter_json(dead))
            else:
                out.count(outcome.kind)
                tally = outcome.tally
                if tally is not None and emit_tallies:
                    out.add(TALLY, tally)
            for window in outcome.late_windows:
                out.count("late_records_" + window)
            if pane is not None:
                panes.append(pane)
        if panes:
            yield to_columns(panes)
        yield from out.emit(self.tallies)

    def process_element1(self, value: Any, ctx: Any) -> Iterator[Any]:
        yield from self._process(value, ctx)

    def process_element2(self, value: Any, ctx: Any) -> Iterator[Any]:
        yield from self._process(value, ctx)

    def on_timer(self, timestamp: int, ctx: Any) -> Iterator[Any]:
        self.store.bind(ctx.get_current_key(), ctx.timer_service())
        for mmsi in sorted(self.store.due(timestamp)):
            if mmsi in self.store.shard.items:
                self.logic.on_timer(self.store.vessel(mmsi), timestamp)
        yield from ()
