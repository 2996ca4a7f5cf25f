"""The job's topology, as docs/design.md draws it: raw lines in, the job's outputs out.

    read lines ─► batch lines ─► plain sentences ─► parse lines ─► watermarks ─►
                  (Java, per     (Java, per lane:   (Python, per   (Java, per lane,
                  lane)          a tag block and    lane: the      by receiver)
                                 one whole          rest, in the
                                 sentence)          lane's order)

    ─► exact copies ─► batch reports ─► dedup by MMSI ─► cell windows
       (Java, keyed    (Java, by        (Python, keyed    (Java, keyed
       by MMSI)        vessel shard)    by vessel shard)  by cell)
                                        │ positions, static, late, bad fixes, gaps,
                                        │ port visits, loitering, dead letters, tallies
                                        │ each transmitter's marks ─► encounters: marks to
                                          cells ─► judged (keyed by cell) ─► runs (keyed by
                                          track) ─► encounters (keyed by pair; Python)

A lane is one source subtask's lines (a file run has one, the files in name order, unless
``--lanes per-file`` makes each reader's file a lane). Everything up to the watermarks runs per
lane, in the lane's order, so a vessel's reports of one lane reach the dedup operator in that
order at any parallelism.

``build_pipeline(env, lines, config)`` takes any stream of lines (a file source, Kafka, or a
test's own collection), so the jobs and the tests build the same job.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyflink.common import Types
from pyflink.datastream import DataStream, OutputTag, StreamExecutionEnvironment

from ais_pipeline.config import PipelineConfig
from ais_pipeline.functions import encounters, operators
from ais_pipeline.functions.rows import (
    aggregate_type,
    columns,
    lane_batch_type,
    parsed_type,
    vessel_pane_type,
    wire_report_type,
)
from ais_pipeline.jvm.operators import (
    AggregateJson,
    CellWindows,
    ColumnsToRows,
    ExactCopies,
    FastSentences,
    GapCoverage,
    KeyedBatches,
    LineBatches,
    OutputLatency,
    ReceiverWatermarks,
    SplitLines,
)
from ais_pipeline.jvm.streams import keyed_by_first_field, parallelism, side_output
from ais_pipeline.resources import helpers_jar
from ais_pipeline.rules.dedup import coverage_rules_of, encounter_steps, window_spec
from ais_pipeline.rules.dedup import exact_copies as copy_rule
from ais_pipeline.rules.lane import AUTO, NMEA
from ais_pipeline.rules.outputs import EVENT_TIME_FIELDS, OUTPUTS
from ais_pipeline.rules.watermarks import CONSENSUS_LINES, JUMP_LINES, RECEIVED_LAG_MS

LINES_PER_BATCH = 1024
REPORTS_PER_BATCH = 4096
BATCH_DELAY_MS = 250
MAX_PARALLELISM = 128  # Flink's default up to parallelism 85, set so that lanes' keys stay on their subtask


@dataclass(frozen=True)
class Streams:
    """The job's outputs, each a stream of JSON Lines (tallies: one summary figure name a line)."""

    positions: DataStream
    static: DataStream
    aggregates: DataStream
    late: DataStream
    dead_letter: DataStream
    bad_fixes: DataStream
    gaps: DataStream
    port_visits: DataStream
    loitering: DataStream
    encounters: DataStream
    tally: DataStream

    def named(self) -> dict[str, DataStream]:
        return {name: getattr(self, name) for name in OUTPUTS}


def receiver_watermarks(config: PipelineConfig, tally: OutputTag | None) -> ReceiverWatermarks:
    """The watermark stage of a lane, as the job builds it."""
    return ReceiverWatermarks(
        name="watermarks (per lane, following receivers)",
        uid="watermarks",
        out_of_orderness_ms=config.out_of_orderness_ms,
        idle_timeout_ms=config.idle_timeout_ms,
        max_clock_skew_ms=config.max_clock_skew_ms,
        warm_up_lines=config.watermark_warm_up,
        consensus_lines=CONSENSUS_LINES,
        jump_lines=JUMP_LINES,
        step_ms=window_spec(config).watermark_step_ms,
        received_lag_ms=RECEIVED_LAG_MS if config.input_feed else None,
        parsed_type=parsed_type(),
        report_type=wire_report_type(),
        tally_tag=tally,
    )


