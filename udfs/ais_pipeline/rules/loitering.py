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

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from ais_pipeline.rules.encounters import haversine_km
from ais_pipeline.rules.outputs import iso_ms, record_id

HOUR_MS = 3_600_000
METERS_PER_NM = 1852
LOITERING = "loitering"  # the output

ShoreNm = Callable[[float, float], float]  # a place's distance from shore, in nautical miles


@dataclass(frozen=True, slots=True)
class LoiteringRules:
    slow_kn: float = 2.0  # pipe-loitering's --slow-threshold
    min_hours: float = 4.0  # GFW's regional reports; Miller et al. 2018 use 8
    min_shore_nm: float = 20.0  # the published events' mean distance from shore
    # A track silent this long has ended (gpsdio-segment's max_hours, which the tracks' lineages
    # follow): its last hour is judged and its event closed.
    end_ms: int = 24 * HOUR_MS


@dataclass(frozen=True, slots=True)
class Ping:
    """A kept position of a track with what GFW's messages carry: the time (``ms``, GFW's
    ``hours`` in milliseconds, so that hours add up exactly) and the distance (``meters``) from
    the track's position before it (None for its first)."""

    ts: int
    lat: float
    lon: float
    ms: int | None
    meters: float | None

    @property
    def hours(self) -> float | None:
        return None if self.ms is None else self.ms / HOUR_MS

    def to_list(self) -> list[Any]:
        return [self.ts, self.lat, self.lon, self.ms, self.meters]

    @classmethod
    def from_list(cls, v: list[Any] | None) -> Ping | None:
        return None if v is None else cls(*v)


def _ping(v: list[Any] | None) -> Ping:
    p = Ping.from_list(v)
    assert p is not None
    return p


@dataclass(slots=True)
class Tally:
    """Positions added up in their order: time and distance (of those that have them), place
    (count-weighted, longitude on the circle) and the hours-weighted place (longitude relative to
    the first's, a slow hour being small)."""

    n: int = 0
    ms: int = 0  # of the positions that hold time
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
        if ping.ms:
            self.ms += ping.ms
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
        if ping.ms:
            self.wlat += ping.lat * ping.ms
            self.wdlon += dlon * ping.ms

    @property
    def hours(self) -> float:
        return self.ms / HOUR_MS

    @property
    def speed_kn(self) -> float | None:
        """GFW's mean implied speed: the distance over the time, when both are there."""
        if self.timed and self.ms and self.metered:
            return self.meters / self.hours / METERS_PER_NM
        return None

    def to_list(self) -> list[Any]:
        return [getattr(self, f.name) for f in fields(self)]

    @classmethod
    def from_list(cls, v: list[Any]) -> Tally:
        return cls(*v)

    def weighted_place(self) -> tuple[float, float]:
        assert self.ref_lon is not None and self.ms
        return self.wlat / self.ms, _wrap(self.ref_lon + self.wdlon / self.ms)

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
    emitted: bool = False  # written once: every change is written after, to its close
    category: str = "unknown"  # the ship type category of its transmitter's latest position

    def to_list(self) -> list[Any]:
        return [self.start.to_list(), self.end.to_list(), self.rest.to_list(), self.shore_weighted,
                self.shore_hours, self.shore_sum, self.lat_sum, self.cos_sum, self.sin_sum, self.emitted,
                self.category]  # fmt: skip

    @classmethod
    def from_list(cls, v: list[Any]) -> LoiteringEvent:
        start, end, rest, sw, sh, ss, lat, cos, sin, emitted, category = v
        return cls(_ping(start), _ping(end), Tally.from_list(rest), sw, sh, ss, lat, cos, sin, False, emitted, category)

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
            rest.ms += hour.ms
            rest.timed = True
        if hour.metered:
            rest.meters += hour.meters
            rest.metered = True
        if hour.timed and hour.ms:
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

    @property
    def hours_span(self) -> float:
        return (self.end.ts - self.start.ts) / HOUR_MS


