"""The small Flink function classes around the plain-Python logic of this package.

Each class holds Flink's handles (state, timers, metrics, side outputs) and hands the decisions to
:mod:`udfs.parse`, :mod:`udfs.multipart`, :mod:`udfs.dedup` and :mod:`udfs.windows`.
Every figure of the run summary is a metric counter of the operator that decides it, and, for a
run that writes a summary, a tally record on the ``tally`` side output.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from pyflink.common import Row, Types
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import OutputTag
from pyflink.datastream.functions import (
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    ProcessFunction,
    RuntimeContext,
)
from pyflink.datastream.state import MapStateDescriptor, ValueStateDescriptor

from udfs import outputs
from udfs.config import PipelineConfig
from udfs.dedup import (
    DEAD_LETTER,
    KEPT_POSITION,
    KEPT_STATIC,
    PaneBuffer,
    VesselLogic,
    VesselMeta,
)
from udfs.multipart import MultipartAssembler, PendingGroup
from udfs.parse import DeadLetter, Skipped, event_time, is_future, parse_line_cached
from udfs.records import TIME_UNKNOWN, Fragment, Report, VesselPane, from_row, to_row
from udfs.windows import CellWindows, PaneAcc, WindowSpec


def _tag(name: str) -> OutputTag:
    return OutputTag(name, Types.STRING())


# Side outputs: every one carries JSON Lines text (or a tally name), so a plain string type.
POSITIONS = _tag("positions")
STATIC = _tag("static")
LATE_OUT = _tag("late")
DEAD = _tag("dead_letter")
TALLY = _tag("tally")


def fragments_tag() -> OutputTag:
    from udfs.records import fragment_type

    return OutputTag("fragments", fragment_type())


FRAGMENTS = fragments_tag()


def window_spec(config: PipelineConfig) -> WindowSpec:
    return WindowSpec(config.window_ms, config.slide_size_ms, config.slide_ms, config.lateness_ms)


class _Tallies:
    """Metric counters of one operator, and the tally records behind summary.json."""

    def __init__(self, ctx: RuntimeContext, emit: bool) -> None:
        self._group = ctx.get_metrics_group()
        self._counters: dict[str, Any] = {}
        self._emit = emit

    def count(self, name: str, n: int = 1) -> Iterator[tuple[OutputTag, str]]:
        counter = self._counters.get(name)
        if counter is None:
            counter = self._counters[name] = self._group.counter(name.replace(":", "_"))
        counter.inc(n)
        if self._emit:
            for _ in range(n):
                yield TALLY, name

    def metric(self, name: str) -> None:
        """Count in the operator's metrics only (the CLI counts input lines itself)."""
        counter = self._counters.get(name)
        if counter is None:
            counter = self._counters[name] = self._group.counter(name)
        counter.inc()

    def dead(self, dead: DeadLetter) -> Iterator[tuple[OutputTag, str]]:
        """Dead-letter a record: the record itself, its reason counted, and its lines."""
        yield DEAD, outputs.dead_letter_json(dead)
        yield from self.count("dead_letter:" + dead.reason)
        yield from self.count("dead_letter_lines", dead.raw.count("\n") + 1)


class EventTime(TimestampAssigner):
    """Event time of a raw line: tag-block ``c:`` or JSON ``timestamp``; ingestion time when the
    report has none; ``TIME_UNKNOWN`` (never moves the watermark) for lines without a report and
    for reports further ahead of the wall clock than the maximum clock skew."""

    def __init__(self, input_format: str, max_clock_skew_ms: int) -> None:
        self.input_format = input_format
        self.max_clock_skew_ms = max_clock_skew_ms

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        parsed = parse_line_cached(value, self.input_format)
        return event_time(parsed, int(time.time() * 1000), self.max_clock_skew_ms)