def exact_copies(config: PipelineConfig) -> ExactCopies:
    """The exact-copy stage, as the job builds it."""
    rule = copy_rule(config)
    return ExactCopies(
        name="exact copies (keyed by MMSI)",
        uid="exact-copies",
        ttl_ms=rule.ttl_ms,
        horizon_ms=rule.horizon_ms,
        step_ms=rule.spec.watermark_step_ms,
        parallelism=config.parallelism,
        report_type=wire_report_type(),
    )


def cell_windows(config: PipelineConfig) -> CellWindows:
    """The cell windows, as the job builds them."""
    return CellWindows(
        name="cell windows (keyed by cell)",
        uid="cell-windows",
        spec=window_spec(config),
        contribution_type=vessel_pane_type(),
        aggregate_type=aggregate_type(),
    )


def gap_coverage(config: PipelineConfig, contributions: DataStream, gaps: DataStream) -> DataStream:
    """Each gap record with what the stream heard around it (gaps on), in Java on Flink's keyed
    state and timers."""
    rules = coverage_rules_of(config)
    if rules is None:
        return gaps
    return GapCoverage(
        "gap coverage (keyed by 1-degree cell)",
        "gap-coverage",
        vessel_pane_type(),
        rules.lateness_ms,
        rules.grace_ms,
        rules.reach_ms,
        rules.ttl_ms,
    ).apply(contributions, gaps)


def encounter_stream(config: PipelineConfig, marks: DataStream) -> DataStream:
    """The encounters of each transmitter's marks (encounters on; else the marks, none), in
    three keyed Python steps: cells, tracks, pairs."""
    steps = encounter_steps(config)
    if steps is None:
        return marks
    p = config.parallelism
    # A new chain: the vessel operator emits its side outputs from inside its Python call, and a
    # Python operator chained to one would be called from inside it.
    to_cells = (
        marks.flat_map(encounters.MarksToCells(steps), output_type=encounters.cell_type())
        .name("encounters: marks to cells")
        .set_parallelism(p)
        .start_new_chain()
    )
    judged = (
        keyed_by_first_field(to_cells, Types.LONG(), Types.STRING())
        .process(encounters.EncounterCells(steps), output_type=encounters.keyed_type())
        .name("encounters: marks judged (keyed by 0.1-degree cell)")
        .uid("encounter-cells")
        .set_parallelism(p)
    )
    runs = (
        keyed_by_first_field(judged, Types.STRING(), Types.STRING())
        .process(encounters.EncounterTracks(steps), output_type=encounters.keyed_type())
        .name("encounters: runs (keyed by track)")
        .uid("encounter-tracks")
        .set_parallelism(p)
    )
    return (
        keyed_by_first_field(runs, Types.STRING(), Types.STRING())
        .process(encounters.EncounterPairs(steps, config), output_type=Types.STRING())
        .name("encounters (keyed by pair)")
        .uid("encounter-pairs")
        .set_parallelism(p)
    )


