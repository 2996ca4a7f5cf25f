"""What the stream itself heard around a gap (plain Python): how many reports of other vessels the
job kept in the 1-degree cell of the gap's start while the vessel was silent, and how many
distinct vessels those were. A gap in a cell where dozens of vessels were heard is a vessel gone
quiet; one in a cell where nobody was is a coverage hole.

- **Reports** are those the tumbling windows counted (kept, and in time for their tumbling
  window), by the hour of event time, per 1-degree cell (:func:`cell_of`: the floor of latitude
  and longitude).
- **During the gap**: the whole hours from the one its start is in to the one its end is in; an
  open gap's, to the hour before the one it was revealed in. Counted once those hours can no
  longer change: when the watermark passes the last one's end plus the allowed lateness and the
  hours grace (the windows' own rule). The gap's own vessel is left out.
- **Held only as long as needed**: a cell keeps an hour while a gap could still start in it and
  be revealed (the gap threshold, the judgement's wait and the hour itself past it), and longer
  only from the start of a gap open in the cell, until that gap closes or its vessel's last
  position is forgotten (the gap TTL).

:class:`CellCoverage` is one cell's part; the caller keeps one per cell. The job's operator is
``ais.flink.GapCoverage`` (Java); the golden cases in ``tests/golden/coverage.json`` run on both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

HOUR_MS = 3_600_000


def cell_of(lat: float, lon: float) -> str:
    """The 1-degree cell of a point: ``N54E010``, ``S09E060``, ``N00W001`` (its south-west
    corner, the floors of latitude and longitude)."""
    la, lo = math.floor(lat), math.floor(lon)
    la = min(la, 89)
    lo = -180 if lo >= 180 else lo
    return f"{'N' if la >= 0 else 'S'}{abs(la):02d}{'E' if lo >= 0 else 'W'}{abs(lo):03d}"


def hour_of(ts: int) -> int:
    return ts - ts % HOUR_MS


@dataclass
class Hour:
    reports: dict[int, int] = field(default_factory=dict)  # mmsi -> reports

    def add(self, mmsi: int, n: int) -> None:
        self.reports[mmsi] = self.reports.get(mmsi, 0) + n


@dataclass(frozen=True)
class Coverage:
    cell: str
    reports: int
    vessels: int


@dataclass
class CellCoverage:
    """One cell's reports per hour, and the open gaps that pin them."""

    hours: dict[int, Hour] = field(default_factory=dict)
    pinned: dict[str, int] = field(default_factory=dict)  # open gap id -> its start hour

    def report(self, ts: int, mmsi: int, n: int = 1) -> None:
        hour = hour_of(ts)
        bucket = self.hours.get(hour)
        if bucket is None:
            bucket = self.hours[hour] = Hour()
        bucket.add(mmsi, n)

    def count(self, cell: str, first_hour: int, last_hour: int, mmsi: int) -> Coverage:
        """Reports and distinct vessels of the hours from ``first_hour`` to ``last_hour`` (both
        included), but ``mmsi``'s."""
        reports, vessels = 0, set()
        for hour, bucket in self.hours.items():
            if first_hour <= hour <= last_hour:
                for other, n in bucket.reports.items():
                    if other != mmsi:
                        reports += n
                        vessels.add(other)
        return Coverage(cell, reports, len(vessels))

    def forget(self, keep_from: int) -> None:
        """Drop the hours before ``keep_from`` that no open gap pins."""
        oldest = min([keep_from, *self.pinned.values()])
        for hour in [h for h in self.hours if h < oldest]:
            del self.hours[hour]

    @property
    def empty(self) -> bool:
        return not self.hours and not self.pinned
