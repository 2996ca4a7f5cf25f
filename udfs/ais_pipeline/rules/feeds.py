"""Live feeds as receivers send them (plain Python): where a feed is (its URL), the tag block a
line gets on its way into Kafka, and the splitting of a byte stream into lines.

- ``udp://HOST:PORT``: datagrams of one or more lines, listened for on HOST (AIS-catcher ``-u``,
  rtl-ais, gpsd's gps2udp, AIS Dispatcher).
- ``tcp://HOST:PORT``: a TCP server that sends lines (AIS-catcher ``-S``, aggregators), connected
  to as a client, again with back-off when it closes.
- ``tcp-listen://HOST:PORT``: senders that connect here (AIS-catcher ``-P``).
- ``mqtt://HOST[:PORT]/TOPIC``: messages of one or more lines on an MQTT broker's topic,
  subscribed to with QoS 1 (AIS-catcher's MQTT output).

A line that has no tag block gets one with the station and the receive time in milliseconds
(``\\s:<station>,c:<ms>,t:received*hh\\``), so that the job knows who heard it and when; a line that already
has one passes through byte for byte. Listeners bind 127.0.0.1 unless their URL names another
address.
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from collections import deque
from dataclasses import dataclass

from ais_pipeline.errors import ConfigError
from ais_pipeline.rules.parse import nmea_checksum

SCHEMES = ("udp", "tcp", "tcp-listen", "mqtt")
RECEIVED = "t:received"  # the tag-block field of a line stamped on receipt
MAX_LINE_BYTES = 4096  # longer than any NMEA sentence with a tag block; the job dead-letters it
_UNSAFE = str.maketrans(",\\*", "___")  # what would break a tag block


@dataclass(frozen=True)
class FeedUrl:
    scheme: str
    host: str
    port: int
    topic: str = ""  # mqtt: the topic filter subscribed to (``+`` and ``#`` wildcards allowed)

    @property
    def listens(self) -> bool:
        return self.scheme in ("udp", "tcp-listen")

    @property
    def open_to_network(self) -> bool:
        """A listener on an address other than loopback."""
        if not self.listens:
            return False
        try:
            return not ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return self.host != "localhost"

    def __str__(self) -> str:
        where = f"{self.scheme}://{self.host}:{self.port}"
        return f"{where}/{self.topic}" if self.scheme == "mqtt" else where


MQTT_PORT = 1883
_EXPECTED = "udp://, tcp:// or tcp-listen://HOST:PORT, or mqtt://HOST[:PORT]/TOPIC"


def is_feed_url(text: str) -> bool:
    """Whether an ``--input`` names a live feed (a URL of one of :data:`SCHEMES`) rather than a
    path."""
    scheme, sep, _ = text.partition("://")
    return bool(sep) and scheme in SCHEMES


def parse_feed_url(text: str, flag: str = "--from") -> FeedUrl:
    """``udp://HOST:PORT``, ``tcp://HOST:PORT``, ``tcp-listen://HOST:PORT`` or
    ``mqtt://HOST[:PORT]/TOPIC`` (port 1883 unless given); a listener without a host binds
    127.0.0.1. Credentials never come in a URL (command lines show in process lists and logs)."""
    scheme, sep, rest = text.partition("://")
    if not sep or scheme not in SCHEMES:
        raise ConfigError(f"{flag}: expected {_EXPECTED}, not {text!r}")
    where, slash, topic = rest.partition("/")
    if "@" in where:
        raise ConfigError(
            f"{flag}: no credentials in the URL (they would show in process lists and logs); "
            "give them in --feed-properties or FEED_USERNAME / FEED_PASSWORD"
        )
    if scheme == "mqtt":
        if not topic:
            raise ConfigError(f"{flag}: {text!r} names no MQTT topic (mqtt://HOST[:PORT]/TOPIC)")
    elif slash and topic:
        raise ConfigError(f"{flag}: {text!r}: only an mqtt:// URL has a path (its topic)")
    parts = urllib.parse.urlsplit(f"//{where}")
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port is None and scheme == "mqtt":
        port = MQTT_PORT
    if port is None or not 0 < port < 65536:
        raise ConfigError(f"{flag}: {text!r} has no port (1-65535)")
    host = parts.hostname or ""
    if not host:
        if scheme in ("tcp", "mqtt"):
            raise ConfigError(f"{flag}: {text!r} names no server to connect to")
        host = "127.0.0.1"
    return FeedUrl(scheme, host, port, topic if scheme == "mqtt" else "")


def tag_line(line: str, station: str, received_ms: int) -> str:
    """The line as it goes into Kafka: with a tag block of its station and receive time when it
    has none (``t:received`` marks the time as the receive time: the job counts those lines as
    timed on receipt), else unchanged. Commas, backslashes and stars in a station name (which would break
    the tag block) are replaced by ``_``."""
    if line.startswith("\\") or not line.strip():
        return line
    safe = station.translate(_UNSAFE)
    body = f"s:{safe},c:{received_ms},{RECEIVED}"
    return f"\\{body}*{nmea_checksum(body):02X}\\{line}"


class PartitionKeys:
    """The Kafka record key of each line of a capture, so that a receiver's lines keep their order
    and a multipart group is never split across partitions: the tag block's receiver (``s:``),
    ``""`` for a line without one (every such line in one partition, CSV rows with their header);
    a later fragment of a tag-block group (``g:2-2-<id>``, often without ``s:``) takes its first
    fragment's key. The group ids seen last are remembered (at most ``keep``)."""

    def __init__(self, keep: int = 65_536) -> None:
        self._groups: dict[str, str] = {}
        self._keep = keep

    def key(self, line: str) -> str:
        start = line.find("\\")
        if start < 0 or start > line.find("!") >= 0:
            return ""
        end = line.find("\\", start + 1)
        if end < 0:
            return ""
        station, group = "", ""
        for item in line[start + 1 : end].split("*", 1)[0].split(","):
            name, _, value = item.partition(":")
            if name == "s":
                station = value
            elif name == "g":
                group = value
        number, _, rest = group.partition("-")
        group_id = rest.partition("-")[2]
        if not group_id:
            return station
        if number == "1":
            if len(self._groups) >= self._keep:
                self._groups.pop(next(iter(self._groups)))
            self._groups[group_id] = station
            return station
        return self._groups.get(group_id, station)


