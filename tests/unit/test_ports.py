"""Port events and visits (:mod:`ais_pipeline.rules.ports`): GFW's own cases of events into
visits, the in/out, stop and gap rule on made tracks, and the anchorage index against brute force
on GFW's published list."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ais_pipeline.files import read_anchorages
from ais_pipeline.resources import ANCHORAGES
from ais_pipeline.rules.ports import (
    EVENT_ORDER,
    PORT_ENTRY,
    PORT_EXIT,
    PORT_GAP_BEGIN,
    PORT_GAP_END,
    PORT_STOP_BEGIN,
    PORT_STOP_END,
    Anchorage,
    Anchorages,
    PortEvent,
    PortEvents,
    PortVisit,
    VesselPorts,
    Visits,
    haversine_km,
)

pytestmark = pytest.mark.unit

GOLDEN = json.loads((Path(__file__).parents[1] / "golden" / "gfw_port_visits.json").read_text())
HOUR = 3_600_000


def gfw_event(e: dict[str, Any]) -> PortEvent:
    anchorage = Anchorage(e["anchorage_id"], e["lat"], e["lon"], "")
    return PortEvent(e["event_type"], round(e["timestamp"] * 1000), e["vessel_lat"], e["vessel_lon"], anchorage)


def as_gfw(visit: PortVisit) -> dict[str, Any]:
    start, last = visit.start, visit.last
    return {
        "start_timestamp": start.ts / 1000,
        "start_lat": start.anchorage.lat,
        "start_lon": start.anchorage.lon,
        "start_anchorage_id": start.anchorage.anchorage_id,
        "end_timestamp": last.ts / 1000,
        "end_lat": last.anchorage.lat,
        "end_lon": last.anchorage.lon,
        "end_anchorage_id": last.anchorage.anchorage_id,
        "duration_hrs": visit.hours,
        "confidence": visit.confidence,
        "events": [(e.kind, e.ts / 1000, e.anchorage.anchorage_id, e.lat, e.lon) for e in visit.shown_events()],
    }


def expected(v: dict[str, Any]) -> dict[str, Any]:
    keys: tuple[str, ...] = ("start_timestamp", "start_lat", "start_lon", "start_anchorage_id", "end_timestamp")
    keys += ("end_lat", "end_lon", "end_anchorage_id", "duration_hrs", "confidence")
    out = {k: v[k] for k in keys}
    out["events"] = [
        (e["event_type"], e["timestamp"], e["anchorage_id"], e["vessel_lat"], e["vessel_lon"]) for e in v["events"]
    ]
    return out


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=[c["name"] for c in GOLDEN["cases"]])
def test_gfws_cases_of_events_make_gfws_visits(case: dict[str, Any]) -> None:
    # A stream gives a vessel's events in time order, and at one instant in GFW's order.
    events = sorted(case["input_events"], key=lambda e: (e["timestamp"], EVENT_ORDER.index(e["event_type"])))
    visits, seen = Visits(), dict[str, PortVisit]()
    for e in events:
        visit = visits.add(gfw_event(e), f"visit-{len(seen)}")
        seen[visit.visit_id] = visit
    assert [as_gfw(v) for v in seen.values()] == [expected(v) for v in case["expected_visits"]]
    assert all(v.closed for v in seen.values())


# A made port: two anchorages 2 km apart on a parallel, far from any real one (the South Pacific).
PORT_A = (Anchorage("a1", -40.0, -130.0, "PORT A", "", "XXX"), Anchorage("a2", -40.0, -129.9765, "PORT A", "", "XXX"))
PORT_B = (Anchorage("b1", -40.5, -130.0, "PORT B", "", "YYY"),)
RULE = PortEvents(Anchorages([*PORT_A, *PORT_B]))


def north_of(anchorage: Anchorage, km: float) -> tuple[float, float]:
    return anchorage.lat + math.degrees(km / 6371.0), anchorage.lon


def run(track: Sequence[tuple[int, tuple[float, float], float | None]], watermarks: bool = True) -> list[PortEvent]:
    """The events of a track of (minute, place, SOG); the watermark passes each position's time
    before the next (as a stream with no lateness would have it)."""
    vessel, events = VesselPorts(), []
    for minute, (lat, lon), sog in track:
        ts = minute * 60_000
        if watermarks:
            events += RULE.advance(vessel, ts - 1)
        events += RULE.position(vessel, ts, lat, lon, sog)
    return events


def kinds(events: list[PortEvent]) -> list[tuple[str, int]]:
    return [(e.kind, e.ts // 60_000) for e in events]


def visits_of(events: list[PortEvent]) -> list[PortVisit]:
    visits, seen = Visits(), dict[str, PortVisit]()
    for e in events:
        visit = visits.add(e, f"v{len(seen)}")
        seen[visit.visit_id] = visit
    return list(seen.values())


A1 = PORT_A[0]


def test_the_distances_are_what_the_made_port_needs() -> None:
    assert haversine_km(*north_of(A1, 3.5), A1.lat, A1.lon) == pytest.approx(3.5, abs=1e-9)
    assert 1.9 < haversine_km(A1.lat, A1.lon, PORT_A[1].lat, PORT_A[1].lon) < 2.1


def test_an_entry_a_stop_and_an_exit_make_a_visit_of_confidence_4() -> None:
    track = [(0, north_of(A1, 10), 8.0), (10, north_of(A1, 2.5), 4.0), (20, north_of(A1, 0.5), 0.1)]
    track += [(80, north_of(A1, 0.5), 0.0), (90, north_of(A1, 0.6), 3.0), (100, north_of(A1, 6), 9.0)]
    events = run(track)
    assert kinds(events) == [(PORT_ENTRY, 10), (PORT_STOP_BEGIN, 20), (PORT_STOP_END, 90), (PORT_EXIT, 100)]
    assert events[-1].anchorage == A1  # the exit's: the last position in port's nearest
    (visit,) = visits_of(events)
    assert visit.closed and visit.confidence == 4 and visit.hours == pytest.approx(1.5)


def test_a_vessel_that_turns_back_inside_the_band_neither_enters_nor_leaves() -> None:
    outside = [(0, north_of(A1, 6), 8.0), (10, north_of(A1, 3.5), 6.0), (20, north_of(A1, 6), 8.0)]
    assert run(outside) == []
    inside = [(0, north_of(A1, 6), 8.0), (10, north_of(A1, 2.0), 5.0), (20, north_of(A1, 3.9), 5.0)]
    inside += [(30, north_of(A1, 1.0), 5.0)]
    assert kinds(run(inside)) == [(PORT_ENTRY, 10)]


def test_a_speed_hovering_between_the_thresholds_keeps_a_stopped_vessel_stopped() -> None:
    track: list[tuple[int, tuple[float, float], float | None]] = [(0, north_of(A1, 6), 8.0), (10, north_of(A1, 1), 0.1)]
    track += [(m, north_of(A1, 1), 0.3) for m in range(20, 200, 10)]
    track += [(200, north_of(A1, 1), None), (210, north_of(A1, 1), 0.5)]
    assert kinds(run(track)) == [(PORT_ENTRY, 10), (PORT_STOP_BEGIN, 10), (PORT_STOP_END, 210)]


def test_a_silence_in_port_is_a_gap_begun_when_the_watermark_passes_four_hours() -> None:
    track = [(0, north_of(A1, 6), 8.0), (10, north_of(A1, 1), 2.0), (10 + 300, north_of(A1, 1), 2.0)]
    vessel = VesselPorts()
    for minute, (lat, lon), sog in track[:2]:
        RULE.position(vessel, minute * 60_000, lat, lon, sog)
    assert RULE.gap_due(vessel) == (10 + 240) * 60_000
    assert RULE.advance(vessel, (10 + 240) * 60_000 - 1) == []
    (begin,) = RULE.advance(vessel, (10 + 240) * 60_000)
    assert (begin.kind, begin.ts) == (PORT_GAP_BEGIN, (10 + 240) * 60_000) and RULE.gap_due(vessel) is None
    assert RULE.advance(vessel, 10**12) == []  # once
    (end,) = RULE.position(vessel, 310 * 60_000, *track[2][1], 2.0)
    assert (end.kind, end.ts) == (PORT_GAP_END, 310 * 60_000)
    # Without the watermark between (a late stream), the next position brings both.
    both = run(track, watermarks=False)
    assert kinds(both) == [(PORT_ENTRY, 10), (PORT_GAP_BEGIN, 250), (PORT_GAP_END, 310)]
    (visit,) = visits_of(both)
    assert not visit.closed and visit.confidence == 3


def test_a_vessel_first_heard_in_port_has_a_visit_without_an_entry() -> None:
    track = [(0, north_of(A1, 1), 3.0), (10, north_of(A1, 1), 0.0), (30, north_of(A1, 1), 3.0)]
    events = run(track)
    assert kinds(events) == [(PORT_STOP_BEGIN, 10), (PORT_STOP_END, 30)]
    (visit,) = visits_of(events)
    assert not visit.closed and visit.confidence == 2


def test_two_ports_in_a_row_are_two_visits_and_an_entry_and_exit_alone_is_confidence_1() -> None:
    b1 = PORT_B[0]
    track = [(0, north_of(A1, 10), 8.0), (10, north_of(A1, 1), 8.0), (20, north_of(A1, 8), 8.0)]
    track += [(60, north_of(b1, 1), 0.0), (70, north_of(b1, 9), 8.0)]
    events = run(track)
    assert kinds(events) == [
        (PORT_ENTRY, 10),
        (PORT_EXIT, 20),
        (PORT_ENTRY, 60),
        (PORT_STOP_BEGIN, 60),
        (PORT_STOP_END, 70),
        (PORT_EXIT, 70),
    ]
    first, second = visits_of(events)
    assert (first.confidence, first.start.anchorage.label, first.closed) == (1, "PORT A", True)
    assert (second.confidence, second.start.anchorage.label, second.closed) == (4, "PORT B", True)


def test_a_position_older_than_the_vessels_last_is_left_out() -> None:
    vessel = VesselPorts()
    RULE.position(vessel, 600_000, *north_of(A1, 10), 8.0)
    assert RULE.position(vessel, 0, *north_of(A1, 1), 8.0) == [] and vessel.last_ts == 600_000


def test_a_visit_shows_its_first_and_last_hundred_events_of_more() -> None:
    anchorage = A1
    visit = PortVisit("v", [PortEvent(PORT_STOP_BEGIN, t, 0.0, 0.0, anchorage) for t in range(250)])
    shown = visit.shown_events()
    assert [e.ts for e in shown] == list(range(100)) + list(range(150, 250))


def test_the_index_finds_the_nearest_anchorage_as_brute_force_does_on_gfws_list() -> None:
    index = read_anchorages(ANCHORAGES)
    points = [p for cell in index.cells.values() for p in cell]
    assert index.count == len(points) == 60_409
    assert index.skipped == ["gfw_anchorages.csv, line 11462: no such place: 11.84060637, 1001"]
    rng = random.Random(7)
    for _ in range(100):
        near = rng.choice(points)
        lat = max(-90.0, min(90.0, near.lat + rng.uniform(-0.05, 0.05)))
        lon = (near.lon + rng.uniform(-0.08, 0.08) + 180.0) % 360.0 - 180.0
        found = index.nearest(lat, lon, 4.0)
        brute = min(((p, haversine_km(lat, lon, p.lat, p.lon)) for p in points), key=lambda x: x[1])
        if brute[1] <= 4.0:
            assert found is not None and found[1] == brute[1]
        else:
            assert found is None


def test_the_index_wraps_at_the_antimeridian_and_reaches_a_pole() -> None:
    index = Anchorages([Anchorage("e", 10.0, 179.99, "EAST"), Anchorage("n", 89.99, 45.0, "NORTH")])
    found = index.nearest(10.0, -179.99, 4.0)
    assert found is not None and found[0].label == "EAST" and found[1] < 2.2
    found = index.nearest(89.99, -135.0, 4.0)
    assert found is not None and found[0].label == "NORTH"


def test_a_users_own_list_needs_only_latitude_longitude_and_label(tmp_path: Path) -> None:
    path = tmp_path / "ports.csv"
    path.write_text("latitude,longitude,label\n-40.0,-130.0,HOME\n")
    found = read_anchorages(path).nearest(-40.0, -130.0, 1.0)
    assert found is not None and found[0].label == "HOME" and found[0].anchorage_id == "ports:2"
    (tmp_path / "odd.csv").write_text("latitude,longitude,label\nx,2,A\n1,2,B\n")
    odd = read_anchorages(tmp_path / "odd.csv")
    assert odd.count == 1 and odd.skipped == ["odd.csv, line 2: not a latitude and longitude"]
    (tmp_path / "bad.csv").write_text("lat,lon\n1,2\n")
    with pytest.raises(ValueError, match="no column label, latitude, longitude"):
        read_anchorages(tmp_path / "bad.csv")
