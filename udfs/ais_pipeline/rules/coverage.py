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
from typing import Any

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


@dataclass(frozen=True)
class CoverageRules:
    """When a gap's hours are final, and how long a cell keeps its hours.

    ``reach_ms`` is how long after a gap's start its record can first reach the cell: the gap
    threshold plus the wait for the judgement of the positions around it (an open gap is revealed
    then; a closed gap shorter than that comes when its end is accepted). ``ttl_ms`` is how long a
    vessel's last position is remembered (the gap TTL): an open gap pins its cell's hours from its
    start until it closes or that long after its start."""

    lateness_ms: int
    grace_ms: int
    reach_ms: int
    ttl_ms: int

    def due_at(self, last_hour: int) -> int:
        """The watermark from which the reports of the hours up to ``last_hour`` can no longer
        change: its end plus the allowed lateness and the hours grace (the tumbling windows' own
        rule)."""
        return last_hour + HOUR_MS - 1 + self.lateness_ms + self.grace_ms

    def keep_from(self, watermark: int) -> int:
        """The oldest hour a gap not yet seen could still need at ``watermark``."""
        return hour_of(watermark - self.lateness_ms - self.grace_ms - self.reach_ms - HOUR_MS)


@dataclass(frozen=True)
class GapHours:
    """A gap as the coverage sees it: its id and vessel, its start, and its end (None: open, to
    the hour before the one it was revealed in)."""

    id: str
    mmsi: int
    start: int
    end: int | None
    revealed_at: int

    @property
    def first_hour(self) -> int:
        return hour_of(self.start)

    @property
    def last_hour(self) -> int:
        if self.end is not None:
            return hour_of(self.end)
        return max(self.first_hour, hour_of(self.revealed_at) - HOUR_MS)


@dataclass
class CellCoverage:
    """One cell's reports per hour, the gaps waiting for their hours to be final, and the open
    gaps that pin the hours from their start."""

    hours: dict[int, Hour] = field(default_factory=dict)
    waiting: list[tuple[int, GapHours, Any]] = field(default_factory=list)  # (due, gap, its record)
    pinned: dict[str, tuple[int, int]] = field(default_factory=dict)  # open gap id -> (start hour, until)

    def report(self, ts: int, mmsi: int, n: int = 1) -> None:
        hour = hour_of(ts)
        bucket = self.hours.get(hour)
        if bucket is None:
            bucket = self.hours[hour] = Hour()
        bucket.add(mmsi, n)

    def gap(self, rules: CoverageRules, gap: GapHours, record: Any) -> int:
        """A gap that started in this cell: counted once its hours are final (the watermark this
        returns). An open one pins the hours from its start; its closed self unpins them."""
        if gap.end is None:
            self.pinned[gap.id] = (gap.first_hour, gap.start + rules.ttl_ms)
        due = rules.due_at(gap.last_hour)
        self.waiting.append((due, gap, record))
        return due

    def advance(self, rules: CoverageRules, cell: str, watermark: int) -> list[tuple[Any, Coverage]]:
        """The gaps whose hours are final at ``watermark``, each with its coverage (in the order
        they came); then what no gap can need any more is forgotten."""
        out: list[tuple[Any, Coverage]] = []
        still: list[tuple[int, GapHours, Any]] = []
        for due, gap, record in self.waiting:
            if due > watermark:
                still.append((due, gap, record))
                continue
            out.append((record, self.count(cell, gap.first_hour, gap.last_hour, gap.mmsi)))
            if gap.end is not None:
                self.pinned.pop(gap.id, None)
        self.waiting = still
        for gap_id in [g for g, (_, until) in self.pinned.items() if until <= watermark]:
            del self.pinned[gap_id]
        needed = [rules.keep_from(watermark)]
        needed += [gap.first_hour for _, gap, _ in self.waiting]
        needed += [hour for hour, _ in self.pinned.values()]
        oldest = min(needed)
        for hour in [h for h in self.hours if h < oldest]:
            del self.hours[hour]
        return out

    def next_timer(self, rules: CoverageRules) -> int | None:
        """When this cell has something to do next: a gap due, a pin expiring, or its oldest hour
        to forget (None: it holds nothing)."""
        times = [due for due, _, _ in self.waiting]
        times += [until for _, until in self.pinned.values()]
        held = [gap.first_hour for _, gap, _ in self.waiting] + [hour for hour, _ in self.pinned.values()]
        if self.hours and (not held or min(self.hours) < min(held)):
            # keep_from(w) passes the oldest hour once w - lateness - grace - reach - hour >= oldest + hour
            times.append(min(self.hours) + 2 * HOUR_MS + rules.lateness_ms + rules.grace_ms + rules.reach_ms)
        return min(times) if times else None

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

    @property
    def empty(self) -> bool:
        return not self.hours and not self.pinned and not self.waiting


def coverage_rules(
    lateness_ms: int, grace_ms: int, min_gap_ms: int, max_gap_ms: int, step_ms: int, ttl_ms: int
) -> CoverageRules:
    """The coverage's rules of a run: a gap reaches it at most the threshold plus the judgement's
    wait (the gap cap and a watermark step, as the vessel operator arms its open gap) after its start."""
    return CoverageRules(lateness_ms, grace_ms, min_gap_ms + max_gap_ms + 2 * step_ms, ttl_ms)