def stamped_on_receipt(line: str) -> bool:
    """Whether a line carries the tag block :func:`tag_line` gives (its time is the receive
    time: the job counts it as timed by ingestion)."""
    return line.startswith("\\") and f",{RECEIVED}*" in line


class LineSplitter:
    """The lines of a byte stream that comes in chunks (a TCP connection): split on ``\\n``,
    ``\\r`` or ``\\r\\n``, bytes that are not UTF-8 replaced. A line longer than
    :data:`MAX_LINE_BYTES` is cut into pieces of that many bytes, passed on as lines (the job
    dead-letters them, so nothing is held without bound); ``too_long`` counts the cuts. The job's
    network inputs split the same way (``ais.flink.feeds.LineSplitter``; the golden cases of
    ``tests/golden/feeds.json`` run against both)."""

    def __init__(self) -> None:
        self._partial = b""
        self._after_cr = False
        self.too_long = 0

    def feed(self, chunk: bytes) -> list[str]:
        if self._after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._after_cr = chunk.endswith(b"\r")
        data = self._partial + chunk
        pieces = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        rest = pieces.pop()
        lines: list[str] = []
        for piece in pieces:
            lines.append(self._cut(piece, lines).decode("utf-8", errors="replace"))
        self._partial = self._cut(rest, lines)
        return lines

    def _cut(self, data: bytes, lines: list[str]) -> bytes:
        """Pieces of :data:`MAX_LINE_BYTES` off the front of a line longer than that, into
        ``lines``; what is left."""
        while len(data) > MAX_LINE_BYTES:
            lines.append(data[:MAX_LINE_BYTES].decode("utf-8", errors="replace"))
            data = data[MAX_LINE_BYTES:]
            self.too_long += 1
        return data

    @classmethod
    def whole(cls, data: bytes) -> tuple[list[str], int]:
        """The lines of one complete payload (a datagram, an MQTT message), its last line
        without a line break included, and the number of cuts."""
        splitter = cls()
        lines = splitter.feed(data)
        rest = splitter.end()
        if rest is not None:
            lines.append(rest)
        return lines, splitter.too_long

    def end(self) -> str | None:
        """What is left when the stream ends: a last line without a line break, or None."""
        rest, self._partial = self._partial, b""
        return rest.decode("utf-8", errors="replace") if rest else None


def raw_line(value: str) -> str:
    """A line as its sender sent it: without the tag block :func:`tag_line` gave it."""
    if stamped_on_receipt(value):
        return value[value.index("\\", 1) + 1 :]
    return value


class Resends:
    """What a station's feed sends again when it is connected to again, recognised and skipped.

    Some TCP servers re-send the lines they hold to every client that connects (rtl-ais holds the
    last 15 s), and a relay that was stopped or killed has lost the lines that were in flight. So
    at the start of each connection, lines that are among the station's recent ones (the last
    ``keep`` lines that went into Kafka; after a restart, read back from the topic) are skipped,
    until the first line that is not: from there on every line of the connection passes, so a
    line is never skipped in the middle of one. (A line a feed repeats exactly at the start of a
    connection is a duplicate the job would remove anyway.)"""

    def __init__(self, keep: int = 20_000) -> None:
        self.keep = keep
        self._order: deque[str] = deque()
        self._count: dict[str, int] = {}

    def remember(self, line: str) -> None:
        self._order.append(line)
        self._count[line] = self._count.get(line, 0) + 1
        if len(self._order) > self.keep:
            old = self._order.popleft()
            left = self._count[old] - 1
            if left:
                self._count[old] = left
            else:
                del self._count[old]

    def __contains__(self, line: str) -> bool:
        return line in self._count

    def __len__(self) -> int:
        return len(self._order)

    def connected(self) -> Connection:
        """A new connection of the station: what it sends first may be sent again."""
        return Connection(self)


class Connection:
    """One connection's lines through its station's :class:`Resends`."""

    def __init__(self, resends: Resends) -> None:
        self.resends = resends
        self.skipping = len(resends) > 0
        self.skipped = 0

    def fresh(self, line: str) -> bool:
        """Whether a line goes on (and is remembered), or is a resend."""
        if self.skipping:
            if line in self.resends:
                self.skipped += 1
                return False
            self.skipping = False
        self.resends.remember(line)
        return True
