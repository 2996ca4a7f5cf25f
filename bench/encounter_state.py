"""The encounters' keyed state at scale: the plain loop runs a feed through the same three steps
the job runs (cells, tracks, pairs) and samples what each step holds, as the job's state holds
it (the JSON text of each key's value), every ``--every`` watermark advances: its keys and bytes,
the peak of each step and of the three together, and the marks the cells hold.

The feed (:func:`fleet_lines`, GFW's message format, made without pyais) is a fleet heard every
five minutes for ``--hours``: 1 % of it in pairs drifting side by side 200 m apart at 1 kn, 10 %
at anchor in 20 anchorages of 3 km (the dense cells, where every vessel has neighbours), the rest
steaming at 5-18 kn over the oceans. The state per vessel is the peak over the vessels.

    python -m bench.encounter_state --vessels 5000 --hours 4
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Iterator
from typing import Any

from ais_pipeline.config import PipelineConfig
from ais_pipeline.rules import encounters as enc
from ais_pipeline.rules.plain import PlainPipeline


def held(flow: enc.EncounterFlow) -> dict[str, tuple[int, int]]:
    """Each step's keys and the bytes of their values as JSON, and the marks the cells hold."""
    cells = sum(len(enc.cell_to_json(c)) for c in flow.cells.values())
    marks = sum(len(entries) for c in flow.cells.values() for entries in c.by_time.values())
    tracks = sum(len(enc.track_to_json(t)) for t in flow.tracks.values())
    pairs = sum(len(enc.pair_to_json(p)) for p in flow.pairs.values())
    return {
        "cells": (len(flow.cells), cells),
        "marks held by the cells": (marks, 0),
        "tracks": (len(flow.tracks), tracks),
        "pairs": (len(flow.pairs), pairs),
        "all three": (len(flow.cells) + len(flow.tracks) + len(flow.pairs), cells + tracks + pairs),
    }


START = 1_767_225_600  # 2026-01-01T00:00:00Z
EVERY_S = 300
PAIRS, ANCHORED, ANCHORAGES = 0.01, 0.10, 20


def fleet_lines(vessels: int, hours: float, seed: int = 1) -> Iterator[str]:
    """The feed, in time order (see the module's description)."""
    rng = random.Random(seed)
    anchorages = [(rng.uniform(-50.0, 60.0), rng.uniform(-170.0, 170.0)) for _ in range(ANCHORAGES)]
    fleet: list[tuple[float, float, float, float]] = []  # lat, lon, knots, course (degrees)
    paired = int(vessels * PAIRS) // 2 * 2
    anchored = int(vessels * ANCHORED)
    for n in range(vessels):
        if n < paired:
            if n % 2 == 0:
                lat, lon = rng.uniform(-50.0, 60.0), rng.uniform(-170.0, 170.0)
            else:
                lat, lon = fleet[-1][0] + 0.0018, fleet[-1][1]
            fleet.append((lat, lon, 1.0, 90.0))
        elif n < paired + anchored:
            lat, lon = anchorages[n % ANCHORAGES]
            fleet.append((lat + rng.uniform(0, 0.027), lon + rng.uniform(0, 0.04), 0.0, 0.0))
        else:
            fleet.append(
                (rng.uniform(-60.0, 70.0), rng.uniform(-180.0, 180.0), rng.uniform(5, 18), rng.uniform(0, 360))
            )
    offsets = [rng.uniform(0, EVERY_S) for _ in range(vessels)]
    for step in range(int(hours * 3600 / EVERY_S)):
        for at, n in sorted((step * EVERY_S + offsets[n], n) for n in range(vessels)):
            lat0, lon0, knots, course = fleet[n]
            nm = knots * at / 3600
            lat = lat0 + nm * math.cos(math.radians(course)) / 60
            lon = lon0 + nm * math.sin(math.radians(course)) / 60 / math.cos(math.radians(lat0))
            ms = round(at * 1000)
            ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(START + ms // 1000)) + f".{ms % 1000:03d}Z"
            yield (
                f'{{"ssvid":"{201_000_000 + n * 7}","type":"AIS.1","timestamp":"{ts}","lat":{lat:.5f},'
                f'"lon":{(lon + 180) % 360 - 180:.5f},"speed":{knots:.1f},"course":{course:.1f},"heading":511,'
                f'"receiver_type":"terrestrial"}}'
            )


def measure(vessels: int, hours: float, every: int) -> dict[str, Any]:
    pipeline = PlainPipeline(PipelineConfig())
    flow = pipeline.encounters
    assert flow is not None, "encounters are off"
    peaks: dict[str, tuple[int, int]] = {}
    advance = flow.advance
    calls = 0

    def sampled(watermark: int, final: bool = False) -> None:
        nonlocal calls
        advance(watermark, final)
        calls += 1
        if calls % every == 0 and not final:
            for step, (keys, size) in held(flow).items():
                old = peaks.get(step, (0, 0))
                peaks[step] = (max(old[0], keys), max(old[1], size))

    flow.advance = sampled  # type: ignore[method-assign]
    started = time.perf_counter()
    pipeline.feed(fleet_lines(vessels, hours))
    result = pipeline.finish()
    return {
        "peaks": peaks,
        "seconds": time.perf_counter() - started,
        "samples": calls // every,
        "encounters": len(result.encounters),
        "positions": len(result.positions),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vessels", type=int, default=5000)
    parser.add_argument("--hours", type=float, default=4.0)
    parser.add_argument("--every", type=int, default=200, help="watermark advances between two samples")
    args = parser.parse_args()
    got = measure(args.vessels, args.hours, args.every)
    vessels = args.vessels
    print(
        f"{vessels:,} vessels heard every {EVERY_S // 60} min for {args.hours:g} h: {got['positions']:,} positions"
        f" kept, {got['encounters']} encounter records, {got['samples']} samples, {got['seconds']:.0f} s"
    )
    print("| step | peak keys | peak bytes (JSON) | bytes per vessel |")
    print("|---|---:|---:|---:|")
    for step, (keys, size) in got["peaks"].items():
        per = f"{size / vessels:,.1f}" if size else ""
        print(f"| {step} | {keys:,} | {size:,} | {per} |" if size else f"| {step} | {keys:,} | | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
