"""Feed a Kafka topic from a capture: ``ais-pipeline replay FILE --topic T [--rate N]`` (or a Kinesis
data stream: ``--stream NAME --region R``, :mod:`ais_pipeline.tools.replay_kinesis`).

One record per line, the line as the value, in file order, at ``--rate`` lines per second or as
fast as the broker takes them. The key is the line's receiver (the tag block's ``s:``; a later
fragment of a tag-block group takes its first fragment's), so that over several partitions a
receiver's lines keep their order and a multipart group stays in one partition
(:class:`ais_pipeline.rules.feeds.PartitionKeys`). Lines are split as the job's file source splits
them, so a replayed file and the same file read directly are the same input. Creates the topic
when it is missing (``--partitions``). Shows a progress bar on a terminal and ends with the count
of records the broker acknowledged.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from ais_pipeline.config import kafka_client_properties
from ais_pipeline.errors import ConfigError, guarded
from ais_pipeline.rules.feeds import PartitionKeys

# Java client settings that librdkafka (the replay tool's client) does not know; a properties file
# written for the job may carry them.
_JAVA_ONLY = ("sasl.jaas.config", "ssl.truststore.", "ssl.keystore.", "sasl.login.", "sasl.client.callback")


def librdkafka_properties(props: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in props.items() if not k.startswith(_JAVA_ONLY)}


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="ais-pipeline replay", description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path, help="a capture (file or directory of files), one line per record")
    parser.add_argument("--topic", default=os.environ.get("KAFKA_TOPIC", "ais-raw"), help="[KAFKA_TOPIC, ais-raw]")
    parser.add_argument(
        "--bootstrap-servers",
        default=os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092"),
        help="[KAFKA_BOOTSTRAP_SERVERS, 127.0.0.1:9092]",
    )
    parser.add_argument("--rate", type=float, default=0, help="lines per second (default: as fast as possible)")
    parser.add_argument("--partitions", type=int, default=1, help="partitions of the topic if it must be created")
    parser.add_argument(
        "--kafka-properties",
        default=os.environ.get("KAFKA_PROPERTIES_FILE", ""),
        help="client properties file (librdkafka names; Java-only keys are skipped) [KAFKA_PROPERTIES_FILE]",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--stream", default="", help="a Kinesis data stream instead of a topic [KINESIS_STREAM]")
    parser.add_argument("--region", default=os.environ.get("AWS_REGION", ""), help="Kinesis: [AWS_REGION]")
    parser.add_argument(
        "--kinesis-endpoint", default=os.environ.get("KINESIS_ENDPOINT", ""), help="Kinesis: [KINESIS_ENDPOINT]"
    )
    parser.add_argument("--shards", type=int, default=1, help="Kinesis: shards of the stream if it must be created")
    parser.add_argument("--lines-per-record", type=int, default=1, help="Kinesis: consecutive lines per record")
    args = parser.parse_args(list(argv))
    if not args.file.exists():
        raise ConfigError(f"replay: no such file or directory: {args.file}")
    if args.rate < 0:
        raise ConfigError(f"--rate: must not be negative, not {args.rate}")
    if args.partitions < 1:
        raise ConfigError(f"--partitions: must be at least 1, not {args.partitions}")
    return args


def ensure_topic(admin_conf: dict[str, str], topic: str, partitions: int, timeout_s: float = 10) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, NewTopic

    # The check reports the failure itself; librdkafka would log every reconnect attempt to stderr.
    admin = AdminClient({**admin_conf, "log_level": 0})
    try:
        metadata = admin.list_topics(timeout=timeout_s)
    except KafkaException as exc:
        raise ConfigError(
            f"--bootstrap-servers: no Kafka broker answered at {admin_conf['bootstrap.servers']} "
            f"within {timeout_s:.0f} s ({exc})"
        ) from None
    if topic in metadata.topics:
        return
    futures = admin.create_topics([NewTopic(topic, num_partitions=partitions)])
    try:
        futures[topic].result(timeout_s)
    except KafkaException as exc:
        if "TOPIC_ALREADY_EXISTS" not in str(exc):
            raise ConfigError(f"--topic: could not create {topic!r}: {exc}") from None


class Progress:
    """A one-line progress bar on stderr (only when it is a terminal, unless forced)."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = max(total, 1)
        self.enabled = enabled
        self.started = time.monotonic()
        self.shown = -1.0

    def update(self, done: int, final: bool = False) -> None:
        now = time.monotonic()
        if not self.enabled or (not final and now - self.shown < 0.2):
            return
        self.shown = now
        width = 30
        filled = int(width * done / self.total)
        rate = done / max(now - self.started, 1e-9)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} lines, {rate:,.0f}/s ")
        if final:
            sys.stderr.write("\n")
        sys.stderr.flush()


def replay(
    lines: Iterable[str],
    total: int,
    topic: str,
    conf: dict[str, str],
    rate: float = 0,
    progress: bool = False,
) -> int:
    """Produce every line; returns how many the broker acknowledged (raises when any failed)."""
    from confluent_kafka import KafkaException, Producer

    producer = Producer({"enable.idempotence": True, "linger.ms": 20, **conf})
    failures: list[str] = []
    acked = 0

    def delivered(err: object, _msg: object) -> None:
        nonlocal acked
        if err is not None:
            failures.append(str(err))
        else:
            acked += 1

    bar = Progress(total, progress)
    started = time.monotonic()
    sent = 0
    keys = PartitionKeys()
    for line in lines:
        key = keys.key(line).encode("utf-8")
        while True:
            try:
                producer.produce(topic, value=line.encode("utf-8"), key=key, callback=delivered)
                break
            except BufferError:  # the local queue is full: let the broker catch up
                producer.poll(0.1)
        sent += 1
        producer.poll(0)
        if rate:
            ahead = sent / rate - (time.monotonic() - started)
            if ahead > 0:
                time.sleep(ahead)
        bar.update(sent)
    remaining = producer.flush(60)
    bar.update(sent, final=True)
    if remaining or failures:
        raise KafkaException(f"{len(failures) + remaining} of {sent} records not delivered: {failures[:3]}")
    return acked


def main(argv: Sequence[str]) -> int:
    from ais_pipeline.files import read_lines

    args = parse_args(argv)
    if args.stream:
        from ais_pipeline.tools import replay_kinesis

        if not args.region:
            raise ConfigError("--region (AWS_REGION): a Kinesis replay needs the stream's region")
        kinesis = replay_kinesis.kinesis_client(args.region, args.kinesis_endpoint)
        replay_kinesis.ensure_stream(kinesis, args.stream, args.shards)
        put = replay_kinesis.put_lines(kinesis, args.stream, read_lines(args.file), args.lines_per_record)
        lines = sum(1 for _ in read_lines(args.file))
        print(f"replayed {lines} lines ({put} records) from {args.file} into {args.stream}")
        return 0
    conf = {"bootstrap.servers": args.bootstrap_servers}
    conf.update(librdkafka_properties(kafka_client_properties(args.kafka_properties, os.environ)))
    ensure_topic(conf, args.topic, args.partitions)
    total = sum(1 for _ in read_lines(args.file))
    show = sys.stderr.isatty() and not args.no_progress
    acked = replay(read_lines(args.file), total, args.topic, conf, args.rate, show)
    print(f"replayed {acked} lines from {args.file} into {args.topic}")
    return 0


if __name__ == "__main__":
    sys.exit(guarded(main, sys.argv[1:]))
