"""Loitering: a vessel slow for hours, as Global Fishing Watch's ``pipe-loitering`` (Apache-2.0)
finds it, one track at a time as its positions come. The plain reference.

- **Hours** (``calculate_hourly_stats.py``): a track's positions are grouped by the clock's
  hour. Each position carries the time and the distance from the track's position before it;
  an hour's mean implied speed is the distance over the time of its positions. An hour is *slow*
  when that speed is under :attr:`LoiteringRules.slow_kn` (2 knots); an hour whose positions
  hold no time (the track's first) is not.
- **Events** (``group_loitering_ranges.py``, ``calculate_loitering_stats.py``, and the merge of
  the days, which one pass over the track makes needless): consecutive slow hours with
  positions (an hour without any neither ends nor extends them: the next position's time and
  distance cover it) make one event, from the last position of the hour before them, if any, to
  the last of the last slow hour, if it holds two positions or more. Its hours and mean speed
  are those of its positions after the first; its distance from shore is the mean over its
  positions weighted by their hours; its place the mean of its positions'.
- **Published** (GFW's events, ``Loitering.md``): an event of
  :attr:`LoiteringRules.min_hours` (4) or more whose mean distance from shore is
  :attr:`LoiteringRules.min_shore_nm` (20 nm) or more.

An event is known open once its hours reach the minimum, and closed at the first hour that is
not slow, or at the track's end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

HOUR_MS = 3_600_000
METERS_PER_NM = 1852


@dataclass(frozen=True, slots=True)
class LoiteringRules:
    slow_kn: float = 2.0  # pipe-loitering's --slow-threshold
    min_hours: float = 4.0  # GFW's regional reports; Miller et al. 2018 use 8
    min_shore_nm: float = 20.0  # the published events' mean distance from shore


@dataclass(frozen=True, slots=True)
class Ping:
    """A kept position of a track with what GFW's messages carry: the time (``hours``) and the
    distance (``meters``) from the track's position before it (None for its first), and its
    distance from shore in metres (None where unknown)."""

    ts: int
    lat: float
    lon: float
    hours: float | None
    meters: float | None
    shore_m: float | None = None


@dataclass(slots=True)
class LoiteringEvent:
    """An event's figures, added up position by position (its first counts only for the place,
    the time it began and the distance from shore)."""

    start: Ping
    end: Ping
    count: int = 1
    hours: float = 0.0  # of its positions after the first
    meters: float = 0.0
    timed: bool = False  # some position after the first holds time
    metered: bool = False
    shore_weighted: float = 0.0  # sum of distance from shore x hours, of positions with both
    shore_hours: float = 0.0
    shore_sum: float = 0.0  # of positions with a distance from shore
    shore_n: int = 0
    lat_sum: float = 0.0
    cos_sum: float = 0.0
    sin_sum: float = 0.0
    closed: bool = False

    @classmethod
    def first(cls, ping: Ping) -> LoiteringEvent:
        event = cls(ping, ping)
        event._place(ping)
        return event

    def add(self, ping: Ping) -> None:
        self.end = ping
        self.count += 1
        if ping.hours:
            self.hours += ping.hours
            self.timed = True
        if ping.meters is not None:
            self.meters += ping.meters
            self.metered = True
        self._place(ping)

    def _place(self, ping: Ping) -> None:
        self.lat_sum += ping.lat
        self.cos_sum += math.cos(math.radians(ping.lon))
        self.sin_sum += math.sin(math.radians(ping.lon))
        if ping.shore_m is not None:
            self.shore_sum += ping.shore_m
            self.shore_n += 1
            if ping.hours:
                self.shore_weighted += ping.shore_m * ping.hours
                self.shore_hours += ping.hours

    @property
    def loitering_hours(self) -> float | None:
        return self.hours if self.timed else None

    @property
    def avg_speed_kn(self) -> float | None:
        if self.timed and self.hours and self.metered:
            return self.meters / self.hours / METERS_PER_NM
        return None

    @property
    def distance_nm(self) -> float:
        return self.meters / METERS_PER_NM

    @property
    def shore_nm(self) -> float | None:
        if not self.shore_n:
            return None
        if self.shore_hours:
            return self.shore_weighted / self.shore_hours / METERS_PER_NM
        return self.shore_sum / self.shore_n / METERS_PER_NM

    @property
    def mean_lat(self) -> float:
        return self.lat_sum / self.count

    @property
    def mean_lon(self) -> float:
        return math.degrees(math.atan2(self.sin_sum / self.count, self.cos_sum / self.count))

    def published(self, rules: LoiteringRules) -> bool:
        """Long enough and far enough from shore to be an event GFW publishes."""
        shore = self.shore_nm
        return (self.loitering_hours or 0.0) >= rules.min_hours and shore is not None and shore >= rules.min_shore_nm


@dataclass(slots=True)
class LoiteringTrack:
    """One track's hours and its loitering event, as its positions come in time order."""

    rules: LoiteringRules = LoiteringRules()
    hour: int | None = None  # the clock hour of the positions held
    pings: list[Ping] = field(default_factory=list)  # the hour's positions
    before: Ping | None = None  # the last position of the hour before it
    event: LoiteringEvent | None = None

    def add(self, ping: Ping) -> list[LoiteringEvent]:
        """A track's next position: the event its hour before ends or extends, if any."""
        hour = ping.ts // HOUR_MS
        out: list[LoiteringEvent] = []
        if self.hour is not None and hour != self.hour:
            out = self._judge()
        self.hour = hour
        self.pings.append(ping)
        return out

    def finish(self) -> list[LoiteringEvent]:
        """The track's end: its last hour judged, and its event closed."""
        out = self._judge() if self.pings else []
        event, self.event = self.event, None
        if event is not None:
            event.closed = True
            out = [e for e in out if e is not event] + ([event] if event.count > 1 else [])
        return out

    def _judge(self) -> list[LoiteringEvent]:
        pings, self.pings = self.pings, []
        timed = [p.hours for p in pings if p.hours]
        metered = [p.meters for p in pings if p.meters is not None]
        hours = sum(timed) if timed else None
        meters = sum(metered) if metered else None
        speed = meters / hours / METERS_PER_NM if hours and meters is not None else None
        slow = speed is not None and speed < self.rules.slow_kn
        before, self.before = self.before, pings[-1]
        event = self.event
        if slow:
            if event is None:
                event = self.event = LoiteringEvent.first(before) if before is not None else None
                if event is None:
                    event = self.event = LoiteringEvent.first(pings[0])
                    pings = pings[1:]
            for p in pings:
                event.add(p)
            return [event] if event.count > 1 else []
        if event is not None:
            event.closed = True
            self.event = None
            return [event] if event.count > 1 else []
        return []