class ParseLines(ProcessFunction):
    """Raw lines to reports (main output) and multipart fragments (side output); everything else
    is counted or dead-lettered with a reason."""

    def __init__(self, input_format: str, emit_tallies: bool) -> None:
        self.input_format = input_format
        self.emit_tallies = emit_tallies

    def open(self, runtime_context: RuntimeContext) -> None:
        self.tallies = _Tallies(runtime_context, self.emit_tallies)

    def process_element(self, value: Any, ctx: ProcessFunction.Context) -> Iterator[Any]:
        parsed = parse_line_cached(value, self.input_format)
        assigned = ctx.timestamp()
        self.tallies.metric("lines")
        if isinstance(parsed, Skipped):
            yield from self.tallies.count(parsed.kind)
            return
        if isinstance(parsed, DeadLetter):
            yield from self.tallies.dead(parsed)
            return
        if is_future(parsed, assigned):
            yield from self.tallies.dead(
                DeadLetter(parsed.raw, "future_timestamp", parsed.receiver, "event time ahead of the wall clock")
            )
            return
        if isinstance(parsed, Report):
            if parsed.ts == TIME_UNKNOWN:
                yield from self.tallies.count("no_time")
                parsed = replace(parsed, ts=assigned)
            yield to_row(parsed)
            return
        if not parsed.has_time and parsed.frag_num == 1:
            yield from self.tallies.count("no_time")
        if parsed.frag_num == 1:
            parsed = replace(parsed, ts=assigned)
        yield FRAGMENTS, to_row(parsed)


class _GroupState:
    def __init__(self, ctx: RuntimeContext) -> None:
        row = Types.ROW_NAMED(
            ["frag_cnt", "next_num", "payload", "raw", "receiver", "ts", "timer"],
            [Types.INT(), Types.INT(), Types.STRING(), Types.STRING(), Types.STRING(), Types.LONG(), Types.LONG()],
        )
        self.state = ctx.get_state(ValueStateDescriptor("pending", row))
        self.timers: Any = None

    def get(self) -> PendingGroup | None:
        row = self.state.value()
        return None if row is None else PendingGroup(*row)

    def put(self, group: PendingGroup) -> None:
        self.state.update(to_row(group))

    def clear(self) -> None:
        self.state.clear()

    def register_timer(self, ts: int) -> None:
        self.timers.register_event_time_timer(ts)


class AssembleMultipart(KeyedProcessFunction):
    """Keyed by multipart group: fragments to whole reports, broken groups to the dead letters."""

    def __init__(self, timeout_ms: int, emit_tallies: bool) -> None:
        self.timeout_ms = timeout_ms
        self.emit_tallies = emit_tallies

    def open(self, runtime_context: RuntimeContext) -> None:
        self.logic = MultipartAssembler(self.timeout_ms)
        self.store = _GroupState(runtime_context)
        self.tallies = _Tallies(runtime_context, self.emit_tallies)

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Iterator[Any]:
        frag = from_row(Fragment, value)
        self.store.timers = ctx.timer_service()
        step = self.logic.on_fragment(self.store, frag, frag.ts)
        if step.dead is not None:
            yield from self.tallies.dead(step.dead)
        message = step.message
        if message is None:
            return
        yield from self.tallies.count("fragments_joined", step.joined)
        if isinstance(message, Report):
            yield to_row(message)
        elif isinstance(message, Skipped):
            yield from self.tallies.count(message.kind)
        else:
            yield from self.tallies.dead(message)

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Iterator[Any]:
        self.store.timers = ctx.timer_service()
        dead = self.logic.on_timer(self.store, timestamp)
        if dead is not None:
            yield from self.tallies.dead(dead)


_META_TYPE = [Types.LONG()] * 6
_META_NAMES = ["last_lat5", "last_lon5", "last_ts", "max_ts", "pruned_at", "cleanup_at"]


