"""Where a run's raw lines come from: a file or a directory of files, a live feed, a Kafka topic, or a
Kinesis data stream."""

from __future__ import annotations

from pyflink.datastream import DataStream, StreamExecutionEnvironment

from ais_pipeline.config import PipelineConfig
from ais_pipeline.jvm.aws import KinesisLines
from ais_pipeline.jvm.kafka import KafkaLines
from ais_pipeline.jvm.sources import FeedLines, LanePacing, OrderedFiles
from ais_pipeline.pipeline import kafka
from ais_pipeline.rules.feeds import parse_feed_url
from ais_pipeline.rules.watermarks import CONSENSUS_LINES, JUMP_LINES

FOLLOW_EVERY_MS = 1000  # how often --follow looks for new files
FEED_BUFFER_LINES = 100_000  # a live UDP input's lines held while the job is busy; beyond, counted as dropped
KINESIS_DISCOVERY_MS = 10_000  # how often an unbounded Kinesis run looks for new shards (a resharding)


def file_lines(env: StreamExecutionEnvironment, config: PipelineConfig) -> DataStream:
    """Lines of a file, or of every file under a directory in name order: bounded (the job ends
    with the input), or, with --follow, watching for new files until the job is stopped. One
    reader (one lane), or with --lanes per-file one lane per reader at the job's parallelism, each
    reading a file at a time, kept within --lane-drift of event time of each other."""
    monitor_ms = FOLLOW_EVERY_MS if config.follow else 0
    pacing = None
    if config.lanes == "per-file":
        pacing = LanePacing(
            out_of_orderness_ms=config.out_of_orderness_ms,
            idle_timeout_ms=config.idle_timeout_ms,
            max_clock_skew_ms=config.max_clock_skew_ms,
            consensus_lines=CONSENSUS_LINES,
            warm_up_lines=config.watermark_warm_up,
            jump_lines=JUMP_LINES,
            max_drift_ms=config.lane_drift_ms,
        )
    name, readers = ("read lines", 1) if pacing is None else ("read lines (a lane per file)", config.parallelism)
    return OrderedFiles(name, "source-lines", str(config.input_path), monitor_ms, readers, pacing).read(env)


def feed_lines(env: StreamExecutionEnvironment, config: PipelineConfig) -> DataStream:
    """Lines of a live feed (``--input udp://...``), until the job is stopped; nothing read is
    replayed after a restart (for that, relay the feed into Kafka)."""
    feed = parse_feed_url(config.input_feed, "--input")
    return FeedLines(
        name=f"read {feed}",
        uid="source-feed",
        feed=feed,
        station=config.station,
        buffer_lines=FEED_BUFFER_LINES,
        secrets=config.feed_secrets,
    ).read(env)


def input_lines(env: StreamExecutionEnvironment, config: PipelineConfig) -> DataStream:
    """The lines of a run's ``--input``: a live feed, else files."""
    return feed_lines(env, config) if config.input_feed else file_lines(env, config)


def kafka_lines(env: StreamExecutionEnvironment, config: PipelineConfig) -> DataStream:
    """Raw lines from a topic, one per record value; bounded by the offsets that are the latest at
    start with ``--bounded`` (the job then ends by itself, like a file run)."""
    kafka.use_connector(env)
    return KafkaLines(
        name=f"read Kafka {config.topic}",
        uid="source-kafka",
        bootstrap_servers=config.bootstrap_servers,
        topic=config.topic,
        group_id=config.group_id,
        starting_offsets=config.starting_offsets,
        bounded=config.bounded,
        properties=kafka.for_shaded_connector(config.kafka_properties),
    ).read(env)


def kinesis_lines(env: StreamExecutionEnvironment, config: PipelineConfig) -> DataStream:
    """Raw lines from a Kinesis data stream, one or more per record, from ``--starting-position``;
    with ``--bounded`` each shard stops where it was when the job started (the job then ends by
    itself, like a file run). A reader of several shards gives their lines in the order the
    stream received them."""
    return KinesisLines(
        name=f"read Kinesis {config.stream}",
        uid="source-kinesis",
        stream=config.stream,
        region=config.region,
        endpoint=config.kinesis_endpoint,
        starting_position=config.starting_position,
        bounded=config.bounded,
        discovery_ms=KINESIS_DISCOVERY_MS,
    ).read(env)
