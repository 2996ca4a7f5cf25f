"""Live feeds as receivers send them (plain Python): where a feed is (its URL), the tag block a
line gets on its way into Kafka, and the splitting of a byte stream into lines.

- ``udp://HOST:PORT``: datagrams of one or more lines, listened for on HOST (AIS-catcher ``-u``,
  rtl-ais, gpsd's gps2udp, AIS Dispatcher).
- ``tcp://HOST:PORT``: a TCP server that sends lines (AIS-catcher ``-S``, aggregators), connected
  to as a client, again with back-off when it closes.
- ``tcp-listen://HOST:PORT``: senders that connect here (AIS-catcher ``-P``).

A line that has no tag block gets one with the station and the receive time in milliseconds
(``\\s:<station>,c:<ms>*hh\\``), so that the job knows who heard it and when; a line that already
has one passes through byte for byte. Listeners bind 127.0.0.1 unless their URL names another
address.
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from dataclasses import dataclass

from ais_pipeline.errors import ConfigError

SCHEMES = ("udp", "tcp", "tcp-listen")
MAX_LINE_BYTES = 4096  # longer than any NMEA sentence with a tag block; the job dead-letters it
_UNSAFE = str.maketrans(",\\*", "___")  # what would break a tag block


@dataclass(frozen=True)
class FeedUrl:
    scheme: str
    host: str
    port: int

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
        return f"{self.scheme}://{self.host}:{self.port}"


def parse_feed_url(text: str, flag: str = "--from") -> FeedUrl:
    """``udp://HOST:PORT``, ``tcp://HOST:PORT`` or ``tcp-listen://HOST:PORT``; a listener
    without a host binds 127.0.0.1."""
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in SCHEMES:
        raise ConfigError(f"{flag}: expected udp://, tcp:// or tcp-listen://HOST:PORT, not {text!r}")
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None or not 0 < port < 65536:
        raise ConfigError(f"{flag}: {text!r} has no port (1-65535)")
    host = parts.hostname or ""
    if not host:
        if parts.scheme == "tcp":
            raise ConfigError(f"{flag}: {text!r} names no server to connect to")
        host = "127.0.0.1"
    return FeedUrl(parts.scheme, host, port)


def _checksum(body: str) -> str:
    value = 0
    for ch in body:
        value ^= ord(ch)
    return f"{value:02X}"


def tag_line(line: str, station: str, received_ms: int) -> str:
    """The line as it goes into Kafka: with a tag block of its station and receive time when it
    has none, else unchanged. Commas, backslashes and stars in a station name (which would break
    the tag block) are replaced by ``_``."""
    if line.startswith("\\") or not line.strip():
        return line
    safe = station.translate(_UNSAFE)
    body = f"s:{safe},c:{received_ms}"
    return f"\\{body}*{_checksum(body)}\\{line}"


class LineSplitter:
    """The lines of a byte stream that comes in chunks (a TCP connection): split on ``\\n``,
    ``\\r`` or ``\\r\\n``, bytes that are not UTF-8 replaced. A line longer than
    :data:`MAX_LINE_BYTES` is cut there and passed on (the job dead-letters it, so nothing is held
    without bound); ``too_long`` counts them."""

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
        self._partial = pieces.pop()
        lines = [p.decode("utf-8", errors="replace") for p in pieces]
        while len(self._partial) > MAX_LINE_BYTES:
            lines.append(self._partial[:MAX_LINE_BYTES].decode("utf-8", errors="replace"))
            self._partial = self._partial[MAX_LINE_BYTES:]
            self.too_long += 1
        return lines

    def end(self) -> str | None:
        """What is left when the stream ends: a last line without a line break, or None."""
        rest, self._partial = self._partial, b""
        return rest.decode("utf-8", errors="replace") if rest else None
