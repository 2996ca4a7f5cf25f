"""Where a run's outputs go: JSON Lines or GeoParquet part files under a directory (and the
tallies behind its summary), one Kafka topic per output, with ``--postgres`` one PostgreSQL table per output, and
with ``--dynamodb-table`` the aggregates into a DynamoDB table too."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from pyflink.common.serialization import Encoder
from pyflink.datastream import DataStream, StreamExecutionEnvironment
from pyflink.datastream.connectors.file_system import BucketAssigner, FileSink, OutputFileConfig, RollingPolicy

from ais_pipeline import geoparquet_outputs
from ais_pipeline.config import OUTPUT_KEYS, PipelineConfig
from ais_pipeline.jvm.aws import DynamoDbAggregates
from ais_pipeline.jvm.jdbc import PostgresTableSink
from ais_pipeline.jvm.kafka import KeyedJsonRecords
from ais_pipeline.jvm.parquet import GeoParquetParts
from ais_pipeline.pipeline import kafka
from ais_pipeline.pipeline.topology import Streams
from ais_pipeline.postgres import TABLES
from ais_pipeline.resources import connector_jars


def jsonl_sink(directory: Path) -> FileSink:
    """JSON Lines part files written straight into ``directory``, committed on every checkpoint
    (and at the end of a bounded input), so a running job's outputs can be read as it goes."""
    return (
        FileSink.for_row_format(str(directory), Encoder.simple_string_encoder())
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
        .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy())
        .with_output_file_config(OutputFileConfig.builder().with_part_suffix(".jsonl").build())
        .build()
    )


DYNAMODB_IN_FLIGHT = 4  # requests of up to 25 conditional writes at once, per sink subtask
DYNAMODB_BATCH_DELAY_MS = 500


def dynamodb_sink(streams: Streams, config: PipelineConfig, dead_letters: Path | None) -> None:
    """The aggregates of ``--dynamodb-windows`` into ``--dynamodb-table``, replay-safe (a write
    replaces an item only with a newer firing of its window). What DynamoDB refuses for good goes
    into the run's dead-letter output: JSON Lines under ``dead_letters`` (a file or Kinesis
    run's), else it is logged and counted (a Kafka run's outputs are topics)."""
    DynamoDbAggregates(
        name=f"write DynamoDB {config.dynamodb_table}",
        uid="dynamodb-aggregates",
        region=config.region,
        endpoint=config.dynamodb_endpoint,
        table=config.dynamodb_table,
        max_in_flight=DYNAMODB_IN_FLIGHT,
        max_rounds=config.dynamodb_rounds,
        max_delay_ms=DYNAMODB_BATCH_DELAY_MS,
        windows=config.dynamodb_window_kinds,
        dead_letter_dir="" if dead_letters is None else str(dead_letters.resolve()),
    ).apply(streams.aggregates)


# A GeoParquet part rolls at every checkpoint, and at this size or age when checkpoints are apart.
PARQUET_PART_BYTES = 128 << 20
PARQUET_PART_MS = 15 * 60_000


def geoparquet_sink(stream: DataStream, name: str, directory: Path) -> None:
    """One output as GeoParquet part files straight into ``directory``
    (:mod:`ais_pipeline.geoparquet_outputs` says their columns and geometry)."""
    cols = geoparquet_outputs.columns(name)
    GeoParquetParts(
        name=f"write GeoParquet {name}",
        uid=f"geoparquet-{name}",
        directory=str(directory.resolve()),
        names=[c.name for c in cols],
        types=[c.type for c in cols],
        fields=[c.field for c in cols],
        geometry=geoparquet_outputs.GEOMETRY[name],
        max_bytes=PARQUET_PART_BYTES,
        max_ms=PARQUET_PART_MS,
    ).apply(stream)


def file_sinks(
    streams: Streams, output_dir: Path, tally_dir: Path | None, print_too: bool, formats: Sequence[str] = ("jsonl",)
) -> None:
    """Every output under ``output_dir`` (the summary counts them there) in each of ``formats``
    (JSON Lines, GeoParquet), the tallies under ``tally_dir`` (when given), and, with
    ``print_too``, every output printed as well."""
    for name, stream in streams.named().items():
        if "jsonl" in formats:
            stream.sink_to(jsonl_sink(output_dir / name)).name(f"write {name}").uid(f"sink-{name}")
        if "geoparquet" in formats:
            geoparquet_sink(stream, name, output_dir / name)
        if print_too:
            stream.print(name).name(f"print {name}").uid(f"print-{name}")
    if tally_dir is not None:
        streams.tally.sink_to(jsonl_sink(tally_dir)).name("write tallies").uid("sink-tally")


def kafka_sinks(streams: Streams, config: PipelineConfig, exactly_once: bool) -> None:
    """Every output to its topic (``--output-topic-prefix`` + name), keyed as
    :data:`ais_pipeline.config.OUTPUT_KEYS` says; transactional (committed on checkpoints) when
    ``exactly_once``, else at least once."""
    for name, stream in streams.named().items():
        topic = config.output_topics()[name]
        KeyedJsonRecords(
            name=f"write Kafka {topic}",
            uid=f"kafka-{name}",
            bootstrap_servers=config.bootstrap_servers,
            topic=topic,
            key_fields=config.output_keys(name) if not exactly_once else OUTPUT_KEYS[name],
            exactly_once=exactly_once,
            transactional_id_prefix=f"{topic}.{config.group_id}",
            transaction_timeout_ms=kafka.TRANSACTION_TIMEOUT_MS,
            properties=kafka.for_shaded_connector(config.kafka_properties),
        ).apply(stream)


def postgres_sinks(env: StreamExecutionEnvironment, streams: Mapping[str, DataStream], config: PipelineConfig) -> None:
    """Every output (name -> stream of its JSON records) into its table, by the table's idempotent
    statement (:mod:`ais_pipeline.postgres`), through Flink's JDBC connector and the PostgreSQL
    driver (fetched into the jar cache on first use)."""
    target = config.postgres
    assert target is not None
    for jar in connector_jars("jdbc"):
        env.add_jars(jar.as_uri())
    for name, stream in streams.items():
        table = TABLES[name]
        PostgresTableSink(
            name=f"write PostgreSQL {table.name}",
            uid=f"postgres-{name}",
            table=table.name,
            jdbc_url=target.jdbc_url(),
            user=target.user,
            password=target.password,
            statement=table.statement(),
            fields=table.parameters,
            batch_size=config.postgres_batch_size,
            batch_interval_ms=config.postgres_batch_interval_ms,
            max_retries=config.postgres_retries,
        ).apply(stream)
