"""Vessel hours per cell worked out independently of the job's rules, from a run's kept positions:
each vessel's positions in time order, each pair of consecutive ones at most the gap cap apart and
at most 50 kn (plus 500 m) apart in speed a segment, its time spread along its straight line by
sampling it at a thousand points (not by the grid crossings the job computes). What the job
gives must agree with this: the same total, and at most a few percent of it in other cells."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from itertools import pairwise
from typing import Any

import pygeohash

from ais_pipeline.rules.outputs import final_aggregates, parse_iso_ms

SAMPLES = 1000
NM_PER_DEGREE = 60.0


def _plausible(a: dict[str, Any], b: dict[str, Any], seconds: float) -> bool:
    dlat = (b["lat"] - a["lat"]) * NM_PER_DEGREE
    dlon = (b["lon"] - a["lon"]) * NM_PER_DEGREE * math.cos(math.radians((a["lat"] + b["lat"]) / 2))
    return math.hypot(dlat, dlon) <= 50 * seconds / 3600 + 500 / 1852


def hours_per_cell(positions: Iterable[dict[str, Any]], max_gap_s: int = 600, precision: int = 6) -> dict[str, float]:
    by_vessel: defaultdict[int, list[dict[str, Any]]] = defaultdict(list)
    for p in positions:
        by_vessel[p["mmsi"]].append(p)
    cells: defaultdict[str, float] = defaultdict(float)
    for track in by_vessel.values():
        track.sort(key=lambda p: parse_iso_ms(p["timestamp"]))
        for a, b in pairwise(track):
            seconds = (parse_iso_ms(b["timestamp"]) - parse_iso_ms(a["timestamp"])) / 1000
            if not 0 < seconds <= max_gap_s or not _plausible(a, b, seconds):
                continue
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
