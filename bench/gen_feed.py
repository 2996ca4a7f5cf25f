"""A seeded, realistic AIS feed for benchmarks: vessels moving with Class A and Class B cadences,
static reports, fan-in of shore receivers, late satellite copies, a redelivered block and a few
malformed lines, in arrival order.

    python -m bench.gen_feed --lines 100000 --seed 1 > out/bench-100k.nmea
    python -m bench.gen_feed --format noaa --lines 1000000 --seed 1 > out/ais-2026-01-01.csv

- Vessels: 70 % Class A (type 1/3 every 10 s under way, every 3 min at anchor; type 5 in two
  sentences with a tag-block group every 6 min), 30 % Class B (type 18 every 30 s; type 24 parts
  A and B every 6 min), in the North Sea, moving along their course at their speed.
- Fan-in: each transmission is heard by 1-3 shore receivers (tag block `s:`, `c:` = transmission
  second), arriving 0-2 s apart; 10 % are also heard by a satellite, arriving 30-90 s late, and
  3 % only by the satellite (late reports, which re-fire their windows).
- A block of 500 consecutive lines is delivered twice (a consumer's redelivery after a restart),
  and 0.1 % of lines are damaged (a wrong checksum, or cut short).
The vessel count grows with the size, so that a larger feed is more traffic over the same hour;
``--vessels N`` sets it instead (a feed of many vessels then covers less time), ``--receivers N``
the shore receivers, ``--meet F`` the fraction of the fleet in pairs drifting side by side 200 m
apart (the benchmark's feeds: 1 %).

``--format noaa`` writes the same vessel model as a NOAA MarineCadastre day does (the layout from
2025): one row per position report, in time order, with the vessel's static fields on every row;
a block of 500 rows delivered twice (exact duplicates) and 0.1 % of rows damaged (text in a number
field). It is made without pyais, so a million rows take seconds.
"""

from __future__ import annotations

import argparse
import calendar
import heapq
import math
import random
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyais

START = 1_767_225_600  # 2026-01-01T00:00:00Z
RECEIVERS = [f"shore{i}" for i in range(1, 9)]


@dataclass
class Vessel:
    mmsi: int
    class_a: bool
    lat: float
    lon: float
    course: float
    speed: float  # knots
    name: str
    next_position: float
    next_static: float


def _sentences(fields: dict[str, Any], seq: int) -> list[str]:
    return list(pyais.encode_dict(fields, talker_id="AI", sentence_type="VDM", radio_channel="A", seq_id=seq))


MEET_APART_DEG = 0.0018  # a meeting pair's second vessel: 200 m north of the first


