"""Where a run's raw lines come from: a file or a directory of files, or a Kafka topic."""

from __future__ import annotations

from pyflink.datastream import DataStream, StreamExecutionEnvironment

from ais_pipeline.config import PipelineConfig
from ais_pipeline.jvm.kafka import KafkaLines
from ais_pipeline.jvm.sources import OrderedFiles
from ais_pipeline.pipeline import kafka

FOLLOW_EVERY_MS = 1000  # how often --follow looks for new files


def file_lines(env: StreamExecutionEnvironment, config: PipelineConfig) -> DataStream:
    """Lines of a file, or of every file under a directory in name order (one reader): bounded (the
    job ends with the input), or, with --follow, watching for new files until the job is stopped."""
    monitor_ms = FOLLOW_EVERY_MS if config.follow else 0
    return OrderedFiles("read lines", "source-lines", str(config.input_path), monitor_ms).read(env)


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
