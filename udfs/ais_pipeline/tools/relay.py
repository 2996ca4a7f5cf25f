"""``ais-pipeline relay --from URL --topic T``: lines from a live feed into a Kafka topic, for the
job to read with exactly-once guarantees (a direct network input could not replay what it read).

    ais-pipeline relay --from udp://127.0.0.1:10110 --topic ais-raw        # AIS-catcher -u, rtl-ais
    ais-pipeline relay --from tcp://feed.example:5631 --topic ais-raw      # an aggregator's stream
    ais-pipeline relay --from tcp-listen://127.0.0.1:5010 --topic ais-raw  # AIS-catcher -P
    ais-pipeline relay --from mqtt://127.0.0.1:1883/ais/# --topic ais-raw  # AIS-catcher's MQTT output

The producer is idempotent with ``acks=all``; a station's lines share one record key, so they
keep their order. A line without a tag block gets one with the station (``--station``, else the
sender's address) and the receive time (:func:`ais_pipeline.rules.feeds.tag_line`). When Kafka is
slow or away, a TCP input stops reading (back-pressure: nothing is lost); MQTT messages (QoS 1, a
persistent session) are acknowledged only once Kafka has every line of them, so the broker sends
again what a relay that died had not handed on; UDP cannot be paused, so lines wait in a bounded
buffer (``--buffer-lines``) and what does not fit is counted as dropped.
Ctrl-C (or SIGTERM) flushes what the producer holds and prints the relay's summary.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import json
import logging
import os
import signal
import sys
import threading
import time
import zlib
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tqdm import tqdm

from ais_pipeline.config import feed_secrets, kafka_client_properties
from ais_pipeline.errors import ConfigError, guarded
from ais_pipeline.pipeline.progress import RecentRate
from ais_pipeline.rules.feeds import FeedUrl, LineSplitter, Resends, parse_feed_url, raw_line, tag_line
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
    resent: int = 0  # lines a TCP feed sent again at the start of a connection, already in Kafka
    connections: int = 0
    disconnects: int = 0  # connections a server or broker closed
    started: float = field(default_factory=time.monotonic)

    def line(self, pending: int, rate: float) -> str:
        """The progress line: lines in, produced, dropped, lag (lines not yet in Kafka), lines/s."""
        return (
            f"{self.lines_in:,} lines in, {self.produced:,} produced, {self.dropped:,} dropped, "
            f"{pending:,} waiting for Kafka, {rate:,.0f} lines/s"
        )

    def prometheus(self, pending: int) -> str:
        """The counters in Prometheus' text format."""
        out = []
        for name, value in self.summary().items():
            metric = f"ais_relay_{name}_total"
            out += [f"# TYPE {metric} counter", f"{metric} {value}"]
        out += ["# TYPE ais_relay_waiting gauge", f"ais_relay_waiting {pending}"]
        return "\n".join(out) + "\n"

    def summary(self) -> dict[str, int]:
        return {
            "lines_in": self.lines_in,
            "produced": self.produced,
            "dropped": self.dropped,
            "too_long": self.too_long,
            "resent": self.resent,
            "failed": self.failed,
            "connections": self.connections,
            "disconnects": self.disconnects,
        }


