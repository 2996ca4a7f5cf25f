"""One vessel's tracks (plain Python): which of its kept positions are plausible, and the segments
of time between them. In the spirit of Global Fishing Watch's segmenter (gpsdio-segment), kept
small: several tracks per MMSI, a fix joins the track it fits, and a fix that fits none starts
its own.

Each rule is a small function or method, named as docs/rules.md names it:

- **Fits** (:func:`fits`): a fix fits a track when the vessel could have gone from the track's
  last fix to it: ``distance <= max_knots * hours + noise`` (50 kn and 500 m by default; AISdb
  splits tracks at 50 kn, gpsdio-segment's noise distance is 500 m). ``max_knots`` 0 turns the
  rule off: every fix fits.
- **Placed in time order** (:meth:`VesselTracks.advance`): fixes are held until the watermark
  passes them, then placed oldest first. A track is *open* while its last fix is at most the gap
  cap (``max_gap_ms``) before the fix; the fix joins the open track it fits whose last fix is
  newest (then the confirmed one, then the longest). A fix that fits no open track starts one;
  one that fits none while others are open *conflicts* with them.
- **Confirmed** (:meth:`VesselTracks._join`): a track with two fixes is real. Its fixes are
  accepted, and every open single-fix track it conflicted with is *beaten*.
- **Lineage** (:meth:`VesselTracks._lineage`, gpsdio-segment's segments, which it keeps for
  ``max_hours``, 24): a fix that fits no open track goes on from a *lineage end* it fits, if any:
  the last fix of an accepted track no longer open that no later track went on from, up to
  :data:`HISTORY_MS` before it (bad fixes are no lineage's end). Of several, the one with the best
  :func:`lineage_score` (near and recent). Its track is real at once: a second transmitter of one
  MMSI heard every 20 minutes keeps its fixes while the first one's track is open. A fix at the
  same second as a real open track's fix it does not fit goes on from no lineage: it is another
  reading of that transmission.
  A lineage is taken for one transmitter: each placed fix carries its lineage's id
  (:attr:`Fix.lineage`, the id of the lineage's first track), which the port rule follows.
- **One reading a second** (:meth:`VesselTracks._first_of_second`): of fixes at the same time,
  one that fits an open track is placed first, then the one with the best lineage score, so the
  order they came in decides nothing.
- **Supported** (:meth:`VesselTracks._supported`): a fix that starts a single-fix track is
  supported when the vessel has no lineage end before it. Of two single-fix tracks in conflict,
  one that is not supported is beaten by one that is.
- **Judged** (:meth:`VesselTracks._judge`): a track still of one fix when the watermark passes
  its fix plus the cap is judged: beaten, its fix is a bad fix (it conflicted with a real track,
  or with a supported fix); else it is accepted (a vessel seen once, or a fix next to others of
  one fix each where nothing tells which is right: no judgement).
- **Segments**: between consecutive fixes of a track; a track never spans a gap over the cap, so
  a vessel that reappears after a longer silence starts a new track, wherever it is, and two
  vessels sending one MMSI far apart keep a track each with no segment between them.
- **Late fixes** (:meth:`VesselTracks.add`, a fix the watermark has passed already): joins the
  track it fits nearest in time (before its first fix, within the cap: the segment to it; after
  its last: the segment from it; inside: no time, its interval is counted already; it is checked
  against the track's first or last fix, the only ones kept); fits none while a real or accepted
  track is within the cap of it: a bad fix at once; else it starts a single-fix track of its own,
  judged as any other.
- A track is forgotten once the watermark is ``hold_ms`` past its last fix plus the cap (a late
  next fix, kept within the allowed lateness, still completes its segment until then).

What comes of a step is an :class:`Events`: fixes accepted (for the positions output and the
aggregates), bad fixes with what they conflicted with, and segments.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Any

from ais_pipeline.rules.records import TIME_UNKNOWN

EARTH_RADIUS_NM = 6371.0088 / 1.852  # mean Earth radius (IUGG), in nautical miles
MAX_KNOTS = 50.0
NOISE_M = 500.0
HISTORY_MS = 24 * 3_600_000  # how far back a lineage is gone on from (gpsdio-segment's max_hours)
MAX_RECENT = 16  # lineage ends kept per vessel, the newest
LINEAGE_PENALTY_KNOTS = 5.0  # gpsdio-segment's penalty_speed
LINEAGE_BUFFER_HOURS = 0.25  # gpsdio-segment's buffer_hours
NO_LINEAGE = -1  # a fix not placed yet (or placed before the tracks named their lineages)


@dataclass(slots=True)
class Fix:
    """A kept position, held until it is judged: its time, place and ship type category, its
    report's contribution to the windows (speed, and which window kinds it is not late for, as
    judged when it arrived), and its output lines once accepted (the position record, then its
    late records)."""

    ts: int
    lat: float
    lon: float
    cell: str
    category: str
    sog_sum: int = 0
    sog_n: int = 0
    tumbling: bool = True
    sliding: bool = True
    sliding_from: int = 0
    lines: tuple[str, ...] = ()
    # The transmitter it was placed with (the lineage of its track, :meth:`VesselTracks._place`);
    # NO_LINEAGE while held. Bookkeeping: not part of what makes two fixes equal.
    lineage: int = field(default=NO_LINEAGE, compare=False)

    def to_list(self) -> list[object]:
        return [
            self.ts, self.lat, self.lon, self.cell, self.category, self.sog_sum, self.sog_n,
            self.tumbling, self.sliding, self.sliding_from, list(self.lines), self.lineage,
        ]  # fmt: skip

    @classmethod
    def from_list(cls, v: list[Any]) -> Fix:
        ts, lat, lon, cell, category, sog_sum, sog_n, tumbling, sliding, sliding_from, lines = v[:11]
        lineage = v[11] if len(v) > 11 else NO_LINEAGE  # written before lineages were named
        return cls(ts, lat, lon, cell, category, sog_sum, sog_n, tumbling, sliding, sliding_from, tuple(lines), lineage)


def _ts(fix: Fix) -> int:
    return fix.ts


def _rank(track: Track) -> tuple[bool, bool, int, int, int]:
    """Which of the tracks a fix fits it joins: one a real track has not beaten, then a real one,
    then the one whose last fix is newest, then the longest, then the oldest."""
    return (track.beaten is None, track.confirmed, track.last.ts, track.count, -track.id)


def distance_nm(a: Fix, b: Fix) -> float:
    """Great-circle distance (haversine, mean Earth radius)."""
    lat1, lat2 = math.radians(a.lat), math.radians(b.lat)
    dlat = lat2 - lat1
    dlon = math.radians(b.lon - a.lon)
    h = math.sin(dlat / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin(dlon / 2) ** 2
    return 2 * EARTH_RADIUS_NM * math.asin(min(1.0, math.sqrt(h)))


def fits(a: Fix, b: Fix, max_knots: float, noise_nm: float) -> bool:
    """Whether a vessel could have gone from one fix to the other in the time between them."""
    if max_knots <= 0:
        return True
    return distance_nm(a, b) <= max_knots * abs(b.ts - a.ts) / 3_600_000 + noise_nm


def lineage_score(distance: float, hours: float) -> float:
    """How well a fix goes on from a lineage end ``distance`` nm and ``hours`` before it: gpsdio-
    segment's match metric for a vessel expected to stay where it was, ``exp(-(v / 5 kn)^2)`` (its
    penalty speed) over the time padded by a quarter hour (its buffer): near and recent wins."""
    padded = math.hypot(hours, LINEAGE_BUFFER_HOURS)
    return math.exp(-((distance / padded / LINEAGE_PENALTY_KNOTS) ** 2)) / padded


@dataclass(slots=True)
class Conflict:
    """What a bad fix conflicted with: the other track's fix, and how far apart they were."""

    ts: int
    lat: float
    lon: float
    distance_nm: float
    seconds: float

    @property
    def knots(self) -> float | None:
        """The speed going from one to the other would take; None for fixes at the same time."""
        return self.distance_nm / (self.seconds / 3600) if self.seconds else None

    @classmethod
    def between(cls, fix: Fix, other: Fix) -> Conflict:
        return cls(other.ts, other.lat, other.lon, distance_nm(fix, other), abs(fix.ts - other.ts) / 1000)


