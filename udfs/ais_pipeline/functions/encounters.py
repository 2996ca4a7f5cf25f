"""The encounters' Python operators: the three keyed steps of :class:`ais_pipeline.rules.encounters.
EncounterSteps`, each with its keyed state (JSON text in a value state) and event-time timers.

The vessel operator sends each transmitter's marks (a side output, one record of lines per call);
:class:`MarksToCells` sends each to its cell and, as a halo, to each neighbouring cell within the
adjacency distance. Then, keyed by cell, by track and by pair, the steps run as the plain loop
runs them (:class:`ais_pipeline.rules.encounters.EncounterFlow`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyflink.common import Row, Types
from pyflink.datastream.functions import FlatMapFunction, KeyedProcessFunction, RuntimeContext
from pyflink.datastream.state import ValueStateDescriptor

from ais_pipeline.build import check_job_build, this_build
from ais_pipeline.config import PipelineConfig
from ais_pipeline.functions.operators import END_OF_INPUT_TIMER
from ais_pipeline.rules.dedup import encounter_where
from ais_pipeline.rules.encounters import (
    CellMarks,
    EncounterSteps,
    cell_from_json,
    cell_to_json,
    pair_from_json,
    pair_to_json,
    to_cells,
    track_from_json,
    track_to_json,
)


def cell_type() -> Any:
    return Types.ROW([Types.LONG(), Types.STRING()])


def keyed_type() -> Any:
    return Types.ROW([Types.STRING(), Types.STRING()])


def _key(ctx: Any) -> Any:
    """The current key (keyed in Java by a row's first field: a row of one field)."""
    key = ctx.get_current_key()
    return key[0] if isinstance(key, (Row, tuple, list)) else key


def _final(ctx: Any) -> bool:
    return bool(ctx.timer_service().current_watermark() > END_OF_INPUT_TIMER)


class MarksToCells(FlatMapFunction):
    """The marks of one call of the vessel operator (lines), each to the cells it goes to."""

    def __init__(self, steps: EncounterSteps) -> None:
        self.rules = steps.rules
        self.job_build = this_build()

    def open(self, runtime_context: RuntimeContext) -> None:
        check_job_build(self.job_build)

    def flat_map(self, value: str) -> Iterator[Row]:
        for line in value.split("\n"):
            for key, payload in to_cells(line, self.rules):
                yield Row(key, payload)


class _Step(KeyedProcessFunction):
    def __init__(self, steps: EncounterSteps, name: str) -> None:
        self.steps = steps
        self.name = name
        self.job_build = this_build()

    def open(self, runtime_context: RuntimeContext) -> None:
        check_job_build(self.job_build)
        self.state = runtime_context.get_state(ValueStateDescriptor(self.name, Types.STRING()))


class EncounterCells(_Step):
    """Keyed by 0.1-degree cell: its marks, own and halo, until their time is judged."""

    def __init__(self, steps: EncounterSteps) -> None:
        super().__init__(steps, "encounter-cell")

    def process_element(self, value: str, ctx: Any) -> Iterator[Row]:
        text = self.state.value()
        cell = CellMarks() if text is None else cell_from_json(text)
        ctx.timer_service().register_event_time_timer(self.steps.cell_mark(cell, value))
        self.state.update(cell_to_json(cell))
        return iter(())

    def on_timer(self, timestamp: int, ctx: Any) -> Iterator[Row]:
        text = self.state.value()
        if text is None:
            return
        cell = cell_from_json(text)
        for track, payload in self.steps.cell_timer(cell, timestamp):
            yield Row(track, payload)
        if cell.by_time:
            self.state.update(cell_to_json(cell))
        else:
            self.state.clear()


class EncounterTracks(_Step):
    """Keyed by track: its runs beside its neighbours, as its judged marks come."""

    def __init__(self, steps: EncounterSteps) -> None:
        super().__init__(steps, "encounter-track")

    def process_element(self, value: str, ctx: Any) -> Iterator[Row]:
        text = self.state.value()
        track = self.steps.new_track() if text is None else track_from_json(text, self.steps.rules)
        ctx.timer_service().register_event_time_timer(self.steps.track_mark(track, value))
        self.state.update(track_to_json(track))
        return iter(())

    def on_timer(self, timestamp: int, ctx: Any) -> Iterator[Row]:
        text = self.state.value()
        if text is None:
            return
        track = track_from_json(text, self.steps.rules)
        sent, end = self.steps.track_timer(track, timestamp, _final(ctx))
        for pair, payload in sent:
            yield Row(pair, payload)
        if end is not None:
            ctx.timer_service().register_event_time_timer(end)
        if track.empty:
            self.state.clear()
        else:
            self.state.update(track_to_json(track))


class EncounterPairs(_Step):
    """Keyed by pair: its encounter, written as JSON Lines (the ``encounters`` output)."""

    def __init__(self, steps: EncounterSteps, config: PipelineConfig) -> None:
        super().__init__(steps, "encounter-pair")
        self.where = encounter_where(config)  # the anchorage list, shipped in the job

    def process_element(self, value: str, ctx: Any) -> Iterator[str]:
        text = self.state.value()
        pair = self.steps.new_pair(_key(ctx)) if text is None else pair_from_json(text)
        ctx.timer_service().register_event_time_timer(self.steps.pair_item(pair, value))
        self.state.update(pair_to_json(pair))
        return iter(())

    def on_timer(self, timestamp: int, ctx: Any) -> Iterator[str]:
        text = self.state.value()
        if text is None:
            return
        pair = pair_from_json(text)
        written, due = self.steps.pair_timer(pair, timestamp, _final(ctx), self.where)
        for line, _ in written:
            yield line
        if due is not None:
            ctx.timer_service().register_event_time_timer(due)
        if pair.empty:
            self.state.clear()
        else:
            self.state.update(pair_to_json(pair))
