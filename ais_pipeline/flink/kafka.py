"""Kafka in and out for the job: the source of raw lines, one sink per output, and the checks that
turn a missing broker or topic into a one-line error before anything is submitted.

The connector is ``flink-sql-connector-kafka`` from Maven Central (``connectors/pom.xml``, fetched
into ``build/jars/flink/`` by ``scripts/fetch-jars.sh``); two small Java classes of this project
(``java/src/main/java/ais/flink/kafka/``, reached through :mod:`ais_pipeline.flink.jvm`) read
record values as lines and key the output records.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from pathlib import Path

from ais_pipeline.config import OUTPUT_KEYS, ConfigError, PipelineConfig
from ais_pipeline.flink import jvm

log = logging.getLogger("ais_pipeline.kafka")

# Below the broker's transaction.max.timeout.ms (15 min by default), above any checkpoint pause.
TRANSACTION_TIMEOUT_MS = 600_000
PREFLIGHT_TIMEOUT_S = 10


class KafkaSetupError(ConfigError):
    """The broker cannot be reached, or a topic is missing: said in one line, before the job runs."""


def kafka_jars() -> list[Path]:
    """The connector jar (``build/jars/flink/``), fetched from Maven Central when missing."""
    from ais_pipeline.flink.environment import connector_jars

    return connector_jars("flink", "Kafka connector jar")


SHADED_PREFIX = "org.apache.flink.kafka.shaded."


def for_shaded_connector(props: Mapping[str, str]) -> dict[str, str]:
    """Kafka client properties as the SQL connector jar needs them: it bundles the Kafka client
    under ``org.apache.flink.kafka.shaded.``, so class names in ``sasl.jaas.config`` and ``*.class``
    properties (``org.apache.kafka.common.security.plain.PlainLoginModule``) get that prefix. A
    standard client properties file then works unchanged."""
    fixed: dict[str, str] = {}
    for key, value in props.items():
        if key == "sasl.jaas.config" or key.endswith(".class") or key.endswith(".classes"):
            value = re.sub(r"(?<![\w.])org\.apache\.kafka\.", SHADED_PREFIX + "org.apache.kafka.", value)
        fixed[key] = value
    return fixed


def client_properties(config: PipelineConfig) -> dict[str, str]:
    """What every Kafka client of the job gets: the brokers and the user's (security) properties."""
    props = {"bootstrap.servers": config.bootstrap_servers}
    props.update(for_shaded_connector(config.kafka_properties))
    return props


def check_topics(config: PipelineConfig) -> None:
    """Before the job starts: the brokers answer, the input topic exists, and the output topics
    exist (created with the broker's defaults when missing). Uses the connector's own Kafka
    client, so the user's security properties mean exactly what they mean to the job."""
    props = client_properties(config)
    props.setdefault("request.timeout.ms", str(PREFLIGHT_TIMEOUT_S * 1000))
    props.setdefault("default.api.timeout.ms", str(PREFLIGHT_TIMEOUT_S * 1000))
    try:
        admin = jvm.KafkaAdmin(props)
    except jvm.JavaError as exc:
        raise KafkaSetupError(f"--kafka-properties: cannot make a Kafka client of them ({exc})") from None
    try:
        try:
            names = admin.topic_names(PREFLIGHT_TIMEOUT_S)
        except jvm.JavaError as exc:
            if "AuthenticationException" in exc.text or "AuthorizationException" in exc.text:
                raise KafkaSetupError(
                    f"--kafka-properties (KAFKA_PROPERTIES_FILE): the broker at {config.bootstrap_servers} "
                    f"refused the client's credentials ({str(exc).rsplit(': ', 1)[-1]})"
                ) from None
            raise KafkaSetupError(
                f"--bootstrap-servers (KAFKA_BOOTSTRAP_SERVERS): no Kafka broker answered at "
                f"{config.bootstrap_servers} within {PREFLIGHT_TIMEOUT_S} s ({exc})"
            ) from None
        if config.source == "kafka" and config.topic not in names:
            raise KafkaSetupError(
                f"--topic (KAFKA_TOPIC): topic {config.topic!r} does not exist on {config.bootstrap_servers}"
            )
        missing = [topic for topic in config.output_topics().values() if topic not in names]
        if missing:
            try:
                admin.create_topics(missing, PREFLIGHT_TIMEOUT_S)
            except jvm.JavaError as exc:
                if "TopicExistsException" not in exc.text:
                    raise KafkaSetupError(f"could not create the output topics {missing}: {exc}") from None
            log.info("created output topics %s", ", ".join(missing))
    finally:
        admin.close()


