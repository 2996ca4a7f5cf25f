"""Loitering's plain reference (ais_pipeline.rules.loitering), one track at a time as its
positions come, against Global Fishing Watch's own functions (tests/support/gfw_loitering.py,
pipe-loitering's code without Beam) on seeded random tracks: slow and fast hours, hours with no
position, a first hour already slow. The distance from shore varies linearly over the tracks'
sea, where taking an hour's positions at their hours-weighted place is exact."""

from __future__ import annotations

import json
import math
import random
from datetime import UTC, datetime

import pytest

from ais_pipeline.config import PipelineConfig
from ais_pipeline.rules.encounters import haversine_km
from ais_pipeline.rules.loitering import HOUR_MS, Loitering, LoiteringEvent, LoiteringRules, LoiteringTrack, Ping
from ais_pipeline.rules.plain import run_plain
from tests.support.gfw_loitering import loitering_events
from tests.support.loitering_cases import IDLE, LOITERING, loitering_case_lines

pytestmark = pytest.mark.unit

RULES = LoiteringRules()


def track(seed: int) -> list[Ping]:
    """A track of a few days: each hour slow (drifting) or fast (steaming), some hours silent."""
    rng = random.Random(seed)
    t, lat, lon = 1_700_000_000_000 + rng.randrange(HOUR_MS), 10.0, 60.0
    pings: list[Ping] = []
    for _ in range(rng.randrange(5, 80)):
        if rng.random() < 0.15:
            t += rng.randrange(1, 6) * HOUR_MS  # a silence of hours
        knots = rng.choice([0.2, 0.8, 1.9, 2.1, 6.0, 11.0])
        for _ in range(rng.randrange(0, 8)):
            minutes = rng.randrange(3, 25)
            t += minutes * 60_000
            heading = math.radians(rng.randrange(360))
            nm = knots * minutes / 60
            lat += nm / 60 * math.cos(heading)
            lon += nm / 60 * math.sin(heading) / math.cos(math.radians(lat))
            before = pings[-1] if pings else None
            ms = t - before.ts if before else None
            meters = haversine_km(before.lat, before.lon, lat, lon) * 1000 if before else None
            pings.append(Ping(t, lat, lon, ms, meters))
    return pings


def shore_nm(lat: float, lon: float) -> float:
    """A sea whose distance from shore grows linearly to the north-east."""
    return 30.0 + 2.0 * (lat - 10.0) + 3.0 * (lon - 60.0)


def ours(pings: list[Ping]) -> list[LoiteringEvent]:
    loitering = LoiteringTrack()
    closed: list[LoiteringEvent] = []
    for p in pings:
        closed += [e for e in loitering.add(p, RULES, shore_nm) if e.closed]
    return closed + loitering.finish(RULES, shore_nm)


def as_gfw(pings: list[Ping]) -> list[dict[str, object]]:
    return [
        {
            "timestamp": datetime.fromtimestamp(p.ts / 1000, UTC),
            "hours": p.hours,
            "meters_to_prev": p.meters,
            "lat": p.lat,
            "lon": p.lon,
            "distance_from_shore_m": shore_nm(p.lat, p.lon) * 1852,
        }
        for p in pings
    ]


@pytest.mark.parametrize("seed", range(60))
def test_a_tracks_loitering_events_are_gfws(seed: int) -> None:
    pings = track(seed)
    want = loitering_events(as_gfw(pings))
    got = [
        {
            "loitering_start_timestamp": datetime.fromtimestamp(e.start.ts / 1000, UTC),
            "loitering_end_timestamp": datetime.fromtimestamp(e.end.ts / 1000, UTC),
            "avg_speed_knots": e.avg_speed_kn,
            "loitering_hours": e.loitering_hours,
            "tot_distance_nm": e.distance_nm,
            "avg_distance_from_shore_nm": e.shore_nm,
            "start_lon": e.start.lon,
            "start_lat": e.start.lat,
            "end_lon": e.end.lon,
            "end_lat": e.end.lat,
        }
        for e in ours(pings)
    ]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.keys() == w.keys()
        for k in w:
            if isinstance(w[k], float):
                assert g[k] == pytest.approx(w[k], rel=1e-9), k
            else:
                assert g[k] == w[k], k


def test_the_random_tracks_hold_events_of_every_kind() -> None:
    events = [e for seed in range(60) for e in ours(track(seed))]
    assert len(events) > 60
    assert any((e.loitering_hours or 0) >= 4 for e in events)
    assert any(e.start.hours is None for e in events)  # an event from a track's first position


