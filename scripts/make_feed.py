"""A longer feed from the bundled real sample: N copies of its 10,000 lines, copy k shifted by
k x 330 s of event time (the sample spans 325 s) and with its tag-block group ids offset, so the
copies are new traffic rather than duplicates of each other.

    python scripts/make_feed.py --copies 15 > out/feed150k.nmea
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "sample" / "aislistener__nmea-with-tagblock.txt"
_TIME = re.compile(r"c:(\d+)")
_GROUP = re.compile(r"g:(\d+)-(\d+)-(\d+)")


def shifted(line: str, k: int) -> str:
    if not line.startswith("\\"):
        return line
    end = line.index("\\", 1)
    tag = _TIME.sub(lambda m: f"c:{int(m.group(1)) + k * 330}", line[1:end])
    tag = _GROUP.sub(lambda m: f"g:{m.group(1)}-{m.group(2)}-{int(m.group(3)) + k * 100000}", tag)
    return "\\" + tag + line[end:]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=15)
    args = parser.parse_args()
    lines = SAMPLE.read_text().splitlines()
    out = sys.stdout
    for k in range(args.copies):
        for line in lines:
            out.write(shifted(line, k) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
