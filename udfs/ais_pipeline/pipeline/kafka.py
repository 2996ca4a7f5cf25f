"""Kafka for the job: the connector jar, the client properties every Kafka client of the job gets,
and the checks that turn a missing broker or topic into a one-line error before anything is
submitted. The source and the sinks are in :mod:`ais_pipeline.pipeline.sources` and
:mod:`~ais_pipeline.pipeline.sinks`.

The connector is ``flink-sql-connector-kafka`` from Maven Central, as ``connectors/pom.xml`` pins
it, fetched into the jar cache on first use (:mod:`ais_pipeline.resources`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping

from pyflink.datastream import StreamExecutionEnvironment

from ais_pipeline.config import PipelineConfig
from ais_pipeline.errors import ConfigError
from ais_pipeline.jvm.gateway import JavaError
from ais_pipeline.jvm.kafka import KafkaAdmin
from ais_pipeline.resources import connector_jars

log = logging.getLogger("ais_pipeline.kafka")

# Below the broker's transaction.max.timeout.ms (15 min by default), above any checkpoint pause.
TRANSACTION_TIMEOUT_MS = 600_000
PREFLIGHT_TIMEOUT_S = 10


class KafkaSetupError(ConfigError):
    """The broker cannot be reached, or a topic is missing: said in one line, before the job runs."""


def use_connector(env: StreamExecutionEnvironment) -> None:
    """The connector jar (fetched from Maven Central on first use) on the job's classpath and the
    client's: the checks before the run, the source and the sinks all use it."""
    for jar in connector_jars("kafka-connector"):
        env.add_jars(jar.as_uri())


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
        admin = KafkaAdmin(props)
    except JavaError as exc:
        raise KafkaSetupError(f"--kafka-properties: cannot make a Kafka client of them ({exc})") from None
    try:
        try:
            names = admin.topic_names(PREFLIGHT_TIMEOUT_S)
        except JavaError as exc:
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
            except JavaError as exc:
                if "TopicExistsException" not in exc.text:
                    raise KafkaSetupError(f"could not create the output topics {missing}: {exc}") from None
            log.info("created output topics %s", ", ".join(missing))
    finally:
        admin.close()
