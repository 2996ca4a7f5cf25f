"""AIS gap events (plain Python), as Global Fishing Watch defines them: where a vessel stopped
transmitting, and, once it is heard again, for how long.

- **A gap** is two consecutive positions of one MMSI at least :attr:`GapRules.min_gap_ms` apart
  (6 h, GFW's ``Gaps.md``): an AIS-off event at the first, an AIS-on event at the second. The
  positions are those the job keeps and accepts, in event-time order: a bad fix neither ends a
  gap nor starts one. Several transmitters sharing an MMSI make one stream of positions, so a gap
  is where none of them was heard.
- **An open gap** is a vessel silent for longer than that, not heard again yet: it is known once
  the watermark passes its last position plus the threshold (GFW's ``pipe-gaps`` emits these too).
  The same gap, closed, comes when the vessel is heard again, with the same id.
- **Well received before it**: the positions in the :data:`BEFORE_MS` (12 h) before the gap's
  start, its start included (the paper's ``min_positions_before``), counted per minute of event
  time: the positions of the minute 12 h before the start count whole.
- **A suspected disabling** (Welch et al. 2022, ``ais_disabling/config.py``): a closed gap of at
  least :attr:`GapRules.analysis_ms` (12 h) whose start and end are both more than
  :attr:`GapRules.shore_nm` (50 nm) from shore, after at least :attr:`GapRules.min_positions`
  (14) positions in the 12 h before it.

:class:`VesselGaps` is one vessel's part of it; the caller keeps one per MMSI, feeds it the
accepted positions in the order they are accepted, and moves it with the watermark.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

HOUR_MS = 3_600_000
BEFORE_MS = 12 * HOUR_MS
MINUTE_MS = 60_000


@dataclass(frozen=True)
class GapRules:
    """GFW's thresholds, each a flag."""

    min_gap_ms: int = 6 * HOUR_MS
    analysis_ms: int = 12 * HOUR_MS
    shore_nm: float = 50.0
    min_positions: int = 14


@dataclass(frozen=True, slots=True)
class Fix:
    ts: int
    lat: float
    lon: float


@dataclass(frozen=True)
class Gap:
    """One gap of one vessel: open (``end`` None) or closed."""

    mmsi: int
    category: str
    start: Fix
    end: Fix | None
    positions_before: int

    @property
    def is_open(self) -> bool:
        return self.end is None

    def duration_ms(self, watermark: int) -> int:
        """Its length: to its end, or, open, to ``watermark`` (how long silent so far)."""
        return (self.end.ts if self.end is not None else watermark) - self.start.ts

    def suspected(self, rules: GapRules, shore_start_nm: float, shore_end_nm: float | None) -> bool:
        """A suspected disabling: closed, long enough, far enough from shore at both ends, and the
        vessel well received before it."""
        return (
            self.end is not None
            and shore_end_nm is not None
            and self.end.ts - self.start.ts >= rules.analysis_ms
            and shore_start_nm > rules.shore_nm
            and shore_end_nm > rules.shore_nm
            and self.positions_before >= rules.min_positions
        )


@dataclass
class VesselGaps:
    """One vessel's last accepted position, its accepted positions per minute over the last
    :data:`BEFORE_MS`, and whether the open gap after the last position was emitted."""

    min_gap_ms: int
    last: Fix | None = None
    category: str = "unknown"
    minutes: list[list[int]] = field(default_factory=list)  # [minute start, positions], oldest first
    open_emitted: bool = False

    def position(self, mmsi: int, ts: int, lat: float, lon: float, category: str) -> Gap | None:
        """An accepted position; the gap it closes, if it ends one. A position older than the last
        one (a late one) is counted, and ends nothing."""
        last = self.last
        if last is not None and ts <= last.ts:
            self._count(ts)
            return None
        gap = None
        if last is not None and ts - last.ts >= self.min_gap_ms:
            gap = Gap(mmsi, self.category, last, Fix(ts, lat, lon), self.before(last.ts))
        self._count(ts)
        self.last, self.category, self.open_emitted = Fix(ts, lat, lon), category, False
        return gap

    def opens_at(self) -> int | None:
        """The watermark at which the vessel's silence becomes an open gap (None: emitted)."""
        if self.last is None or self.open_emitted:
            return None
        return self.last.ts + self.min_gap_ms

    def advance(self, mmsi: int, watermark: int) -> Gap | None:
        """The open gap the watermark reveals: the vessel silent for the threshold past its last
        position."""
        at = self.opens_at()
        if at is None or watermark < at:
            return None
        assert self.last is not None
        self.open_emitted = True
        return Gap(mmsi, self.category, self.last, None, self.before(self.last.ts))

    def before(self, ts: int) -> int:
        """Positions in the 12 h up to ``ts``, by the minute."""
        since = ts - BEFORE_MS
        since -= since % MINUTE_MS
        return sum(n for minute, n in self.minutes if since <= minute <= ts)

    def _count(self, ts: int) -> None:
        minute = ts - ts % MINUTE_MS
        minutes = self.minutes
        if minutes and minutes[-1][0] == minute:
            minutes[-1][1] += 1
        elif not minutes or minutes[-1][0] < minute:
            minutes.append([minute, 1])
        else:  # a late position: into its minute
            for entry in minutes:
                if entry[0] == minute:
                    entry[1] += 1
                    break
            else:
                minutes.append([minute, 1])
                minutes.sort()
        newest = minutes[-1][0]
        while minutes and minutes[0][0] < newest - BEFORE_MS - MINUTE_MS:
            minutes.pop(0)

    # -- state -------------------------------------------------------------------------------
    def to_list(self) -> list[Any]:
        """The state, compact: the minutes as the newest one's start, then each minute (oldest
        first) as its minutes before the newest and its positions."""
        last = None if self.last is None else [self.last.ts, self.last.lat, self.last.lon]
        minutes: list[int] = []
        if self.minutes:
            newest = self.minutes[-1][0]
            minutes.append(newest)
            for minute, n in self.minutes:
                minutes += ((newest - minute) // MINUTE_MS, n)
        return [last, self.category, minutes, self.open_emitted]

    def restore(self, v: list[Any]) -> VesselGaps:
        last, self.category, minutes, self.open_emitted = v
        self.last = None if last is None else Fix(*last)
        newest = minutes[0] if minutes else 0
        self.minutes = [[newest - minutes[i] * MINUTE_MS, minutes[i + 1]] for i in range(1, len(minutes), 2)]
        return self
