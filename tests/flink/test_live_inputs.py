"""The job's own network inputs (``--input udp://``, ``tcp://``, ``tcp-listen://``; ``mqtt://``
is in tests/integration/test_mqtt.py with a real broker): the bundled sample replayed at about
5,000 lines/s by a UDP sender, a TCP server and a TCP sender gives the file run's outputs
exactly (ids, final aggregates, late records) and its summary, once stopped with Ctrl-C; lines
without a tag block get the station and the receive time, and are counted as stamped on
receipt; a sender that says nothing, bytes that are not text and a line cut by a closing server
are counted or dead-lettered, and none stops the job."""

from __future__ import annotations

import socket
import threading
import time
from datetime import datetime
from pathlib import Path

import pyais
import pytest

from ais_pipeline.config import SAMPLE_INPUT
from ais_pipeline.files import read_records
from ais_pipeline.pipeline.ports import unused_port
from ais_pipeline.rules.outputs import iso_ms
from ais_pipeline.rules.parse import nmea_checksum
from tests.support.jobs import SAMPLE_SUMMARY, assert_same_outputs, run_oracle
from tests.support.live import LiveJob, fleet_seconds, send_seconds, send_tcp, send_udp, wait_until_bound
from tests.support.nmea import position

pytestmark = pytest.mark.flink

SAMPLE = SAMPLE_INPUT.read_text().splitlines()


def assert_the_file_runs(job: LiveJob, summary: dict[str, object], tmp_path: Path) -> None:
    assert summary["stopped"] == "drained"
    assert {k: summary[k] for k in SAMPLE_SUMMARY} == SAMPLE_SUMMARY
    oracle = tmp_path / "oracle"
    # A live run's watermark moves in steps of a second, so its vessels' timers fire at those:
    # the plain loop with the same steps.
    run_oracle(SAMPLE_INPUT, oracle, input_feed="udp://127.0.0.1:1")
    assert_same_outputs(job.out, oracle)


def test_the_sample_over_udp_gives_the_file_runs_outputs(tmp_path: Path):
    port = unused_port()
    job = LiveJob(tmp_path, f"udp://127.0.0.1:{port}")
    try:
        wait_until_bound(port, "udp")
        send_udp(port, SAMPLE)
        job.wait_for("lines", len(SAMPLE))
        time.sleep(2)
        summary = job.stop()
    finally:
        job.kill()
    assert_the_file_runs(job, summary, tmp_path)


def test_the_sample_from_a_tcp_sender_that_connects_here_gives_the_file_runs_outputs(tmp_path: Path):
    port = unused_port()
    job = LiveJob(tmp_path, f"tcp-listen://127.0.0.1:{port}")
    try:
        wait_until_bound(port, "tcp")
        silent = socket.create_connection(("127.0.0.1", port))  # a sender that connects and says nothing
        with socket.create_connection(("127.0.0.1", port)) as conn:
            send_tcp(conn, SAMPLE)
        job.wait_for("lines", len(SAMPLE))
        assert job.metric("feed_connections") == 2
        time.sleep(2)
        summary = job.stop()
        silent.close()
    finally:
        job.kill()
    assert_the_file_runs(job, summary, tmp_path)


def talker(sentence: str, talker_id: str) -> str:
    """The sentence as another talker sends it (BS, AB: the Norwegian feed's), its checksum again."""
    body = talker_id + sentence[3 : sentence.index("*")]
    return f"!{body}*{nmea_checksum(body):02X}"


def tag(body: str) -> str:
    return f"\\{body}*{nmea_checksum(body):02X}\\"