@dataclass(slots=True)
class LoiteringTrack:
    """One track's hour and its loitering event, as its positions come in time order (the
    rules and the distance from shore are the caller's, so that the state is data alone)."""

    hour: int | None = None  # the clock hour of the positions added up in ``tally``
    tally: Tally = field(default_factory=Tally)
    first: Ping | None = None  # the hour's first position, and its last
    last: Ping | None = None
    before: Ping | None = None  # the last position of the hour before it
    event: LoiteringEvent | None = None

    def to_list(self) -> list[Any]:
        """The state, compact."""
        return [self.hour, self.tally.to_list(), None if self.first is None else self.first.to_list(),
                None if self.last is None else self.last.to_list(),
                None if self.before is None else self.before.to_list(),
                None if self.event is None else self.event.to_list()]  # fmt: skip

    @classmethod
    def from_list(cls, v: list[Any]) -> LoiteringTrack:
        hour, tally, first, last, before, event = v
        return cls(
            hour, Tally.from_list(tally), Ping.from_list(first), Ping.from_list(last), Ping.from_list(before),
            None if event is None else LoiteringEvent.from_list(event),
        )  # fmt: skip

    def end_due(self, rules: LoiteringRules) -> int | None:
        """When the track ends if no position comes (None: nothing held to judge or close)."""
        if self.last is None and self.event is None:
            return None
        last = self.last or self.before
        assert last is not None
        return last.ts + rules.end_ms

    def add(self, ping: Ping, rules: LoiteringRules, shore_nm: ShoreNm) -> list[LoiteringEvent]:
        """A track's next position: the event its hour before ends or extends, if any."""
        hour = ping.ts // HOUR_MS
        out: list[LoiteringEvent] = []
        if self.hour is not None and hour != self.hour:
            out = self._judge(rules, shore_nm)
        if self.first is None:
            self.first = ping
        self.hour = hour
        self.last = ping
        self.tally.add(ping)
        return out

    def finish(self, rules: LoiteringRules, shore_nm: ShoreNm) -> list[LoiteringEvent]:
        """The track's end: its last hour judged, and its event closed; the next position
        begins a track afresh."""
        out = self._judge(rules, shore_nm) if self.hour is not None else []
        self.before = None
        event, self.event = self.event, None
        if event is not None:
            event.closed = True
            out = [e for e in out if e is not event] + ([event] if event.count > 1 else [])
        return out

    def _judge(self, rules: LoiteringRules, shore_nm: ShoreNm) -> list[LoiteringEvent]:
        tally, first, last = self.tally, self.first, self.last
        assert first is not None and last is not None
        self.tally, self.first, self.last, self.hour = Tally(), None, None, None
        speed = tally.speed_kn
        slow = speed is not None and speed < rules.slow_kn
        before, self.before = self.before, last
        event = self.event
        if slow:
            if event is None:
                if before is not None:
                    event = LoiteringEvent.first(before, shore_nm)
                else:  # the track's first hour: its first position begins the event
                    event = LoiteringEvent.first(first, shore_nm)
                    tally = _without_first(tally, first)
                self.event = event
            if tally.n:
                event.add(tally, last, shore_nm)
            return [event] if event.count > 1 else []
        if event is not None:
            event.closed = True
            self.event = None
            return [event] if event.count > 1 else []
        return []


def _without_first(tally: Tally, first: Ping) -> Tally:
    """An hour's tally less its first position (the track's first, which has no time or
    distance before it: only its place and count are taken out)."""
    assert not first.ms and first.meters is None
    out = Tally(tally.n - 1, tally.ms, tally.timed, tally.meters, tally.metered)
    out.lat_sum = tally.lat_sum - first.lat
    out.cos_sum = tally.cos_sum - math.cos(math.radians(first.lon))
    out.sin_sum = tally.sin_sum - math.sin(math.radians(first.lon))
    out.ref_lon = tally.ref_lon
    out.dlon_sum = tally.dlon_sum  # the first's relative longitude is 0
    out.wlat, out.wdlon = tally.wlat, tally.wdlon
    return out


