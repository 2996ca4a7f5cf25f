"""Encounters' plain reference (ais_pipeline.rules.encounters) on Global Fishing Watch's own
cases of pipe-encounters (tests/golden/encounters.json): a simple pair, a pair across the
antimeridian, a pair that separates fast, three vessels together, and a real pair of March 2015,
with the parameters GFW's tests use; their raw encounters, each side's, and the merged ones."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from ais_pipeline.rules.encounters import (
    EncounterRules,
    Fix,
    Mark,
    MarkIndex,
    Resampler,
    haversine_km,
    merge,
    raw_encounters,
)

pytestmark = pytest.mark.unit

GOLDEN = json.loads((Path(__file__).parents[1] / "golden" / "encounters.json").read_text())
RULES = EncounterRules(**GOLDEN["rules"])
CASES = {c["name"]: c for c in GOLDEN["cases"]}

# GFW's names for the fields, ours beside them.
RAW_FIELDS = {
    "vessel_1_seg_id": "track_1",
    "vessel_2_seg_id": "track_2",
    "start_time": "start",
    "end_time": "end",
    "mean_latitude": "mean_lat",
    "mean_longitude": "mean_lon",
    "median_distance_km": "median_distance_km",
    "median_speed_knots": "median_speed_kn",
    "vessel_1_point_count": "points_1",
    "vessel_2_point_count": "points_2",
    "start_lat": "start_lat",
    "start_lon": "start_lon",
    "end_lat": "end_lat",
    "end_lon": "end_lon",
}
MERGED_FIELDS = {**RAW_FIELDS, "vessel_1_id": "track_1", "vessel_2_id": "track_2"}


def fixes(case: dict[str, Any]) -> list[Fix]:
    return [Fix(track, ts, lat, lon) for track, ts, lat, lon in case["fixes"]]


def ours(encounter: Any) -> dict[str, Any]:
    d = asdict(encounter)
    d["start"], d["end"] = d["start"] / 1000, d["end"] / 1000  # GFW's times are in seconds
    return d


def theirs(expected: dict[str, Any], fields: dict[str, str]) -> dict[str, Any]:
    return {ours_name: expected[name] for name, ours_name in fields.items() if name in expected}


def close(a: Any, b: Any) -> bool:
    """GFW's approx_equal_to: 1e-8 absolute or 1e-5 relative."""
    if isinstance(a, float) or isinstance(b, float):
        tol = GOLDEN["tolerance"]
        return abs(a - b) <= max(tol["abs"], 0.5 * tol["rel"] * (abs(a) + abs(b)))
    return bool(a == b)


def assert_same(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> None:
    unmatched = list(want)
    for g in got:
        match = next((w for w in unmatched if all(close(g[k], w[k]) for k in w)), None)
        assert match is not None, f"not expected: {g}"
        unmatched.remove(match)
    assert unmatched == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_gfws_cases_give_gfws_raw_encounters(name: str) -> None:
    case = CASES[name]
    got = [ours(e) for e in raw_encounters(fixes(case), RULES)]
    assert_same(got, [theirs(e, RAW_FIELDS) for e in case["raw"]])


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if "merged" in c))
def test_gfws_cases_give_gfws_merged_encounters(name: str) -> None:
    case = CASES[name]
    got = [ours(e) for e in merge(raw_encounters(fixes(case), RULES), RULES)]
    assert_same(got, [theirs(e, MERGED_FIELDS) for e in case["merged"]])


