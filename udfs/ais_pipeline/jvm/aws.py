"""Kinesis and DynamoDB through the job's own classes (``java/src/main/java/ais/flink/kinesis/``,
``.../dynamodb/``, on the AWS SDK for Java v2 shaded into the helper jar): the source of lines,
the aggregates' sink, and the checks before a run. Flink's own AWS connectors would take their
place where they are available; the flags stay the same."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyflink.common import WatermarkStrategy
from pyflink.datastream import DataStream, StreamExecutionEnvironment
from pyflink.datastream.connectors.base import Sink, Source

from ais_pipeline.jvm.gateway import JavaError, jvm
from ais_pipeline.resources import helpers_jar


@dataclass(frozen=True)
class KinesisLines:
    """``ais.flink.kinesis.KinesisLines``: the lines of a Kinesis data stream (one or more per
    record), a split per shard, sequence numbers in checkpoints, new shards found every
    ``discovery_ms``, a parent shard finished before its children; with ``bounded``, each shard
    stops where it was when the job started."""

    name: str
    uid: str
    stream: str
    region: str
    endpoint: str
    starting_position: str
    bounded: bool
    discovery_ms: int = 10_000

    def build(self) -> Any:
        return jvm().ais.flink.kinesis.KinesisLines.source(
            self.stream, self.region, self.endpoint, self.starting_position, self.bounded, self.discovery_ms
        )

    def read(self, env: StreamExecutionEnvironment) -> DataStream:
        env.add_jars(helpers_jar().as_uri())
        return env.from_source(Source(self.build()), WatermarkStrategy.no_watermarks(), self.name).uid(self.uid)


@dataclass(frozen=True)
class DynamoDbAggregates:
    """``ais.flink.dynamodb.DynamoDbAggregates``: the aggregates' JSON lines into ``table``, each a
    conditional write that only a newer firing of its window wins; what fails for good goes,
    as ``dynamodb_rejected`` dead letters, into JSON Lines files in ``dead_letter_dir`` (the
    run's dead-letter output), or, without one, is logged and counted. Only the aggregates of
    the window kinds ``windows`` are written (the others counted as ``dynamodbSkippedWindows``)."""

    name: str
    uid: str
    region: str
    endpoint: str
    table: str
    max_in_flight: int
    max_rounds: int
    max_delay_ms: int
    windows: tuple[str, ...]  # the window kinds written, the aggregates of others skipped
    dead_letter_dir: str = ""

    def build(self) -> Any:
        return jvm().ais.flink.dynamodb.DynamoDbAggregates.sink(
            self.region,
            self.endpoint,
            self.table,
            self.max_in_flight,
            self.max_rounds,
            self.max_delay_ms,
            self.dead_letter_dir,
            ",".join(self.windows),
        )

    def apply(self, aggregates: DataStream) -> None:
        aggregates.get_execution_environment().add_jars(helpers_jar().as_uri())
        aggregates.sink_to(Sink(self.build())).name(self.name).uid(self.uid)


def check_stream(region: str, endpoint: str, stream: str) -> int:
    """The stream's open shards; :class:`JavaError` when it cannot be read."""
    from py4j.protocol import Py4JJavaError

    try:
        return int(jvm().ais.flink.kinesis.KinesisStreams.check(region, endpoint, stream))
    except Py4JJavaError as exc:
        raise JavaError(exc) from None


def prepare_table(region: str, endpoint: str, table: str, create: bool) -> str:
    """``created`` or ``found``: the table is there with the job's key; :class:`JavaError` else."""
    from py4j.protocol import Py4JJavaError

    try:
        return str(jvm().ais.flink.dynamodb.DynamoDbTables.prepare(region, endpoint, table, create))
    except Py4JJavaError as exc:
        raise JavaError(exc) from None
