"""``ais-pipeline relay --from URL --topic T``: lines from a live feed into a Kafka topic, for the
job to read with exactly-once guarantees (a direct network input could not replay what it read).

    ais-pipeline relay --from udp://127.0.0.1:10110 --topic ais-raw        # AIS-catcher -u, rtl-ais
    ais-pipeline relay --from tcp://feed.example:5631 --topic ais-raw      # an aggregator's stream
    ais-pipeline relay --from tcp-listen://127.0.0.1:5010 --topic ais-raw  # AIS-catcher -P

The producer is idempotent with ``acks=all``; a station's lines share one record key, so they
keep their order. A line without a tag block gets one with the station (``--station``, else the
sender's address) and the receive time (:func:`ais_pipeline.rules.feeds.tag_line`). When Kafka is
slow or away, a TCP input stops reading (back-pressure: nothing is lost); UDP cannot be paused, so
lines wait in a bounded buffer (``--buffer-lines``) and what does not fit is counted as dropped.
Ctrl-C (or SIGTERM) flushes what the producer holds and prints the relay's summary.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ais_pipeline.config import kafka_client_properties
from ais_pipeline.errors import ConfigError, guarded
from ais_pipeline.rules.feeds import FeedUrl, LineSplitter, parse_feed_url, tag_line
from ais_pipeline.tools.replay import ensure_topic, librdkafka_properties

log = logging.getLogger("ais_pipeline.relay")

LOG_EVERY_S = 10.0
RECONNECT_MAX_S = 30.0


@dataclass
class Counts:
    """What the relay did: the figures of its progress line and summary."""

    lines_in: int = 0
    produced: int = 0
    dropped: int = 0  # UDP lines the full buffer could not take
    too_long: int = 0
    failed: int = 0  # records Kafka did not take after its retries
    connections: int = 0
    started: float = field(default_factory=time.monotonic)

    def line(self, pending: int) -> str:
        rate = self.lines_in / max(time.monotonic() - self.started, 1e-3)
        return (
            f"{self.lines_in:,} lines in, {self.produced:,} produced, {self.dropped:,} dropped, "
            f"{pending:,} waiting for Kafka, {rate:,.0f} lines/s"
        )

    def summary(self) -> dict[str, int]:
        return {
            "lines_in": self.lines_in,
            "produced": self.produced,
            "dropped": self.dropped,
            "too_long": self.too_long,
            "failed": self.failed,
            "connections": self.connections,
        }


class Relay:
    """One feed into one topic."""

    def __init__(self, feed: FeedUrl, topic: str, producer: Any, station: str, buffer_lines: int) -> None:
        self.feed, self.topic, self.producer = feed, topic, producer
        self.station = station
        self.counts = Counts()
        self.buffer: deque[tuple[str, str]] = deque()  # UDP: (station, line) waiting for the producer
        self.buffer_lines = buffer_lines
        self.stopping = asyncio.Event()

    def _delivered(self, err: Any, _msg: Any) -> None:
        if err is None:
            self.counts.produced += 1
        else:
            self.counts.failed += 1
            log.warning("relay: a record was not delivered: %s", err)

    def _produce(self, station: str, line: str) -> bool:
        """Hand one line to the producer; False when its queue is full."""
        try:
            self.producer.produce(
                self.topic, tag_line(line, station, int(time.time() * 1000)).encode(), station.encode(),
                on_delivery=self._delivered,
            )  # fmt: skip
        except BufferError:
            return False
        self.producer.poll(0)
        return True

    async def _produce_waiting(self, station: str, line: str) -> None:
        """Back-pressure: wait until the producer takes the line."""
        while not self._produce(station, line):
            self.producer.poll(0.05)
            await asyncio.sleep(0.05)

    async def _lines(self, reader: asyncio.StreamReader, station: str) -> None:
        splitter = LineSplitter()
        while not self.stopping.is_set():
            chunk = await reader.read(1 << 16)
            if not chunk:
                break
            for line in splitter.feed(chunk):
                self.counts.lines_in += 1
                await self._produce_waiting(station, line)
        rest = splitter.end()
        if rest is not None:  # the sender closed in the middle of a line: passed on, the job judges it
            self.counts.lines_in += 1
            await self._produce_waiting(station, rest)
        self.counts.too_long += splitter.too_long

    async def tcp_client(self) -> None:
        delay = 1.0
        station = self.station or f"{self.feed.host}:{self.feed.port}"
        while not self.stopping.is_set():
            try:
                reader, writer = await asyncio.open_connection(self.feed.host, self.feed.port)
            except OSError as exc:
                log.warning("relay: cannot connect to %s (%s); again in %.0f s", self.feed, exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RECONNECT_MAX_S)
                continue
            delay = 1.0
            self.counts.connections += 1
            try:
                await self._lines(reader, station)
            except (OSError, asyncio.IncompleteReadError) as exc:
                log.warning("relay: %s closed (%s)", self.feed, exc)
            finally:
                writer.close()
            if not self.stopping.is_set():
                log.info("relay: %s closed the connection; connecting again", self.feed)
                await asyncio.sleep(delay)

    async def tcp_listen(self) -> None:
        async def sender(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.counts.connections += 1
            peer = writer.get_extra_info("peername")
            station = self.station or (peer[0] if peer else "tcp")
            try:
                await self._lines(reader, station)
            except OSError as exc:
                log.warning("relay: a sender's connection broke (%s)", exc)
            finally:
                writer.close()

        server = await asyncio.start_server(sender, self.feed.host, self.feed.port)
        async with server:
            await self.stopping.wait()

    async def udp(self) -> None:
        relay = self

        class Datagrams(asyncio.DatagramProtocol):
            def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
                station = relay.station or addr[0]
                splitter = LineSplitter()
                lines = splitter.feed(data)
                rest = splitter.end()
                if rest is not None:
                    lines.append(rest)
                relay.counts.too_long += splitter.too_long
                for line in lines:
                    relay.counts.lines_in += 1
                    if len(relay.buffer) >= relay.buffer_lines:
                        relay.counts.dropped += 1
                    else:
                        relay.buffer.append((station, line))

        loop = asyncio.get_running_loop()
        transport, _ = await loop.create_datagram_endpoint(Datagrams, local_addr=(self.feed.host, self.feed.port))
        try:
            while not self.stopping.is_set() or self.buffer:
                while self.buffer and self._produce(*self.buffer[0]):
                    self.buffer.popleft()
                self.producer.poll(0)
                await asyncio.sleep(0.005 if self.buffer else 0.02)
        finally:
            transport.close()

    async def progress(self) -> None:
        while not self.stopping.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), LOG_EVERY_S)
            log.info("relay: %s", self.counts.line(len(self.producer) + len(self.buffer)))

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.stopping.set)
        reader = {"udp": self.udp, "tcp": self.tcp_client, "tcp-listen": self.tcp_listen}[self.feed.scheme]
        task = asyncio.create_task(reader())
        shown = asyncio.create_task(self.progress())
        await self.stopping.wait()
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(task, 10)
        task.cancel()
        shown.cancel()


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="ais-pipeline relay", description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="source", required=True, help="udp://, tcp:// or tcp-listen://HOST:PORT")
    parser.add_argument("--topic", required=True, help="the Kafka topic of raw lines")
    parser.add_argument("--station", default="", help="the station of lines without a tag block (default: the sender)")
    parser.add_argument("--bootstrap-servers", default=os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092"))
    parser.add_argument("--kafka-properties", default=os.environ.get("KAFKA_PROPERTIES_FILE", ""))
    parser.add_argument("--partitions", type=int, default=1, help="partitions of the topic when it is created")
    parser.add_argument("--buffer-lines", type=int, default=100_000, help="UDP: lines held while Kafka is slow")
    parser.add_argument("--summary", default="", help="also write the summary as JSON to this file")
    return parser.parse_args(list(argv))


def main(argv: Sequence[str]) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    log.setLevel(logging.INFO)
    args = parse_args(argv)
    feed = parse_feed_url(args.source)
    if args.buffer_lines < 1:
        raise ConfigError(f"--buffer-lines: must be at least 1, not {args.buffer_lines}")
    if feed.open_to_network:
        print(f"ais-pipeline: warning: --from {feed}: the relay listens on the network", file=sys.stderr)
    conf = {"bootstrap.servers": args.bootstrap_servers}
    conf.update(librdkafka_properties(kafka_client_properties(args.kafka_properties, os.environ)))
    ensure_topic(conf, args.topic, args.partitions)
    from confluent_kafka import Producer

    producer = Producer(conf | {"enable.idempotence": True, "acks": "all", "linger.ms": 20})
    relay = Relay(feed, args.topic, producer, args.station, args.buffer_lines)
    log.info("relay: %s -> Kafka %s (%s)", feed, args.topic, args.bootstrap_servers)
    asyncio.run(relay.run())
    relay.counts.dropped += len(relay.buffer)  # held when the relay stopped and Kafka would not take them
    remaining = producer.flush(30)
    summary = relay.counts.summary() | {"undelivered": remaining}
    print(json.dumps(summary))
    if args.summary:
        with open(args.summary, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(guarded(main, sys.argv[1:]))
