"""Encounters: two vessels together at sea, as Global Fishing Watch's ``pipe-encounters``
(Apache-2.0) finds them, and Miller et al. 2018 ("Identifying global patterns of transshipment
behavior", Frontiers in Marine Science 5:240) describes them. The plain reference: each step is
a small function or class that the job's operators run the same way.

- **Resample** (``transforms/resample.py``, without extrapolation): each track's kept positions
  are interpolated onto the clock's marks every :attr:`EncounterRules.step_ms` (10 minutes); no
  mark is made between two positions :attr:`EncounterRules.max_gap_ms` apart or more (an hour),
  none before the first position or after the last. A mark carries its point density: the step
  over the time between the positions around it, at most 1, rounded to 2 decimals.
- **Adjacency** (``transforms/compute_adjacency.py``): at each mark, each vessel's neighbours
  within :attr:`EncounterRules.adjacency_km` (1 km), by haversine distance, the nearest first,
  at most :attr:`EncounterRules.max_neighbours`. GFW finds candidates through S2 level-12 cells
  and their neighbours; :class:`MarkIndex` is a latitude-longitude grid whose cells are as tall as
  the adjacency distance (the exact distance decides, so any index finding every candidate gives
  the same neighbours).
- **Runs** (``transforms/compute_encounters.py``): for each vessel, a run per neighbour that is
  within :attr:`EncounterRules.encounter_km` (0.5 km) at each of the vessel's marks in a row; the
  run ends at the vessel's first mark without it. A run of two marks or more lasting
  :attr:`EncounterRules.min_minutes` (120) or more is a raw encounter, seen from that vessel: its
  mean position, median distance, median implied speed (between its consecutive marks) and each
  vessel's point count (the sum of its marks' densities, rounded). Each vessel of a pair sees the
  encounter from its side.
- **Merge** (``transforms/merge_encounters.py``): the raw encounters of a pair (either side)
  less than :attr:`EncounterRules.merge_hours` (4) apart are one encounter: its time is theirs,
  its position their mean weighted by duration, its median speed and distance the median of
  theirs, its point counts their sums.
- **Published** (GFW's events): an encounter of :attr:`EncounterRules.min_minutes` or more whose
  median speed is under :attr:`EncounterRules.max_speed_kn` (2 knots) and whose mean position
  is :attr:`EncounterRules.min_port_km` (10 km) or more from the nearest anchorage.
"""

from __future__ import annotations

import heapq
import itertools
import json
import math
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from statistics import mean, median
from typing import Any

from ais_pipeline.rules.outputs import iso_ms, record_id

EARTH_RADIUS_KM = 6371.0
KM_PER_DEGREE = 2 * math.pi * EARTH_RADIUS_KM / 360
MPS_TO_KNOTS = 1.94384  # GFW's factor


@dataclass(frozen=True, slots=True)
class EncounterRules:
    """GFW's thresholds (``create_raw_pipeline.py``, its create and merge options, the events'
    filters); every one is a flag."""

    step_ms: int = 600_000  # RESAMPLE_INCREMENT_MINUTES, 10
    max_gap_ms: int = 3_600_000  # MAX_GAP_HOURS, 1: no mark across a silence this long
    adjacency_km: float = 1.0  # neighbours looked at each mark
    encounter_km: float = 0.5  # max_encounter_dist_km
    min_minutes: float = 120.0  # min_encounter_time_minutes
    merge_hours: float = 4.0  # min_hours_between_encounters
    max_speed_kn: float = 2.0  # the published events' median speed, under
    min_port_km: float = 10.0  # the published events' distance from the nearest anchorage
    max_neighbours: int = 100  # max_tracked_distances
    # A track silent this long has ended, and its runs with it (gpsdio-segment's max_hours, which
    # the tracks' lineages follow): GFW's runs go on across the resampling's gaps, within a day.
    track_end_ms: int = 24 * 3_600_000


@dataclass(frozen=True, slots=True)
class Fix:
    """A kept position of a track: ``track`` names the transmitter (its MMSI and lineage)."""

    track: str
    ts: int  # ms
    lat: float
    lon: float
    speed: float = 0.0
    category: str = ""  # the vessel's ship type category, carried to its marks


@dataclass(frozen=True, slots=True)
class Mark:
    """A track's place at one of the clock's marks, interpolated."""

    track: str
    ts: int
    lat: float
    lon: float
    speed: float
    density: float
    category: str = ""


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """GFW's ``compute_distance``."""
    h = (
        math.sin(0.5 * math.radians(lat2 - lat1)) ** 2
        + math.cos(math.radians(lat1)) * math.cos(math.radians(lat2)) * math.sin(0.5 * math.radians(lon2 - lon1)) ** 2
    )
    return 2 * EARTH_RADIUS_KM * math.asin(math.sqrt(min(h, 1.0)))


