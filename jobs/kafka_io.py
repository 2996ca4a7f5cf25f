"""Kafka in and out for the job: the source of raw lines, one sink per output, and the checks that
turn a missing broker or topic into a one-line error before anything is submitted.

The connector is ``flink-sql-connector-kafka`` from Maven Central (``connectors/pom.xml``, fetched
into ``build/jars/flink/`` by ``scripts/fetch-jars.sh``); two small Java classes of this project
(``java/kafka/``) read record values as lines and key the output records.
"""

from __future__ import annotations

import logging
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path

from udfs.config import OUTPUT_KEYS, ConfigError, PipelineConfig

log = logging.getLogger("ais_pipeline.kafka")

ROOT = Path(__file__).resolve().parent.parent
CONNECTOR_DIR = ROOT / "build" / "jars" / "flink"
KAFKA_HELPERS_JAR = ROOT / "build" / "ais-kafka-helpers.jar"
# Below the broker's transaction.max.timeout.ms (15 min by default), above any checkpoint pause.
TRANSACTION_TIMEOUT_MS = 600_000
PREFLIGHT_TIMEOUT_S = 10


class KafkaSetupError(ConfigError):
    """The broker cannot be reached, or a topic is missing: said in one line, before the job runs."""


def kafka_jars() -> list[Path]:
    """The connector jar and this project's Kafka helper jar, fetched and built when missing."""
    from jobs.ais_pipeline import build_java_if_stale

    try:
        build_java_if_stale(
            KAFKA_HELPERS_JAR, ROOT / "java" / "kafka" / "src", "kafka", force=not any(CONNECTOR_DIR.glob("*.jar"))
        )
    except subprocess.CalledProcessError as exc:
        raise KafkaSetupError(f"could not fetch or build the Kafka jars: {exc.stderr.strip()[-500:]}") from None
    return [*sorted(CONNECTOR_DIR.glob("*.jar")), KAFKA_HELPERS_JAR]


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


def _java_properties(props: dict[str, str]):  # type: ignore[no-untyped-def]
    from pyflink.java_gateway import get_gateway

    j_props = get_gateway().jvm.java.util.Properties()
    for key, value in props.items():
        j_props.setProperty(key, value)
    return j_props


def check_topics(config: PipelineConfig) -> None:
    """Before the job starts: the brokers answer, the input topic exists, and the output topics
    exist (created with the broker's defaults when missing). Uses the connector's own Kafka
    client, so the user's security properties mean exactly what they mean to the job."""
    from py4j.protocol import Py4JJavaError
    from pyflink.java_gateway import get_gateway

    jvm = get_gateway().jvm
    props = client_properties(config)
    props.setdefault("request.timeout.ms", str(PREFLIGHT_TIMEOUT_S * 1000))
    props.setdefault("default.api.timeout.ms", str(PREFLIGHT_TIMEOUT_S * 1000))
    admin_class = jvm.org.apache.flink.kafka.shaded.org.apache.kafka.clients.admin.Admin
    seconds = jvm.java.util.concurrent.TimeUnit.SECONDS
    try:
        admin = admin_class.create(_java_properties(props))
    except Py4JJavaError as exc:
        raise KafkaSetupError(f"--kafka-properties: cannot make a Kafka client of them ({_cause(exc)})") from None
    try:
        try:
            names = set(admin.listTopics().names().get(PREFLIGHT_TIMEOUT_S, seconds))
        except Py4JJavaError as exc:
            cause = _cause(exc)
            if "AuthenticationException" in cause or "AuthorizationException" in cause:
                raise KafkaSetupError(
                    f"--kafka-properties (KAFKA_PROPERTIES_FILE): the broker at {config.bootstrap_servers} "
                    f"refused the client's credentials ({cause.rsplit(': ', 1)[-1]})"
                ) from None
            raise KafkaSetupError(
                f"--bootstrap-servers (KAFKA_BOOTSTRAP_SERVERS): no Kafka broker answered at "
                f"{config.bootstrap_servers} within {PREFLIGHT_TIMEOUT_S} s ({cause})"
            ) from None
        if config.source == "kafka" and config.topic not in names:
            raise KafkaSetupError(
                f"--topic (KAFKA_TOPIC): topic {config.topic!r} does not exist on {config.bootstrap_servers}"
            )
        missing = [topic for topic in config.output_topics().values() if topic not in names]
        if missing:
            new_topic = jvm.org.apache.flink.kafka.shaded.org.apache.kafka.clients.admin.NewTopic
            empty = jvm.java.util.Optional.empty()
            topics = jvm.java.util.ArrayList()
            for topic in missing:
                topics.add(new_topic(topic, empty, empty))
            try:
                admin.createTopics(topics).all().get(PREFLIGHT_TIMEOUT_S, seconds)
            except Py4JJavaError as exc:
                if "TopicExistsException" not in str(exc):
                    raise KafkaSetupError(f"could not create the output topics {missing}: {_cause(exc)}") from None
            log.info("created output topics %s", ", ".join(missing))
    finally:
        admin.close()


def _cause(exc: Exception) -> str:
    """The innermost Java exception message of a py4j error, in one line."""
    text = str(exc).strip().splitlines()
    for line in text:
        if "Exception:" in line or "Error:" in line:
            return line.strip().split(": ", 1)[-1][:300]
    return text[0][:300] if text else type(exc).__name__


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
    from pyflink.java_gateway import get_gateway

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
    builder._j_builder.setDeserializer(get_gateway().jvm.ais.flink.kafka.KafkaLines())
    if config.bounded:
        builder.set_bounded(KafkaOffsetsInitializer.latest())
    source = builder.build()
    return env.from_source(source, WatermarkStrategy.no_watermarks(), f"read Kafka {config.topic}").uid("source-kafka")


def kafka_sink(config: PipelineConfig, name: str, exactly_once: bool):  # type: ignore[no-untyped-def]
    """One output to its topic, keyed by :data:`udfs.config.OUTPUT_KEYS`; transactional (committed
    on checkpoints) when ``exactly_once``, else flushed on checkpoints (at least once)."""
    from pyflink.datastream.connectors import DeliveryGuarantee
    from pyflink.datastream.connectors.kafka import KafkaSink
    from pyflink.java_gateway import get_gateway

    gateway = get_gateway()
    topic = config.output_topics()[name]
    keys = OUTPUT_KEYS[name]
    j_keys = gateway.new_array(gateway.jvm.String, len(keys))
    for i, key in enumerate(keys):
        j_keys[i] = key
    builder = KafkaSink.builder().set_bootstrap_servers(config.bootstrap_servers)
    builder._j_builder.setRecordSerializer(gateway.jvm.ais.flink.kafka.KeyedJsonRecords(topic, j_keys))
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