class Relay:
    """One feed into one topic."""

    def __init__(
        self,
        feed: FeedUrl,
        topic: str,
        producer: Any,
        station: str,
        buffer_lines: int,
        secrets: dict[str, str] | None = None,
    ) -> None:
        self.feed, self.topic, self.producer = feed, topic, producer
        self.station = station
        self.secrets = secrets or {}
        self.resends: dict[str, Resends] = {}  # station -> its recent lines (TCP feeds)
        self.resend_window = 20_000
        self.polls = 0
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

    def _produce(self, station: str, line: str, received_ms: int | None = None, then: Any = None) -> bool:
        """Hand one line to the producer; False when its queue is full. ``then(ok)`` is called
        once Kafka has it (or has refused it)."""
        ms = int(time.time() * 1000) if received_ms is None else received_ms
        report: Any = self._delivered
        if then is not None:

            def report_then(err: Any, msg: Any) -> None:
                self._delivered(err, msg)
                then(err is None)

            report = report_then

        try:
            self.producer.produce(
                self.topic, tag_line(line, station, ms).encode(), station.encode(), on_delivery=report
            )
        except BufferError:
            return False
        self.polls += 1
        if self.polls % 64 == 0:  # delivery reports now and then, not a call per line
            self.producer.poll(0)
        return True

    async def _produce_waiting(self, station: str, line: str, received_ms: int | None = None, then: Any = None) -> None:
        """Back-pressure: wait until the producer takes the line."""
        while not self._produce(station, line, received_ms, then):
            self.producer.poll(0.05)
            await asyncio.sleep(0.05)

    async def _lines(self, reader: asyncio.StreamReader, station: str) -> None:
        splitter = LineSplitter()
        connection = self.resends.setdefault(station, Resends(self.resend_window)).connected()
        while not self.stopping.is_set():
            chunk = await reader.read(1 << 16)
            if not chunk:
                break
            for line in splitter.feed(chunk):
                self.counts.lines_in += 1
                if not connection.fresh(line):
                    self.counts.resent += 1
                elif not self._produce(station, line):
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
            login = self.secrets.get("login", "")
            if login:  # a line the server expects first (never logged)
                writer.write(login.encode() + b"\r\n")
                await writer.drain()
            try:
                await self._lines(reader, station)
            except (OSError, asyncio.IncompleteReadError) as exc:
                log.warning("relay: %s closed (%s)", self.feed, exc)
            finally:
                writer.close()
            if not self.stopping.is_set():
                self.counts.disconnects += 1
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
                lines, cut = LineSplitter.whole(data)
                relay.counts.too_long += cut
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

    async def mqtt(self) -> None:
        """QoS 1 in a persistent session; a message is acknowledged once Kafka has all its lines,
        in the order the messages came (as MQTT wants its acknowledgements)."""
        import paho.mqtt.client as mqtt

        loop = asyncio.get_running_loop()
        arrived: asyncio.Queue[Any] = asyncio.Queue()
        feed, secrets = self.feed, self.secrets
        client_id = secrets.get("client.id") or f"ais-pipeline-relay-{zlib.crc32(f'{feed} {self.topic}'.encode()):08x}"
        client = mqtt.Client(
            mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=False, manual_ack=True
        )  # fmt: skip
        if secrets.get("username"):
            client.username_pw_set(secrets["username"], secrets.get("password", ""))
        session = [0]  # which connection a message came on: acknowledgements go back on that one

        def on_connect(c: Any, _u: Any, _flags: Any, reason: Any, _props: Any) -> None:
            if reason.is_failure:
                log.warning("relay: the broker %s:%s refused the connection (%s)", feed.host, feed.port, reason)
                return
            session[0] += 1
            self.counts.connections += 1
            c.subscribe(feed.topic, qos=1)

        def on_disconnect(_c: Any, _u: Any, _flags: Any, reason: Any, _props: Any) -> None:
            if not self.stopping.is_set():
                self.counts.disconnects += 1
                log.warning("relay: the broker dropped the session (%s); connecting again", reason)

        def on_message(_c: Any, _u: Any, msg: Any) -> None:
            now = int(time.time() * 1000)
            loop.call_soon_threadsafe(arrived.put_nowait, (session[0], msg.mid, msg.qos, msg.topic, msg.payload, now))

        client.on_connect, client.on_disconnect, client.on_message = on_connect, on_disconnect, on_message
        client.reconnect_delay_set(1, int(RECONNECT_MAX_S))
        client.connect_async(feed.host, feed.port, keepalive=30)
        client.loop_start()
        unacked: deque[list[Any]] = deque()  # [session, mid, qos, lines not yet in Kafka], in arrival order

        def acknowledge() -> None:
            while unacked and unacked[0][3] == 0:
                on, mid, qos, _ = unacked.popleft()
                if on == session[0]:
                    client.ack(mid, qos)

        try:
            while not self.stopping.is_set():
                try:
                    on, mid, qos, topic, payload, now = await asyncio.wait_for(arrived.get(), 0.1)
                except TimeoutError:
                    self.producer.poll(0)
                    acknowledge()
                    continue
                lines, cut = LineSplitter.whole(payload)
                self.counts.too_long += cut
                entry = [on, mid, qos, len(lines)]
                unacked.append(entry)

                def one_delivered(_ok: bool, entry: list[Any] = entry) -> None:
                    entry[3] -= 1  # a record Kafka refused is counted as failed; MQTT will not send it again

                station = self.station or topic
                for line in lines:
                    self.counts.lines_in += 1
                    await self._produce_waiting(station, line, now, one_delivered)
                acknowledge()
            self.producer.flush(30)
            acknowledge()
        finally:
            await asyncio.sleep(0.2)  # the acknowledgements go out before the disconnect
            client.disconnect()
            client.loop_stop()

    def pending(self) -> int:
        """Lines read and not yet in Kafka."""
        return len(self.producer) + len(self.buffer)

    async def progress(self) -> None:
        """On a terminal one refreshing line (tqdm) every second, else a log line every 10 s."""
        rate = RecentRate(time.monotonic())
        bar = tqdm(bar_format="relay: {desc}", file=sys.stderr, leave=False) if sys.stderr.isatty() else None
        logged = time.monotonic()
        try:
            while not self.stopping.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stopping.wait(), 1.0)
                self.producer.poll(0)  # delivery reports of a feed gone quiet
                now = time.monotonic()
                line = self.counts.line(self.pending(), rate.update(now, self.counts.lines_in))
                if bar is not None:
                    bar.set_description_str(line, refresh=True)
                elif now - logged >= LOG_EVERY_S:
                    log.info("relay: %s", line)
                    logged = now
        finally:
            if bar is not None:
                bar.close()

    def serve_metrics(self, address: str, port: int) -> ThreadingHTTPServer:
        """``/metrics`` for Prometheus on ``address:port``, in a thread of its own."""
        relay = self

        class Metrics(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = relay.counts.prometheus(relay.pending()).encode()
                self.send_response(200 if self.path.startswith("/metrics") else 404)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args: Any) -> None:
                pass

        server = ThreadingHTTPServer((address, port), Metrics)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.stopping.set)
        reader = {"udp": self.udp, "tcp": self.tcp_client, "tcp-listen": self.tcp_listen, "mqtt": self.mqtt}[
            self.feed.scheme
        ]
        task = asyncio.create_task(reader())
        shown = asyncio.create_task(self.progress())
        await self.stopping.wait()
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(task, 10)
        task.cancel()
        shown.cancel()