def test_a_carrier_idling_ten_hours_offshore_loiters_once_and_is_published_at_four_hours() -> None:
    t0, lat, lon = 1_699_999_200_000, -20.0, 40.0  # on the hour
    pings: list[Ping] = []
    for i in range(12 * 6):  # every 10 minutes: 2 h at 10 knots, 10 h at 0.5 knots
        knots = 10.0 if i < 12 else 0.5
        lat += knots * (10 / 60) / 60
        before = pings[-1] if pings else None
        ms = 600_000 if before else None
        meters = haversine_km(before.lat, before.lon, lat, lon) * 1000 if before else None
        pings.append(Ping(t0 + i * 600_000, lat, lon, ms, meters))
    loitering = LoiteringTrack()
    opened_at = None
    for p in pings:
        for e in loitering.add(p, RULES, lambda lat, lon: 60.0):
            if opened_at is None and e.published(RULES):
                opened_at = p.ts
    (event,) = loitering.finish(RULES, lambda lat, lon: 60.0)
    assert event.closed and event.published(RULES)
    assert event.loitering_hours == pytest.approx(10)  # from the last fast position on
    assert event.avg_speed_kn == pytest.approx(0.5, rel=1e-3)
    assert event.shore_nm == pytest.approx(60)
    assert opened_at is not None and (opened_at - event.start.ts) / HOUR_MS < 5.5


def last_records(lines: list[str]) -> dict[str, dict[str, object]]:
    return {r["id"]: r for r in map(json.loads, lines)}


def test_the_generated_loitering_cases_give_their_records_in_the_plain_loop() -> None:
    result = run_plain(PipelineConfig(), loitering_case_lines())
    records = last_records(result.loitering)
    by_mmsi = {int(r["mmsi"]): r for r in records.values()}  # type: ignore[call-overload]
    assert len(by_mmsi) == len(records)
    for mmsi, want in LOITERING.items():
        if want is None:
            assert mmsi not in by_mmsi
            continue
        r = by_mmsi[mmsi]
        hours, is_open = want
        assert r["open"] is is_open and r["published"] is True
        assert hours <= r["hours"] < hours + 1.5  # type: ignore[operator]
        assert r["avg_speed_kn"] == pytest.approx(0.5, abs=0.05)
        assert r["shore_nm"] >= 20  # type: ignore[operator]
    idle = by_mmsi[IDLE]
    assert 55 < idle["shore_nm"] < 70  # type: ignore[operator]
    assert idle["start_time"] == "2023-11-15T00:50:00.000Z" and idle["end_time"] == "2023-11-15T10:50:00.000Z"
    # Written first when its hours reached four, then at each hour after: one id throughout.
    written = [r for r in map(json.loads, result.loitering) if r["mmsi"] == IDLE]
    assert [r["open"] for r in written] == [True] * (len(written) - 1) + [False]
    assert 6 <= len(written) <= 8 and {r["id"] for r in written} == {idle["id"]}


def test_loitering_is_off_with_its_hours_at_zero() -> None:
    assert PipelineConfig(loitering_hours=0).loitering is None
    assert run_plain(PipelineConfig(loitering_hours=0), loitering_case_lines()).loitering == []


def test_a_days_silence_ends_the_track_and_its_event_whether_its_timer_said_so_or_not() -> None:
    rule = Loitering(RULES, lambda lat, lon: 60.0)

    def run(timer: bool) -> list[dict[str, object]]:
        track, before, out = LoiteringTrack(), None, []
        for minute in [*range(0, 361, 10), *range(36 * 60, 36 * 60 + 361, 10)]:  # 6 h, 30 h silent, 6 h
            ts = 1_699_999_200_000 + minute * 60_000
            if timer and minute == 36 * 60:  # the watermark passed the day's silence first
                out += rule.end(track, ts - 60_000, 244500009, ts - 60_000)
            out += rule.position(track, before, ts, 54.0, 3.5 + minute * 1e-5, "carrier", 244500009)
            before = (ts, 54.0, 3.5 + minute * 1e-5)
        return [json.loads(r) for r, _ in out]

    for timer in (False, True):
        records = run(timer)
        first, second = (
            {r["id"] for r in records if r["start_time"] < "2023-11-15T12"},
            {r["id"] for r in records if r["start_time"] > "2023-11-15T12"},
        )
        assert len(first) == 1 and len(second) == 1  # two events, not one across the silence
        closed = [r for r in records if not r["open"]]
        assert [r["id"] for r in closed] == list(first)
        assert closed[0]["hours"] == pytest.approx(6.0) and closed[0]["end_time"] == "2023-11-15T04:00:00.000Z"
