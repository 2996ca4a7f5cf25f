"""Port visits as Global Fishing Watch defines them (``pipe-anchorages``: its ``anchorage_cfg.yaml``,
``transforms/create_in_out_events.py`` and ``transforms/create_port_visits.py``), on one vessel's
kept positions in event time.

- **Anchorages.** A position's port distance is the haversine distance (R = 6371 km) to the
  nearest anchorage point (:class:`Anchorages`, a grid index: GFW's published list by default).
- **In port** within :attr:`PortRules.in_port_km` (3.0 km) of an anchorage, **out** at
  :attr:`PortRules.out_km` (4.0 km) or more; in between, the vessel stays as it was.
- **Stopped** (in port) at :attr:`PortRules.stopped_kn` (0.2 kn) or less, **moving** at
  :attr:`PortRules.moving_kn` (0.5 kn) or more; in between, or with no SOG, it stays as it was
  (a vessel that comes into port at a speed in between is in port, not stopped).
- **States and events.** AT_SEA, IN_PORT, STOPPED; the transitions emit ``PORT_ENTRY``,
  ``PORT_STOP_BEGIN``, ``PORT_STOP_END`` and ``PORT_EXIT`` (AT_SEA to STOPPED emits an entry and a
  stop's begin, STOPPED to AT_SEA a stop's end and an exit). A vessel's first position sets its
  state and emits nothing.
- **Port gap.** In port, a silence of :attr:`PortRules.gap_ms` (4 h) or more is a gap:
  ``PORT_GAP_BEGIN`` at the last position's time plus 4 h (at once when the watermark passes it,
  :meth:`VesselPorts.advance`, or with the next position), ``PORT_GAP_END`` at the next position.
- An event's anchorage is the one nearest its position; an exit's, the one of the last position
  in port (the vessel is 4 km or more from every anchorage then).
- **Visits** (:class:`Visits`): a visit starts at an entry (or, for a vessel first heard in
  port, at its first event) and ends at an exit, or, without one, where its next event is at an
  anchorage :attr:`PortRules.apart_nm` (60 nm) from its last one's (GFW's
  ``max_interseg_dist_nm``): that event starts another visit. Confidence 4: a stop or a gap, an entry and an
  exit; 3: a stop or a gap and an entry or an exit; 2: a stop or a gap only; 1: an entry or an
  exit only. Its hours are its first event to its last. A visit keeps at most
  :data:`MAX_EVENTS` events: the first and the last half of them.

Positions are taken in event time order; one older than the transmitter's last is left out of
the rule.

**Transmitters**: the rule runs once per transmitter of an MMSI, as the tracks tell them apart
(:mod:`ais_pipeline.rules.transmitters`, which also says how a transmitter is followed across
silences): each has a :class:`VesselPorts` and visits of its own. One forgotten keeps its open
visit open, its last event the gap's begin.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import zlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ais_pipeline.rules.outputs import iso_ms, record_id
from ais_pipeline.rules.tracks import Fix as TrackFix

EARTH_RADIUS_KM = 6371.0
AT_SEA, IN_PORT, STOPPED = "AT_SEA", "IN_PORT", "STOPPED"
PORT_ENTRY, PORT_EXIT = "PORT_ENTRY", "PORT_EXIT"
PORT_STOP_BEGIN, PORT_STOP_END = "PORT_STOP_BEGIN", "PORT_STOP_END"
PORT_GAP_BEGIN, PORT_GAP_END = "PORT_GAP_BEGIN", "PORT_GAP_END"
# The order of events at one instant (GFW's ``CreatePortVisits.EVENT_TYPES``).
EVENT_ORDER = (PORT_ENTRY, PORT_GAP_BEGIN, PORT_GAP_END, PORT_STOP_BEGIN, PORT_STOP_END, PORT_EXIT)
MAX_EVENTS = 200  # GFW's ``MAX_EMITTED_EVENTS``
CELL_DEG = 0.1  # the anchorage index's grid


@dataclass(frozen=True)
class PortRules:
    """The thresholds, GFW's by default (``anchorage_cfg.yaml``)."""

    in_port_km: float = 3.0  # ``port_entry_dist_km``
    out_km: float = 4.0  # ``port_exit_dist_km``
    stopped_kn: float = 0.2  # ``port_stop_begin_speed_knots``
    moving_kn: float = 0.5  # ``port_stop_end_speed_knots``
    gap_ms: int = 4 * 3_600_000  # ``min_port_gap_minutes``: 240
    # How long a transmitter's state is kept once no lineage follows it (the gap events' TTL).
    ttl_ms: int = 14 * 86_400_000
    # A visit's consecutive events at anchorages farther apart are two visits (GFW's
    # ``max_interseg_dist_nm``, equirectangular between the anchorages, as GFW measures it).
    apart_nm: float = 60.0