def test_a_tcp_server_feed_with_and_without_tag_blocks_and_a_close_mid_line(tmp_path: Path):
    now = int(time.time())
    # The Norwegian Coastal Administration's open feed: integer c:, talkers BS and AB, some lines
    # with no tag block at all; AIS-catcher's NMEA_TAG lines: a fractional c:.
    norwegian = tag(f"s:2573555,c:{now}") + talker(position(257021800, 59.9, 10.7), "BS")
    bare_ab = talker(position(257999000, 60.1, 5.3), "AB")
    catcher = tag(f"s:AIS-catcher,c:{now}.250") + position(366914320, 37.8, -122.4)
    bare_ai = position(311321000, 25.0, -77.3)
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    sent: dict[str, int] = {}

    def serve() -> None:
        conn, _ = server.accept()  # the first connection: lines, then a close in the middle of one
        with conn:
            sent["before"] = int(time.time() * 1000)
            send_tcp(conn, [norwegian, bare_ab, catcher, bare_ai], end="\n")
            conn.sendall(b"\xff\xfe not text\n!AIVDM,1,1,,A,14`qQb00")
            sent["after"] = int(time.time() * 1000)
        conn, _ = server.accept()  # connected again: the feed goes on
        with conn:
            send_tcp(conn, [norwegian], end="\n")  # the same line again: an exact duplicate
            time.sleep(60)

    threading.Thread(target=serve, daemon=True).start()
    job = LiveJob(tmp_path, f"tcp://127.0.0.1:{port}", "--station", "kystverket")
    try:
        job.wait_for("lines", 7)
        time.sleep(2)
        summary = job.stop()
    finally:
        job.kill()
        server.close()
    # the two bare sentences, the bytes that are not text and the cut line were stamped
    assert (summary["lines"], summary["stamped_on_receipt"], summary["duplicates_exact"]) == (7, 4, 1)
    assert summary["accounted_lines"] == 7
    positions = {p["mmsi"]: p for p in read_records(job.out / "positions")}
    receivers = {mmsi: p["receiver"] for mmsi, p in positions.items()}
    assert receivers == {
        257021800: "2573555",
        257999000: "kystverket",
        366914320: "AIS-catcher",
        311321000: "kystverket",
    }
    assert positions[366914320]["timestamp"] == iso_ms(now * 1000 + 250)  # the fractional c: kept
    assert positions[257021800]["timestamp"] == iso_ms(now * 1000)
    stamped = datetime.fromisoformat(positions[311321000]["timestamp"]).timestamp() * 1000
    assert sent["before"] - 1 <= stamped <= sent["after"] + 1
    dead = read_records(job.out / "dead_letter")
    assert sorted(d["reason"] for d in dead) == ["malformed", "not_text"], dead


def test_udp_datagrams_that_are_not_text_not_ais_or_too_long_are_dead_letters_or_counted(tmp_path: Path):
    port = unused_port()
    job = LiveJob(tmp_path, f"udp://127.0.0.1:{port}", "--station", "rtl-ais")
    good = position(244100000, 52.1, 4.3)
    try:
        wait_until_bound(port, "udp")
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
            for datagram in [
                b"\x00\x01\xff\xfe binary",  # not text
                b"$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47",  # NMEA, not AIS
                b"x" * 5_000,  # longer than any sentence: cut into 4,096 + 904 bytes
                good.encode(),
            ]:
                sender.sendto(datagram, ("127.0.0.1", port))
        job.wait_for("lines", 5)
        assert job.metric("feed_too_long") == 1
        time.sleep(2)
        summary = job.stop()
    finally:
        job.kill()
    assert (summary["lines"], summary["not_ais"], summary["positions_kept"], summary["accounted_lines"]) == (5, 1, 1, 5)
    assert summary["stamped_on_receipt"] == 5
    dead = sorted((d["reason"], len(d["raw"])) for d in read_records(job.out / "dead_letter"))
    assert [reason for reason, _ in dead] == ["malformed", "malformed", "not_text"], dead


def assert_every_line_decided(
    job: LiveJob, summary: dict[str, object], sent: list[list[str]], stamped: bool = True
) -> None:
    """Every line sent is read, counted once, and each distinct report is a position written, in
    the positions and in the tumbling windows' final figures."""
    lines = [line for second in sent for line in second]
    distinct = set(lines)
    assert (summary["lines"], summary["accounted_lines"]) == (len(lines),) * 2
    assert summary["stamped_on_receipt"] == (len(lines) if stamped else 0)
    assert (summary["positions_kept"], summary["duplicates_exact"]) == (len(distinct), len(lines) - len(distinct))
    written = read_records(job.out / "positions")
    assert len(written) == len(distinct)
    assert {(p["mmsi"], round(p["lat"], 5), round(p["lon"], 5)) for p in written} == {
        (r.mmsi, round(r.lat, 5), round(r.lon, 5)) for r in (pyais.decode(line) for line in distinct)
    }
    assert tumbling_reports(job.out) == len(distinct)


