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
  port, at its first event) and ends at an exit. Confidence 4: a stop or a gap, an entry and an
  exit; 3: a stop or a gap and an entry or an exit; 2: a stop or a gap only; 1: an entry or an
  exit only. Its hours are its first event to its last. A visit keeps at most
  :data:`MAX_EVENTS` events: the first and the last half of them.

Positions are taken in event time order; one older than the vessel's last is left out of the
rule (the tracks release a vessel's accepted fixes in time order).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

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


@dataclass(frozen=True, slots=True)
class Anchorage:
    anchorage_id: str  # GFW's s2id (the level-14 S2 cell token), or a user list's own id
    lat: float
    lon: float
    label: str
    sublabel: str = ""
    iso3: str = ""


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
        self.count = 0
        for p in points:
            self.cells[self._cell(p.lat, p.lon)].append(p)
            self.count += 1
        self.lon_cells = round(360 / CELL_DEG)

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

    def nearest(self, lat: float, lon: float, within_km: float) -> tuple[Anchorage, float] | None:
        """The nearest anchorage within ``within_km`` and its distance; None when there is none."""
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


@dataclass(frozen=True, slots=True)
class PortEvent:
    kind: str
    ts: int  # event time, ms
    lat: float  # the vessel's position
    lon: float
    anchorage: Anchorage


@dataclass(slots=True)
class VesselPorts:
    """One vessel's state for the rule: where it is (None before its first position), its last
    position in the rule, the anchorage nearest its last position in port, and whether the gap
    of its silence in port was emitted already."""

    state: str | None = None
    last_ts: int = 0
    last_lat: float = 0.0
    last_lon: float = 0.0
    anchorage: Anchorage | None = None
    gap_open: bool = False


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
    """A visit as the output writes it: open until its exit (``end`` None)."""

    visit_id: str
    events: list[PortEvent] = field(default_factory=list)
    closed: bool = False

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
        kinds = {e.kind for e in self.events}
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
        visit.events.append(event)
        if event.kind == PORT_EXIT:
            visit.closed = True
            self.open = None
        return visit
