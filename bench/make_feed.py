"""A longer feed from the bundled real sample: N copies of its 10,000 lines, copy k shifted by
k x 330 s of event time (the sample spans 325 s) and with its tag-block group ids offset, so the
copies are new traffic rather than duplicates of each other.

    python -m bench.make_feed --copies 15 > out/feed150k.nmea
    python -m bench.make_feed --copies 40 --new-vessels > out/turnover.nmea

With --new-vessels every copy is other vessels too (MMSIs offset in the payload, checksums
recomputed): vessels come and go, as over hours of real traffic, instead of the same ones
reporting for ever.
"""

from __future__ import annotations

import argparse
import re
import sys

from ais_pipeline.resources import SAMPLE_INPUT

SAMPLE = SAMPLE_INPUT
_TIME = re.compile(r"c:(\d+)")
_GROUP = re.compile(r"g:(\d+)-(\d+)-(\d+)")


def shifted(line: str, k: int) -> str:
    if not line.startswith("\\"):
        return line
    end = line.index("\\", 1)
    tag = _TIME.sub(lambda m: f"c:{int(m.group(1)) + k * 330}", line[1:end])
    tag = _GROUP.sub(lambda m: f"g:{m.group(1)}-{m.group(2)}-{int(m.group(3)) + k * 100000}", tag)
    return "\\" + tag + line[end:]


def _armor(value: int) -> str:
    return chr(value + 48) if value < 40 else chr(value + 56)


def _unarmor(ch: str) -> int:
    c = ord(ch) - 48
    return c if c < 40 else c - 8


def other_vessel(line: str, k: int) -> str:
    """The line with the MMSI of a first (or only) fragment offset for copy ``k``."""
    start = line.find("!")
    star = line.rfind("*")
    if start < 0 or star < start:
        return line
    fields = line[start + 1 : star].split(",")
    if len(fields) < 7 or fields[2] != "1" or len(fields[5]) < 7:
        return line
    payload = fields[5]
    value = 0
    for ch in payload[:7]:
        value = (value << 6) | _unarmor(ch)
    mmsi = (value >> 4) & 0x3FFFFFFF
    new = 100_000_000 + (mmsi + k * 7_919) % 899_999_999
    value = (value & ~(0x3FFFFFFF << 4)) | (new << 4)
    head = "".join(_armor((value >> (6 * (6 - i))) & 0x3F) for i in range(7))
    fields[5] = head + payload[7:]
    body = ",".join(fields)
    checksum = 0
    for ch in body:
        checksum ^= ord(ch)
    return f"{line[:start]}!{body}*{checksum:02X}{line[star + 3 :]}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=15)
    parser.add_argument("--new-vessels", action="store_true", help="other MMSIs in every copy")
    args = parser.parse_args()
    lines = SAMPLE.read_text().splitlines()
    out = sys.stdout
    for k in range(args.copies):
        for line in lines:
            moved = shifted(line, k)
            out.write((other_vessel(moved, k) if args.new_vessels and k else moved) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
