"""The job's topology, as the README's diagram draws it: raw lines in, the job's outputs out.

    read lines ─► batch lines ─► parse lines ─► watermarks ─► batch reports ─► dedup by MMSI ─► cell windows
                  (Java)         (Python)       (Java)  └► multipart ─────┘    (Python)         (Java)
                                                           (Python)              │ positions, static, late,
                                                                                 │ dead letters, tallies

``build_pipeline(env, lines, config)`` takes any stream of lines (a file source, Kafka, or a
test's own collection), so the CLI and the tests build the same job.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyflink.common import Types
from pyflink.datastream import DataStream, StreamExecutionEnvironment

from ais_pipeline.config import PipelineConfig
from ais_pipeline.flink import jvm
from ais_pipeline.flink import operators as f
from ais_pipeline.flink.rows import (
    aggregate_type,
    columns,
    fragment_type,
    keyed,
    parsed_type,
    report_type,
    vessel_pane_type,
)
from ais_pipeline.rules.dedup import VESSEL_SHARDS
from ais_pipeline.rules.outputs import OUTPUTS

LINES_PER_BATCH = 256
REPORTS_PER_BATCH = 1024
BATCH_DELAY_MS = 100


@dataclass(frozen=True)
class Streams:
    """The job's outputs, each a stream of JSON Lines (tallies: one summary figure name a line)."""

    positions: DataStream
    static: DataStream
    aggregates: DataStream
    late: DataStream
    dead_letter: DataStream
    tally: DataStream

    def named(self) -> dict[str, DataStream]:
        return {name: getattr(self, name) for name in OUTPUTS}


def build_pipeline(
    env: StreamExecutionEnvironment, lines: DataStream, config: PipelineConfig, emit_tallies: bool = True
) -> Streams:
    """The whole job on a stream of raw lines."""
    env.add_jars(jvm.helpers_jar().as_uri())
    spec = f.window_spec(config)

    # Lines to reports and fragments, each stamped with the watermark it was read under.
    parsed = (
        jvm.LineBatches(LINES_PER_BATCH, BATCH_DELAY_MS)
        .apply(lines)
        .process(f.ParseLines(config, emit_tallies), output_type=parsed_type())
        .name("parse lines")
        .uid("parse")
    )
    reports, fragment_rows = jvm.StampedWatermarks(
        config.out_of_orderness_s * 1000,
        config.idle_timeout_s * 1000,
        spec.watermark_step_ms,
        report_type(),
        fragment_type(),
    ).apply(parsed, "watermarks (per event, checkpointed)", "watermarks")

    # Multipart groups, keyed by group.
    assembled = (
        jvm.keyed_by_first_field(fragment_rows, Types.STRING(), fragment_type())
        .process(
            f.AssembleMultipart(config.multipart_timeout_ms, emit_tallies),
            output_type=keyed(Types.LONG(), report_type()),
        )
        .name("reassemble multipart")
        .uid("multipart")
    )

    # Dedup by vessel, in batches per vessel shard.
    batches = jvm.KeyedBatches(VESSEL_SHARDS, REPORTS_PER_BATCH, BATCH_DELAY_MS, report_type())
    report_batches = batches.apply(reports, "batch reports by vessel shard")
    assembled_batches = batches.apply(assembled, "batch reassembled reports")
    batch_type = columns(report_type())
    vessels = (
        jvm.keyed_by_first_field(report_batches, Types.INT(), batch_type)
        .connect(jvm.keyed_by_first_field(assembled_batches, Types.INT(), batch_type))
        .process(f.DedupVessel(config, emit_tallies), output_type=columns(vessel_pane_type()))
        .name("dedup by MMSI")
        .uid("dedup-shards")
    )

    # Cell windows, in Java on Flink's keyed state and timers.
    contributions = jvm.ColumnsToRows(vessel_pane_type()).apply(vessels, "one pane contribution per record")
    aggregates = jvm.CellWindows(
        config.window_ms,
        config.slide_size_ms,
        config.slide_ms,
        config.lateness_ms,
        vessel_pane_type(),
        aggregate_type(),
    ).apply(contributions, "cell windows (keyed by cell)", "cell-windows")

    def lines_of(stream: DataStream, what: str) -> DataStream:
        return jvm.SplitLines().apply(stream, f"one {what} per record")

    def side(stream: DataStream, tag: object) -> DataStream:
        return jvm.side_output(stream, tag)

    return Streams(
        positions=lines_of(side(vessels, f.POSITIONS), "position"),
        static=lines_of(side(vessels, f.STATIC), "static report"),
        aggregates=jvm.AggregateJson(aggregate_type()).apply(aggregates, "aggregate as JSON"),
        late=lines_of(side(vessels, f.LATE_OUT), "late report"),
        dead_letter=side(parsed, f.DEAD).union(side(assembled, f.DEAD), lines_of(side(vessels, f.DEAD), "dead letter")),
        tally=side(parsed, f.TALLY).union(side(assembled, f.TALLY), lines_of(side(vessels, f.TALLY), "tally")),
    )