def test_a_track_is_resampled_on_the_clocks_marks_and_never_across_an_hours_silence() -> None:
    """GFW's own resampling case (tests/test_resample.py), without extrapolation."""
    t0 = 1309478400000  # 2011-07-01 00:00 UTC
    minute = 60_000
    rows = [(0, 10.3, 10.0, 0), (2, 10.0, 10.0, 0), (4, 10.0, 10.0, 0), (6, 10.0, 10.0, 0), (8, 10.0, 10.0, 0),
            (12, 10.0, 10.0, 0), (18, 10.0, 10.0, 0), (26, 10.0, 11.0, 0), (98, 10.0, 11.0, 0),
            (102, 11.0, 11.0, 0), (142, 11.0, 11.0, 10)]  # fmt: skip
    resampler = Resampler(EncounterRules(max_gap_ms=60 * minute))
    marks: list[Mark] = []
    for m, lat, lon, speed in rows:
        marks += resampler.add(Fix("0", t0 + m * minute, lat, lon, speed))
    got = [((m.ts - t0) // minute, round(m.lat, 9), round(m.lon, 9), m.density, m.speed) for m in marks]
    assert got == [
        (0, 10.3, 10.0, 1.0, 0.0),
        (10, 10.0, 10.0, 1.0, 0.0),
        (20, 10.0, 10.25, 1.0, 0.0),
        (100, 10.5, 11.0, 1.0, 0.0),
        (110, 11.0, 11.0, 0.25, 2.0),
        (120, 11.0, 11.0, 0.25, 4.5),
        (130, 11.0, 11.0, 0.25, 7.0),
        (140, 11.0, 11.0, 0.25, 9.5),
    ]


@pytest.mark.parametrize("lat", [0.0, 45.0, 70.0, 84.0, 89.5, -60.0])
@pytest.mark.parametrize("lon", [0.0, 179.9995, -179.9995, 120.0])
def test_the_grid_finds_every_mark_within_the_adjacency_distance(lat: float, lon: float) -> None:
    index = MarkIndex(1.0)
    around = []
    for i in range(400):  # a ring of marks 0.2 to 1.4 km away, every direction
        bearing, km = math.radians(i * 7.3), 0.2 + (i % 13) * 0.1
        dlat = km / 111.195 * math.cos(bearing)
        dlon = km / 111.195 * math.sin(bearing) / max(math.cos(math.radians(lat)), 1e-6)
        m = Mark(str(i), 0, max(-90.0, min(90.0, lat + dlat)), (lon + dlon + 180) % 360 - 180, 0.0, 1.0)
        index.add(m)
        around.append(m)
    found = {m.track for m in index.near(lat, lon) if haversine_km(lat, lon, m.lat, m.lon) <= 1.0}
    assert found == {m.track for m in around if haversine_km(lat, lon, m.lat, m.lon) <= 1.0}
    assert found


def test_an_encounter_is_published_long_slow_away_from_ports_and_at_sea() -> None:
    from ais_pipeline.rules.encounters import Encounter, encounter_json, published

    rules = EncounterRules()
    hour = 3_600_000
    enc = Encounter("244600001/0", "244600002/0", 0, 3 * hour, -20.0, 40.0, 0.1, 1.2, 18, 18, 0, 0, 0, 0)
    assert published(enc, rules, None, 100.0)
    assert not published(enc, rules, 9.0, 100.0)  # under 10 km from an anchorage
    assert not published(enc, rules, None, 0.0)  # on land, as the shore sees it
    slow, short = dataclasses.replace(enc, median_speed_kn=2.0), dataclasses.replace(enc, end=hour)
    assert not published(slow, rules, None, 100.0) and not published(short, rules, None, 100.0)
    record = json.loads(encounter_json(enc, (244600001, 244600002), ("carrier", "fishing"), 55.0, 100.0, True,
                                       3 * hour, rules))  # fmt: skip
    assert record["end_time"] is None and record["published"] and record["hours"] == 3.0
    closed = json.loads(encounter_json(enc, (244600001, 244600002), ("carrier", "fishing"), 55.0, 100.0, False,
                                       9 * hour, rules))  # fmt: skip
    assert closed["id"] == record["id"] and closed["end_time"] == "1970-01-01T03:00:00.000Z"


def scene(seed: int, lon0: float) -> list[Fix]:
    """Forty tracks drifting in a box of 0.3 degrees around cell borders (and the antimeridian when
    ``lon0`` is near it), pairs of them side by side for hours: every 5 to 15 minutes each."""
    import random

    rng = random.Random(seed)
    out: list[Fix] = []
    t0 = 1_700_000_000_000
    for v in range(40):
        lat, lon = 10.0 + rng.uniform(-0.15, 0.15), lon0 + rng.uniform(-0.15, 0.15)
        if v >= 20 and v % 2 == 0:  # a pair's first: on a cell's border (a parallel or a meridian)
            if v % 4:
                lat = round(lat, 1) + rng.uniform(-0.001, 0.001)
            else:
                lon = round(lon, 1) + rng.uniform(-0.001, 0.001)
        if v > 20 and v % 2:  # alongside the one before, across the border, a few hundred metres off
            first = out[-40]
            lat, lon = 2 * round(first.lat, 1) - first.lat, first.lon + rng.uniform(-0.002, 0.002)
            if (v - 1) % 4 == 0:
                lat, lon = first.lat + rng.uniform(-0.002, 0.002), 2 * round(first.lon, 1) - first.lon
        t = t0 + rng.randrange(600_000)
        for _ in range(40):
            out.append(Fix(f"v{v:02d}", t, lat, (lon + 180) % 360 - 180))
            t += rng.randrange(5, 16) * 60_000
            lat += rng.uniform(-0.002, 0.002)
            lon += rng.uniform(-0.002, 0.002)
    return out


# -- the job's three keyed steps, run as the plain loop runs them ----------------------------------


def stepped(
    fixes_: list[Fix], rules: EncounterRules, lag_ms: int = 0, where: Any = None, stored: bool = False
) -> list[dict[str, Any]]:
    """The records the three keyed steps write for ``fixes_`` (in time order): each transmitter's
    marks sent on as its fixes come, the watermark ``lag_ms`` behind the newest fix; at the end
    the watermark goes a year on (every track ends). ``stored``: every state written as the job
    keeps it (JSON) and read back after each step."""
    from ais_pipeline.rules import encounters as e
    from ais_pipeline.rules.encounters import EncounterFlow, EncounterSteps, Resampler, mark_line

    def store(flow: EncounterFlow) -> None:
        if stored:
            flow.cells = {k: e.cell_from_json(e.cell_to_json(v)) for k, v in flow.cells.items()}
            flow.tracks = {k: e.track_from_json(e.track_to_json(v), rules) for k, v in flow.tracks.items()}
            flow.pairs = {k: e.pair_from_json(e.pair_to_json(v)) for k, v in flow.pairs.items()}

    wait = rules.max_gap_ms + lag_ms + rules.step_ms
    flow = EncounterFlow(EncounterSteps(rules, wait), where or (lambda lat, lon: (None, 100.0)))
    resamplers: dict[str, Resampler] = {}
    for fix in fixes_:
        for mark in resamplers.setdefault(fix.track, Resampler(rules)).add(fix):
            flow.mark(mark_line(mark))
        flow.advance(fix.ts - lag_ms)
        store(flow)
    flow.advance(fixes_[-1].ts + 365 * 86_400_000)
    return [json.loads(line) for line, _ in flow.records]


def numbered(fixes_: list[Fix]) -> list[Fix]:
    """The fixes with their tracks named as the job names them (MMSI.lineage), in the same order."""
    names = {t: f"{100 + i}.0" for i, t in enumerate(sorted({f.track for f in fixes_}))}
    return sorted((Fix(names[f.track], f.ts, f.lat, f.lon, f.speed, "fishing") for f in fixes_), key=lambda f: f.ts)


def as_closed(encounter: Any, rules: EncounterRules) -> dict[str, Any]:
    from ais_pipeline.rules.encounters import encounter_json, track_mmsi

    mmsis = (track_mmsi(encounter.track_1), track_mmsi(encounter.track_2))
    record = json.loads(encounter_json(encounter, mmsis, ("fishing", "fishing"), None, 100.0, False, 0, rules))
    del record["as_of"]
    return record


ANY_SPEED = {"max_speed_kn": 1e9}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_jobs_steps_close_the_batch_forms_encounters_on_gfws_cases(name: str) -> None:
    rules = EncounterRules(**{**GOLDEN["rules"], **ANY_SPEED})
    fixes_ = numbered(fixes(CASES[name]))
    batch = [as_closed(e, rules) for e in merge(raw_encounters(fixes_, rules), rules)]
    got = [r for r in stepped(fixes_, rules, lag_ms=1_800_000) if not r["open"]]
    for r in got:
        del r["as_of"]
    assert sorted(got, key=repr) == sorted(batch, key=repr)


@pytest.mark.parametrize(("seed", "lon0"), [(1, 20.05), (2, 179.95), (3, -0.02)])
def test_the_jobs_steps_close_the_batch_forms_encounters_across_cells(seed: int, lon0: float) -> None:
    rules = EncounterRules(min_minutes=30.0, merge_hours=4.0, max_speed_kn=1e9)
    fixes_ = numbered(scene(seed, lon0))
    batch = [as_closed(e, rules) for e in merge(raw_encounters(fixes_, rules), rules)]
    assert len(batch) >= 5
    got = [r for r in stepped(fixes_, rules) if not r["open"]]
    for r in got:
        del r["as_of"]
    assert sorted(got, key=repr) == sorted(batch, key=repr)


def side_by_side(hours: float, apart_hours: float = 0.0, again_hours: float = 0.0) -> list[Fix]:
    """Two vessels drifting 200 m apart at 1 kn for ``hours`` (then apart ``apart_hours`` and side by
    side again ``again_hours``), a fix every 5 minutes each."""
    out = []
    t0 = 1_700_000_400_000
    total = hours + apart_hours + again_hours
    for i in range(int(total * 12) + 1):
        t = t0 + i * 300_000
        lat, lon = 10.0 + i * 0.0014, -30.0
        h = i / 12
        offset = 0.0018 if hours <= h < hours + apart_hours else 0.0
        out.append(Fix("100.0", t, lat, lon, 0.0, "carrier"))
        out.append(Fix("200.0", t, lat + offset * 50, lon + 0.0018, 0.0, "fishing"))
    return out


def test_an_encounter_is_written_open_once_published_then_closed_under_the_same_id() -> None:
    rules = EncounterRules()
    records = stepped(side_by_side(3.0), rules)
    assert [r["open"] for r in records] == [True, False]
    opened, closed = records
    assert opened["id"] == closed["id"]
    assert (opened["mmsi_1"], opened["mmsi_2"], opened["ship_type_1"], opened["ship_type_2"]) == (
        100, 200, "carrier", "fishing")  # fmt: skip
    assert opened["hours"] == 2.0 and opened["end_time"] is None  # written the moment it reaches 2 hours
    assert closed["hours"] == 3.0 and closed["end_time"] is not None and closed["published"]


def test_the_same_pair_together_again_within_the_merge_gap_is_one_encounter() -> None:
    records = stepped(side_by_side(2.5, apart_hours=3.0, again_hours=2.5), EncounterRules())
    assert [r["open"] for r in records] == [True, False]
    assert records[1]["hours"] == 8.0


def test_a_pair_in_port_writes_nothing() -> None:
    records = stepped(side_by_side(3.0), EncounterRules(), where=lambda lat, lon: (1.5, 2.0))
    assert records == []


def test_the_inputs_end_leaves_an_encounter_open() -> None:
    from ais_pipeline.rules.encounters import EncounterFlow, EncounterSteps, Resampler, mark_line

    rules = EncounterRules()
    flow = EncounterFlow(EncounterSteps(rules, rules.max_gap_ms + rules.step_ms), lambda lat, lon: (None, 100.0))
    resamplers: dict[str, Resampler] = {}
    for fix in side_by_side(3.0):
        for mark in resamplers.setdefault(fix.track, Resampler(rules)).add(fix):
            flow.mark(mark_line(mark))
        flow.advance(fix.ts)
    flow.advance(2**63 - 1, final=True)
    assert [json.loads(line)["open"] for line, _ in flow.records] == [True]


def test_two_tracks_of_one_mmsi_are_never_an_encounter() -> None:
    """A shared MMSI's two transmitters side by side (tracks 100.0 and 100.7)."""
    fixes_ = [Fix("100.7" if f.track == "200.0" else f.track, f.ts, f.lat, f.lon, 0.0, f.category)
              for f in side_by_side(3.0)]  # fmt: skip
    assert stepped(fixes_, EncounterRules()) == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_steps_state_read_back_from_json_gives_the_same_records(name: str) -> None:
    fixes_ = numbered(fixes(CASES[name]))
    rules = EncounterRules(**{**GOLDEN["rules"], **ANY_SPEED})
    assert stepped(fixes_, rules, stored=True) == stepped(fixes_, rules)
    twice = side_by_side(2.5, apart_hours=3.0, again_hours=2.5)
    assert stepped(twice, EncounterRules(), stored=True) == stepped(twice, EncounterRules())