@dataclass(frozen=True, slots=True)
class Anchorage:
    anchorage_id: str  # GFW's s2id (the level-14 S2 cell token), or a user list's own id
    lat: float
    lon: float
    label: str
    sublabel: str = ""
    iso3: str = ""


def apart_nm(a: Anchorage, b: Anchorage) -> float:
    """Two anchorages' distance as GFW's ``has_large_interseg_dist`` measures it: equirectangular,
    at their mean latitude, 60 nm a degree."""
    dlon = (b.lon - a.lon + 180.0) % 360.0 - 180.0
    scale = math.cos(math.radians(0.5 * (a.lat + b.lat)))
    return math.hypot(b.lat - a.lat, scale * dlon) * 60.0


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(a)))


class Anchorages:
    """Anchorage points bucketed by cells of :data:`CELL_DEG` degrees; :meth:`nearest` looks in
    the cells of the latitude-longitude window that holds every point within the radius (every
    longitude when the window reaches a pole; wrapped at the antimeridian)."""

    def __init__(self, points: Iterable[Anchorage], skipped: Iterable[str] = ()) -> None:
        self.cells: defaultdict[tuple[int, int], list[Anchorage]] = defaultdict(list)
        self.skipped = list(skipped)  # the rows of a list that are no place, each with its reason
        self.points: list[Anchorage] = []
        for p in points:
            self.cells[self._cell(p.lat, p.lon)].append(p)
            self.points.append(p)
        self.count = len(self.points)
        self.lon_cells = round(360 / CELL_DEG)
        self._near: dict[float, set[int]] = {}

    def __reduce__(self) -> tuple[Any, tuple[bytes]]:
        """Pickled (into the job, for the TaskManagers) as its points' fields, compressed once:
        about a megabyte for GFW's list; the index is built again where it is unpickled, once
        for every operator that holds the same list."""
        packed = self.__dict__.get("_packed")
        if packed is None:
            fields = ((p.anchorage_id, repr(p.lat), repr(p.lon), p.label, p.sublabel, p.iso3) for p in self.points)
            text = "\x1e".join("\x1f".join(f) for f in fields) + "\x1d" + "\x1e".join(self.skipped)
            packed = self.__dict__["_packed"] = zlib.compress(text.encode("utf-8"), 6)
        return (_unpickle_anchorages, (packed,))

    @staticmethod
    def _cell(lat: float, lon: float) -> tuple[int, int]:
        return math.floor(lat / CELL_DEG), math.floor(((lon + 180.0) % 360.0) / CELL_DEG)

    @classmethod
    def from_rows(cls, rows: Iterable[dict[str, str | None]], name: str) -> Anchorages:
        """The rows of a list (``name``: the file's, for the messages): GFW's columns (``s2id,
        latitude, longitude, label, sublabel, iso3``) or just ``latitude, longitude, label`` (an
        id is made of the file's name and the row's line). A row whose place is not a latitude
        and longitude on Earth is left out and named in :attr:`skipped` (GFW's list has one:
        Pointe Noire at longitude 1001)."""
        points, skipped = [], []
        for n, row in enumerate(rows, start=2):
            try:
                lat, lon = float(row["latitude"] or ""), float(row["longitude"] or "")
            except (TypeError, ValueError):
                skipped.append(f"{name}, line {n}: not a latitude and longitude")
                continue
            if not (-90.0 <= lat <= 90.0 and -180.0 <= lon <= 180.0):
                skipped.append(f"{name}, line {n}: no such place: {row['latitude']}, {row['longitude']}")
                continue
            anchorage_id = row.get("s2id") or f"{name.rsplit('.', 1)[0]}:{n}"
            label = row["label"] or ""
            points.append(Anchorage(anchorage_id, lat, lon, label, row.get("sublabel") or "", row.get("iso3") or ""))
        return cls(points, skipped)

    def _near_cells(self, within_km: float) -> set[int]:
        """The cells (by :meth:`_code`) from which some anchorage may lie within ``within_km``:
        the rows the radius reaches from each anchorage's cell, and the columns its longitude window may reach
        there, with a cell to spare (a superset; made once per radius)."""
        near = self._near.get(within_km)
        if near is not None:
            return near
        near = set()
        dlat = math.degrees(within_km / EARTH_RADIUS_KM)
        n = self.lon_cells
        r = math.ceil(dlat / CELL_DEG)  # the rows a radius reaches on either side
        for i, j in self.cells:
            widest = max(abs((i - r) * CELL_DEG), abs((i + r + 1) * CELL_DEG)) + dlat
            cos = math.cos(math.radians(widest)) if widest < 90.0 else 0.0
            if cos <= 0.0 or dlat / cos >= 180.0:
                cols: Iterable[int] = range(n)
            else:
                m = math.ceil(dlat / cos / CELL_DEG) + 1
                cols = [(j + k) % n for k in range(-m, m + 1)]
            for row in range(i - r, i + r + 1):
                near.update(row * n + col for col in cols)
        self._near[within_km] = near
        return near

    def nearest(self, lat: float, lon: float, within_km: float) -> tuple[Anchorage, float] | None:
        """The nearest anchorage within ``within_km`` and its distance; None when there is none
        (at once for a place far from every anchorage)."""
        i, j = self._cell(lat, lon)
        if i * self.lon_cells + j not in self._near_cells(within_km):
            return None
        dlat = math.degrees(within_km / EARTH_RADIUS_KM)
        lat_lo, lat_hi = math.floor((lat - dlat) / CELL_DEG), math.floor((lat + dlat) / CELL_DEG)
        widest = max(abs(lat - dlat), abs(lat + dlat))
        cos = math.cos(math.radians(widest)) if widest < 90.0 else 0.0
        if cos <= 0.0 or dlat / cos >= 180.0:
            lon_cells: Iterable[int] = range(self.lon_cells)
        else:
            dlon = dlat / cos
            first = math.floor(((lon - dlon + 180.0) % 360.0) / CELL_DEG)
            span = math.floor(2 * dlon / CELL_DEG) + 2
            lon_cells = {(first + k) % self.lon_cells for k in range(min(span, self.lon_cells))}
        best: tuple[Anchorage, float] | None = None
        for i in range(lat_lo, lat_hi + 1):
            for j in lon_cells:
                for p in self.cells.get((i, j), ()):
                    d = haversine_km(lat, lon, p.lat, p.lon)
                    if d <= within_km and (best is None or d < best[1]):
                        best = (p, d)
        return best