def recent_lines(conf: dict[str, Any], topic: str, keep: int) -> dict[str, Resends]:
    """The last ``keep`` lines of each station (record key) in the topic, as their senders sent
    them: what a TCP feed that sends its recent lines again must not put into Kafka twice."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        conf | {"group.id": f"ais-pipeline-relay-tail-{os.getpid()}", "enable.auto.commit": False, "log_level": 0}
    )
    recent: dict[str, Resends] = {}
    try:
        metadata = consumer.list_topics(topic, timeout=30)
        for partition in sorted(metadata.topics[topic].partitions):
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)
            if high <= low:
                continue
            consumer.assign([TopicPartition(topic, partition, max(low, high - keep))])
            offset = max(low, high - keep)
            while offset < high - 1:
                msg = consumer.poll(10)
                if msg is None:
                    break
                if msg.error():
                    continue
                offset = msg.offset() or offset
                key = (msg.key() or b"").decode("utf-8", errors="replace")
                value = (msg.value() or b"").decode("utf-8", errors="replace")
                recent.setdefault(key, Resends(keep)).remember(raw_line(value))
    finally:
        consumer.close()
    return recent


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="ais-pipeline relay", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--from",
        dest="source",
        required=True,
        help="udp://, tcp:// or tcp-listen://HOST:PORT, or mqtt://HOST[:PORT]/TOPIC",
    )
    parser.add_argument("--topic", required=True, help="the Kafka topic of raw lines")
    parser.add_argument("--station", default="", help="the station of lines without a tag block (default: the sender)")
    parser.add_argument("--bootstrap-servers", default=os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092"))
    parser.add_argument("--kafka-properties", default=os.environ.get("KAFKA_PROPERTIES_FILE", ""))
    parser.add_argument(
        "--feed-properties",
        default=os.environ.get("FEED_PROPERTIES_FILE", ""),
        help="the feed's credentials: username, password (MQTT), login (a line a TCP server expects first),"
        " client.id; FEED_USERNAME, FEED_PASSWORD, FEED_LOGIN, FEED_CLIENT_ID env vars too",
    )
    parser.add_argument("--partitions", type=int, default=1, help="partitions of the topic when it is created")
    parser.add_argument("--buffer-lines", type=int, default=100_000, help="UDP: lines held while Kafka is slow")
    parser.add_argument(
        "--resend-window",
        type=int,
        default=20_000,
        help="TCP: lines a station sends again at the start of a connection are skipped when they are among its"
        " last N in the topic (0: none skipped)",
    )
    parser.add_argument(
        "--metrics-port",
        type=int,
        default=int(os.environ.get("RELAY_METRICS_PORT", "0")),
        help="serve the counters to Prometheus on 127.0.0.1:PORT/metrics (0: off) [RELAY_METRICS_PORT]",
    )
    parser.add_argument(
        "--bind-address",
        default=os.environ.get("BIND_ADDRESS", "127.0.0.1"),
        help="the address the metrics listen on; 0.0.0.0 opens them to the network [BIND_ADDRESS]",
    )
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
    secrets = feed_secrets(args.feed_properties, os.environ)
    relay = Relay(feed, args.topic, producer, args.station, args.buffer_lines, secrets)
    relay.resend_window = args.resend_window
    if feed.scheme in ("tcp", "tcp-listen") and args.resend_window > 0:
        relay.resends = recent_lines(conf, args.topic, args.resend_window)
    log.info("relay: %s -> Kafka %s (%s)", feed, args.topic, args.bootstrap_servers)
    metrics = None
    if args.metrics_port:
        try:
            loopback = ipaddress.ip_address(args.bind_address).is_loopback
        except ValueError:
            raise ConfigError(f"--bind-address: not an IP address: {args.bind_address!r}") from None
        if not loopback:
            print(f"ais-pipeline: warning: --bind-address {args.bind_address}: the relay's metrics are open to the"
                  " network", file=sys.stderr)  # fmt: skip
        metrics = relay.serve_metrics(args.bind_address, args.metrics_port)
        log.info("relay: metrics on http://%s:%d/metrics", args.bind_address, args.metrics_port)
    asyncio.run(relay.run())
    if metrics is not None:
        metrics.shutdown()
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