class _VesselState:
    """:class:`udfs.dedup.VesselStore` on Flink keyed state (one vessel = one MMSI key)."""

    def __init__(self, ctx: RuntimeContext) -> None:
        self.ids = ctx.get_map_state(MapStateDescriptor("identities", Types.STRING(), Types.LONG()))
        self._meta = ctx.get_state(ValueStateDescriptor("vessel", Types.ROW_NAMED(_META_NAMES, _META_TYPE)))
        self._static = ctx.get_map_state(
            MapStateDescriptor(
                "static", Types.STRING(), Types.ROW_NAMED(["content", "ts"], [Types.STRING(), Types.LONG()])
            )
        )
        self._buffered = ctx.get_map_state(
            MapStateDescriptor(
                "pane_buffer",
                Types.STRING(),
                Types.ROW_NAMED(["reports", "sog_milli_sum", "sog_count"], [Types.INT(), Types.LONG(), Types.INT()]),
            )
        )
        self.timers: Any = None

    def first_seen(self, identity: str) -> int | None:
        return self.ids.get(identity)  # type: ignore[no-any-return]

    def remember(self, identity: str, ts: int) -> None:
        self.ids.put(identity, ts)

    def identities(self) -> list[tuple[str, int]]:
        return list(self.ids.items())

    def forget(self, identity: str) -> None:
        self.ids.remove(identity)

    def meta(self) -> VesselMeta | None:
        row = self._meta.value()
        return None if row is None else VesselMeta(*row)

    def set_meta(self, meta: VesselMeta) -> None:
        self._meta.update(to_row(meta))

    def static(self, kind: str) -> tuple[str, int] | None:
        row = self._static.get(kind)
        return None if row is None else (row[0], row[1])

    def set_static(self, kind: str, content: str, ts: int) -> None:
        self._static.put(kind, Row(content, ts))

    def buffered(self) -> list[tuple[str, PaneBuffer]]:
        return [(k, PaneBuffer(*v)) for k, v in self._buffered.items()]

    def get_buffered(self, key: str) -> PaneBuffer | None:
        row = self._buffered.get(key)
        return None if row is None else PaneBuffer(*row)

    def put_buffered(self, key: str, acc: PaneBuffer) -> None:
        self._buffered.put(key, to_row(acc))

    def remove_buffered(self, key: str) -> None:
        self._buffered.remove(key)

    def clear(self) -> None:
        self.ids.clear()
        self._meta.clear()
        self._static.clear()
        self._buffered.clear()

    def register_timer(self, ts: int) -> None:
        self.timers.register_event_time_timer(ts)


class DedupVessel(KeyedCoProcessFunction):
    """Keyed by MMSI; input 1 is single-sentence reports, input 2 reassembled ones. Emits the
    vessel's pane contributions (main output, keyed by cell next), and positions, static
    reports, late reports, dead letters and tallies on side outputs."""

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
        self.store = _VesselState(runtime_context)
        self.tallies = _Tallies(runtime_context, self.emit_tallies)

    def _process(self, value: Any, ctx: Any) -> Iterator[Any]:
        report = from_row(Report, value)
        timers = ctx.timer_service()
        self.store.timers = timers
        outcome, pane = self.logic.process(self.store, report, timers.current_watermark())
        kind = outcome.kind
        if kind == KEPT_POSITION:
            assert outcome.position is not None
            yield POSITIONS, outputs.position_json(outcome.position, outcome.cell)
        elif kind == KEPT_STATIC:
            assert outcome.static is not None
            yield STATIC, outputs.static_json(outcome.static)
        if kind == DEAD_LETTER:
            yield from self.tallies.dead(DeadLetter(report.raw, "decode", report.receiver, outcome.detail))
        else:
            yield from self.tallies.count(kind)
        if outcome.late_windows:
            assert outcome.position is not None
            for window in outcome.late_windows:
                yield LATE_OUT, outputs.late_json(outcome.position, outcome.cell, window)
                yield from self.tallies.count("late_record:" + window)
        if pane is not None:
            yield to_row(pane)

    def process_element1(self, value: Any, ctx: Any) -> Iterator[Any]:
        yield from self._process(value, ctx)

    def process_element2(self, value: Any, ctx: Any) -> Iterator[Any]:
        yield from self._process(value, ctx)

    def on_timer(self, timestamp: int, ctx: Any) -> Iterator[Any]:
        self.store.timers = ctx.timer_service()
        for pane in self.logic.on_timer(self.store, ctx.get_current_key(), timestamp):
            yield to_row(pane)


