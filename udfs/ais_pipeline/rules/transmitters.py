"""A vessel's transmitters, for the rules that follow one transmitter across silences: port
visits (:mod:`ais_pipeline.rules.ports`), loitering (:mod:`ais_pipeline.rules.loitering`) and
the encounters' resampling (:mod:`ais_pipeline.rules.encounters`: each transmitter is a track,
named by its MMSI and the lineage it was first heard with, whose marks go on to the encounters'
keyed steps).

The tracks tell the transmitters of an MMSI apart: each accepted fix carries its lineage
(:attr:`ais_pipeline.rules.tracks.Fix.lineage`), which follows one transmitter across silences
of up to a day. A fix of a lineage these rules have not seen takes over the state of a
transmitter of the same MMSI that no lineage follows any more, the one it could have reached
(the tracks' speed rule) with the best lineage score, near and recent: a vessel heard again in
port after two days' silence ends its port gap, rather than arriving, and a vessel drifting
through a long silence goes on loitering. An MMSI keeps at most :data:`MAX_TRANSMITTERS`; one
no lineage follows is forgotten its TTL (``--gap-ttl``) after its last position.

Positions are taken in event time order; one not after the transmitter's last is left out of
the loitering rule (and of the port rule when older).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from ais_pipeline.rules.encounters import MARKS, EncounterRules, Resampler, mark_line, track_name
from ais_pipeline.rules.encounters import Fix as MarkFix
from ais_pipeline.rules.loitering import LOITERING, Loitering, LoiteringTrack
from ais_pipeline.rules.ports import PortVisits, VesselPorts, ports_from_list, ports_to_list
from ais_pipeline.rules.tracks import MAX_KNOTS, NOISE_M, distance_nm, lineage_score
from ais_pipeline.rules.tracks import Fix as TrackFix

MAX_TRANSMITTERS = 8  # transmitters kept per MMSI
PORT_VISITS = "port_visits"  # the output


@dataclass(slots=True)
class Transmitter:
    """One transmitter's state: its last position (``heard`` once it has one), and each rule's."""

    heard: bool = False
    last_ts: int = 0
    last_lat: float = 0.0
    last_lon: float = 0.0
    ports: VesselPorts = field(default_factory=VesselPorts)
    loitering: LoiteringTrack = field(default_factory=LoiteringTrack)
    marks: Resampler | None = None  # the encounters' resampling (encounters on), its track named

    def to_list(self) -> list[Any]:
        out = [self.heard, self.last_ts, self.last_lat, self.last_lon, ports_to_list(self.ports),
               self.loitering.to_list()]  # fmt: skip
        if self.marks is not None:
            out.append(resampler_to_list(self.marks))
        return out

    @classmethod
    def from_list(cls, v: list[Any]) -> Transmitter:
        heard, last_ts, lat, lon, ports, loitering = v[:6]
        marks = resampler_from_list(v[6]) if len(v) > 6 else None  # none written before the encounters
        return cls(heard, last_ts, lat, lon, ports_from_list(ports), LoiteringTrack.from_list(loitering), marks)


def resampler_to_list(r: Resampler) -> list[Any]:
    last = r.last
    if last is None:
        return [r.name]
    return [r.name, r.first, last.ts, last.lat, last.lon, last.category]


def resampler_from_list(v: list[Any]) -> Resampler:
    if len(v) == 1:
        return Resampler(name=v[0])
    name, first, ts, lat, lon, category = v
    return Resampler(last=MarkFix(name, ts, lat, lon, 0.0, category), first=first, name=name)


@dataclass
class VesselTransmitters:
    """One MMSI's transmitters: their states by lineage."""

    by_lineage: dict[int, Transmitter] = field(default_factory=dict)

    def take(
        self, lineage: int, ts: int, lat: float, lon: float, alive: Collection[int], max_knots: float, noise_nm: float
    ) -> Transmitter:
        """The state of a fix's transmitter: its lineage's, or the state of a transmitter no
        lineage follows any more (``alive``: the lineages the tracks follow) that the fix could
        have reached, the best by lineage score, or a new one."""
        found = self.by_lineage.get(lineage)
        if found is not None:
            return found
        here = TrackFix(ts, lat, lon, "", "")
        best: tuple[float, int] | None = None
        for key, t in self.by_lineage.items():
            if key in alive or not t.heard or t.last_ts > ts:
                continue
            last = TrackFix(t.last_ts, t.last_lat, t.last_lon, "", "")
            d = distance_nm(last, here)
            if max_knots > 0 and d > max_knots * (ts - t.last_ts) / 3_600_000 + noise_nm:
                continue
            score = lineage_score(d, (ts - t.last_ts) / 3_600_000)
            if best is None or score > best[0]:
                best = (score, key)
        found = Transmitter() if best is None else self.by_lineage.pop(best[1])
        self.by_lineage[lineage] = found
        if len(self.by_lineage) > MAX_TRANSMITTERS:  # the one heard longest ago, not followed if any
            drop = min((k for k in self.by_lineage if k != lineage),
                       key=lambda k: (k in alive, self.by_lineage[k].last_ts))  # fmt: skip
            del self.by_lineage[drop]
        return found

    def forget(self, watermark: int, alive: Collection[int], ttl_ms: int) -> None:
        """Drop the states no lineage follows whose last position is ``ttl_ms`` behind."""
        gone = [k for k, t in self.by_lineage.items() if k not in alive and t.last_ts + ttl_ms < watermark]
        for k in gone:
            del self.by_lineage[k]

    @property
    def empty(self) -> bool:
        return not self.by_lineage

    @property
    def newest(self) -> int:
        return max(t.last_ts for t in self.by_lineage.values())

    # -- state -------------------------------------------------------------------------------
    def to_list(self) -> list[Any]:
        """The state, compact: per transmitter its lineage and :meth:`Transmitter.to_list`."""
        return [[lineage, *t.to_list()] for lineage, t in self.by_lineage.items()]

    @classmethod
    def from_list(cls, rows: list[Any]) -> VesselTransmitters:
        vessel = cls()
        for row in rows:
            if len(row) == 9:  # written when the port visits alone followed transmitters
                ports = ports_from_list(row[1:])
                t = Transmitter(ports.state is not None, ports.last_ts, ports.last_lat, ports.last_lon, ports)
            else:
                t = Transmitter.from_list(row[1:])
            vessel.by_lineage[row[0]] = t
        return vessel


