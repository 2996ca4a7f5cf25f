"""Generated feeds for the watermark and ordering tests: timings and clocks the real captures do
not have, built with pyais's encoder (tests/support/nmea.py), and real captures with one line's
clock moved. Deterministic: the same arguments give the same lines."""

from __future__ import annotations

import random
import re

from ais_pipeline.rules.parse import nmea_checksum
from tests.support.nmea import BASE, position, sentences, tagged

T0 = BASE - BASE % 60  # a window boundary, epoch seconds
HOUR = 3600


def receivers_feed(
    seconds: int = 1200,
    vessels: int = 6,
    receivers: tuple[str, ...] = ("r1", "r2", "r3"),
    offsets: dict[str, int] | None = None,
    pause: tuple[int, int] | None = None,
    every: int = 10,
) -> list[str]:
    """Vessels reporting every ``every`` s, each transmission heard by every receiver in turn (one
    line each, in that order); a receiver in ``offsets`` stamps its lines that many seconds off.
    ``pause`` = (start, length): the whole feed is silent then (an outage), and resumes."""
    offsets = offsets or {}
    lines: list[str] = []
    for t in range(0, seconds, every):
        if pause and pause[0] <= t < pause[0] + pause[1]:
            continue
        for v in range(vessels):
            sentence = position(244_100_000 + v, 52.0 + v * 0.1 + t * 1e-4, 4.0 + v * 0.1, sog=8.0 + v)
            for rx in receivers:
                lines.append(tagged(sentence, T0 + t + offsets.get(rx, 0), rx))
    return lines


DESTINATIONS = ("LE HAVRE", "SOUTHAMPTON", "ROTTERDAM", "HAMBURG")


def amendments_feed(vessels: int = 12, reports: int = 24, seed: int = 7) -> list[str]:
    """Type 5 voyage reports (two sentences each) every 10 s per vessel, the destination changing
    often (an amendment) and sometimes repeated (a duplicate), each heard by two or three shore
    receivers with their own sequence ids, in arrival order, between position reports of the same
    vessels."""
    rng = random.Random(seed)
    lines: list[str] = []
    seq = {f"shore{i}": 0 for i in range(3)}
    for k in range(reports):
        for v in range(vessels):
            mmsi = 227_000_000 + v
            t = T0 + k * 10 + v % 10
            destination = rng.choice(DESTINATIONS)
            fields = {"type": 5, "mmsi": mmsi, "shipname": f"SHIP {v}", "callsign": f"F{v:04d}"}
            fields |= {"destination": destination, "ship_type": 70, "draught": 6.0}
            hearers = rng.sample(sorted(seq), rng.choice((2, 3)))
            for rx in hearers:
                seq[rx] = (seq[rx] + 1) % 10
                for sentence in sentences(fields, seq_id=seq[rx]):
                    lines.append(tagged(sentence, t, rx))
            for rx in hearers:
                lines.append(tagged(position(mmsi, 49.5 + v * 0.01, -0.1 + k * 0.001), t + 1, rx))
    return lines


def moved_ahead(lines: list[str], index: int, seconds: int) -> list[str]:
    """The capture with one line's tag-block time ``seconds`` later (its checksum fixed)."""
    moved = list(lines)
    match = re.match(r"\\(?P<block>[^*]*)\*[0-9A-Fa-f]{2}\\(?P<rest>.*)", moved[index], re.S)
    assert match is not None, moved[index]
    block = re.sub(r"c:(\d+)", lambda m: f"c:{int(m.group(1)) + seconds}", match.group("block"))
    moved[index] = f"\\{block}*{nmea_checksum(block):02X}\\{match.group('rest')}"
    return moved