def build_pipeline(
    env: StreamExecutionEnvironment, lines: DataStream, config: PipelineConfig, emit_tallies: bool = True
) -> Streams:
    """The whole job on a stream of raw lines."""
    env.add_jars(helpers_jar().as_uri())
    env.set_max_parallelism(MAX_PARALLELISM)
    tally = operators.TALLY if emit_tallies else None

    # Per lane: lines to entries (reports, reassembled multipart groups, times), then stamped
    # with the watermark of the lane's receivers.
    # The plain sentences (most lines of a receiver's feed) are parsed in Java; the parse operator
    # decides the rest and puts the entries of both in the lane's order.
    batches = LineBatches("batch lines", "batch-lines", LINES_PER_BATCH, BATCH_DELAY_MS).apply(lines)
    fast_path = config.input_format in (AUTO, NMEA) and not config.test_fail_once
    lane_batches = FastSentences("plain sentences", "fast-sentences", lane_batch_type(), fast_path).apply(batches)
    parsed = (
        keyed_by_first_field(lane_batches, Types.INT(), lane_batch_type(), already_partitioned=True)
        .process(operators.ParseLines(config, emit_tallies), output_type=parsed_type())
        .name("parse lines")
        .uid("parse")
        .set_parallelism(parallelism(lines))
    )
    reports = receiver_watermarks(config, tally).apply(parsed)

    # Exact copies decided in Java, keyed by vessel: a copy goes on as its event time alone, to be
    # counted by the dedup operator.
    copies = exact_copies(config).apply(reports)

    # Dedup by vessel: vessels in shards (MMSI mod the maximum parallelism, one shard per key
    # group, so that every parallelism up to the maximum gives every dedup subtask vessels), and
    # reports in batches per dedup subtask, one call for all of its shards.
    report_batches = KeyedBatches(
        "batch reports by dedup subtask", "batch-reports", MAX_PARALLELISM, config.parallelism, REPORTS_PER_BATCH,
        BATCH_DELAY_MS, wire_report_type(),
    ).apply(copies)  # fmt: skip
    vessels = (
        keyed_by_first_field(report_batches, Types.INT(), columns(wire_report_type()))
        .process(operators.DedupVessel(config, emit_tallies, MAX_PARALLELISM), output_type=columns(vessel_pane_type()))
        .name("dedup by MMSI")
        .uid("dedup-vessels")
        .set_parallelism(config.parallelism)
    )

    # Cell windows, in Java on Flink's keyed state and timers.
    contributions = ColumnsToRows("one pane contribution per record", "pane-rows", vessel_pane_type()).apply(vessels)
    aggregates = cell_windows(config).apply(contributions)

    def lines_of(stream: DataStream, what: str) -> DataStream:
        return SplitLines(f"one {what} per record", f"split-{what.replace(' ', '-')}").apply(stream)

    def side(stream: DataStream, tag: OutputTag) -> DataStream:
        return side_output(stream, tag)

    streams = Streams(
        positions=lines_of(side(vessels, operators.POSITIONS), "position"),
        static=lines_of(side(vessels, operators.STATIC), "static report"),
        aggregates=AggregateJson("aggregate as JSON", "aggregate-json", aggregate_type(), config.slide_ms).apply(
            aggregates
        ),
        late=lines_of(side(vessels, operators.LATE_OUT), "late report"),
        dead_letter=side(parsed, operators.DEAD).union(lines_of(side(vessels, operators.DEAD), "dead letter")),
        bad_fixes=lines_of(side(vessels, operators.BAD_FIXES), "bad fix"),
        gaps=gap_coverage(config, contributions, lines_of(side(vessels, operators.GAPS), "gap")),
        port_visits=lines_of(side(vessels, operators.PORT_VISITS), "port visit"),
        loitering=lines_of(side(vessels, operators.LOITERING), "loitering event"),
        encounters=encounter_stream(config, side(vessels, operators.ENCOUNTER_MARKS)),
        tally=side(parsed, operators.TALLY).union(
            side(reports, operators.TALLY), lines_of(side(vessels, operators.TALLY), "tally")
        ),
    )
    return with_latency_gauges(streams) if config.input_feed or config.source != "file" else streams


def with_latency_gauges(streams: Streams) -> Streams:
    """A live or unbounded run's outputs, each through a gauge of its latency on the way to the
    sinks (the wall clock less each record's event time, the last minute's p50, p99 and max)."""
    measured = {
        name: OutputLatency(f"latency of {name}", name, EVENT_TIME_FIELDS[name]).apply(stream)
        if name in EVENT_TIME_FIELDS
        else stream
        for name, stream in streams.named().items()
    }
    return Streams(**measured, tally=streams.tally)
