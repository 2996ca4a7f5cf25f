"""The job's Java operators (``java/src/main/java/ais/flink/``), one wrapper class per Java class.

Every wrapper has one shape: a frozen dataclass of named fields, ``name`` (shown in the web UI)
and ``uid`` (the operator's stable id in savepoints) first, then the Java class's own settings;
``apply(stream)`` puts the operator after ``stream`` and returns the new PyFlink stream, and
``build()`` makes the Java object itself (each Java operator that reads or writes a record
resolves its fields by name and checks their types when it is built, so ``build()`` raises for a
record whose Python and Java declarations disagree).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyflink.common import Types
from pyflink.common.typeinfo import TypeInformation
from pyflink.datastream import DataStream, OutputTag

from ais_pipeline.jvm.gateway import java_stream, java_type, jvm, transform
from ais_pipeline.resources import helpers_jar
from ais_pipeline.rules.vessel_hours import ALL_CATEGORIES
from ais_pipeline.rules.windows import WindowSpec


def _with_helpers(stream: DataStream) -> None:
    """The job's jar on the job's classpath (``flink run`` ships it to the cluster)."""
    stream.get_execution_environment().add_jars(helpers_jar().as_uri())


@dataclass(frozen=True)
class LineBatches:
    """``ais.flink.LineBatches``: consecutive lines of a lane (a source subtask) as one
    ``Row(lane, String[])`` record (up to ``max_lines``, at most ``max_delay_ms`` of wall clock,
    never across a watermark, a barrier or the end of the input), so the Python parse operator is
    called once per batch; ``lane`` is a key Flink assigns to the same subtask index."""

    name: str
    uid: str
    max_lines: int
    max_delay_ms: int

    def build(self) -> Any:
        return jvm().ais.flink.LineBatches(self.max_lines, self.max_delay_ms)

    def apply(self, lines: DataStream) -> DataStream:
        _with_helpers(lines)
        batch_type = Types.ROW([Types.INT(), Types.BASIC_ARRAY(Types.STRING())])
        return DataStream(transform(lines, self.name, batch_type, self.build()).uid(self.uid))


@dataclass(frozen=True)
class FastSentences:
    """``ais.flink.FastSentences``: a lane's plain sentences (tag block with a time, one whole
    VDM/VDO sentence of a position or static report) parsed in Java; ``Row(lane, String[])`` in,
    ``Row(lane, LaneBatch)`` out, the other lines left for the Python parse operator. Off
    (``enabled`` false) for the input formats that are not NMEA."""

    name: str
    uid: str
    batch_type: TypeInformation
    enabled: bool

    def build(self) -> Any:
        return jvm().ais.flink.FastSentences(java_type(self.batch_type), self.enabled)

    def apply(self, batches: DataStream) -> DataStream:
        out_type = Types.ROW([Types.INT(), self.batch_type])
        j_in = java_stream(batches)  # at the lane's parallelism: forward, chained
        j_stream = j_in.map(self.build(), java_type(out_type)).setParallelism(j_in.getParallelism())
        return DataStream(j_stream).name(self.name).uid(self.uid)


@dataclass(frozen=True)
class ReceiverWatermarks:
    """``ais.flink.ReceiverWatermarks``: the lane's watermark, following its receivers (the rule
    of :mod:`ais_pipeline.rules.watermarks`), kept in checkpoints; each report stamped with the
    watermark it was read under and sent on as ``Row(mmsi, WireReport)``; lines far from the
    consensus counted per receiver (metrics, and tally records on ``tally_tag`` when given). A live
    lane (``received_lag_ms``) follows its lines stamped on receipt and, through a silence, the
    wall clock."""

    name: str
    uid: str
    out_of_orderness_ms: int
    idle_timeout_ms: int
    max_clock_skew_ms: int
    warm_up_lines: int
    consensus_lines: int
    jump_lines: int
    step_ms: int
    received_lag_ms: int | None  # a live lane's lag behind the wall clock; None: not live
    parsed_type: TypeInformation
    report_type: TypeInformation
    tally_tag: OutputTag | None = None

    def build(self) -> Any:
        j_tag = None if self.tally_tag is None else self.tally_tag.get_java_output_tag()
        return jvm().ais.flink.ReceiverWatermarks(
            self.out_of_orderness_ms,
            self.idle_timeout_ms,
            self.max_clock_skew_ms,
            self.warm_up_lines,
            self.consensus_lines,
            self.jump_lines,
            self.step_ms,
            -1 if self.received_lag_ms is None else self.received_lag_ms,
            java_type(self.parsed_type),
            java_type(self.report_type),
            j_tag,
        )

    def apply(self, parsed: DataStream) -> DataStream:
        out_type = Types.ROW([Types.LONG(), self.report_type])
        return DataStream(transform(parsed, self.name, out_type, self.build()).uid(self.uid))


@dataclass(frozen=True)
class ExactCopies:
    """``ais.flink.ExactCopies``: the exact-copy rule (:mod:`ais_pipeline.rules.copies`) on
    ``Row(mmsi, WireReport)`` records keyed by vessel, at the vessel operator's ``parallelism``: a
    copy leaves as its MMSI, watermark and a packed field of the copy mark and its event time."""

    name: str
    uid: str
    ttl_ms: int
    horizon_ms: int
    step_ms: int  # the watermark's step: cleanup timers fall on its last millisecond
    parallelism: int
    report_type: TypeInformation

    def build(self) -> Any:
        return jvm().ais.flink.ExactCopies(self.ttl_ms, self.horizon_ms, self.step_ms, java_type(self.report_type))

    def apply(self, reports: DataStream) -> DataStream:
        from ais_pipeline.functions.rows import keyed
        from ais_pipeline.jvm.streams import java_keyed

        _with_helpers(reports)
        flink = jvm()
        record_type = keyed(Types.LONG(), self.report_type)
        j_keyed = java_keyed(reports, flink.ais.flink.ExactCopies.ByMmsi())
        operator = flink.org.apache.flink.streaming.api.operators.KeyedProcessOperator(self.build())
        j_stream = j_keyed.transform(self.name, java_type(record_type), operator)
        return DataStream(j_stream.setParallelism(self.parallelism).uid(self.uid))


@dataclass(frozen=True)
class KeyedBatches:
    """``ais.flink.KeyedBatches``: ``Row(key, record)`` records as ``Row(shard key, columns)``
    batches for each subtask of a keyed Python operator of ``parallelism`` subtasks, holding the
    records of every shard of the subtask (a record's shard: ``key mod shards``, ``shards`` the
    job's maximum parallelism; each shard's key is in the key group of its number), and markers
    (empty batches under a shard's key): one per shard before anything else, and one per shard
    before every checkpoint barrier."""

    name: str
    uid: str
    shards: int
    parallelism: int
    max_records: int
    max_delay_ms: int
    record_type: TypeInformation

    def build(self) -> Any:
        return jvm().ais.flink.KeyedBatches(
            self.shards, self.parallelism, self.max_records, self.max_delay_ms, True, java_type(self.record_type)
        )

    def apply(self, stream: DataStream) -> DataStream:
        from ais_pipeline.functions.rows import columns, keyed

        _with_helpers(stream)
        out_type = keyed(Types.INT(), columns(self.record_type))
        return DataStream(transform(stream, self.name, out_type, self.build()).uid(self.uid))


@dataclass(frozen=True)
class SplitLines:
    """``ais.flink.SplitLines``: a multi-line string record as one record per line."""

    name: str
    uid: str

    def build(self) -> Any:
        return jvm().ais.flink.SplitLines()

    def apply(self, stream: DataStream) -> DataStream:
        j_stream = java_stream(stream).flatMap(self.build(), java_type(Types.STRING()))
        return DataStream(j_stream).name(self.name).uid(self.uid)


@dataclass(frozen=True)
class OutputLatency:
    """``ais.flink.OutputLatency``: one output's records passed on to its sinks, the last minute's
    latencies (the wall clock less the record's ``field``, its event time) as gauges of the group
    ``output.<output>``."""

    name: str
    output: str
    field: str

    def build(self) -> Any:
        return jvm().ais.flink.OutputLatency(self.output, self.field)

    def apply(self, stream: DataStream) -> DataStream:
        j_stream = java_stream(stream).map(self.build(), java_type(Types.STRING()))
        return DataStream(j_stream).name(self.name)


@dataclass(frozen=True)
class ColumnsToRows:
    """``ais.flink.ColumnsToRows``: a batch of columns (``rows.columns``) as one row per record."""

    name: str
    uid: str
    record_type: TypeInformation

    def build(self) -> Any:
        return jvm().ais.flink.ColumnsToRows(java_type(self.record_type))

    def apply(self, batches: DataStream) -> DataStream:
        j_stream = java_stream(batches).flatMap(self.build(), java_type(self.record_type))
        return DataStream(j_stream).name(self.name).uid(self.uid)


@dataclass(frozen=True)
class CellWindows:
    """``ais.flink.CellWindows``: tumbling and sliding aggregates per geohash cell, keyed by cell
    on Flink's keyed state and event-time timers; ``VesselPane`` rows in, ``Aggregate`` rows out."""

    name: str
    uid: str
    spec: WindowSpec
    contribution_type: TypeInformation
    aggregate_type: TypeInformation

    def build(self) -> Any:
        flink = jvm().ais.flink
        w = self.spec
        spec = flink.WindowSpec(
            w.window_ms, w.slide_size_ms, w.slide_ms, w.lateness_ms, w.grace_ms, w.tumbling, w.sliding
        )
        return flink.CellWindows(
            spec, java_type(self.contribution_type), java_type(self.aggregate_type), ",".join(ALL_CATEGORIES)
        )

    def apply(self, contributions: DataStream) -> DataStream:
        j_in = java_type(self.contribution_type)
        j_keyed = java_stream(contributions).keyBy(jvm().ais.flink.FieldKey(j_in, "cell"))
        operator = self.build().operator()
        return DataStream(j_keyed.transform(self.name, java_type(self.aggregate_type), operator).uid(self.uid))


@dataclass(frozen=True)
class GapCoverage:
    """``ais.flink.GapCoverage``: what the stream heard around each gap, keyed by 1-degree cell on
    Flink's keyed state and event-time timers (:mod:`ais_pipeline.rules.coverage` is the
    reference); ``VesselPane`` rows and gap records in, gap records with their coverage out."""

    name: str
    uid: str
    contribution_type: TypeInformation
    lateness_ms: int
    grace_ms: int
    reach_ms: int
    ttl_ms: int

    def build(self) -> Any:
        return jvm().ais.flink.GapCoverage(
            java_type(self.contribution_type), self.lateness_ms, self.grace_ms, self.reach_ms, self.ttl_ms
        )

    def apply(self, contributions: DataStream, gaps: DataStream) -> DataStream:
        flink = jvm().ais.flink
        j_in = java_type(self.contribution_type)
        panes = java_stream(contributions).keyBy(flink.GapCoverage.PaneCell(j_in))
        records = java_stream(gaps).keyBy(flink.GapCoverage.GapCell())
        j_stream = panes.connect(records).process(self.build(), java_type(Types.STRING()))
        return DataStream(j_stream).name(self.name).uid(self.uid)


@dataclass(frozen=True)
class AggregateJson:
    """``ais.flink.AggregateJson``: ``Aggregate`` rows as their JSON lines."""

    name: str
    uid: str
    aggregate_type: TypeInformation
    slide_ms: int  # the sliding windows' slide

    def build(self) -> Any:
        return jvm().ais.flink.AggregateJson(java_type(self.aggregate_type), self.slide_ms)

    def apply(self, aggregates: DataStream) -> DataStream:
        j_stream = java_stream(aggregates).map(self.build(), java_type(Types.STRING()))
        return DataStream(j_stream).name(self.name).uid(self.uid)