_UNPICKLED: dict[str, Anchorages] = {}  # by the digest of what was pickled: one index per list


def _unpickle_anchorages(packed: bytes) -> Anchorages:
    key = hashlib.sha1(packed).hexdigest()
    found = _UNPICKLED.get(key)
    if found is not None:
        return found
    points, skipped = zlib.decompress(packed).decode("utf-8").split("\x1d")
    rows = (row.split("\x1f") for row in points.split("\x1e")) if points else ()
    made = Anchorages(
        (Anchorage(i, float(lat), float(lon), label, sub, iso3) for i, lat, lon, label, sub, iso3 in rows),
        skipped.split("\x1e") if skipped else (),
    )
    made.__dict__["_packed"] = packed
    if len(_UNPICKLED) >= 4:
        _UNPICKLED.clear()
    _UNPICKLED[key] = made
    return made


@dataclass(frozen=True, slots=True)
class PortEvent:
    kind: str
    ts: int  # event time, ms
    lat: float  # the vessel's position
    lon: float
    anchorage: Anchorage


@dataclass(slots=True)
class VesselPorts:
    """One transmitter's state for the rule: where it is (None before its first position), its
    last position in the rule, the anchorage nearest its last position in port, whether the gap
    of its silence in port was emitted already, and its open visit."""

    state: str | None = None
    last_ts: int = 0
    last_lat: float = 0.0
    last_lon: float = 0.0
    anchorage: Anchorage | None = None
    gap_open: bool = False
    visit: PortVisit | None = None