def starting_offsets(spec: str):  # type: ignore[no-untyped-def]
    from pyflink.datastream.connectors.kafka import KafkaOffsetResetStrategy, KafkaOffsetsInitializer

    if spec == "earliest":
        return KafkaOffsetsInitializer.earliest()
    if spec == "latest":
        return KafkaOffsetsInitializer.latest()
    if spec == "committed":
        return KafkaOffsetsInitializer.committed_offsets(KafkaOffsetResetStrategy.EARLIEST)
    return KafkaOffsetsInitializer.timestamp(int(spec.partition(":")[2]))


def kafka_source(env, config: PipelineConfig):  # type: ignore[no-untyped-def]
    """Raw lines from a topic, one per record value; bounded by the offsets that are the latest at
    start with ``--bounded`` (the job then ends by itself, like a file run)."""
    from pyflink.common import WatermarkStrategy
    from pyflink.datastream.connectors.kafka import KafkaOffsetsInitializer, KafkaSource

    builder = (
        KafkaSource.builder()
        .set_bootstrap_servers(config.bootstrap_servers)
        .set_topics(config.topic)
        .set_group_id(config.group_id)
        .set_starting_offsets(starting_offsets(config.starting_offsets))
        # Lines written by a transactional producer (another exactly-once job) count once committed.
        .set_property("isolation.level", "read_committed")
    )
    for key, value in for_shaded_connector(config.kafka_properties).items():
        builder.set_property(key, value)
    env.add_jars(jvm.helpers_jar().as_uri())  # KafkaLines is the job's own class
    jvm.KafkaLines().set_on(builder)
    if config.bounded:
        builder.set_bounded(KafkaOffsetsInitializer.latest())
    source = builder.build()
    return env.from_source(source, WatermarkStrategy.no_watermarks(), f"read Kafka {config.topic}").uid("source-kafka")


def kafka_sink(config: PipelineConfig, name: str, exactly_once: bool):  # type: ignore[no-untyped-def]
    """One output to its topic, keyed by :data:`ais_pipeline.config.OUTPUT_KEYS`; transactional (committed
    on checkpoints) when ``exactly_once``, else flushed on checkpoints (at least once)."""
    from pyflink.datastream.connectors import DeliveryGuarantee
    from pyflink.datastream.connectors.kafka import KafkaSink

    topic = config.output_topics()[name]
    builder = KafkaSink.builder().set_bootstrap_servers(config.bootstrap_servers)
    jvm.KeyedJsonRecords(topic, OUTPUT_KEYS[name]).set_on(builder)
    if exactly_once:
        builder.set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE)
        builder.set_transactional_id_prefix(f"{topic}.{config.group_id}")
        builder.set_property("transaction.timeout.ms", str(TRANSACTION_TIMEOUT_MS))
    else:
        builder.set_delivery_guarantee(DeliveryGuarantee.AT_LEAST_ONCE)
    for key, value in for_shaded_connector(config.kafka_properties).items():
        builder.set_property(key, value)
    return builder.build()


def attach_kafka_sinks(streams, config: PipelineConfig, exactly_once: bool) -> None:  # type: ignore[no-untyped-def]
    for name, stream in streams.named().items():
        topic = config.output_topics()[name]
        stream.sink_to(kafka_sink(config, name, exactly_once)).name(f"write Kafka {topic}").uid(f"kafka-{name}")
