"""`ais-pipeline relay` between real senders and a real KRaft broker: a TCP server replaying the
bundled sample at about 5,000 lines/s, and UDP datagrams as AIS-catcher and rtl-ais send them.
Kafka must hold every line once, in order, byte for byte when it had a tag block, with the station
and receive time when it had none; a UDP flood beyond the relay's buffer is counted as dropped,
exactly."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from ais_pipeline.config import SAMPLE_INPUT
from ais_pipeline.pipeline.ports import unused_port
from ais_pipeline.rules.parse import parse_nmea
from ais_pipeline.rules.records import Report
from tests.support.kafka import read_topic
from tests.support.servers import ROOT

pytestmark = pytest.mark.integration

RATE = 5_000  # lines/s


def relay(kafka: str, source: str, topic: str, *flags: str) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "ais_pipeline.cli", "relay", "--from", source, "--topic", topic]
    return subprocess.Popen(
        [*cmd, "--bootstrap-servers", kafka, *flags],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stopped(proc: subprocess.Popen[str]) -> dict[str, int]:
    """Ctrl-C's SIGTERM twin: the relay flushes and prints its summary."""
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def wait_for_records(kafka: str, topic: str, count: int, timeout_s: float = 60) -> list[tuple[str | None, str]]:
    deadline = time.monotonic() + timeout_s
    records: list[tuple[str | None, str]] = []
    while time.monotonic() < deadline:
        records = read_topic(kafka, topic, timeout_s=10)
        if len(records) >= count:
            return records
        time.sleep(1)
    return records