class PortEvents:
    """The in/out, stop and gap events of one vessel's positions (the rule of the module)."""

    def __init__(self, anchorages: Anchorages, rules: PortRules = PortRules()) -> None:
        self.anchorages = anchorages
        self.rules = rules

    def position(self, v: VesselPorts, ts: int, lat: float, lon: float, sog: float | None) -> list[PortEvent]:
        """The events of a vessel's next position (in event time order)."""
        rules = self.rules
        if v.state is not None and ts < v.last_ts:
            return []
        found = self.anchorages.nearest(lat, lon, rules.out_km)
        prev = v.state
        if prev is None or prev == AT_SEA:
            in_port = found is not None and found[1] <= rules.in_port_km
        else:
            in_port = found is not None and found[1] < rules.out_km
        if not in_port:
            state = AT_SEA
        elif prev == STOPPED:
            state = IN_PORT if sog is not None and sog >= rules.moving_kn else STOPPED
        else:
            state = STOPPED if sog is not None and sog <= rules.stopped_kn else IN_PORT
        here = found[0] if found is not None else v.anchorage
        events: list[PortEvent] = []
        if prev in (IN_PORT, STOPPED):
            events += self._gap(v, (ts, lat, lon, here))
        if prev is not None and here is not None and state != prev:
            kinds = {
                (AT_SEA, IN_PORT): (PORT_ENTRY,),
                (AT_SEA, STOPPED): (PORT_ENTRY, PORT_STOP_BEGIN),
                (IN_PORT, STOPPED): (PORT_STOP_BEGIN,),
                (STOPPED, IN_PORT): (PORT_STOP_END,),
                (STOPPED, AT_SEA): (PORT_STOP_END, PORT_EXIT),
                (IN_PORT, AT_SEA): (PORT_EXIT,),
            }[(prev, state)]
            at = v.anchorage if state == AT_SEA and v.anchorage is not None else here
            events.extend(PortEvent(kind, ts, lat, lon, at) for kind in kinds)
        v.state, v.last_ts, v.last_lat, v.last_lon, v.gap_open = state, ts, lat, lon, False
        if state != AT_SEA:
            v.anchorage = here
        return events

    def gap_due(self, v: VesselPorts) -> int | None:
        """When the silence of a vessel in port becomes a gap (None: not in port, or emitted)."""
        if v.state in (IN_PORT, STOPPED) and not v.gap_open:
            return v.last_ts + self.rules.gap_ms
        return None

    def advance(self, v: VesselPorts, watermark: int) -> list[PortEvent]:
        """The gap of a vessel silent in port, once the watermark has passed its begin."""
        due = self.gap_due(v)
        if due is None or due > watermark:
            return []
        return self._gap(v, None)

    def _gap(self, v: VesselPorts, end: tuple[int, float, float, Anchorage | None] | None) -> list[PortEvent]:
        """The gap's events: its begin alone (``end`` None: the watermark passed it), or, for the
        next position ``end`` (time, place, nearest anchorage) 4 h or more after the last, its
        begin (unless emitted already) and its end."""
        anchorage = v.anchorage
        assert anchorage is not None
        begin = v.last_ts + self.rules.gap_ms
        if end is None:
            v.gap_open = True
            return [PortEvent(PORT_GAP_BEGIN, begin, v.last_lat, v.last_lon, anchorage)]
        at, lat, lon, there = end
        if at < begin:
            return []
        out = [] if v.gap_open else [PortEvent(PORT_GAP_BEGIN, begin, v.last_lat, v.last_lon, anchorage)]
        out.append(PortEvent(PORT_GAP_END, at, lat, lon, there if there is not None else anchorage))
        return out