@dataclass(slots=True)
class Resampler:
    """One track's marks as its fixes come in time order (a fix not after the last is ignored)."""

    rules: EncounterRules = EncounterRules()
    last: Fix | None = None
    first: bool = True  # the last fix is the track's first: a mark at its very time is made
    name: str = ""  # the track's, in the job

    def add(self, fix: Fix) -> list[Mark]:
        last = self.last
        if last is not None and fix.ts <= last.ts:
            return []
        self.last = fix
        if last is None:
            return []
        step = self.rules.step_ms
        first, self.first = self.first, False
        span = fix.ts - last.ts
        if span >= self.rules.max_gap_ms:
            return []
        t = -(-last.ts // step) * step  # the first mark at or after the last fix
        if t == last.ts and not first:
            t += step  # a mark at a fix's time is made between it and the fix before it
        density = round(step / max(span, step), 2)
        marks = []
        while t <= fix.ts:
            mix = (t - last.ts) / span
            marks.append(
                Mark(
                    last.track,
                    t,
                    fix.lat * mix + last.lat * (1 - mix),
                    fix.lon * mix + last.lon * (1 - mix),
                    fix.speed * mix + last.speed * (1 - mix),
                    density,
                    fix.category,
                )
            )
            t += step
        return marks


def resample(fixes: Iterable[Fix], rules: EncounterRules = EncounterRules()) -> Iterator[Mark]:
    """Every track's marks (``fixes`` in time order within each track)."""
    tracks: dict[str, Resampler] = {}
    for fix in fixes:
        resampler = tracks.get(fix.track)
        if resampler is None:
            resampler = tracks[fix.track] = Resampler(rules)
        yield from resampler.add(fix)


class MarkIndex:
    """The marks of one time in a latitude-longitude grid whose rows are as tall as the
    adjacency distance: a neighbour is in the row above, the same or the one below, and in as
    many columns either side as that distance spans at those latitudes (across the antimeridian
    too)."""

    def __init__(self, km: float) -> None:
        self.km = km
        self.size = km / KM_PER_DEGREE  # degrees
        self.columns = max(1, int(360 / self.size))
        self.cells: dict[tuple[int, int], list[Mark]] = defaultdict(list)

    def _cell(self, lat: float, lon: float) -> tuple[int, int]:
        return int((lat + 90) // self.size), int((lon + 180) // self.size) % self.columns

    def add(self, mark: Mark) -> None:
        self.cells[self._cell(mark.lat, mark.lon)].append(mark)

    def near(self, lat: float, lon: float) -> Iterator[Mark]:
        row, column = self._cell(lat, lon)
        nearest_pole = min(90.0, abs(lat) + 2 * self.size)
        cos = math.cos(math.radians(nearest_pole))
        span = self.columns if cos < 0.01 else min(self.columns, int(self.size / (self.size * cos)) + 2)
        columns = range(self.columns) if 2 * span + 1 >= self.columns else range(column - span, column + span + 1)
        for r in (row - 1, row, row + 1):
            for c in columns:
                yield from self.cells.get((r, c % self.columns), ())


def neighbours(
    marks: list[Mark], rules: EncounterRules = EncounterRules(), own: Collection[str] | None = None
) -> dict[str, list[tuple[float, Mark]]]:
    """Each track's neighbours at one mark (``marks`` all of one time; only the tracks in ``own``
    when given): those within the adjacency distance, nearest first (ties in the order of their
    tracks' names), at most :attr:`EncounterRules.max_neighbours`."""
    index = MarkIndex(rules.adjacency_km)
    for m in marks:
        index.add(m)
    out: dict[str, list[tuple[float, Mark]]] = {}
    for m in sorted(marks, key=lambda m: m.track):
        if own is not None and m.track not in own:
            continue
        near = []
        for other in index.near(m.lat, m.lon):
            if other.track != m.track:
                d = haversine_km(m.lat, m.lon, other.lat, other.lon)
                if d <= rules.adjacency_km:
                    near.append((d, other))
        near.sort(key=lambda n: (n[0], n[1].track))
        out[m.track] = near[: rules.max_neighbours]
    return out


@dataclass(frozen=True, slots=True)
class RawEncounter:
    """A run of one track's marks beside another's, seen from the first (GFW's RawEncounter)."""

    track_1: str
    track_2: str
    start: int
    end: int
    mean_lat: float
    mean_lon: float
    median_distance_km: float
    median_speed_kn: float
    points_1: int
    points_2: int
    start_lat: float
    start_lon: float
    end_lat: float
    end_lon: float

    @property
    def seconds(self) -> float:
        return (self.end - self.start) / 1000


Step = tuple[Mark, Mark, float]  # the track's mark, the neighbour's, their distance


def implied_speed_kn(a: Mark, b: Mark) -> float:
    return 1000 * haversine_km(a.lat, a.lon, b.lat, b.lon) / ((b.ts - a.ts) / 1000) * MPS_TO_KNOTS


def mean_lon(lons: Iterable[float]) -> float:
    """The mean of longitudes on the circle (the antimeridian is no jump)."""
    lons = list(lons)
    cos = mean(math.cos(math.radians(x)) for x in lons)
    sin = mean(math.sin(math.radians(x)) for x in lons)
    return math.degrees(math.atan2(sin, cos))


def raw_encounter(run: list[Step], rules: EncounterRules = EncounterRules()) -> RawEncounter | None:
    """A run as a raw encounter, if it is one: two marks or more, lasting the minimum or more."""
    if len(run) < 2:
        return None
    first, last = run[0][0], run[-1][0]
    if (last.ts - first.ts) < rules.min_minutes * 60_000:
        return None
    speeds = [implied_speed_kn(a[0], b[0]) for a, b in itertools.pairwise(run)]
    return RawEncounter(
        track_1=first.track,
        track_2=run[0][1].track,
        start=first.ts,
        end=last.ts,
        mean_lat=mean(m.lat for m, _, _ in run),
        mean_lon=mean_lon(m.lon for m, _, _ in run),
        median_distance_km=median(d for _, _, d in run),
        median_speed_kn=median(speeds),
        points_1=round(sum(m.density for m, _, _ in run)),
        points_2=round(sum(n.density for _, n, _ in run)),
        start_lat=first.lat,
        start_lon=first.lon,
        end_lat=last.lat,
        end_lon=last.lon,
    )


@dataclass(slots=True)
class Runs:
    """One track's runs beside its neighbours, as its marks come in time order."""

    rules: EncounterRules = EncounterRules()
    open: dict[str, list[Step]] = field(default_factory=dict)
    # When kept (the stream's tracks keep them), what happened, in order: a run began beside a
    # track ("start", track, time), a run ended too short to be an encounter ("short", track,
    # time), a raw encounter ended ("raw", raw encounter).
    notes: list[tuple[Any, ...]] | None = None

    def step(self, mark: Mark, near: list[tuple[float, Mark]]) -> list[RawEncounter]:
        """The track's next mark and its neighbours then: the runs it goes on, and the raw
        encounters of the runs it ends (those of neighbours not within the encounter distance)."""
        active = set()
        for d, other in near:
            if d <= self.rules.encounter_km:
                run = self.open.get(other.track)
                if run is None:
                    run = self.open[other.track] = []
                    if self.notes is not None:
                        self.notes.append(("start", other.track, mark.ts))
                run.append((mark, other, d))
                active.add(other.track)
        return self._end(lambda track: track not in active, mark.ts)

    def finish(self, at: int = 0) -> list[RawEncounter]:
        return self._end(lambda track: True, at)

    def _end(self, ends: Callable[[str], bool], at: int) -> list[RawEncounter]:
        out = []
        for track in [t for t in self.open if ends(t)]:
            encounter = raw_encounter(self.open.pop(track), self.rules)
            if encounter is not None:
                out.append(encounter)
            if self.notes is not None:
                self.notes.append(("short", track, at) if encounter is None else ("raw", encounter))
        return out


def raw_encounters(fixes: Iterable[Fix], rules: EncounterRules = EncounterRules()) -> list[RawEncounter]:
    """Every raw encounter of the tracks' fixes, each side's (the batch form of the rule)."""
    by_time: dict[int, list[Mark]] = defaultdict(list)
    for m in resample(sorted(fixes, key=lambda f: f.ts), rules):
        by_time[m.ts].append(m)
    runs: dict[str, Runs] = {}
    out: list[RawEncounter] = []
    for ts in sorted(by_time):
        near = neighbours(by_time[ts], rules)
        for m in sorted(by_time[ts], key=lambda m: m.track):
            out += runs.setdefault(m.track, Runs(rules)).step(m, near[m.track])
    for track in sorted(runs):
        out += runs[track].finish()
    return out


@dataclass(frozen=True, slots=True)
class Encounter(RawEncounter):
    """The raw encounters of a pair merged (GFW's Encounter): ``track_1`` the lesser name; its
    fields are a raw encounter's."""

    @property
    def minutes(self) -> float:
        return (self.end - self.start) / 60_000


def merged(pair: tuple[str, str], raws: list[RawEncounter]) -> Encounter:
    """GFW's ``encounter_from_records``: the raws of one pair (``pair`` in name order) as one
    encounter; position weighted by the raws' durations."""
    sides = [(r, r.points_1, r.points_2) if r.track_1 == pair[0] else (r, r.points_2, r.points_1) for r in raws]
    total = max(sum(r.seconds for r in raws), 1)
    cos = sum(r.seconds * math.cos(math.radians(r.mean_lon)) for r in raws) / total
    sin = sum(r.seconds * math.sin(math.radians(r.mean_lon)) for r in raws) / total
    first = min(raws, key=lambda r: r.start)
    last = max(raws, key=lambda r: r.end)
    return Encounter(
        track_1=pair[0],
        track_2=pair[1],
        start=min(r.start for r in raws),
        end=max(r.end for r in raws),
        mean_lat=sum(r.seconds * r.mean_lat for r in raws) / total,
        mean_lon=math.degrees(math.atan2(sin, cos)),
        median_distance_km=median(r.median_distance_km for r in raws),
        median_speed_kn=median(r.median_speed_kn for r in raws),
        points_1=sum(p1 for _, p1, _ in sides),
        points_2=sum(p2 for _, _, p2 in sides),
        start_lat=first.start_lat,
        start_lon=first.start_lon,
        end_lat=last.end_lat,
        end_lon=last.end_lon,
    )


def merge(raws: Iterable[RawEncounter], rules: EncounterRules = EncounterRules()) -> list[Encounter]:
    """The raw encounters of each pair, either side's, less than the merge gap apart, as one."""
    pairs: dict[tuple[str, str], list[RawEncounter]] = defaultdict(list)
    for r in raws:
        pairs[(min(r.track_1, r.track_2), max(r.track_1, r.track_2))].append(r)
    gap = rules.merge_hours * 3_600_000
    out = []
    for pair in sorted(pairs):
        group: list[RawEncounter] = []
        end = -(2**62)
        for r in sorted(pairs[pair], key=lambda r: (r.start, r.end, r.track_1, r.track_2)):
            if group and r.start - end >= gap:
                out.append(merged(pair, group))
                group = []
            group.append(r)
            end = max(end, r.end)
        if group:
            out.append(merged(pair, group))
    return out


ENCOUNTERS = "encounters"  # the output
MARKS = "encounter_marks"  # the vessel operator's marks, to the encounters' steps
KM_PER_NM = 1.852


def published(encounter: Encounter, rules: EncounterRules, port_km: float | None, shore_nm: float) -> bool:
    """GFW's published encounters: long enough, slow enough, away from ports (``port_km`` the
    mean place's distance to the nearest anchorage, None when none is within reach) and at sea
    (``shore_nm`` above 0)."""
    far_from_port = port_km is None or port_km >= rules.min_port_km
    return (
        encounter.minutes >= rules.min_minutes
        and encounter.median_speed_kn < rules.max_speed_kn
        and far_from_port
        and shore_nm > 0
    )


def encounter_id(encounter: Encounter) -> str:
    """An encounter's id: its pair (in name order) and the time it began (the same in every run)."""
    return record_id(ENCOUNTERS, encounter.track_1, encounter.track_2, encounter.start)


def encounter_json(
    encounter: Encounter,
    mmsis: tuple[int, int],
    ship_types: tuple[str, str],
    port_km: float | None,
    shore_nm: float,
    is_open: bool,
    as_of: int,
    rules: EncounterRules,
    rid: str | None = None,
) -> str:
    """An encounter's record: the same ``id`` from the time it is first written (published) to its
    close; both vessels (the first the lesser track name) with their ship types and point counts,
    start and end (end null while open), mean place, median distance and speed, distance from
    shore and from the nearest port, whether GFW would publish it now, and ``as_of``."""
    return json.dumps(
        {
            "id": rid or encounter_id(encounter),
            "mmsi_1": mmsis[0],
            "mmsi_2": mmsis[1],
            "ship_type_1": ship_types[0],
            "ship_type_2": ship_types[1],
            "lat": round(encounter.mean_lat, 6),
            "lon": round(encounter.mean_lon, 6),
            "start_time": iso_ms(encounter.start),
            "end_time": None if is_open else iso_ms(encounter.end),
            "hours": round(encounter.minutes / 60, 3),
            "median_distance_km": round(encounter.median_distance_km, 4),
            "median_speed_kn": round(encounter.median_speed_kn, 3),
            "points_1": encounter.points_1,
            "points_2": encounter.points_2,
            "shore_nm": round(shore_nm, 1),
            "port_km": None if port_km is None else round(port_km, 1),
            "published": published(encounter, rules, port_km, shore_nm),
            "open": is_open,
            "as_of": iso_ms(as_of),
        },
        separators=(",", ":"),
    )


# -- the rule as a stream: cells, tracks and pairs -----------------------------------------------
# The job finds pairs across subtasks in three keyed steps, each of which this module runs the
# same way in the plain loop: a mark goes to the cell of a grid it is in (and, as a halo, to each
# neighbouring cell whose border is within the adjacency distance); a cell gives each of its own
# marks its neighbours once no mark of that time can still come; each track runs GFW's runs on its
# marks in time order; each pair merges its raw encounters.

CELL_DEG = 0.1  # the cells that key the adjacency step
CELL_COLUMNS = 3600  # 360 / CELL_DEG


def cell_of(lat: float, lon: float) -> tuple[int, int]:
    return int((lat + 90) // CELL_DEG), int((lon + 180) // CELL_DEG) % CELL_COLUMNS


def cells_of(mark: Mark, rules: EncounterRules = EncounterRules()) -> list[tuple[tuple[int, int], bool]]:
    """The cells a mark goes to: its own (True), and each neighbouring cell within the adjacency
    distance of it (False: a halo mark there, a neighbour of that cell's own marks only)."""
    row, col = cell_of(mark.lat, mark.lon)
    columns = CELL_COLUMNS
    reach_lat = rules.adjacency_km / KM_PER_DEGREE * 1.01
    cos = math.cos(math.radians(min(89.9, abs(mark.lat) + CELL_DEG)))
    reach_lon = reach_lat / max(cos, 1e-3)
    south, north = row * CELL_DEG - 90, (row + 1) * CELL_DEG - 90
    west = col * CELL_DEG - 180
    east = west + CELL_DEG
    rows = [0] + ([-1] if mark.lat - south <= reach_lat else []) + ([1] if north - mark.lat <= reach_lat else [])
    cols = [0] + ([-1] if mark.lon - west <= reach_lon else []) + ([1] if east - mark.lon <= reach_lon else [])
    out = [((row, col), True)]
    for dr in rows:
        for dc in cols:
            if (dr, dc) != (0, 0):
                out.append(((row + dr, (col + dc) % columns), False))
    return out


@dataclass(slots=True)
class CellMarks:
    """One cell's marks by time, its own and its halo, until their time is judged."""

    by_time: dict[int, list[tuple[Mark, bool]]] = field(default_factory=dict)

    def add(self, mark: Mark, own: bool) -> None:
        self.by_time.setdefault(mark.ts, []).append((mark, own))

    def judge(self, ts: int, rules: EncounterRules = EncounterRules()) -> list[tuple[Mark, list[tuple[float, Mark]]]]:
        """The cell's own marks of time ``ts``, each with its neighbours (all marks of that time
        within the adjacency distance are here, own or halo); the time forgotten."""
        entries = self.by_time.pop(ts, [])
        own = {m.track for m, is_own in entries if is_own}
        near = neighbours([m for m, _ in entries], rules, own)
        return [(m, near[m.track]) for m, is_own in entries if is_own]


@dataclass(slots=True)
class TrackRuns:
    """One track's runs as its judged marks come (in any order): taken in time order up to the
    time the watermark has judged; the runs end when the track has ended (silent a day)."""

    rules: EncounterRules = EncounterRules()
    runs: Runs = field(default_factory=Runs)
    pending: dict[int, tuple[Mark, list[tuple[float, Mark]]]] = field(default_factory=dict)
    last: int | None = None  # the last mark taken

    def add(self, mark: Mark, near: list[tuple[float, Mark]]) -> None:
        self.pending[mark.ts] = (mark, near)

    def judge(self, upto: int, ending: bool = True) -> list[RawEncounter]:
        """The marks up to ``upto`` taken in time order: the raw encounters of the runs they end;
        all runs end when the track has ended by then (unless not ``ending``: the input's end is
        no silence)."""
        out: list[RawEncounter] = []
        for ts in sorted(t for t in self.pending if t <= upto):
            if self.last is not None and ts - self.last >= self.rules.track_end_ms:
                out += self.runs.finish(self.last)
            out += self.runs.step(*self.pending.pop(ts))
            self.last = ts
        if ending and self.last is not None and upto - self.last >= self.rules.track_end_ms and not self.pending:
            out += self.runs.finish(self.last)
        return out

    def progress(self) -> list[RawEncounter]:
        """The runs going on that are raw encounters already (long enough): each so far."""
        out = []
        for run in self.runs.open.values():
            encounter = raw_encounter(run, self.rules)
            if encounter is not None:
                out.append(encounter)
        return out


Where = Callable[[float, float], tuple[float | None, float]]  # a place's (port km or None, shore nm)


@dataclass(slots=True)
class PairEncounters:
    """One pair's raw encounters (either side's) merged as they come: the ended raws of the
    encounter going on, and each side's run still going on that is long enough already. The
    encounter is written once published, and at every change after; it closes once the pair has
    been apart the merge gap (or their runs ended with their tracks)."""

    pair: tuple[str, str]
    raws: list[RawEncounter] = field(default_factory=list)
    going: dict[str, RawEncounter] = field(default_factory=dict)  # by the side's track
    end: int | None = None  # the latest end of the encounter going on
    # Each side's run going on that is not long enough yet, by the side's track: when it began.
    # One that began within the merge gap of the encounter's end keeps it from closing: it may
    # become a raw encounter that merges with it.
    short: dict[str, int] = field(default_factory=dict)

    def current(self) -> Encounter | None:
        parts = self.raws + list(self.going.values())
        return merged(self.pair, parts) if parts else None

    def add(self, raw: RawEncounter, ended: bool, rules: EncounterRules) -> Encounter | None:
        """A side's raw encounter (``ended``) or its run so far; returns the encounter it closed
        first (one whose end is the merge gap before this one's start), if any."""
        closed = None
        self.short.pop(raw.track_1, None)
        if self.end is not None and raw.start - self.end >= rules.merge_hours * 3_600_000:
            closed = self.close()
        if ended:
            self.going.pop(raw.track_1, None)
            self.raws.append(raw)
        else:
            self.going[raw.track_1] = raw
        self.end = raw.end if self.end is None else max(self.end, raw.end)
        return closed

    def due(self, rules: EncounterRules) -> int | None:
        """When the encounter going on closes if nothing more comes (None: none going on)."""
        if self.end is None or self.going:
            return None
        due = self.end + round(rules.merge_hours * 3_600_000)
        return None if any(start < due for start in self.short.values()) else due

    def close(self) -> Encounter | None:
        encounter = self.current()
        self.raws, self.going, self.end = [], {}, None
        return encounter


# -- the rule in the job: three keyed steps ------------------------------------------------------
# The job runs the stream form in three keyed operators (:mod:`ais_pipeline.functions.encounters`)
# and the plain loop runs the same steps with dicts and a heap: each transmitter's resampler (in
# the vessel operator) sends its marks to their cells; a cell judges a mark's time once the
# watermark is :attr:`EncounterSteps.wait_ms` past it (no mark of that time can still come); a
# track takes its judged marks in time order and sends each pair what its runs hold; a pair
# handles what its sides sent for one time together, on the timer of that time, so that what it
# writes does not depend on the order its sides' records came in.


def track_name(mmsi: int, lineage: int) -> str:
    """A transmitter's track: its MMSI and the lineage it was first heard with."""
    return f"{mmsi}.{lineage}"


def track_mmsi(track: str) -> int:
    return int(track.split(".", 1)[0])


def mark_to_list(m: Mark) -> list[object]:
    return [m.track, m.ts, m.lat, m.lon, m.speed, m.density, m.category]


def mark_from_list(v: list[Any]) -> Mark:
    track, ts, lat, lon, speed, density, category = v
    return Mark(str(track), int(ts), float(lat), float(lon), float(speed), float(density), str(category))


def mark_line(m: Mark) -> str:
    """A mark as the vessel operator sends it on (JSON: floats exact)."""
    return json.dumps(mark_to_list(m), separators=(",", ":"))


def cell_key(cell: tuple[int, int]) -> int:
    return cell[0] * CELL_COLUMNS + cell[1]


def to_cells(line: str, rules: EncounterRules = EncounterRules()) -> list[tuple[int, str]]:
    """A mark's line to each cell it goes to (:func:`cells_of`): the cell's key, and the line
    after ``1`` (the cell's own mark) or ``0`` (a halo mark)."""
    mark = mark_from_list(json.loads(line))
    return [(cell_key(cell), ("1" if own else "0") + line) for cell, own in cells_of(mark, rules)]


def pair_key(track_1: str, track_2: str) -> str:
    return f"{min(track_1, track_2)}|{max(track_1, track_2)}"


def raw_to_list(r: RawEncounter) -> list[object]:
    return [r.track_1, r.track_2, r.start, r.end, r.mean_lat, r.mean_lon, r.median_distance_km, r.median_speed_kn,
            r.points_1, r.points_2, r.start_lat, r.start_lon, r.end_lat, r.end_lon]  # fmt: skip


def raw_from_list(v: list[object]) -> RawEncounter:
    return RawEncounter(*v)  # type: ignore[arg-type]


@dataclass(slots=True)
class TrackState:
    """A track's runs (:class:`TrackRuns`) and the ship type categories of the tracks beside it."""

    runs: TrackRuns
    name: str = ""
    kinds: dict[str, str] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.runs.pending and not self.runs.runs.open


@dataclass(slots=True)
class PairState:
    """A pair's encounter going on (:class:`PairEncounters`), what its sides sent by the time it
    is about (until that time's timer), their categories, and the id of the encounter going on
    once it has been written."""

    encounters: PairEncounters
    items: dict[int, list[list[Any]]] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)
    written: str | None = None

    @property
    def empty(self) -> bool:
        e = self.encounters
        return not self.items and not e.raws and not e.going and not e.short and self.written is None


@dataclass(frozen=True, slots=True)
class EncounterSteps:
    """The three keyed steps of the rule, as the job's operators and the plain loop call them.
    ``wait_ms``: how far the watermark is past a mark's time when no mark of that time can still
    come (the resampling's gap, plus how long the vessel operator may hold a position before it is
    accepted)."""

    rules: EncounterRules
    wait_ms: int

    # -- cells, keyed by 0.1-degree cell -----------------------------------------------------------
    def cell_mark(self, cell: CellMarks, payload: str) -> int:
        """A mark (:func:`to_cells`) to its cell; returns the timer that judges its time."""
        mark = mark_from_list(json.loads(payload[1:]))
        cell.add(mark, payload[0] == "1")
        return mark.ts + self.wait_ms

    def cell_timer(self, cell: CellMarks, at: int) -> list[tuple[str, str]]:
        """The cell's own marks of the time judged at ``at``, each with its neighbours then: the
        mark's track and the record for it."""
        out = []
        for mark, near in cell.judge(at - self.wait_ms, self.rules):
            # Two tracks of one MMSI (a shared MMSI's transmitters) are never an encounter.
            mmsi = track_mmsi(mark.track)
            near = [(d, n) for d, n in near if track_mmsi(n.track) != mmsi]
            record = [mark_to_list(mark), [[d, mark_to_list(n)] for d, n in near]]
            out.append((mark.track, json.dumps(record, separators=(",", ":"))))
        return out

    # -- tracks, keyed by track -----------------------------------------------------------------
    def new_track(self) -> TrackState:
        return TrackState(TrackRuns(self.rules, Runs(self.rules, notes=[])))

    def track_mark(self, track: TrackState, payload: str) -> int:
        """A judged mark and its neighbours to its track; returns the timer that takes it."""
        mark_v, near_v = json.loads(payload)
        mark = mark_from_list(mark_v)
        near = [(float(d), mark_from_list(n)) for d, n in near_v]
        track.runs.add(mark, near)
        track.name = mark.track
        track.kinds[mark.track] = mark.category
        for _, n in near:
            track.kinds[n.track] = n.category
        return mark.ts + self.wait_ms

    def track_timer(self, track: TrackState, at: int, final: bool) -> tuple[list[tuple[str, str]], int | None]:
        """The track's marks judged by ``at``, in time order: for each pair, what changed (a run
        began; a run ended too short; a raw encounter ended) and each run going on that is long
        enough already, as records for the pair; and the timer of the track's end while runs are
        open (None: none). At the input's end (``final``) the track has not ended."""
        upto = at - self.wait_ms
        runs = track.runs
        runs.judge(upto, ending=not final)
        notes = runs.runs.notes or []
        runs.runs.notes = []
        items: list[list[object]] = []
        for note in notes:
            if note[0] == "raw":
                raw = note[1]
                assert isinstance(raw, RawEncounter)
                items.append(["raw", raw.track_2, [raw_to_list(raw), self._kinds(track, raw)]])
            else:
                items.append([note[0], note[1], note[2]])
        for raw in runs.progress():
            items.append(["going", raw.track_2, [raw_to_list(raw), self._kinds(track, raw)]])
        out = []
        for seq, (kind, other, body) in enumerate(items):
            record = [upto, seq, kind, track.name, other, body]
            out.append((pair_key(track.name, str(other)), json.dumps(record, separators=(",", ":"))))
        # The categories kept: the track's own and those of the tracks its runs and marks hold.
        keep = {track.name} | set(runs.runs.open) | {n.track for _, near in runs.pending.values() for _, n in near}
        track.kinds = {t: k for t, k in track.kinds.items() if t in keep}
        end = None
        if runs.runs.open and runs.last is not None:
            end = runs.last + self.rules.track_end_ms + self.wait_ms
        return out, end if end is not None and end > at else None

    @staticmethod
    def _kinds(track: TrackState, raw: RawEncounter) -> list[str]:
        return [track.kinds.get(raw.track_1, ""), track.kinds.get(raw.track_2, "")]

    # -- pairs, keyed by pair -------------------------------------------------------------------
    def new_pair(self, key: str) -> PairState:
        a, b = key.split("|")
        return PairState(PairEncounters((a, b)))

    def pair_item(self, pair: PairState, payload: str) -> int:
        """What a side sent about one time; returns the timer that handles that time."""
        upto, *item = json.loads(payload)
        pair.items.setdefault(upto, []).append(item)
        return int(upto) + self.wait_ms

    def pair_timer(
        self, pair: PairState, at: int, final: bool, where: Where
    ) -> tuple[list[tuple[str, bool]], int | None]:
        """What the pair's sides sent about the time of ``at``, each side's in the order it sent
        them (the lesser track first): the records written (an encounter's, and whether it is
        open), and the timer of the encounter's close if nothing more comes (None: none). An
        encounter is written open once it is published (its record says so), and closed once the
        pair has been apart the merge gap (or both tracks ended) if it was written or is published
        then; the input's end (``final``) closes nothing."""
        upto = at - self.wait_ms
        rules, enc = self.rules, pair.encounters
        out: list[tuple[str, bool]] = []
        items = pair.items.pop(upto, [])
        items.sort(key=lambda i: (str(i[2]), int(i[0])))
        for _, kind, side, _, body in items:
            if kind == "start":
                enc.short[str(side)] = int(body)
            elif kind == "short":
                enc.short.pop(str(side), None)
            else:
                raw_v, kinds = body
                raw = raw_from_list(raw_v)
                pair.kinds[raw.track_1], pair.kinds[raw.track_2] = kinds
                closed = enc.add(raw, kind == "raw", rules)
                if closed is not None:
                    out += self._closed(pair, closed, upto, where)
        due = enc.due(rules)
        if due is not None and due <= upto and not final:
            closed = enc.close()
            if closed is not None:
                out += self._closed(pair, closed, upto, where)
        current = enc.current()
        if current is not None and pair.written is None:
            port_km, shore_nm = where(current.mean_lat, current.mean_lon)
            if published(current, rules, port_km, shore_nm):
                pair.written = encounter_id(current)
                out.append((self._json(pair, current, port_km, shore_nm, True, upto, pair.written), True))
        due = enc.due(rules)
        return out, None if due is None or due + self.wait_ms <= at else due + self.wait_ms

    def _closed(self, pair: PairState, encounter: Encounter, upto: int, where: Where) -> list[tuple[str, bool]]:
        port_km, shore_nm = where(encounter.mean_lat, encounter.mean_lon)
        written, pair.written = pair.written, None
        if written is None and not published(encounter, self.rules, port_km, shore_nm):
            return []
        record_id = written or encounter_id(encounter)
        return [(self._json(pair, encounter, port_km, shore_nm, False, upto, record_id), False)]

    def _json(
        self, pair: PairState, e: Encounter, port_km: float | None, shore_nm: float, is_open: bool, as_of: int, rid: str
    ) -> str:
        mmsis = (track_mmsi(e.track_1), track_mmsi(e.track_2))
        kinds = (pair.kinds.get(e.track_1, ""), pair.kinds.get(e.track_2, ""))
        return encounter_json(e, mmsis, kinds, port_km, shore_nm, is_open, as_of, self.rules, rid)


class EncounterFlow:
    """The three steps as the plain loop runs them: dicts for keyed state, and per step a heap of
    (time, key) timers fired when the watermark reaches that step, after the step before it has
    fired its own and sent on what they emitted (as Flink forwards a watermark)."""

    KINDS = ("cells", "tracks", "pairs")

    def __init__(self, steps: EncounterSteps, where: Where) -> None:
        self.steps, self.where = steps, where
        self.cells: dict[int, CellMarks] = {}
        self.tracks: dict[str, TrackState] = {}
        self.pairs: dict[str, PairState] = {}
        self._timers: dict[str, list[tuple[int, object]]] = {k: [] for k in self.KINDS}
        self._queued: dict[str, set[tuple[int, object]]] = {k: set() for k in self.KINDS}
        self.records: list[tuple[str, bool]] = []  # what the pairs wrote, drained by the caller

    def _timer(self, kind: str, at: int, key: object) -> None:
        if (at, key) not in self._queued[kind]:
            self._queued[kind].add((at, key))
            heapq.heappush(self._timers[kind], (at, key))  # type: ignore[misc]

    def mark(self, line: str) -> None:
        """A mark the vessel operator sent (:func:`mark_line`)."""
        for key, payload in to_cells(line, self.steps.rules):
            cell = self.cells.setdefault(key, CellMarks())
            self._timer("cells", self.steps.cell_mark(cell, payload), key)

    def advance(self, watermark: int, final: bool = False) -> None:
        steps = self.steps
        for kind in self.KINDS:
            heap = self._timers[kind]
            while heap and heap[0][0] <= watermark:
                at, key = heapq.heappop(heap)
                self._queued[kind].discard((at, key))
                if kind == "cells":
                    cell = self.cells.get(key) or CellMarks()  # type: ignore[call-overload]
                    for track, payload in steps.cell_timer(cell, at):
                        state = self.tracks.get(track) or self.tracks.setdefault(track, steps.new_track())
                        self._timer("tracks", steps.track_mark(state, payload), track)
                    if not cell.by_time:
                        self.cells.pop(key, None)  # type: ignore[call-overload]
                elif kind == "tracks":
                    state = self.tracks.get(key) or steps.new_track()  # type: ignore[call-overload]
                    sent, end = steps.track_timer(state, at, final)
                    for pair, payload in sent:
                        p = self.pairs.get(pair) or self.pairs.setdefault(pair, steps.new_pair(pair))
                        self._timer("pairs", steps.pair_item(p, payload), pair)
                    if end is not None:
                        self._timer("tracks", end, key)
                    if state.empty:
                        self.tracks.pop(key, None)  # type: ignore[call-overload]
                else:
                    p = self.pairs.get(key) or steps.new_pair(key)  # type: ignore[call-overload,arg-type]
                    written, due = steps.pair_timer(p, at, final, self.where)
                    self.records += written
                    if due is not None:
                        self._timer("pairs", due, key)
                    if p.empty:
                        self.pairs.pop(key, None)  # type: ignore[call-overload]


# -- the steps' keyed state, as JSON text (Flink keeps it; readable by the next version) --------


def cell_to_json(cell: CellMarks) -> str:
    return json.dumps([[ts, [[own, mark_to_list(m)] for m, own in entries]] for ts, entries in cell.by_time.items()])


def cell_from_json(text: str) -> CellMarks:
    return CellMarks(
        {int(ts): [(mark_from_list(m), bool(own)) for own, m in entries] for ts, entries in json.loads(text)}
    )


def track_to_json(track: TrackState) -> str:
    runs = track.runs
    return json.dumps(
        {
            "name": track.name,
            "kinds": track.kinds,
            "last": runs.last,
            "open": {
                t: [[mark_to_list(a), mark_to_list(b), d] for a, b, d in steps] for t, steps in runs.runs.open.items()
            },
            "pending": [
                [mark_to_list(m), [[d, mark_to_list(n)] for d, n in near]] for m, near in runs.pending.values()
            ],
        }
    )


def track_from_json(text: str, rules: EncounterRules) -> TrackState:
    v = json.loads(text)
    runs = Runs(rules, {t: [(mark_from_list(a), mark_from_list(b), float(d)) for a, b, d in steps]
                        for t, steps in v["open"].items()}, notes=[])  # fmt: skip
    pending = {}
    for m, near in v["pending"]:
        mark = mark_from_list(m)
        pending[mark.ts] = (mark, [(float(d), mark_from_list(n)) for d, n in near])
    return TrackState(TrackRuns(rules, runs, pending, v["last"]), v["name"], v["kinds"])


def pair_to_json(pair: PairState) -> str:
    e = pair.encounters
    return json.dumps(
        {
            "pair": list(e.pair),
            "raws": [raw_to_list(r) for r in e.raws],
            "going": {t: raw_to_list(r) for t, r in e.going.items()},
            "end": e.end,
            "short": e.short,
            "items": [[upto, items] for upto, items in pair.items.items()],
            "kinds": pair.kinds,
            "written": pair.written,
        }
    )


def pair_from_json(text: str) -> PairState:
    v = json.loads(text)
    a, b = v["pair"]
    encounters = PairEncounters(
        (a, b), [raw_from_list(r) for r in v["raws"]], {t: raw_from_list(r) for t, r in v["going"].items()},
        v["end"], {t: int(s) for t, s in v["short"].items()},
    )  # fmt: skip
    return PairState(encounters, {int(upto): items for upto, items in v["items"]}, v["kinds"], v["written"])