Record = tuple[str, str, bool]  # an output's name, a record's JSON, whether what it holds is open


class TransmitterRules:
    """The rules per transmitter (each None when off) on a vessel's accepted positions, and the
    timer step of its silences; each call returns the records of what changed."""

    def __init__(
        self,
        ports: PortVisits | None,
        loitering: Loitering | None,
        ttl_ms: int,
        max_knots: float = MAX_KNOTS,
        noise_m: float = NOISE_M,
        encounters: EncounterRules | None = None,
    ) -> None:
        self.ports = ports
        self.loitering = loitering
        self.encounters = encounters
        self.ttl_ms = ttl_ms  # a transmitter no lineage follows is kept this long after its last position
        self.max_knots = max_knots
        self.noise_nm = noise_m / 1852

    def position(self, vessel: VesselTransmitters, mmsi: int, fix: TrackFix, alive: Collection[int]) -> list[Record]:
        """An accepted fix (its lineage, time, place, speed and category) to its transmitter."""
        t = vessel.take(fix.lineage, fix.ts, fix.lat, fix.lon, alive, self.max_knots, self.noise_nm)
        out: list[Record] = []
        if self.ports is not None:
            out += [(PORT_VISITS, r, o) for r, o in self.ports.position(t.ports, mmsi, fix)]
        after = not t.heard or fix.ts > t.last_ts
        if self.loitering is not None and after:
            before = (t.last_ts, t.last_lat, t.last_lon) if t.heard else None
            records = self.loitering.position(t.loitering, before, fix.ts, fix.lat, fix.lon, fix.category, mmsi)
            out += [(LOITERING, r, o) for r, o in records]
        if self.encounters is not None and after:
            if t.marks is None:
                t.marks = Resampler(self.encounters, name=track_name(mmsi, fix.lineage))
            t.marks.rules = self.encounters  # the run's (a state read back holds none)
            point = MarkFix(t.marks.name, fix.ts, fix.lat, fix.lon, 0.0, fix.category)
            out += [(MARKS, mark_line(m), False) for m in t.marks.add(point)]
        if after:
            t.heard, t.last_ts, t.last_lat, t.last_lon = True, fix.ts, fix.lat, fix.lon
        return out

    def due(self, vessel: VesselTransmitters) -> int | None:
        """When the next of the vessel's transmitters' silences is due (a port gap's begin, a
        loitering track's end; None: none)."""
        dues: list[int] = []
        for t in vessel.by_lineage.values():
            if self.ports is not None and (d := self.ports.gap_due(t.ports)) is not None:
                dues.append(d)
            if self.loitering is not None and (d := self.loitering.due(t.loitering)) is not None:
                dues.append(d)
        return min(dues) if dues else None

    def advance(
        self, vessel: VesselTransmitters, mmsi: int, known: int, as_of: int, alive: Collection[int]
    ) -> list[Record]:
        """The silences the watermark has passed (``known``: no position before it can still be
        accepted), written at ``as_of``; the transmitters past their TTL forgotten."""
        out: list[Record] = []
        for t in vessel.by_lineage.values():
            if self.ports is not None:
                out += [(PORT_VISITS, r, o) for r, o in self.ports.advance(t.ports, mmsi, known, as_of)]
            if self.loitering is not None:
                out += [(LOITERING, r, o) for r, o in self.loitering.end(t.loitering, known, mmsi, as_of)]
        vessel.forget(known, alive, self.ttl_ms)
        return out