@dataclass(slots=True)
class PortVisit:
    """A visit as the output writes it: open until its exit. It keeps the first and the last
    :data:`MAX_EVENTS` halves of its events, and the kinds of all of them (its confidence);
    ``category`` is the ship type category of its transmitter's latest position."""

    visit_id: str
    events: list[PortEvent] = field(default_factory=list)
    closed: bool = False
    category: str = "unknown"
    kinds: set[str] = field(default_factory=set)

    @property
    def start(self) -> PortEvent:
        return self.events[0]

    @property
    def last(self) -> PortEvent:
        return self.events[-1]

    @property
    def hours(self) -> float:
        return (self.last.ts - self.start.ts) / 3_600_000

    @property
    def confidence(self) -> int:
        kinds = self.kinds | {e.kind for e in self.events}
        stop_or_gap = bool(kinds & {PORT_STOP_BEGIN, PORT_STOP_END, PORT_GAP_BEGIN, PORT_GAP_END})
        entry, exit_ = PORT_ENTRY in kinds, PORT_EXIT in kinds
        if stop_or_gap and entry and exit_:
            return 4
        if stop_or_gap and (entry or exit_):
            return 3
        if stop_or_gap:
            return 2
        return 1

    def shown_events(self) -> list[PortEvent]:
        """The events a record carries: all, or the first and last :data:`MAX_EVENTS` halves."""
        if len(self.events) <= MAX_EVENTS:
            return self.events
        half = MAX_EVENTS // 2
        return self.events[:half] + self.events[-half:]


class Visits:
    """One vessel's visits from its events (in time order, and at one instant in
    :data:`EVENT_ORDER`): each event adds to the open visit, or opens one; an exit closes it.
    :meth:`add` returns the visit the event changed, to be written again under the same id."""

    def __init__(self) -> None:
        self.open: PortVisit | None = None

    def add(self, event: PortEvent, visit_id: str) -> PortVisit:
        """Add an event; ``visit_id`` names the visit it opens, if it opens one."""
        visit = self.open
        if visit is None:
            visit = self.open = PortVisit(visit_id)
        add_event(visit, event)
        if visit.closed:
            self.open = None
        return visit