def tumbling_reports(out: Path) -> int:
    """The reports of the tumbling windows' final figures so far (their highest revisions)."""
    final: dict[tuple[str, str], dict[str, object]] = {}
    for a in read_records(out / "aggregates"):
        key = (str(a["cell"]), str(a["window_start"]))
        if a["window"] == "tumbling" and int(a["revision"]) >= int(final.get(key, {"revision": -1})["revision"]):  # type: ignore[call-overload]
            final[key] = a
    return sum(int(a["reports"]) for a in final.values())  # type: ignore[call-overload]


def test_a_live_feed_of_receivers_times_paused_past_the_idle_timeout_then_stopped_while_quiet_decides_every_line(
    tmp_path: Path,
):
    # A receiver's own times (tag blocks), so the lane follows its receivers and goes idle in a
    # silence: the pause and the quiet before Ctrl-C are each longer than the idle timeout (3 s
    # here, 30 s by default: the same path), and the lines after the pause, and the drain that
    # comes while the lane is idle, must still be decided and written.
    port = unused_port()
    before, after = fleet_seconds(100, 4), fleet_seconds(100, 4, first=20)
    job = LiveJob(tmp_path, f"udp://127.0.0.1:{port}", "--idle-timeout", "3")
    try:
        wait_until_bound(port, "udp")
        send_seconds(port, before, receiver="catcher")
        time.sleep(8)
        send_seconds(port, after, receiver="catcher")
        job.wait_for("lines", sum(map(len, before + after)))
        time.sleep(8)
        summary = job.stop()
    finally:
        job.kill()
    assert_every_line_decided(job, summary, before + after, stamped=False)


def test_a_live_feeds_windows_fire_on_the_clock_while_it_is_silent_and_ctrl_c_a_second_after_decides_every_line(
    tmp_path: Path,
):
    # Lines stamped on receipt: the watermark follows the clock through the silence, so the
    # windows of the first lines fire (and are committed at the next checkpoint) while no line
    # comes; then more lines, and Ctrl-C a second after the last.
    port = unused_port()
    first, then = fleet_seconds(100, 4), fleet_seconds(100, 2, first=20)
    flags = ("--window", "2", "--slide", "2", "--slide-size", "4", "--checkpoint-interval", "2")
    job = LiveJob(tmp_path, f"udp://127.0.0.1:{port}", *flags)
    try:
        wait_until_bound(port, "udp")
        send_seconds(port, first)
        distinct = len({line for second in first for line in second})
        deadline = time.monotonic() + 15
        while tumbling_reports(job.out) < distinct and time.monotonic() < deadline:
            time.sleep(0.5)
        assert tumbling_reports(job.out) == distinct  # nothing came since: fired on the clock
        send_seconds(port, then)
        time.sleep(1)
        summary = job.stop()
    finally:
        job.kill()
    assert_every_line_decided(job, summary, first + then)


@pytest.mark.slow  # the same paths with the idle timeout at 3 s: the two tests above
def test_a_live_feed_paused_for_30_s_and_for_5_minutes_with_the_default_flags_decides_every_line(tmp_path: Path):
    port = unused_port()
    parts = [fleet_seconds(100, 3), fleet_seconds(100, 3, first=33), fleet_seconds(100, 3, first=336)]  # as time goes
    job = LiveJob(tmp_path, f"udp://127.0.0.1:{port}")
    try:
        wait_until_bound(port, "udp")
        send_seconds(port, parts[0])
        time.sleep(30)
        send_seconds(port, parts[1])
        time.sleep(300)
        send_seconds(port, parts[2])
        time.sleep(1)
        summary = job.stop()
    finally:
        job.kill()
    assert_every_line_decided(job, summary, parts[0] + parts[1] + parts[2])