def _pane_row_type() -> Any:
    return Types.ROW_NAMED(
        [
            "t_reports",
            "t_sog_milli_sum",
            "t_sog_count",
            "t_vessels",
            "s_reports",
            "s_sog_milli_sum",
            "s_sog_count",
            "s_vessels",
        ],
        [
            Types.INT(),
            Types.LONG(),
            Types.INT(),
            Types.BASIC_ARRAY(Types.LONG()),
            Types.INT(),
            Types.LONG(),
            Types.INT(),
            Types.BASIC_ARRAY(Types.LONG()),
        ],
    )


class _CellState:
    """:class:`udfs.windows.CellStore` on Flink keyed state (one cell = one geohash key)."""

    def __init__(self, ctx: RuntimeContext) -> None:
        self._panes = ctx.get_map_state(MapStateDescriptor("panes", Types.LONG(), _pane_row_type()))
        self._revisions = ctx.get_map_state(MapStateDescriptor("revisions", Types.STRING(), Types.INT()))
        self.timers: Any = None

    def panes(self) -> list[tuple[int, PaneAcc]]:
        return sorted((k, PaneAcc(v[0], v[1], v[2], list(v[3]), v[4], v[5], v[6], list(v[7]))) for k, v in self._panes.items())

    def get_pane(self, pane_start: int) -> PaneAcc | None:
        v = self._panes.get(pane_start)
        return None if v is None else PaneAcc(v[0], v[1], v[2], list(v[3]), v[4], v[5], v[6], list(v[7]))

    def put_pane(self, pane_start: int, acc: PaneAcc) -> None:
        self._panes.put(
            pane_start,
            Row(
                acc.t_reports,
                acc.t_sog_milli_sum,
                acc.t_sog_count,
                acc.t_vessels,
                acc.s_reports,
                acc.s_sog_milli_sum,
                acc.s_sog_count,
                acc.s_vessels,
            ),
        )

    def remove_pane(self, pane_start: int) -> None:
        self._panes.remove(pane_start)

    def revision(self, window: str, start: int) -> int | None:
        return self._revisions.get(f"{window}|{start}")  # type: ignore[no-any-return]

    def set_revision(self, window: str, start: int, revision: int) -> None:
        self._revisions.put(f"{window}|{start}", revision)

    def revisions(self) -> list[tuple[str, int]]:
        out = []
        for key in list(self._revisions.keys()):
            window, _, start = key.partition("|")
            out.append((window, int(start)))
        return out

    def remove_revision(self, window: str, start: int) -> None:
        self._revisions.remove(f"{window}|{start}")

    def register_timer(self, ts: int) -> None:
        self.timers.register_event_time_timer(ts)


class CellAggregates(KeyedProcessFunction):
    """Keyed by geohash cell: pane contributions to tumbling and sliding aggregates (JSON)."""

    def __init__(self, config: PipelineConfig) -> None:
        self.windows = CellWindows(window_spec(config))

    def open(self, runtime_context: RuntimeContext) -> None:
        self.store = _CellState(runtime_context)

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Iterator[str]:
        contribution = from_row(VesselPane, value)
        timers = ctx.timer_service()
        self.store.timers = timers
        for agg in self.windows.on_contribution(self.store, contribution, timers.current_watermark()):
            yield outputs.aggregate_json(agg)

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Iterator[str]:
        self.store.timers = ctx.timer_service()
        for agg in self.windows.on_timer(self.store, ctx.get_current_key(), timestamp):
            yield outputs.aggregate_json(agg)
