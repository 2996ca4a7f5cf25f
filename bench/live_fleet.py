"""A live fleet for the latency benchmark: vessels steaming on straight lines in the North Sea, each
reporting its position every five seconds without a tag block (so the job stamps each line with
the time it arrives, as it does a receiver's raw feed), a fifth of the reports heard twice, sent
over UDP in real time, with a silence of the whole feed in the middle.

The position reports (AIS type 1) are packed here rather than with pyais (about 40 us a line):
at 10,000 lines a second the sender shares the machine with the job. ``tests/unit`` holds the
packing to pyais's decoding.
"""

from __future__ import annotations

import math
import random
import socket
import time
from dataclasses import dataclass

CADENCE_S = 5.0  # a Class A vessel under way reports every 2-10 s
COPIES = 0.2  # the share of reports a second receiver hears too
FIRST_MMSI = 244_000_000


def _armor(value: int) -> str:
    return chr(value + 48) if value < 40 else chr(value + 56)


def nmea_checksum(body: str) -> str:
    value = 0
    for ch in body:
        value ^= ord(ch)
    return f"{value:02X}"


def position_sentence(mmsi: int, lat: float, lon: float, sog: float, cog: float, second: int) -> str:
    """A single-sentence AIS type 1 report as ``!AIVDM``, without a tag block."""
    fields = (
        (1, 6),  # message type
        (0, 2),  # repeat
        (mmsi, 30),
        (0, 4),  # under way using engine
        (128, 8),  # rate of turn: not available
        (round(sog * 10), 10),
        (0, 1),  # accuracy
        (round(lon * 600_000) & ((1 << 28) - 1), 28),
        (round(lat * 600_000) & ((1 << 27) - 1), 27),
        (round(cog * 10), 12),
        (round(cog) % 360, 9),  # heading
        (second % 60, 6),
        (0, 2),  # manoeuvre
        (0, 3),  # spare
        (0, 1),  # RAIM
        (0, 19),  # radio status
    )
    bits = 0
    for value, width in fields:
        bits = (bits << width) | value
    payload = "".join(_armor((bits >> (6 * (27 - i))) & 0x3F) for i in range(28))
    body = f"AIVDM,1,1,,A,{payload},0"
    return f"!{body}*{nmea_checksum(body)}"


@dataclass(frozen=True)
class Vessel:
    mmsi: int
    lat: float
    lon: float
    sog: float  # knots
    cog: float  # degrees
    offset: float  # seconds into each cadence when it reports


def fleet(vessels: int, seed: int = 1) -> list[Vessel]:
    rng = random.Random(seed)
    return [
        Vessel(
            FIRST_MMSI + i,
            52.0 + rng.random() * 3.0,
            2.0 + rng.random() * 4.0,
            round(5 + rng.random() * 13, 1),
            round(rng.random() * 360, 1),
            rng.random() * CADENCE_S,
        )
        for i in range(vessels)
    ]


def where(v: Vessel, t: float) -> tuple[float, float]:
    """The vessel's position ``t`` seconds after the start, to the 1/600,000 degree AIS carries."""
    nm = v.sog * t / 3600
    lat = v.lat + nm / 60 * math.cos(math.radians(v.cog))
    lon = v.lon + nm / 60 * math.sin(math.radians(v.cog)) / math.cos(math.radians(v.lat))
    return round(lat * 600_000) / 600_000, round(lon * 600_000) / 600_000


def vessels_for(rate: int) -> int:
    """The fleet that sends ``rate`` lines a second, copies included."""
    return max(1, round(rate * CADENCE_S / (1 + COPIES)))


@dataclass
class Sent:
    lines: int = 0
    distinct: int = 0


def send(port: int, ships: list[Vessel], phases: list[tuple[float, float]], seed: int = 1) -> Sent:
    """Send the fleet's reports to 127.0.0.1:``port`` as they fall due, one datagram a line, through
    ``phases``: (seconds of feed, seconds of silence after it), in turn. Time runs on through a
    silence (the vessels move on); the reports due in it are not sent."""
    rng = random.Random(seed)
    sent = Sent()
    schedule = sorted(ships, key=lambda v: v.offset)
    start = time.monotonic()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        phase_start = 0.0
        for feed_s, silence_s in phases:
            cycle = math.floor(phase_start / CADENCE_S)
            while True:
                base = cycle * CADENCE_S
                if base >= phase_start + feed_s:
                    break
                for v in schedule:
                    t = base + v.offset
                    if t < phase_start:
                        continue
                    if t >= phase_start + feed_s:
                        break
                    pause = start + t - time.monotonic()
                    if pause > 0.002:
                        time.sleep(pause)
                    lat, lon = where(v, t)
                    line = (position_sentence(v.mmsi, lat, lon, v.sog, v.cog, int(t)) + "\n").encode()
                    sock.sendto(line, ("127.0.0.1", port))
                    sent.lines += 1
                    sent.distinct += 1
                    if rng.random() < COPIES:
                        sock.sendto(line, ("127.0.0.1", port))
                        sent.lines += 1
                cycle += 1
            phase_start += feed_s + silence_s
            pause = start + phase_start - time.monotonic()
            if pause > 0:
                time.sleep(pause)
    return sent