@dataclass(slots=True)
class Track:
    """One track of a vessel: its first and last fixes, how many it has, whether they were
    accepted (``emitted``), whether it is real (two fixes or more), and, while it has one fix,
    the tracks it conflicted with and whether a real one beat it."""

    id: int
    first: Fix
    last: Fix
    count: int = 1
    emitted: bool = False
    confirmed: bool = False
    rivals: list[int] = field(default_factory=list)
    beaten: Conflict | None = None
    supported: bool = True
    continued: bool = False  # a later track goes on from its last fix (see VesselTracks._lineage)

    @property
    def lineage(self) -> int:
        """The transmitter the track follows: the id of the first track of its lineage."""
        return self.first.lineage

    def to_list(self) -> list[object]:
        beaten = None
        if self.beaten is not None:
            b = self.beaten
            beaten = [b.ts, b.lat, b.lon, b.distance_nm, b.seconds]
        return [
            self.id, self.first.to_list(), self.last.to_list(), self.count, self.emitted, self.confirmed,
            self.rivals, beaten, self.supported, self.continued,
        ]  # fmt: skip

    @classmethod
    def from_list(cls, v: list[Any]) -> Track:
        beaten = None if v[7] is None else Conflict(*v[7])
        first, last = Fix.from_list(v[1]), Fix.from_list(v[2])
        continued = bool(v[9]) if len(v) > 9 else False  # state written before the lineage rule
        if first.lineage == NO_LINEAGE:  # written before the lineages were named: its own
            first.lineage = last.lineage = v[0]
        return cls(v[0], first, last, v[3], v[4], v[5], list(v[6]), beaten, v[8], continued)


