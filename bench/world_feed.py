"""A generated world feed: vessels spread over the globe (60 S to 70 N), each heard twice, three minutes apart,
within two hours of event time, as Global Fishing Watch's messages are written today (one JSON
object a line: ``ssvid`` as text, ``type`` ``AIS.1``, an ISO time, ``receiver_type``), in time
order. Every vessel is new to the job and is heard once more: the state the job keeps grows with
the vessels, which is what a global feed does to it.

    python -m bench.world_feed --vessels 1000000 > out/bench/world-1000000.json

Seeded, so a size always gives the same lines; made without pyais (two million lines in seconds).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Iterator

START = 1_767_225_600  # 2026-01-01T00:00:00Z
SPAN_S = 2 * 3600  # every vessel's two reports fall in the first two hours
APART_S = 180  # a vessel's second report, three minutes after its first
FIRST_MMSI = 201_000_000  # the first maritime identification digits in use (Albania)


def mmsi_of(n: int) -> int:
    """The n-th vessel's MMSI: distinct nine-digit numbers from 201000000, spread over the shards."""
    return FIRST_MMSI + n * 7


def lines(vessels: int, seed: int = 1) -> Iterator[str]:
    """The feed's lines, in time order."""
    rng = random.Random(seed)
    reports: list[tuple[float, int, float, float, float, float]] = []
    for n in range(vessels):
        first = rng.uniform(0, SPAN_S - APART_S)
        lat, lon = rng.uniform(-60.0, 70.0), rng.uniform(-180.0, 180.0)
        sog, cog = round(rng.uniform(0.0, 18.0), 1), round(rng.uniform(0.0, 359.9), 1)
        # Three minutes along its course at its speed (a degree of latitude is 60 nautical miles).
        dlat = sog * APART_S / 3600 / 60
        reports.append((first, n, lat, lon, sog, cog))
        reports.append((first + APART_S, n, min(lat + dlat, 89.9), lon, sog, cog))
    reports.sort()
    for at, n, lat, lon, sog, cog in reports:
        ms = round(at * 1000)
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(START + ms // 1000)) + f".{ms % 1000:03d}Z"
        yield (
            f'{{"ssvid":"{mmsi_of(n)}","type":"AIS.1","timestamp":"{ts}","lat":{lat:.5f},"lon":{lon:.5f},'
            f'"speed":{sog},"course":{cog},"heading":511,"receiver_type":"terrestrial"}}'
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vessels", type=int, default=10_000, help="vessels, each heard twice (default 10000)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    out = sys.stdout
    for line in lines(args.vessels, args.seed):
        out.write(line + "\n")


if __name__ == "__main__":
    main()