def transmissions(
    rng: random.Random, vessels: int, seconds: int, meet: float = 0.0
) -> Iterator[tuple[float, list[str], str]]:
    """(transmission time, sentences, kind) in time order. ``meet``: the fraction of the fleet in
    pairs drifting side by side, 200 m apart at 1 kn on one course."""
    fleet = []
    for i in range(vessels):
        class_a = rng.random() < 0.7
        moving = rng.random() < 0.8
        fleet.append(
            Vessel(
                mmsi=200_000_000 + rng.randrange(600_000_000),
                class_a=class_a,
                lat=rng.uniform(51.0, 58.0),
                lon=rng.uniform(-1.0, 8.0),
                course=rng.uniform(0, 360),
                speed=rng.uniform(5, 20) if moving else 0.0,
                name=f"VESSEL {i}",
                next_position=rng.uniform(0, 10),
                next_static=rng.uniform(0, 360),
            )
        )
    for p in range(int(vessels * meet / 2)):  # the first vessels, in pairs (no draw: the rest is the same)
        a, b = fleet[2 * p], fleet[2 * p + 1]
        a.speed = b.speed = 1.0
        b.lat, b.lon, b.course = a.lat + MEET_APART_DEG, a.lon, a.course
    # Each vessel's next transmission in a heap: at a time, vessels in their order, a position
    # before a static report (as a scan of the whole fleet at each time would take them, in a
    # time that grows with the transmissions, not with the transmissions times the fleet).
    due = [(v.next_position, i, 0) for i, v in enumerate(fleet)] + [(v.next_static, i, 1) for i, v in enumerate(fleet)]
    heapq.heapify(due)
    group = 0
    while due:
        t, i, kind = heapq.heappop(due)
        if t >= seconds:
            break
        v = fleet[i]
        if kind == 0:
            step = 10.0 if v.speed > 0 else 180.0
            if not v.class_a:
                step = 30.0
            hours = step / 3600
            v.lat += v.speed * hours / 60 * math.cos(math.radians(v.course))
            v.lon += v.speed * hours / 60 * math.sin(math.radians(v.course)) / math.cos(math.radians(v.lat))
            fields: dict[str, Any] = {
                "type": (1 if v.speed > 0 else 3) if v.class_a else 18,
                "mmsi": v.mmsi,
                "lat": round(v.lat, 5),
                "lon": round(v.lon, 5),
                "speed": round(v.speed, 1),
                "course": round(v.course, 1),
                "heading": int(v.course) % 360,
            }
            yield t, _sentences(fields, 0), "position"
            v.next_position = t + step
            heapq.heappush(due, (v.next_position, i, 0))
        else:
            group += 1
            if v.class_a:
                fields = {"type": 5, "mmsi": v.mmsi, "shipname": v.name, "callsign": f"C{v.mmsi % 10000}"}
                fields |= {"destination": "ROTTERDAM", "ship_type": 70, "draught": 7.5}
                yield t, _sentences(fields, group % 10), f"group:{group}"
            else:
                yield t, _sentences({"type": 24, "mmsi": v.mmsi, "partno": 0, "shipname": v.name}, 0), "static"
                yield t, _sentences({"type": 24, "mmsi": v.mmsi, "partno": 1, "ship_type": 37}, 0), "static"
            v.next_static = t + 360.0
            heapq.heappush(due, (v.next_static, i, 1))


def tagged(sentence: str, second: int, receiver: str, group: str | None) -> str:
    items = ([f"g:{group}"] if group else []) + [f"s:{receiver}", f"c:{second}"]
    body = ",".join(items)
    checksum = 0
    for ch in body:
        checksum ^= ord(ch)
    return f"\\{body}*{checksum:02X}\\{sentence}"


def damage(line: str, rng: random.Random) -> str:
    if rng.random() < 0.5:
        return line[: rng.randrange(10, len(line) - 3)]
    return line[:-2] + ("00" if line[-2:] != "00" else "11")