def add_event(visit: PortVisit, event: PortEvent) -> None:
    """An event to a visit, which keeps the first and the last :data:`MAX_EVENTS` halves of its
    events; an exit closes it."""
    events = visit.events
    events.append(event)
    visit.kinds.add(event.kind)
    if len(events) > MAX_EVENTS:
        del events[MAX_EVENTS // 2]
    if event.kind == PORT_EXIT:
        visit.closed = True


def visit_id(mmsi: int, event: PortEvent) -> str:
    """A visit's id: its MMSI, its first event's time and anchorage (the same in every run)."""
    return record_id("port_visits", mmsi, event.ts, event.anchorage.anchorage_id)


def ports_to_list(v: VesselPorts) -> list[Any]:
    """A transmitter's port state, compact: its place in the rule, last position, anchorage, gap,
    and open visit (its events' anchorages once each, the events by index)."""
    anchorages: list[Anchorage] = []
    ref = functools.partial(_anchorage_ref, anchorages, {})
    visit = None
    if v.visit is not None:
        vis = v.visit
        events = [[EVENT_ORDER.index(e.kind), e.ts, e.lat, e.lon, ref(e.anchorage)] for e in vis.events]
        visit = [vis.visit_id, vis.category, sorted(EVENT_ORDER.index(k) for k in vis.kinds), events]
    at = ref(v.anchorage)
    rows = [[a.anchorage_id, a.lat, a.lon, a.label, a.sublabel, a.iso3] for a in anchorages]
    return [v.state, v.last_ts, v.last_lat, v.last_lon, at, v.gap_open, rows, visit]


def ports_from_list(row: list[Any]) -> VesselPorts:
    state, last_ts, lat, lon, at, gap_open, places, visit_row = row
    anchorages = [Anchorage(*p) for p in places]
    v = VesselPorts(state, last_ts, lat, lon, anchorages[at] if at >= 0 else None, gap_open)
    if visit_row is not None:
        vid, category, kinds, events = visit_row
        v.visit = PortVisit(
            vid,
            [PortEvent(EVENT_ORDER[k], ts, la, lo, anchorages[a]) for k, ts, la, lo, a in events],
            category=category,
            kinds={EVENT_ORDER[k] for k in kinds},
        )
    return v


def _anchorage_ref(anchorages: list[Anchorage], index: dict[Anchorage, int], a: Anchorage | None) -> int:
    """An anchorage's place in a state's list of them (added the first time), -1 for none."""
    if a is None:
        return -1
    if a not in index:
        index[a] = len(anchorages)
        anchorages.append(a)
    return index[a]


class PortVisits:
    """The rule for one transmitter's accepted positions: its events, into visits. Each call
    returns the records of the visits its events changed (open, or closed by an exit), each
    written again under its id, with whether it is open."""

    def __init__(self, anchorages: Anchorages, rules: PortRules = PortRules()) -> None:
        self.events = PortEvents(anchorages, rules)
        self.rules = rules

    def position(self, v: VesselPorts, mmsi: int, fix: TrackFix) -> list[tuple[str, bool]]:
        """An accepted fix (its time, place, speed and category) to its transmitter."""
        sog = fix.sog_sum / 1000 if fix.sog_n else None
        changed = self._visits(v, mmsi, self.events.position(v, fix.ts, fix.lat, fix.lon, sog))
        for visit in [*changed, v.visit]:
            if visit is not None:
                visit.category = fix.category
        return [(port_visit_json(visit, mmsi, fix.ts), not visit.closed) for visit in changed]

    def gap_due(self, v: VesselPorts) -> int | None:
        """When the transmitter's port gap begins (None: not in port, or begun)."""
        return self.events.gap_due(v)

    def advance(self, v: VesselPorts, mmsi: int, watermark: int, as_of: int) -> list[tuple[str, bool]]:
        """The transmitter's port gap, if the watermark has passed its begin: its records."""
        changed = self._visits(v, mmsi, self.events.advance(v, watermark))
        return [(port_visit_json(visit, mmsi, as_of), not visit.closed) for visit in changed]

    def _visits(self, v: VesselPorts, mmsi: int, events: list[PortEvent]) -> list[PortVisit]:
        """The events into the transmitter's visits: each to its open visit, or to a new one (an
        open visit whose last event is at an anchorage :attr:`PortRules.apart_nm` from the
        event's ends there, without an exit: a transmitter followed across a silence into
        another port)."""
        changed: list[PortVisit] = []
        for event in events:
            visit = v.visit
            if visit is not None and apart_nm(visit.last.anchorage, event.anchorage) > self.rules.apart_nm:
                visit.closed = True
                if not changed or changed[-1] is not visit:
                    changed.append(visit)
                visit = None
            if visit is None:
                visit = v.visit = PortVisit(visit_id(mmsi, event))
            add_event(visit, event)
            if visit.closed:
                v.visit = None
            if not changed or changed[-1] is not visit:
                changed.append(visit)
        return changed


def _port(prefix: str, anchorage: Anchorage | None) -> dict[str, object]:
    a = anchorage
    return {
        f"{prefix}_anchorage_id": None if a is None else a.anchorage_id,
        f"{prefix}_label": None if a is None else a.label,
        f"{prefix}_sublabel": None if a is None else a.sublabel,
        f"{prefix}_iso3": None if a is None else a.iso3,
    }


def port_visit_json(visit: PortVisit, mmsi: int, as_of: int) -> str:
    """A port visit's record, flat but for its events: the same ``id`` from its first event to
    its exit (a store that upserts on it holds every vessel in port now, and each visit closed in
    the end); its port (``lat``, ``lon``, ``start_*``: the anchorage of its first event) and,
    closed, the anchorage it left from (``end_*``, its exit's); start and end time (end null while
    open), hours from its first event to its last, GFW's confidence, and its events (the first and
    last hundred of more), each with its time, the vessel's position and the anchorage; ``as_of``
    the event time the record was written at (a position's, or the watermark that began a port
    gap)."""
    start, last = visit.start, visit.last
    closed = visit.closed
    return json.dumps(
        {
            "id": visit.visit_id,
            "mmsi": mmsi,
            "ship_type": visit.category,
            "lat": start.anchorage.lat,
            "lon": start.anchorage.lon,
            **_port("start", start.anchorage),
            **_port("end", last.anchorage if closed else None),
            "start_time": iso_ms(start.ts),
            "end_time": iso_ms(last.ts) if closed else None,
            "hours": round(visit.hours, 3),
            "confidence": visit.confidence,
            "events": [
                {
                    "type": e.kind,
                    "time": iso_ms(e.ts),
                    "lat": e.lat,
                    "lon": e.lon,
                    "anchorage_id": e.anchorage.anchorage_id,
                }
                for e in visit.shown_events()
            ],
            "open": not closed,
            "as_of": iso_ms(as_of),
        },
        separators=(",", ":"),
        ensure_ascii=False,
    )