@dataclass
class Events:
    """What one step of a vessel's tracks decided: fixes accepted, bad fixes (and what each
    conflicted with), segments (two fixes of a track, in time order), and late fixes that gave
    no time (``behind``)."""

    accepted: list[Fix] = field(default_factory=list)
    bad: list[tuple[Fix, Conflict]] = field(default_factory=list)
    segments: list[tuple[Fix, Fix]] = field(default_factory=list)
    behind: int = 0

    def __bool__(self) -> bool:
        return bool(self.accepted or self.bad or self.segments or self.behind)


@dataclass
class VesselTracks:
    """One vessel's fixes held until the watermark passes them (``pending``, in time order) and
    its tracks (see the module docstring). :meth:`add` takes a kept fix, :meth:`advance` moves
    to a watermark; both return the :class:`Events` they decided."""

    max_gap_ms: int
    hold_ms: int = 0
    max_knots: float = MAX_KNOTS
    noise_nm: float = NOISE_M / 1852
    pending: list[Fix] = field(default_factory=list)
    tracks: list[Track] = field(default_factory=list)
    released_to: int = TIME_UNKNOWN
    next_id: int = 0
    # The ends of the lineages no held track goes on from, oldest first: the last fix of each
    # forgotten accepted track no later one continued (its time and place only).
    recent: list[Fix] = field(default_factory=list)

    # -- state -------------------------------------------------------------------------------
    def to_list(self) -> list[object]:
        pending = [f.to_list() for f in self.pending]
        recent = [f.to_list() for f in self.recent]
        return [pending, [t.to_list() for t in self.tracks], self.released_to, self.next_id, recent]

    def restore(self, v: list[Any]) -> VesselTracks:
        pending, tracks, self.released_to, self.next_id, recent = v
        self.pending = [Fix.from_list(f) for f in pending]
        self.tracks = [Track.from_list(t) for t in tracks]
        if recent and not isinstance(recent[0], list):  # state written before: one fix, or none
            recent = [recent]
        self.recent = [Fix.from_list(f) for f in recent or ()]
        return self

    @property
    def empty(self) -> bool:
        """Nothing held but, perhaps, the lineages' ends: the caller may drop it all."""
        return not self.pending and not self.tracks

    def lineages(self) -> set[int]:
        """The lineages (transmitters) the tracks follow: of their tracks and lineage ends."""
        return {t.lineage for t in self.tracks} | {f.lineage for f in self.recent}

    def newest_recent(self) -> int | None:
        """The time of the newest lineage end kept, if any (how long the caller keeps them)."""
        return self.recent[-1].ts if self.recent else None

    # -- input -------------------------------------------------------------------------------
    def add(self, fix: Fix) -> Events:
        """Hold a fix until the watermark passes it; one the watermark has passed already is
        placed at once (a late fix)."""
        if fix.ts > self.released_to:
            pending = self.pending
            if not pending or fix.ts >= pending[-1].ts:  # in order: the common case
                pending.append(fix)
            else:
                bisect.insort(pending, fix, key=_ts)
            return Events()
        events = Events()
        self._late(fix, events)
        return events

    def advance(self, watermark: int) -> Events:
        """Place the held fixes the watermark has passed and judge the single-fix tracks whose cap
        it has passed, in time order (a fix at a track's last plus the cap still joins it); forget
        the tracks it is past holding."""
        events = Events()
        pending, cap = self.pending, self.max_gap_ms
        while True:
            fix_at = pending[0].ts if pending and pending[0].ts <= watermark else None
            judge = None
            for track in self.tracks:
                if not track.emitted:
                    at = track.last.ts + cap
                    if at <= watermark and (judge is None or at < judge.last.ts + cap):
                        judge = track
            if fix_at is not None and (judge is None or fix_at <= judge.last.ts + cap):
                self._place(pending.pop(self._first_of_second()), events)
            elif judge is not None:
                self._judge(judge, events)
            else:
                break
        kept = []
        for track in self.tracks:
            if track.last.ts + cap + self.hold_ms > watermark:
                kept.append(track)
            elif track.emitted and not track.continued:
                self._remember(track.last)
        self.tracks = kept
        if self.recent and self.recent[0].ts < watermark - HISTORY_MS:
            self.recent = [f for f in self.recent if f.ts >= watermark - HISTORY_MS]
        if watermark > self.released_to:
            self.released_to = watermark
        return events

    def next_timer(self) -> int | None:
        """The event time at which :meth:`advance` has something to do."""
        times = [self.pending[0].ts] if self.pending else []
        cap = self.max_gap_ms
        for track in self.tracks:
            times.append(track.last.ts + cap + (self.hold_ms if track.emitted else 0))
        return min(times) if times else None

    # -- the rules ---------------------------------------------------------------------------
    def _fits(self, a: Fix, b: Fix) -> bool:
        return fits(a, b, self.max_knots, self.noise_nm)

    def _first_of_second(self) -> int:
        """**One reading a second**: of the held fixes at the oldest time, the one placed first:
        one that fits an open track, else the one that goes on from a lineage with the best
        score, else the first that came (usually there is one)."""
        pending = self.pending
        ts = pending[0].ts
        if len(pending) == 1 or pending[1].ts != ts:
            return 0
        best: tuple[float, int] | None = None
        cap = self.max_gap_ms
        for i, fix in enumerate(pending):
            if fix.ts != ts:
                break
            if any(ts - t.last.ts <= cap and self._fits(t.last, fix) for t in self.tracks):
                return i
            match = self._lineage_match(fix, self._lineage_ends(fix))
            if match is not None and (best is None or match[0] > best[0]):
                best = (match[0], i)
        return 0 if best is None else best[1]

    def _remember(self, fix: Fix) -> None:
        """Keep a lineage's end (its time and place only), in time order, at most
        :data:`MAX_RECENT` of them."""
        end = Fix(fix.ts, fix.lat, fix.lon, fix.cell, fix.category, lineage=fix.lineage)
        bisect.insort(self.recent, end, key=_ts)
        if len(self.recent) > MAX_RECENT:
            del self.recent[0]

    def _place(self, fix: Fix, events: Events) -> None:
        """A fix the watermark has passed, in time order: it joins the open track it fits, or
        starts one: going on from a lineage it fits (a real track at once), or else a single fix
        (conflicting with the open tracks it does not fit)."""
        cap = self.max_gap_ms
        open_tracks = [t for t in self.tracks if fix.ts - t.last.ts <= cap]
        best: Track | None = None
        for track in open_tracks:
            if self._fits(track.last, fix) and (best is None or _rank(track) > _rank(best)):
                best = track
        if best is not None:
            self._join(best, fix, events, after=True)
            return
        ends = self._lineage_ends(fix)
        # A fix at the second of a real track's fix it does not fit is another reading of the
        # same transmission (or a rarer coincidence): that track's fix is the one that is right.
        same_second = any(t.confirmed and t.last.ts == fix.ts for t in open_tracks)
        origin = None if same_second else self._lineage(fix, ends)
        track = self._new_track(fix)
        if origin is None:
            track.supported = not ends
            for other in open_tracks:
                self._conflict(track, other)
            return
        if isinstance(origin, Track):
            origin.continued = True
        else:
            self.recent.remove(origin)
        if origin.lineage != NO_LINEAGE:  # the same transmitter, heard again
            fix.lineage = origin.lineage
        track.confirmed = track.emitted = True
        events.accepted.append(fix)
        for other in open_tracks:  # it fits none of them: a single fix among them is beaten
            if not other.confirmed and not other.emitted and other.beaten is None:
                other.beaten = Conflict.between(other.first, fix)

    def _lineage_ends(self, fix: Fix) -> list[Track | Fix]:
        """The ends of the vessel's lineages a fix could go on from: the last fixes of its
        accepted tracks no longer open and not continued, and the remembered ends, up to
        :data:`HISTORY_MS` before it."""
        ends: list[Track | Fix] = [
            t for t in self.tracks
            if t.emitted and not t.continued and self.max_gap_ms < fix.ts - t.last.ts <= HISTORY_MS
        ]  # fmt: skip
        ends += [f for f in self.recent if 0 <= fix.ts - f.ts <= HISTORY_MS]
        return ends

    def _lineage(self, fix: Fix, ends: list[Track | Fix]) -> Track | Fix | None:
        """**Lineage** (gpsdio-segment's segments, kept up to its ``max_hours``): a fix that fits
        no open track goes on from the lineage end it fits with the best score, if any."""
        best = self._lineage_match(fix, ends)
        return None if best is None else best[1]

    def _lineage_match(self, fix: Fix, ends: list[Track | Fix]) -> tuple[float, Track | Fix] | None:
        best: tuple[float, Track | Fix] | None = None
        for end in ends:
            last = end.last if isinstance(end, Track) else end
            if self._fits(last, fix):
                score = lineage_score(distance_nm(last, fix), (fix.ts - last.ts) / 3_600_000)
                if best is None or score > best[0]:
                    best = (score, end)
        return best

    def _new_track(self, fix: Fix, emitted: bool = False) -> Track:
        track = Track(self.next_id, fix, fix, emitted=emitted)
        fix.lineage = track.id  # a lineage of its own, unless it goes on from one
        self.next_id += 1
        self.tracks.append(track)
        return track

    def _supported(self, fix: Fix) -> bool:
        """Whether a fix that starts a track fits one of the vessel's lineage ends before it;
        True when there is none."""
        ends = self._lineage_ends(fix)
        return not ends or self._lineage(fix, ends) is not None

    def _conflict(self, new: Track, other: Track) -> None:
        """A new single-fix track that fits no open track: beaten at once by a real one; rivals
        with a single-fix one (whichever becomes real beats the other), and beaten by it, or
        beating it, when only one of them is supported."""
        if other.confirmed:
            if new.beaten is None:
                new.beaten = Conflict.between(new.first, other.last)
            return
        new.rivals.append(other.id)
        other.rivals.append(new.id)
        if other.supported and not new.supported and new.beaten is None:
            new.beaten = Conflict.between(new.first, other.first)
        elif new.supported and not other.supported and other.beaten is None and not other.emitted:
            other.beaten = Conflict.between(other.first, new.first)

    def _join(self, track: Track, fix: Fix, events: Events, after: bool) -> None:
        """A fix joins a track: after its last fix (the segment from it) or before its first (the
        segment to it). A track of two fixes is real: its fixes are accepted, its rivals
        beaten."""
        fix.lineage = track.lineage
        if after:
            if fix.ts > track.last.ts:
                events.segments.append((track.last, fix))
            track.last = fix
        else:
            if track.first.ts > fix.ts:
                events.segments.append((fix, track.first))
            track.first = fix
        track.count += 1
        if not track.emitted:
            events.accepted.append(track.first if after else track.last)
            track.emitted = True
        events.accepted.append(fix)
        if not track.confirmed:
            track.confirmed = True
            self._beat_rivals(track, fix)

    def _beat_rivals(self, track: Track, fix: Fix) -> None:
        for rival in self.tracks:
            if rival.id in track.rivals and not rival.emitted and rival.beaten is None:
                near = min((track.first, fix), key=lambda f: abs(f.ts - rival.first.ts))
                rival.beaten = Conflict.between(rival.first, near)
        track.rivals.clear()

    def _judge(self, track: Track, events: Events) -> None:
        """A track still of one fix once the cap has passed: a bad fix if a real track beat it,
        else accepted."""
        if track.beaten is not None:
            events.bad.append((track.first, track.beaten))
            self.tracks.remove(track)  # and no lineage: what is judged not a position supports none
        else:
            events.accepted.append(track.first)
            track.emitted = True
            track.rivals.clear()

    def _late(self, fix: Fix, events: Events) -> None:
        """A fix older than what the watermark has released: it joins the track it fits nearest
        in time; it is a bad fix when it fits none while a real (or accepted) track is within the
        cap of it; else it starts a track of its own, judged as any single fix."""
        cap = self.max_gap_ms
        best: tuple[tuple[bool, bool, int], Track] | None = None
        nearest: tuple[int, Fix] | None = None
        for track in self.tracks:
            if fix.ts < track.first.ts:
                ref, gap = track.first, track.first.ts - fix.ts
            elif fix.ts >= track.last.ts:
                ref, gap = track.last, fix.ts - track.last.ts
            else:
                ref = min((track.first, track.last), key=lambda f: abs(f.ts - fix.ts))
                gap = 0
            if gap > cap:
                continue
            if self._fits(ref, fix):
                rank = (track.beaten is None, track.confirmed, -gap)
                if best is None or rank > best[0]:
                    best = (rank, track)
            elif track.emitted and (nearest is None or abs(ref.ts - fix.ts) < nearest[0]):
                nearest = (abs(ref.ts - fix.ts), ref)
        if best is not None:
            track = best[1]
            if fix.ts < track.first.ts:
                self._join(track, fix, events, after=False)
            elif fix.ts >= track.last.ts:
                self._join(track, fix, events, after=True)
            else:  # inside the track: its interval is counted already
                fix.lineage = track.lineage
                track.count += 1
                if not track.emitted:
                    events.accepted.append(track.first)
                    track.emitted = True
                events.accepted.append(fix)
                events.behind += 1
                if not track.confirmed:
                    track.confirmed = True
                    self._beat_rivals(track, fix)
            return
        if nearest is not None:
            events.bad.append((fix, Conflict.between(fix, nearest[1])))
            return
        track = self._new_track(fix)
        track.supported = self._supported(fix)
        for other in self.tracks:
            if other is not track and not other.emitted and abs(other.last.ts - fix.ts) <= cap:
                self._conflict(track, other)
