"""A segment's time spread along its straight line over the geohash cells it crosses (plain
Python), as EMODnet's and EMSA's vessel density maps do: each cell gets the time of the part of
the line inside it, the position moving linearly in time from one fix to the next.

- **The line** is straight in latitude and longitude (the plane the geohash grid is regular in),
  the short way round: a segment across the antimeridian crosses it.
- **Breakpoints** are the times at which the line crosses a cell's edge (a grid line of the
  precision's cell width or height), rounded to the millisecond, and the pane boundaries (the
  60 s slices windows are made of) between its ends.
- **Pieces.** Each stretch between two breakpoints goes, whole, to the cell of its middle point
  (:func:`ais_pipeline.rules.dedup.geohash_cell`, as reports are placed: a point on an edge
  belongs to the cell north or east of it) and to the pane it starts in; stretches of the same
  cell and pane in a row are added up. The pieces' times add up to the segment's exactly.
- A line through a cell's corner gives the diagonal cells nothing; one along an edge gives its
  time to the cells north (east) of it; a vessel that does not move stays in its cell.
- A line that would cross more than :data:`MAX_PIECES` edges (a fine precision and a long
  segment) is cut into that many equal times instead, each to the cell of its middle point.
"""

from __future__ import annotations

import math
from itertools import pairwise

import pygeohash

from ais_pipeline.rules.vessel_hours import split_at_panes

MAX_PIECES = 4096


def cell_size(precision: int) -> tuple[float, float]:
    """(width, height) in degrees of a geohash cell of ``precision`` characters."""
    bits = 5 * precision
    return 360.0 / (1 << ((bits + 1) // 2)), 180.0 / (1 << (bits // 2))


def _crossings(start: float, delta: float, origin: float, size: float) -> list[float]:
    """The fractions of the way from ``start`` to ``start + delta`` at which a grid line
    ``origin + k * size`` is crossed, strictly between the ends."""
    if delta == 0:
        return []
    lo, hi = (start, start + delta) if delta > 0 else (start + delta, start)
    first = math.floor((lo - origin) / size) + 1
    last = math.ceil((hi - origin) / size) - 1
    if last - first + 1 > MAX_PIECES:
        raise OverflowError
    out = []
    for k in range(first, last + 1):
        s = (origin + k * size - start) / delta
        if 0.0 < s < 1.0:
            out.append(s)
    return out


def _rounded(x: float) -> int:
    """Half up, as Java's ``Math.round`` (Python's ``round`` rounds half to even)."""
    return math.floor(x + 0.5)


def spread(
    t0: int,
    lat0: float,
    lon0: float,
    cell0: str,
    t1: int,
    lat1: float,
    lon1: float,
    cell1: str,
    pane_ms: int,
) -> list[tuple[str, int, int]]:
    """The time from ``t0`` to ``t1`` (``t1 > t0``) of a vessel that moved in a straight line
    from the first fix to the second, as (cell, pane start, milliseconds); ``cell0`` and
    ``cell1`` are the fixes' own cells (their length gives the precision)."""
    if cell0 == cell1:  # a cell is convex: the line stays inside (the common case)
        return [(cell0, pane, ms) for pane, ms in split_at_panes(t0, t1, pane_ms)]
    total = t1 - t0
    dlat = lat1 - lat0
    dlon = lon1 - lon0
    if dlon > 180.0:
        dlon -= 360.0
    elif dlon < -180.0:
        dlon += 360.0
    precision = len(cell0)
    width, height = cell_size(precision)
    times = {t0, t1}
    first_pane = t0 - t0 % pane_ms + pane_ms
    times.update(range(first_pane, t1, pane_ms))
    try:
        fractions = _crossings(lon0, dlon, -180.0, width) + _crossings(lat0, dlat, -90.0, height)
        if len(fractions) > MAX_PIECES:
            raise OverflowError
    except OverflowError:
        fractions = [k / MAX_PIECES for k in range(1, MAX_PIECES)]
    for s in fractions:
        t = t0 + _rounded(s * total)
        if t0 < t < t1:
            times.add(t)
    ordered = sorted(times)
    out: list[tuple[str, int, int]] = []
    for a, b in pairwise(ordered):
        s = ((a + b) / 2 - t0) / total
        lat = lat0 + s * dlat
        lon = lon0 + s * dlon
        if lon >= 180.0:
            lon -= 360.0
        elif lon < -180.0:
            lon += 360.0
        cell = pygeohash.encode(lat, lon, precision)
        pane = a - a % pane_ms
        if out and out[-1][0] == cell and out[-1][1] == pane:
            out[-1] = (cell, pane, out[-1][2] + b - a)
        else:
            out.append((cell, pane, b - a))
    return out