def generate(
    lines: int,
    seed: int,
    start: int = START,
    vessels: int | None = None,
    receivers: int = len(RECEIVERS),
    meet: float = 0.0,
) -> list[str]:
    """The feed's first ``lines`` lines in arrival order. ``vessels``: the fleet (by default about
    480 lines per vessel and hour, so that the feed covers an hour); ``receivers``: the shore
    receivers, of which each transmission is heard by 1-3; ``meet``: the fraction of the fleet in
    pairs side by side (an hour: runs of the encounters' rule, none of them long enough to be an
    encounter)."""
    rng = random.Random(seed)
    if vessels is None:
        vessels = max(50, lines // 480)  # about 480 lines per vessel and hour
    shore = RECEIVERS if receivers == len(RECEIVERS) else [f"shore{i}" for i in range(1, receivers + 1)]
    arrivals: list[tuple[float, int, str]] = []
    order = 0
    for t, sentences, kind in transmissions(rng, vessels, 3600, meet):
        second = start + int(t)
        heard = rng.sample(shore, min(len(shore), rng.choice((1, 1, 2, 2, 3))))
        copies = [(h, rng.uniform(0, 2)) for h in heard]
        if rng.random() < 0.03:  # out of reach of the shore: only the satellite hears it, late
            copies = []
        if not copies or rng.random() < 0.1:
            copies.append(("sat1", rng.uniform(30, 90)))
        for receiver, delay in copies:
            gid = kind.split(":")[1] if kind.startswith("group:") else None
            for i, sentence in enumerate(sentences):
                group = f"{i + 1}-{len(sentences)}-{gid}" if gid else None
                order += 1
                arrivals.append((t + delay + i * 0.001, order, tagged(sentence, second, receiver, group)))
        if len(arrivals) >= lines:
            break
    arrivals.sort()
    out = [line for _, _, line in arrivals[:lines]]
    if len(out) > 2000:
        start = rng.randrange(len(out) // 4, len(out) // 2)
        block = out[start : start + 500]
        at = start + 500 + rng.randrange(100, 1000)
        out[at:at] = block
    return [damage(line, rng) if rng.random() < 0.001 else line for line in out]


NOAA_HEADER = (
    "mmsi,base_date_time,longitude,latitude,sog,cog,heading,vessel_name,imo,call_sign,vessel_type,status,"
    "length,width,draft,cargo,transceiver"
)


def generate_noaa(rows: int, seed: int, start: int = START) -> list[str]:
    """The vessel model as NOAA CSV rows (header first), in time order."""
    rng = random.Random(seed)
    vessels = max(50, rows // 400)  # about 400 rows per vessel and hour
    fleet = []
    heap: list[tuple[float, int]] = []
    for i in range(vessels):
        class_a = rng.random() < 0.7
        moving = rng.random() < 0.8
        mmsi = 200_000_000 + rng.randrange(600_000_000)
        v = Vessel(mmsi, class_a, rng.uniform(51.0, 58.0), rng.uniform(-1.0, 8.0), rng.uniform(0, 360),
                   rng.uniform(5, 20) if moving else 0.0, f"VESSEL {i}", rng.uniform(0, 10), 0.0)  # fmt: skip
        static = f"{v.name},IMO{9000000 + i},C{mmsi % 10000},{70 if class_a else 37},0,{rng.randrange(20, 300)},"
        static += (
            f"{rng.randrange(5, 45)},{rng.randrange(20, 120) / 10},{70 if class_a else 37},{'A' if class_a else 'B'}"
        )
        fleet.append((v, static))
        heapq.heappush(heap, (v.next_position, i))
    out = [NOAA_HEADER]
    while heap and len(out) <= rows:
        t, i = heapq.heappop(heap)
        v, static = fleet[i]
        step = (10.0 if v.speed > 0 else 180.0) if v.class_a else 30.0
        hours = step / 3600
        v.lat += v.speed * hours / 60 * math.cos(math.radians(v.course))
        v.lon += v.speed * hours / 60 * math.sin(math.radians(v.course)) / math.cos(math.radians(v.lat))
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(start + int(t)))
        course = round(v.course, 1)
        out.append(f"{v.mmsi},{when},{v.lon:.5f},{v.lat:.5f},{v.speed:.1f},{course},{int(v.course) % 360},{static}")
        heapq.heappush(heap, (t + step, i))
    out = out[: rows + 1]
    if len(out) > 2000:
        start = rng.randrange(len(out) // 4, len(out) // 2)
        out[start + 600 : start + 600] = out[start : start + 500]
        out = out[: rows + 1]
    return [out[0]] + [line.replace(",", ",x", 3) if rng.random() < 0.001 else line for line in out[1:]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=100_000, help="lines (NMEA) or rows (NOAA CSV)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--format", choices=("nmea", "noaa"), default="nmea")
    parser.add_argument("--day", default="2026-01-01", help="the UTC day the feed starts at, YYYY-MM-DD")
    parser.add_argument("--vessels", type=int, help="the fleet (NMEA; default: about 480 lines per vessel and hour)")
    parser.add_argument("--receivers", type=int, default=len(RECEIVERS), help="shore receivers (NMEA; default 8)")
    parser.add_argument("--meet", type=float, default=0.0, help="the fraction of the fleet in pairs side by side")
    args = parser.parse_args()
    start = calendar.timegm(time.strptime(args.day, "%Y-%m-%d"))
    if args.format == "noaa":
        made = generate_noaa(args.lines, args.seed, start)
    else:
        made = generate(args.lines, args.seed, start, args.vessels, args.receivers, args.meet)
    sys.stdout.writelines(line + "\n" for line in made)
    return 0


if __name__ == "__main__":
    sys.exit(main())
