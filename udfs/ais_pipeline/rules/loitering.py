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
  positions weighted by their hours (each position's time since the one before); its place the
  mean of its positions'.
- **Distance from shore, by the hour.** GFW reads each position's distance from shore from a
  1 km raster. Here an hour's positions count at their hours-weighted mean place: one distance
  a slow hour (a vessel under 2 knots moves less than 2 nm in it), exact where the distance
  varies linearly over that place, and no distance at all for the hours that are not slow. The
  first position of an event counts at its own place.
- **Published** (GFW's events, ``Loitering.md``): an event of
  :attr:`LoiteringRules.min_hours` (4) or more whose mean distance from shore is
  :attr:`LoiteringRules.min_shore_nm` (20 nm) or more.

An event is known open once its hours reach the minimum, and closed at the first hour that is
not slow, or at the track's end.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

HOUR_MS = 3_600_000
METERS_PER_NM = 1852

ShoreNm = Callable[[float, float], float]  # a place's distance from shore, in nautical miles


@dataclass(frozen=True, slots=True)
class LoiteringRules:
    slow_kn: float = 2.0  # pipe-loitering's --slow-threshold
    min_hours: float = 4.0  # GFW's regional reports; Miller et al. 2018 use 8
    min_shore_nm: float = 20.0  # the published events' mean distance from shore


@dataclass(frozen=True, slots=True)
class Ping:
    """A kept position of a track with what GFW's messages carry: the time (``hours``) and the
    distance (``meters``) from the track's position before it (None for its first)."""

    ts: int
    lat: float
    lon: float
    hours: float | None
    meters: float | None


@dataclass(slots=True)
class Tally:
    """Positions added up in their order: time and distance (of those that have them), place
    (count-weighted, longitude on the circle) and the hours-weighted place (longitude relative to
    the first's, a slow hour being small)."""

    n: int = 0
    hours: float = 0.0
    timed: bool = False
    meters: float = 0.0
    metered: bool = False
    lat_sum: float = 0.0
    cos_sum: float = 0.0
    sin_sum: float = 0.0
    ref_lon: float | None = None
    dlon_sum: float = 0.0  # longitude relative to ref_lon, count-weighted
    wlat: float = 0.0  # latitude x hours
    wdlon: float = 0.0  # relative longitude x hours

    def add(self, ping: Ping) -> None:
        self.n += 1
        if ping.hours:
            self.hours += ping.hours
            self.timed = True
        if ping.meters is not None:
            self.meters += ping.meters
            self.metered = True
        self.lat_sum += ping.lat
        self.cos_sum += math.cos(math.radians(ping.lon))
        self.sin_sum += math.sin(math.radians(ping.lon))
        if self.ref_lon is None:
            self.ref_lon = ping.lon
        dlon = (ping.lon - self.ref_lon + 180) % 360 - 180
        self.dlon_sum += dlon
        if ping.hours:
            self.wlat += ping.lat * ping.hours
            self.wdlon += dlon * ping.hours

    @property
    def speed_kn(self) -> float | None:
        """GFW's mean implied speed: the distance over the time, when both are there."""
        if self.timed and self.hours and self.metered:
            return self.meters / self.hours / METERS_PER_NM
        return None

    def weighted_place(self) -> tuple[float, float]:
        assert self.ref_lon is not None and self.hours
        return self.wlat / self.hours, _wrap(self.ref_lon + self.wdlon / self.hours)

    def mean_place(self) -> tuple[float, float]:
        assert self.ref_lon is not None and self.n
        return self.lat_sum / self.n, _wrap(self.ref_lon + self.dlon_sum / self.n)


def _wrap(lon: float) -> float:
    return (lon + 180) % 360 - 180


@dataclass(slots=True)
class LoiteringEvent:
    """An event's figures: its first position counts for the place, the time it began and the
    distance from shore; ``rest`` adds up the others (hours, distance, speed)."""

    start: Ping
    end: Ping
    rest: Tally = field(default_factory=Tally)
    shore_weighted: float = 0.0  # distance from shore x hours
    shore_hours: float = 0.0
    shore_sum: float = 0.0  # distance from shore x positions
    lat_sum: float = 0.0
    cos_sum: float = 0.0
    sin_sum: float = 0.0
    closed: bool = False

    @classmethod
    def first(cls, ping: Ping, shore_nm: ShoreNm) -> LoiteringEvent:
        event = cls(ping, ping)
        s = shore_nm(ping.lat, ping.lon)
        if ping.hours:
            event.shore_weighted, event.shore_hours = s * ping.hours, ping.hours
        event.shore_sum = s
        event.lat_sum = ping.lat
        event.cos_sum, event.sin_sum = math.cos(math.radians(ping.lon)), math.sin(math.radians(ping.lon))
        return event

    def add(self, hour: Tally, last: Ping, shore_nm: ShoreNm) -> None:
        """A slow hour's positions (``last`` the last of them)."""
        rest = self.rest
        rest.n += hour.n
        if hour.timed:
            rest.hours += hour.hours
            rest.timed = True
        if hour.metered:
            rest.meters += hour.meters
            rest.metered = True
        if hour.timed and hour.hours:
            lat, lon = hour.weighted_place()
            self.shore_weighted += shore_nm(lat, lon) * hour.hours
            self.shore_hours += hour.hours
        lat, lon = hour.mean_place()
        self.shore_sum += shore_nm(lat, lon) * hour.n
        self.lat_sum += hour.lat_sum
        self.cos_sum += hour.cos_sum
        self.sin_sum += hour.sin_sum
        self.end = last

    @property
    def count(self) -> int:
        return 1 + self.rest.n

    @property
    def loitering_hours(self) -> float | None:
        return self.rest.hours if self.rest.timed else None

    @property
    def avg_speed_kn(self) -> float | None:
        return self.rest.speed_kn

    @property
    def distance_nm(self) -> float:
        return self.rest.meters / METERS_PER_NM

    @property
    def shore_nm(self) -> float:
        if self.shore_hours:
            return self.shore_weighted / self.shore_hours
        return self.shore_sum / self.count

    @property
    def mean_lat(self) -> float:
        return self.lat_sum / self.count

    @property
    def mean_lon(self) -> float:
        return math.degrees(math.atan2(self.sin_sum / self.count, self.cos_sum / self.count))

    def published(self, rules: LoiteringRules) -> bool:
        """Long enough and far enough from shore to be an event GFW publishes."""
        return (self.loitering_hours or 0.0) >= rules.min_hours and self.shore_nm >= rules.min_shore_nm


@dataclass(slots=True)
class LoiteringTrack:
    """One track's hour and its loitering event, as its positions come in time order."""

    shore_nm: ShoreNm
    rules: LoiteringRules = LoiteringRules()
    hour: int | None = None  # the clock hour of the positions added up in ``tally``
    tally: Tally = field(default_factory=Tally)
    first: Ping | None = None  # the hour's first position, and its last
    last: Ping | None = None
    before: Ping | None = None  # the last position of the hour before it
    event: LoiteringEvent | None = None

    def add(self, ping: Ping) -> list[LoiteringEvent]:
        """A track's next position: the event its hour before ends or extends, if any."""
        hour = ping.ts // HOUR_MS
        out: list[LoiteringEvent] = []
        if self.hour is not None and hour != self.hour:
            out = self._judge()
        if self.first is None:
            self.first = ping
        self.hour = hour
        self.last = ping
        self.tally.add(ping)
        return out

    def finish(self) -> list[LoiteringEvent]:
        """The track's end: its last hour judged, and its event closed."""
        out = self._judge() if self.hour is not None else []
        event, self.event = self.event, None
        if event is not None:
            event.closed = True
            out = [e for e in out if e is not event] + ([event] if event.count > 1 else [])
        return out

    def _judge(self) -> list[LoiteringEvent]:
        tally, first, last = self.tally, self.first, self.last
        assert first is not None and last is not None
        self.tally, self.first, self.last, self.hour = Tally(), None, None, None
        speed = tally.speed_kn
        slow = speed is not None and speed < self.rules.slow_kn
        before, self.before = self.before, last
        event = self.event
        if slow:
            if event is None:
                if before is not None:
                    event = LoiteringEvent.first(before, self.shore_nm)
                else:  # the track's first hour: its first position begins the event
                    event = LoiteringEvent.first(first, self.shore_nm)
                    tally = _without_first(tally, first)
                self.event = event
            if tally.n:
                event.add(tally, last, self.shore_nm)
            return [event] if event.count > 1 else []
        if event is not None:
            event.closed = True
            self.event = None
            return [event] if event.count > 1 else []
        return []


def _without_first(tally: Tally, first: Ping) -> Tally:
    """An hour's tally less its first position (the track's first, which has no time or
    distance before it: only its place and count are taken out)."""
    assert not first.hours and first.meters is None
    out = Tally(tally.n - 1, tally.hours, tally.timed, tally.meters, tally.metered)
    out.lat_sum = tally.lat_sum - first.lat
    out.cos_sum = tally.cos_sum - math.cos(math.radians(first.lon))
    out.sin_sum = tally.sin_sum - math.sin(math.radians(first.lon))
    out.ref_lon = tally.ref_lon
    out.dlon_sum = tally.dlon_sum  # the first's relative longitude is 0
    out.wlat, out.wdlon = tally.wlat, tally.wdlon
    return out
