"""Vessel hours per cell worked out independently of the job's rules, from a run's kept positions:
each vessel's positions in time order, each following the newest earlier one at most the gap cap
before it and at most 50 kn (plus 500 m) from it that nothing follows yet, a segment, its time
spread along its straight line by sampling it at a thousand points (not by the grid crossings the
job computes). What the job gives must agree with this: the same total, and at most a few percent
of it in other cells."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import pygeohash

from ais_pipeline.rules.outputs import final_aggregates, parse_iso_ms

SAMPLES = 1000
NM_PER_DEGREE = 60.0


def _plausible(a: dict[str, Any], b: dict[str, Any], seconds: float) -> bool:
    dlat = (b["lat"] - a["lat"]) * NM_PER_DEGREE
    dlon = (b["lon"] - a["lon"]) * NM_PER_DEGREE * math.cos(math.radians((a["lat"] + b["lat"]) / 2))
    return math.hypot(dlat, dlon) <= 50 * seconds / 3600 + 500 / 1852


def _chains(positions: list[dict[str, Any]], max_gap_s: int) -> list[tuple[dict[str, Any], dict[str, Any], float]]:
    """Consecutive positions of one transmitter: in time order, each position follows the newest
    earlier one within the gap cap it is plausible from that nothing follows yet (two
    transmitters sharing an MMSI make two chains)."""
    timed = sorted(((parse_iso_ms(p["timestamp"]), i, p) for i, p in enumerate(positions)), key=lambda t: t[:2])
    ends: list[tuple[int, dict[str, Any]]] = []  # the chains' last positions
    pairs = []
    for ts, _, b in timed:
        for k in range(len(ends) - 1, -1, -1):
            ts_a, a = ends[k]
            seconds = (ts - ts_a) / 1000
            if 0 < seconds <= max_gap_s and _plausible(a, b, seconds):
                pairs.append((a, b, seconds))
                del ends[k]
                break
        ends = [e for e in ends if ts - e[0] <= max_gap_s * 1000] + [(ts, b)]
    return pairs


def hours_per_cell(positions: Iterable[dict[str, Any]], max_gap_s: int = 600, precision: int = 6) -> dict[str, float]:
    by_vessel: defaultdict[int, list[dict[str, Any]]] = defaultdict(list)
    for p in positions:
        by_vessel[p["mmsi"]].append(p)
    cells: defaultdict[str, float] = defaultdict(float)
    for positions_of_vessel in by_vessel.values():
        for a, b, seconds in _chains(positions_of_vessel, max_gap_s):
            dlon = b["lon"] - a["lon"]
            if abs(dlon) > 180:
                dlon -= math.copysign(360, dlon)
            for k in range(SAMPLES):
                s = (k + 0.5) / SAMPLES
                lon = a["lon"] + s * dlon
                lon = lon - 360 if lon >= 180 else lon + 360 if lon < -180 else lon
                cell = pygeohash.encode(a["lat"] + s * (b["lat"] - a["lat"]), lon, precision)
                cells[cell] += seconds / SAMPLES / 3600
    return dict(cells)


def tumbling_hours_per_cell(aggregates: Iterable[dict[str, Any]]) -> dict[str, float]:
    cells: defaultdict[str, float] = defaultdict(float)
    for (window, cell, _), a in final_aggregates(aggregates).items():
        if window == "tumbling":
            cells[cell] += float(a["vessel_hours"])  # type: ignore[arg-type]
    return dict(cells)


def elsewhere(got: dict[str, float], want: dict[str, float]) -> float:
    """The share of the hours that one puts in other cells than the other does."""
    total = sum(want.values())
    moved = sum(abs(got.get(c, 0.0) - want.get(c, 0.0)) for c in got.keys() | want.keys()) / 2
    return moved / total if total else 0.0
