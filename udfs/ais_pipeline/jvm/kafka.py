"""Kafka through the connector jar (``flink-sql-connector-kafka``) and the job's own classes of
``java/src/main/java/ais/flink/kafka/``: the source of lines, the keyed JSON sinks, and the
connector's own admin client for the checks before a run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pyflink.common import WatermarkStrategy
from pyflink.datastream import DataStream, StreamExecutionEnvironment
from pyflink.datastream.connectors.base import Sink, Source

from ais_pipeline.jvm.gateway import JavaError, java_properties, jvm, string_array
from ais_pipeline.resources import helpers_jar


@dataclass(frozen=True)
class KafkaLines:
    """``ais.flink.kafka.KafkaLines.source``: one line per record value of ``topic`` (a tombstone
    is an empty line; bytes that are not UTF-8 come with replacement characters), read committed,
    from ``starting_offsets``; with ``bounded`` it stops at the offsets that are the latest when
    the job starts."""

    name: str
    uid: str
    bootstrap_servers: str
    topic: str
    group_id: str
    starting_offsets: str
    bounded: bool
    properties: Mapping[str, str] = field(default_factory=dict, repr=False)  # credentials among them

    def read(self, env: StreamExecutionEnvironment) -> DataStream:
        env.add_jars(helpers_jar().as_uri())
        j_source = jvm().ais.flink.kafka.KafkaLines.source(
            self.bootstrap_servers,
            self.topic,
            self.group_id,
            self.starting_offsets,
            self.bounded,
            java_properties(self.properties),
        )
        return env.from_source(Source(j_source), WatermarkStrategy.no_watermarks(), self.name).uid(self.uid)


@dataclass(frozen=True)
class KeyedJsonRecords:
    """``ais.flink.kafka.KeyedJsonRecords.sink``: JSON lines into ``topic``, each keyed by the
    values of ``key_fields`` joined by ``|``; transactional (committed on checkpoints) when
    ``exactly_once``, else flushed on checkpoints."""

    name: str
    uid: str
    bootstrap_servers: str
    topic: str
    key_fields: Sequence[str]
    exactly_once: bool
    transactional_id_prefix: str
    transaction_timeout_ms: int
    properties: Mapping[str, str] = field(default_factory=dict, repr=False)

    def apply(self, stream: DataStream) -> None:
        j_sink = jvm().ais.flink.kafka.KeyedJsonRecords.sink(
            self.bootstrap_servers,
            self.topic,
            string_array(list(self.key_fields)),
            self.exactly_once,
            self.transactional_id_prefix,
            self.transaction_timeout_ms,
            java_properties(self.properties),
        )
        stream.sink_to(Sink(j_sink)).name(self.name).uid(self.uid)


class KafkaAdmin:
    """The connector's own (shaded) Kafka admin client, so that the user's security properties
    mean exactly what they mean to the job. Java errors come out as :class:`JavaError`."""

    def __init__(self, props: Mapping[str, str]) -> None:
        from py4j.protocol import Py4JJavaError

        flink = jvm()
        self._admin_package = flink.org.apache.flink.kafka.shaded.org.apache.kafka.clients.admin
        try:
            self._admin = self._admin_package.Admin.create(java_properties(props))
        except Py4JJavaError as exc:
            raise JavaError(exc) from None
        self._seconds = flink.java.util.concurrent.TimeUnit.SECONDS

    def topic_names(self, timeout_s: int) -> set[str]:
        from py4j.protocol import Py4JJavaError

        try:
            return set(self._admin.listTopics().names().get(timeout_s, self._seconds))
        except Py4JJavaError as exc:
            raise JavaError(exc) from None

    def create_topics(self, names: Sequence[str], timeout_s: int) -> None:
        """Create topics with the broker's default partitions and replication."""
        from py4j.protocol import Py4JJavaError

        flink = jvm()
        empty = flink.java.util.Optional.empty()
        topics = flink.java.util.ArrayList()
        for name in names:
            topics.add(self._admin_package.NewTopic(name, empty, empty))
        try:
            self._admin.createTopics(topics).all().get(timeout_s, self._seconds)
        except Py4JJavaError as exc:
            raise JavaError(exc) from None

    def close(self) -> None:
        self._admin.close()
