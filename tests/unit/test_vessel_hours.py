"""The vessel-hours rule (plain Python): segments under and over the gap cap, across panes, from
out-of-order positions, a vessel silent past the cap, the ship type categories, and nothing held
once a track is used."""

from __future__ import annotations

import pytest

from ais_pipeline.rules.tracks import Fix, VesselTracks
from ais_pipeline.rules.vessel_hours import ALL_CATEGORIES, ship_category, split_at_panes, static_category

pytestmark = pytest.mark.unit

MIN = 60_000
T0 = 1_700_000_040_000  # a pane boundary


def tracks(hold_ms: int = 0) -> VesselTracks:
    return VesselTracks(max_gap_ms=10 * MIN, hold_ms=hold_ms)


def fix(ts: int, category: str = "cargo", lat: float = 54.0, lon: float = 10.0) -> Fix:
    return Fix(T0 + ts, lat, lon, "u1x55w", category)


def gaps(segments: list[tuple[Fix, Fix]]) -> list[int]:
    return [b.ts - a.ts for a, b in segments]


def test_ship_type_codes_group_into_the_categories_of_density_maps():
    expected = {30: "fishing", 31: "service", 32: "service", 36: "sailing", 37: "pleasure", 40: "high_speed",
                49: "high_speed", 50: "service", 52: "service", 59: "service", 60: "passenger", 69: "passenger",
                70: "cargo", 79: "cargo", 80: "tanker", 89: "tanker", 0: "other", 33: "other", 90: "other",
                None: "unknown"}  # fmt: skip
    assert {code: ship_category(code) for code in expected} == expected
    assert set(expected.values()) <= set(ALL_CATEGORIES)


def test_a_segment_is_split_at_pane_boundaries():
    assert split_at_panes(T0 + 50_000, T0 + 130_000, MIN) == [(T0, 10_000), (T0 + MIN, MIN), (T0 + 2 * MIN, 10_000)]
    assert split_at_panes(T0, T0, MIN) == []


def test_a_gap_just_under_the_cap_counts_and_just_over_it_is_a_hole():
    under, over = tracks(), tracks()
    for t, times in ((under, [0, 10 * MIN]), (over, [0, 10 * MIN + 1])):
        for ts in times:
            t.add(fix(ts))
    assert gaps(under.advance(T0 + 30 * MIN).segments) == [10 * MIN]
    assert over.advance(T0 + 30 * MIN).segments == []
    assert under.empty and over.empty  # silent past the cap after the last one: nothing held


def test_out_of_order_positions_are_sorted_before_the_watermark_passes_them():
    t = tracks()
    for ts in (40_000, 10_000, 25_000):
        t.add(fix(ts))
    assert gaps(t.advance(T0 + 40_000).segments) == [15_000, 15_000]
    late = t.add(fix(30_000))  # behind the released track: accepted, no time
    assert late.behind == 1 and late.segments == [] and [f.ts for f in late.accepted] == [T0 + 30_000]


def test_positions_wait_for_the_watermark_and_a_silent_vessel_is_dropped_at_the_cap():
    t = tracks()
    t.add(fix(0))
    t.add(fix(MIN))
    assert not t.advance(T0 + MIN - 1) and t.next_timer() == T0 + MIN
    assert gaps(t.advance(T0 + MIN).segments) == [MIN]
    assert t.next_timer() == T0 + 11 * MIN
    assert not t.advance(T0 + 11 * MIN - 1) and not t.empty
    assert not t.advance(T0 + 11 * MIN) and t.empty and t.next_timer() is None


def test_a_static_reports_ship_type_code_or_archive_type_name_gives_its_category():
    assert [static_category(f) for f in ({"ship_type": 70}, {"ship_type": 84.0}, {"shipname": "X"})] == [
        "cargo",
        "tanker",
        None,  # a 24A report (name only) leaves the vessel's type as it was
    ]
    names = {"Tug": "service", "HSC": "high_speed", "Pleasure": "pleasure", "Dredging": "other", "cargo": "cargo"}
    assert {n: static_category({"ship_type": n}) for n in names} == names


def test_a_position_before_the_tracks_first_one_completes_the_segment_to_it():
    t = tracks()
    t.add(fix(60_000))
    t.add(fix(90_000))
    t.advance(T0 + 90_000)
    before = t.add(fix(30_000))
    assert gaps(before.segments) == [30_000] and before.accepted == [fix(30_000)]
    inside = t.add(fix(45_000))  # inside the track: its time is counted already
    assert inside.segments == [] and inside.behind == 1


def test_a_position_held_past_the_cap_does_not_keep_the_last_one_alive():
    t = tracks(hold_ms=5 * MIN)
    t.add(fix(0))
    t.advance(T0)
    t.add(fix(60 * MIN))  # an hour later: a hole
    assert t.next_timer() == T0 + 10 * MIN  # the single fix is judged at the cap
    assert t.advance(T0 + 10 * MIN).accepted == [fix(0)]  # seen once: kept
    assert t.next_timer() == T0 + 15 * MIN
    assert not t.advance(T0 + 15 * MIN) and not t.tracks
    assert t.next_timer() == T0 + 60 * MIN  # each step moves on: no timer fires twice


def test_an_archive_rows_own_ship_type_types_its_report_and_its_time():
    import json

    from ais_pipeline.config import PipelineConfig
    from ais_pipeline.rules.plain import run_plain

    header = "MMSI,BaseDateTime,LAT,LON,SOG,COG,Heading,VesselName,IMO,CallSign,VesselType,Status,Length,Width,"
    header += "Draft,Cargo,TransceiverClass"
    rows = [f"367000001,2024-01-01T00:00:{s},30.0,-90.0,10,90,90,A,IMO1,C1,70,0,100,20,5,70,A" for s in ("00", "30")]
    result = run_plain(PipelineConfig(input_format="noaa"), [header, *rows], now_ms=1_800_000_000_000)
    first = json.loads(result.aggregates[0])
    assert first["by_type"] == {"cargo": {"vessels": 1, "reports": 2, "vessel_hours": 0.008333}}