def test_a_tcp_feed_is_relayed_into_kafka_once_in_order_byte_for_byte(kafka: str):
    lines = SAMPLE_INPUT.read_text().splitlines()
    port = unused_port()
    server = socket.create_server(("127.0.0.1", port))

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            for start in range(0, len(lines), RATE // 10):
                chunk = "".join(line + "\r\n" for line in lines[start : start + RATE // 10])
                conn.sendall(chunk.encode())
                time.sleep(0.1)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    metrics_port = unused_port()
    proc = relay(kafka, f"tcp://127.0.0.1:{port}", "relay-tcp", "--metrics-port", str(metrics_port))
    records = wait_for_records(kafka, "relay-tcp", len(lines))
    time.sleep(1)
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as resp:
        scraped = dict(line.split(" ") for line in resp.read().decode().splitlines() if not line.startswith("#"))
    summary = stopped(proc)
    server.close()
    assert [value for _, value in records] == lines  # every line once, in order, as the sender wrote it
    assert (summary["lines_in"], summary["produced"], summary["dropped"], summary["undelivered"]) == (
        len(lines), len(lines), 0, 0,
    )  # fmt: skip
    assert {key for key, _ in records} == {f"127.0.0.1:{port}"}  # one station, one key: its order kept
    # Prometheus' view of the same counters
    assert (scraped["ais_relay_lines_in_total"], scraped["ais_relay_produced_total"]) == (str(len(lines)),) * 2
    assert (scraped["ais_relay_dropped_total"], scraped["ais_relay_waiting"]) == ("0", "0")


def test_udp_datagrams_without_tag_blocks_get_their_station_and_receive_time(kafka: str, fixtures: Path):
    bare = [line for line in (fixtures / "aistools__multi-part.nmea").read_text().splitlines() if line][:40]
    port = unused_port()
    proc = relay(kafka, f"udp://127.0.0.1:{port}", "relay-udp", "--station", "AIS-catcher 1")
    time.sleep(3)  # the relay is listening
    before = int(time.time() * 1000)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        for i in range(0, len(bare), 2):  # two lines a datagram, as rtl-ais sends a group
            sender.sendto(("\n".join(bare[i : i + 2]) + "\n").encode(), ("127.0.0.1", port))
    records = wait_for_records(kafka, "relay-udp", len(bare))
    after = int(time.time() * 1000)
    summary = stopped(proc)
    assert summary["produced"] == len(bare) and summary["dropped"] == 0
    assert [value.split("\\", 2)[2] for _, value in records] == bare
    first = parse_nmea(records[0][1])
    assert isinstance(first, Report) or first.__class__.__name__ == "Fragment"
    assert first.receiver == "AIS-catcher 1" and before <= first.ts <= after  # type: ignore[union-attr]


def test_a_udp_flood_beyond_the_buffer_is_counted_as_dropped_exactly(kafka: str, tmp_path: Path):
    port = unused_port()
    props = tmp_path / "slow.properties"
    props.write_text("queue.buffering.max.messages=50\n")  # a producer that holds little
    proc = relay(kafka, f"udp://127.0.0.1:{port}", "relay-flood", "--buffer-lines", "100", "--kafka-properties",
                 str(props))  # fmt: skip
    time.sleep(3)
    line = "!AIVDM,1,1,,A,14`qQb0000o?u?DK>Smo2E`v0404,0*1A"
    sent = 20_000
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        sender.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
        for _ in range(sent):
            sender.sendto(line.encode(), ("127.0.0.1", port))
    time.sleep(5)
    summary = stopped(proc)
    records = read_topic(kafka, "relay-flood")
    assert summary["dropped"] > 0  # the buffer overflowed
    assert summary["lines_in"] == summary["produced"] + summary["dropped"]  # nothing lost without a count
    assert len(records) == summary["produced"] and summary["undelivered"] == 0
    assert summary["lines_in"] <= sent


def test_a_relay_killed_mid_tcp_stream_and_started_again_leaves_every_line_in_kafka_once(kafka: str):
    """The server is as rtl-ais is: each client that connects first gets the lines of the last
    moments again (here 3,000), then the stream goes on. The relay is killed without a word in
    the middle (what it held is lost) and started again: the server's resend makes up for the
    loss, and the lines Kafka has already are skipped."""
    lines = SAMPLE_INPUT.read_text().splitlines()
    resend = 3_000
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    state = {"next": 0, "connections": 0}
    # The first connection stops sending at 4,000 lines until the relay is killed: mid-stream
    # however fast the relay is, and within the resend of what it had not yet written.
    cut = threading.Event()

    def serve() -> None:
        while state["next"] < len(lines):
            try:
                conn, _ = server.accept()
            except OSError:
                return
            state["connections"] += 1
            with conn:
                try:
                    start = state["next"]
                    conn.sendall("".join(line + "\r\n" for line in lines[max(0, start - resend) : start]).encode())
                    while state["next"] < len(lines):
                        if state["connections"] == 1 and state["next"] >= 4_000:
                            cut.wait(timeout=120)
                        chunk = lines[state["next"] : state["next"] + RATE // 10]
                        conn.sendall("".join(line + "\r\n" for line in chunk).encode())
                        state["next"] += len(chunk)
                        time.sleep(0.1)
                    time.sleep(30)  # the end: the relay reads what it has
                except OSError:
                    continue  # the client is gone: the next one gets the resend

    threading.Thread(target=serve, daemon=True).start()
    first = relay(kafka, f"tcp://127.0.0.1:{port}", "relay-killed")
    wait_for_records(kafka, "relay-killed", 3_000)
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=30)
    cut.set()
    assert 0 < state["next"] < len(lines), "the stream was not cut in the middle"
    second = relay(kafka, f"tcp://127.0.0.1:{port}", "relay-killed")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and state["next"] < len(lines):
        time.sleep(0.5)
    records = wait_for_records(kafka, "relay-killed", len(lines))
    time.sleep(2)
    summary = stopped(second)
    server.close()
    records = read_topic(kafka, "relay-killed")
    assert state["connections"] == 2
    assert [value for _, value in records] == lines  # every line once, in order
    assert summary["resent"] > 0 and summary["produced"] == summary["lines_in"] - summary["resent"]
