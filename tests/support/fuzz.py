"""Hostile input mixed into a real capture, for the property-based tests: every kind of damage
the reliability issue names, made from real lines of the bundled sample or built with pyais."""

from __future__ import annotations

import random

from ais_pipeline.config import SAMPLE_INPUT
from tests.support.nmea import position, sentences, tagged

SAMPLE_LINES = SAMPLE_INPUT.read_text().splitlines()
T_SAMPLE = 1668046497  # a time inside the sample (2022-11-10T02:14:57Z)
# Bytes that are never valid UTF-8 on their own, so that Flink's decoder (Java) and Python's
# replace them alike, one U+FFFD each; no line breaks, which would only make more lines.
_BAD_BYTES = bytes(range(0x80, 0xC0)) + bytes(range(0xF8, 0x100))


def _checksum_broken(line: str, rng: random.Random) -> str:
    star = line.rfind("*")
    if star < 0 or len(line) < star + 3:
        return line + "*ZZ"
    digits = line[star + 1 : star + 3]
    wrong = (
        f"{(int(digits, 16) + rng.randint(1, 255)) % 256:02X}"
        if all(c in "0123456789ABCDEFabcdef" for c in digits)
        else "00"
    )
    return line[: star + 1] + wrong + line[star + 3 :]


def damaged_line(rng: random.Random) -> bytes:
    """One line of hostile input, as the bytes a file or a Kafka record would carry."""
    real = rng.choice(SAMPLE_LINES)
    kind = rng.randrange(14)
    if kind == 0:  # random bytes, some not UTF-8 at all
        return bytes(
            rng.choice(_BAD_BYTES) if rng.random() < 0.3 else rng.randrange(32, 127)
            for _ in range(rng.randrange(1, 80))
        )
    if kind == 1:  # truncated sentence
        return real[: rng.randrange(1, max(2, len(real)))].encode()
    if kind == 2:  # wrong checksum
        return _checksum_broken(real, rng).encode()
    if kind == 3:  # tag block never closed
        return (
            real.replace("\\", "", 2).join(["\\", ""]).encode()
            if real.startswith("\\")
            else ("\\s:x,c:1" + real).encode()
        )
    if kind == 4:  # tag block cut short, or fields without ':' (never without a time: a report
        # without one gets its ingestion time, which no two runs share)
        return (
            rng.choice(["\\s:r1,c:\\", "\\c\\", "\\s:r1,c:abc*00\\", "\\g:1-2,s:r1,c:1668046600\\"]).encode()
            + real.split("\\")[-1].encode()
        )
    if kind == 5:  # the first fragment of a group that never completes
        first, _ = sentences({"type": 5, "mmsi": rng.randrange(200_000_000, 800_000_000), "shipname": "NEVER DONE"})
        return tagged(
            first, T_SAMPLE + rng.randrange(0, 300), "r9", group=f"1-2-{rng.randrange(90000, 99999)}"
        ).encode()
    if kind == 6:  # very long line
        return ("!AIVDM,1,1,,A," + "1" * rng.randrange(4000, 20000) + ",0*00").encode()
    if kind == 7:  # invalid JSON in an NMEA feed
        return rng.choice(['{"mmsi": 1', "{}", "[1,2,3]", '{"mmsi": "x", "timestamp": null}']).encode()
    if kind == 8:  # out-of-range coordinates (the encoder clips to the field, 91/181 mean "none")
        lat, lon = rng.choice([(91.0, 0.0), (0.0, 181.0), (-91.0, 10.0), (95.0, 200.0)])
        line = position(rng.randrange(200_000_000, 800_000_000), lat, lon)
        return tagged(line, T_SAMPLE + rng.randrange(0, 300)).encode()
    if kind == 9:  # MMSI out of the usual range (0, 1e9 - 1)
        line = position(rng.choice([0, 1, 999_999_999]), 10.0, 10.0)
        return tagged(line, T_SAMPLE + rng.randrange(0, 300)).encode()
    if kind == 10:  # timestamps in 1970 and 2099
        line = position(rng.randrange(200_000_000, 800_000_000), 12.0, 12.0)
        return tagged(line, rng.choice([0, 1, 86_400, 4_070_908_800, 4_102_444_799])).encode()
    if kind == 11:  # NUL bytes in a real line
        cut = rng.randrange(len(real))
        return (real[:cut] + "\x00" + real[cut:]).encode()
    if kind == 12:  # a real line twice on one line
        return (real + real).encode()
    return rng.choice(["", "   ", "# comment", "$GPGGA,1*00", "!AIVDM", "!AIVDM,9,9,,,,0*00"]).encode()


def hostile_feed(rng: random.Random, damaged: int) -> bytes:
    """The bundled capture with ``damaged`` hostile lines put in at random places."""
    lines = [line.encode() for line in SAMPLE_LINES]
    for _ in range(damaged):
        lines.insert(rng.randrange(len(lines) + 1), damaged_line(rng))
    return b"\n".join(lines) + b"\n"
