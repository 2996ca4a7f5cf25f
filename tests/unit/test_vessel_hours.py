"""The vessel-hours rule (plain Python): segments under and over the gap cap, across panes, from
out-of-order positions, a vessel silent past the cap, the ship type categories, and nothing held
once a track is used."""

from __future__ import annotations

import pytest

from ais_pipeline.rules.vessel_hours import (
    ALL_CATEGORIES,
    Fix,
    Segment,
    Track,
    ship_category,
    split_at_panes,
    static_category,
)

pytestmark = pytest.mark.unit

MIN = 60_000
T0 = 1_700_000_040_000  # a pane boundary


def track() -> Track:
    return Track(max_gap_ms=10 * MIN, pane_ms=MIN)


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
    under, over = track(), track()
    for t, fixes in ((under, [0, 10 * MIN]), (over, [0, 10 * MIN + 1])):
        for ts in fixes:
            t.add(Fix(T0 + ts, "u4pruy", "cargo"))
    assert sum(s.ms for s in under.advance(T0 + 20 * MIN)) == 10 * MIN
    assert over.advance(T0 + 30 * MIN) == []
    assert under.empty and over.empty  # silent past the cap after the last one: nothing held


def test_the_time_goes_to_the_cell_and_type_of_the_segments_start():
    t = track()
    t.add(Fix(T0 + 30_000, "a", "fishing"))
    t.add(Fix(T0 + 90_000, "b", "cargo"))
    assert t.advance(T0 + 90_000) == [Segment("a", "fishing", T0, 30_000), Segment("a", "fishing", T0 + MIN, 30_000)]
    assert t.last == Fix(T0 + 90_000, "b", "cargo") and not t.pending  # the last one waits for its next


def test_out_of_order_positions_are_sorted_before_the_watermark_passes_them():
    t = track()
    for ts, cell in ((40_000, "c"), (10_000, "a"), (25_000, "b")):
        t.add(Fix(T0 + ts, cell, "tanker"))
    assert t.advance(T0 + 40_000) == [Segment("a", "tanker", T0, 15_000), Segment("b", "tanker", T0, 15_000)]
    assert not t.add(Fix(T0 + 30_000, "late", "tanker"))  # behind the released track: the caller counts it


def test_positions_wait_for_the_watermark_and_a_silent_vessel_is_dropped_at_the_cap():
    t = track()
    t.add(Fix(T0, "a", "unknown"))
    t.add(Fix(T0 + MIN, "b", "unknown"))
    assert t.advance(T0 + MIN - 1) == [] and t.next_timer() == T0 + MIN
    assert [s.ms for s in t.advance(T0 + MIN)] == [MIN]
    assert t.next_timer() == T0 + 11 * MIN
    assert t.advance(T0 + 11 * MIN - 1) == [] and not t.empty
    assert t.advance(T0 + 11 * MIN) == [] and t.empty and t.next_timer() is None


def test_a_static_reports_ship_type_code_or_archive_type_name_gives_its_category():
    assert [static_category(f) for f in ({"ship_type": 70}, {"ship_type": 84.0}, {"shipname": "X"})] == [
        "cargo",
        "tanker",
        None,  # a 24A report (name only) leaves the vessel's type as it was
    ]
    names = {"Tug": "service", "HSC": "high_speed", "Pleasure": "pleasure", "Dredging": "other", "cargo": "cargo"}
    assert {n: static_category({"ship_type": n}) for n in names} == names


def test_a_position_before_the_tracks_first_one_completes_the_segment_to_it():
    t = track()
    t.add(Fix(T0 + 60_000, "b", "cargo"))
    t.advance(T0 + 60_000)
    assert t.add(Fix(T0 + 30_000, "a", "cargo")) == [Segment("a", "cargo", T0, 30_000)]
    assert t.start == Fix(T0 + 30_000, "a", "cargo")
    assert t.add(Fix(T0 + 45_000, "c", "cargo")) is None  # inside the track: its time is counted already


def test_a_position_held_past_the_cap_does_not_keep_the_last_one_alive():
    t = Track(max_gap_ms=10 * MIN, pane_ms=MIN, hold_ms=5 * MIN)
    t.add(Fix(T0, "a", "cargo"))
    t.advance(T0)
    t.add(Fix(T0 + 60 * MIN, "b", "cargo"))  # an hour later: a hole
    assert t.next_timer() == T0 + 15 * MIN
    assert t.advance(T0 + 15 * MIN) == [] and t.last is None
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
