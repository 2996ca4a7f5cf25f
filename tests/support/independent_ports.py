"""GFW's port visits computed independently of the job's code, for the tests: from one
transmitter's kept positions (a job's `positions/` records) and the anchorage list as a plain
table, with the nearest anchorage found by brute force (numpy, every point) instead of the job's
grid index, and the events grouped into visits in one pass as `pipe-anchorages` groups them.

The rule, as docs/ports.md states it: in port at 3 km or less from the nearest anchorage, out at
4 km or more; stopped at 0.2 kn or less, moving at 0.5 kn or more (a position without SOG leaves
it as it was); a position 4 h or more after the previous one in port makes a gap; a visit runs
from an entry (or its first event) to an exit, and ends without one when its next event is at an
anchorage more than 60 nm from its last one's."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

R_KM = 6371.0
IN_KM, OUT_KM, STOPPED_KN, MOVING_KN = 3.0, 4.0, 0.2, 0.5
GAP_MS = 4 * 3_600_000
APART_NM = 60.0


@dataclass(frozen=True)
class Place:
    anchorage_id: str
    lat: float
    lon: float


@dataclass
class Visit:
    events: list[tuple[str, int, str]] = field(default_factory=list)  # (type, time ms, anchorage id)
    closed: bool = False

    @property
    def confidence(self) -> int:
        kinds = {kind for kind, _, _ in self.events}
        stop_or_gap = bool(kinds & {"PORT_STOP_BEGIN", "PORT_STOP_END", "PORT_GAP_BEGIN", "PORT_GAP_END"})
        entry, exit_ = "PORT_ENTRY" in kinds, "PORT_EXIT" in kinds
        if stop_or_gap:
            return 4 if entry and exit_ else 3 if entry or exit_ else 2
        return 1 if entry or exit_ else 0


class Anchorages:
    def __init__(self, path: Path) -> None:
        with path.open(newline="") as f:
            rows = list(csv.DictReader(f))
        self.places = [Place(r["s2id"], float(r["latitude"]), float(r["longitude"])) for r in rows]
        self.lat = np.radians([p.lat for p in self.places])
        self.lon = np.radians([p.lon for p in self.places])

    def nearest(self, lat: float, lon: float) -> tuple[Place, float]:
        phi, lam = math.radians(lat), math.radians(lon)
        a = np.sin((self.lat - phi) / 2) ** 2 + math.cos(phi) * np.cos(self.lat) * np.sin((self.lon - lam) / 2) ** 2
        km = 2 * R_KM * np.arcsin(np.sqrt(np.minimum(a, 1.0)))
        i = int(np.argmin(km))
        return self.places[i], float(km[i])


def millis(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def equirectangular_nm(a: Place, b: Place) -> float:
    x = math.radians(b.lon - a.lon) * math.cos(math.radians((a.lat + b.lat) / 2))
    return math.hypot(x, math.radians(b.lat - a.lat)) * R_KM / 1.852


def port_events(positions: list[dict[str, Any]], anchorages: Anchorages) -> list[tuple[str, int, Place]]:
    """The in/out, stop and gap events of one transmitter's positions, in time order."""
    events: list[tuple[str, int, Place]] = []
    in_port = stopped = False
    last_ts, port = -1, None
    first = True
    for p in sorted(positions, key=lambda p: millis(p["timestamp"])):
        ts, sog = millis(p["timestamp"]), p["sog"]
        place, km = anchorages.nearest(p["lat"], p["lon"])
        was_in, was_stopped = in_port, stopped
        if first:
            in_port = km <= IN_KM
        elif km <= IN_KM:
            in_port = True
        elif km >= OUT_KM:
            in_port = False
        if sog is not None and sog <= STOPPED_KN:
            stopped = True
        elif sog is not None and sog >= MOVING_KN:
            stopped = False
        here = place if km < OUT_KM else port
        if not first and was_in and ts - last_ts >= GAP_MS:
            assert port is not None
            events += [("PORT_GAP_BEGIN", last_ts + GAP_MS, port), ("PORT_GAP_END", ts, here or port)]
        before = "sea" if not was_in else "stopped" if was_stopped else "port"
        after = "sea" if not in_port else "stopped" if stopped else "port"
        if not first and before != after:
            kinds = {
                ("sea", "port"): ["PORT_ENTRY"],
                ("sea", "stopped"): ["PORT_ENTRY", "PORT_STOP_BEGIN"],
                ("port", "stopped"): ["PORT_STOP_BEGIN"],
                ("stopped", "port"): ["PORT_STOP_END"],
                ("stopped", "sea"): ["PORT_STOP_END", "PORT_EXIT"],
                ("port", "sea"): ["PORT_EXIT"],
            }[(before, after)]
            at = port if after == "sea" else here
            assert at is not None
            events += [(kind, ts, at) for kind in kinds]
        if not in_port:
            stopped = False  # at sea the vessel is neither in port nor stopped
        else:
            port = here
        first, last_ts = False, ts
    return events


def visits(events: list[tuple[str, int, Place]]) -> list[Visit]:
    """The events into visits: an entry (or the first event outside a visit) opens one, an exit
    closes it, and an event at an anchorage more than 60 nm from the visit's last ends it there."""
    out: list[Visit] = []
    current: Visit | None = None
    last_place: Place | None = None
    for kind, ts, place in events:
        if current is not None and last_place is not None and equirectangular_nm(last_place, place) > APART_NM:
            current.closed, current = True, None
        if current is None:
            current = Visit()
            out.append(current)
        current.events.append((kind, ts, place.anchorage_id))
        last_place = place
        if kind == "PORT_EXIT":
            current.closed, current = True, None
    return out


def compare(records: list[dict[str, Any]], want: list[Visit]) -> tuple[list[Any], list[Any]]:
    """A job's visits (each one's last record) against the independent ones, as (type, time,
    anchorage) events with the confidence and whether closed: what is only in the job's, and
    what only in the independent ones. A visit still open may end, in the job's, with the port gap
    that began while the watermark passed it, or be that gap alone: the independent rule makes a
    gap only when the transmitter is heard again."""
    got: list[Any] = []
    for r in records:
        events = [(e["type"], millis(e["time"]), e["anchorage_id"]) for e in r["events"]]
        if r["confidence"] != Visit(list(events)).confidence:  # GFW's confidence of its own events
            got.append(("confidence", r["id"], r["confidence"]))
        if r["open"] and events[-1][0] == "PORT_GAP_BEGIN":
            events.pop()
        if events:  # else a visit the watermark's gap began, of a transmitter not heard since
            got.append((tuple(events), Visit(events).confidence, not r["open"]))
    expected = [(tuple(v.events), v.confidence, v.closed) for v in want]
    return sorted(set(got) - set(expected)), sorted(set(expected) - set(got))