def loitering_id(mmsi: int, event: LoiteringEvent) -> str:
    """An event's id: its MMSI and the time it began (the same in every run)."""
    return record_id(LOITERING, mmsi, event.start.ts)


def loitering_json(event: LoiteringEvent, mmsi: int, as_of: int, rules: LoiteringRules) -> str:
    """A loitering event's record: the same ``id`` from the time it is first written (its hours
    reach the minimum far enough from shore) to its close; its mean place (``lat``, ``lon``),
    start and end (end null while open), hours (GFW's: of its positions after the first), mean
    speed and distance from shore, distance covered, where it began and ended, whether it is an
    event GFW publishes now, and ``as_of``, the event time it was written at."""
    speed = event.avg_speed_kn
    return json.dumps(
        {
            "id": loitering_id(mmsi, event),
            "mmsi": mmsi,
            "ship_type": event.category,
            "lat": round(event.mean_lat, 6),
            "lon": round(event.mean_lon, 6),
            "start_time": iso_ms(event.start.ts),
            "end_time": iso_ms(event.end.ts) if event.closed else None,
            "hours": round(event.loitering_hours or 0.0, 3),
            "avg_speed_kn": None if speed is None else round(speed, 3),
            "distance_nm": round(event.distance_nm, 3),
            "shore_nm": round(event.shore_nm, 1),
            "start_lat": event.start.lat,
            "start_lon": event.start.lon,
            "end_lat": event.end.lat,
            "end_lon": event.end.lon,
            "published": event.published(rules),
            "open": not event.closed,
            "as_of": iso_ms(as_of),
        },
        separators=(",", ":"),
    )


@dataclass(frozen=True, slots=True)
class Loitering:
    """The rule on one transmitter's accepted positions, as the job and the plain loop run it:
    each position a :class:`Ping` (its time and distance from the transmitter's position before),
    the events it changed written once the event is published, and every change after that."""

    rules: LoiteringRules
    shore_nm: ShoreNm

    def position(
        self, track: LoiteringTrack, before: tuple[int, float, float] | None, ts: int, lat: float, lon: float,
        category: str, mmsi: int,
    ) -> list[tuple[str, bool]]:  # fmt: skip
        """A position after ``before`` (the transmitter's last: time, place): its records. After
        a silence as long as a track's end, the track has ended (if its timer has not said so
        yet, it ends here) and this position begins the next, with no time or distance."""
        records: list[tuple[str, bool]] = []
        if before is not None and ts - before[0] >= self.rules.end_ms:
            records = self._records(track.finish(self.rules, self.shore_nm), mmsi, ts)
            before = None
        if before is None:
            track.before = None
            ping = Ping(ts, lat, lon, None, None)
        else:
            b_ts, b_lat, b_lon = before
            km = haversine_km(b_lat, b_lon, lat, lon)
            ping = Ping(ts, lat, lon, ts - b_ts, km * 1000)
        events = track.add(ping, self.rules, self.shore_nm)
        if track.event is not None:
            track.event.category = category
        return records + self._records(events, mmsi, ts)

    def due(self, track: LoiteringTrack) -> int | None:
        return track.end_due(self.rules)

    def end(self, track: LoiteringTrack, watermark: int, mmsi: int, as_of: int) -> list[tuple[str, bool]]:
        """The track's end, if the watermark has passed it: its records, written at ``as_of``."""
        due = track.end_due(self.rules)
        if due is None or due > watermark:
            return []
        return self._records(track.finish(self.rules, self.shore_nm), mmsi, as_of)

    def _records(self, events: list[LoiteringEvent], mmsi: int, as_of: int) -> list[tuple[str, bool]]:
        """The events' records (with whether each is open): of those published now or before."""
        out = []
        for event in events:
            if event.emitted or event.published(self.rules):
                event.emitted = True
                out.append((loitering_json(event, mmsi, as_of, self.rules), not event.closed))
        return out
