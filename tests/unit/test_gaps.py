"""AIS gap events (ais_pipeline.rules.gaps): each rule on small cases, then on two real GFW tracks,
whose gaps must be exactly those worked out from their rows."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import pytest

from ais_pipeline.config import PipelineConfig
from ais_pipeline.files import read_lines
from ais_pipeline.rules.gaps import HOUR_MS, Fix, Gap, GapRules, VesselGaps
from ais_pipeline.rules.outputs import iso_ms, parse_iso_ms
from ais_pipeline.rules.plain import run_plain

pytestmark = pytest.mark.unit

T0 = 1_700_000_040_000
MMSI = 244000001
RULES = GapRules()


def vessel() -> VesselGaps:
    return VesselGaps(RULES.min_gap_ms)


def test_positions_six_hours_apart_make_a_gap_and_one_second_less_does_not():
    v = vessel()
    assert v.position(MMSI, T0, 55.0, 5.0, "fishing") is None
    assert v.position(MMSI, T0 + 6 * HOUR_MS - 1000, 55.1, 5.0, "fishing") is None
    gap = v.position(MMSI, T0 + 12 * HOUR_MS - 1000, 55.2, 5.0, "cargo")
    start, end = Fix(T0 + 6 * HOUR_MS - 1000, 55.1, 5.0), Fix(T0 + 12 * HOUR_MS - 1000, 55.2, 5.0)
    assert gap == Gap(MMSI, "fishing", start, end, 2)
    assert gap is not None and gap.duration_ms(0) == 6 * HOUR_MS and not gap.is_open


def test_a_silence_past_the_threshold_is_an_open_gap_once_then_closed_when_heard_again():
    v = vessel()
    v.position(MMSI, T0, 55.0, 5.0, "fishing")
    assert v.opens_at() == T0 + 6 * HOUR_MS
    assert v.advance(MMSI, T0 + 6 * HOUR_MS - 1) is None
    opened = v.advance(MMSI, T0 + 6 * HOUR_MS)
    assert opened is not None and opened.is_open and opened.duration_ms(T0 + 7 * HOUR_MS) == 7 * HOUR_MS
    assert v.advance(MMSI, T0 + 20 * HOUR_MS) is None and v.opens_at() is None  # emitted once
    closed = v.position(MMSI, T0 + 20 * HOUR_MS, 55.5, 5.0, "fishing")
    assert closed is not None and closed.start == opened.start and closed.end == Fix(T0 + 20 * HOUR_MS, 55.5, 5.0)


def test_the_positions_before_a_gap_are_those_of_the_12_hours_up_to_its_start_by_the_minute():
    v = vessel()
    v.position(MMSI, T0 - 13 * HOUR_MS, 55.0, 5.0, "fishing")  # outside the 12 h
    for k in range(20):
        v.position(MMSI, T0 - 11 * HOUR_MS + k * 30 * 60_000, 55.0, 5.0, "fishing")
    v.position(MMSI, T0, 55.0, 5.0, "fishing")
    gap = v.position(MMSI, T0 + 13 * HOUR_MS, 55.0, 5.0, "fishing")
    assert gap is not None and gap.positions_before == 21  # the 20, and the start itself


@pytest.mark.parametrize(
    ("hours", "shore", "before", "suspected"),
    [
        (13, (60.0, 70.0), 14, True),
        (11, (60.0, 70.0), 14, False),
        (13, (40.0, 70.0), 14, False),
        (13, (60.0, 50.0), 14, False),
        (13, (60.0, 70.0), 13, False),
    ],
)
def test_a_suspected_disabling_is_long_far_from_shore_at_both_ends_and_after_a_well_received_track(
    hours: int, shore: tuple[float, float], before: int, suspected: bool
):
    gap = Gap(MMSI, "fishing", Fix(T0, 0.0, 0.0), Fix(T0 + hours * HOUR_MS, 0.0, 0.0), before)
    assert gap.suspected(RULES, *shore) is suspected
    assert not Gap(MMSI, "fishing", Fix(T0, 0.0, 0.0), None, 99).suspected(RULES, 99.0, None)  # open


def test_a_late_position_ends_no_gap_and_the_state_round_trips():
    v = vessel()
    v.position(MMSI, T0, 55.0, 5.0, "fishing")
    assert v.position(MMSI, T0 - 7 * HOUR_MS, 55.0, 5.0, "fishing") is None
    v.position(MMSI, T0 + 10_000, 55.0, 5.0, "fishing")
    state = v.to_list()
    # The minutes compact: the newest minute's start, then (minutes before it, positions) each.
    assert state[2] == [T0 - T0 % 60_000, 420, 1, 0, 2]
    again = VesselGaps(RULES.min_gap_ms).restore(json.loads(json.dumps(state)))
    assert again == v


# Two real tracks from Global Fishing Watch's segmenter's tests: a month of MMSI 416000000 (many
# transmitters, mostly along Taiwan's coast) and a day and a half of 263576000 in the Indian Ocean.
FIXTURES = Path(__file__).parents[1] / "fixtures"


def row_time(row: dict[str, object]) -> int:
    text = str(row["timestamp"]).replace(" ", "T")
    return parse_iso_ms(text if text.endswith("Z") or "+" in text else text + "Z")


@pytest.mark.parametrize(("name", "six", "twelve"), [("416000000", 27, 9), ("263576000", 1, 0)])
def test_a_real_tracks_gaps_are_exactly_those_of_its_rows(name: str, six: int, twelve: int):
    path = FIXTURES / f"gpsdiosegment__{name}.json"
    result = run_plain(PipelineConfig(input_path=path), list(read_lines(path)), now_ms=1_800_000_000_000)
    # From the rows, by other means: positions with a fix, minus the job's bad fixes, minus each
    # near duplicate (the same place at 5 decimals within 2 s of the last kept) and exact repeat.
    bad = {(json.loads(b)["timestamp"], json.loads(b)["lat"]) for b in result.bad_fixes}
    rows = sorted((json.loads(line) for line in read_lines(path)), key=row_time)
    kept: list[tuple[int, float, float]] = []
    for row in rows:
        lat, lon, ts = row["lat"], row["lon"], row_time(row)
        if lat is None or not -90 <= lat <= 90 or (iso_ms(ts), lat) in bad:
            continue
        here = (round(lat, 5), round(lon, 5))
        if kept and ts - kept[-1][0] <= 2000 and here == (round(kept[-1][1], 5), round(kept[-1][2], 5)):
            continue
        kept.append((ts, lat, lon))
    want = [(a[0], b[0]) for a, b in pairwise(kept) if b[0] - a[0] >= RULES.min_gap_ms]

    v, got = vessel(), []
    for p in sorted((json.loads(p) for p in result.positions), key=lambda p: parse_iso_ms(p["timestamp"])):
        gap = v.position(p["mmsi"], parse_iso_ms(p["timestamp"]), p["lat"], p["lon"], "unknown")
        if gap is not None:
            assert gap.end is not None
            got.append((gap.start.ts, gap.end.ts))
    assert got == want
    assert (len(got), sum(1 for a, b in got if b - a >= RULES.analysis_ms)) == (six, twelve)


def test_a_vessel_silent_past_the_retention_keeps_only_its_gap_until_the_gap_ttl(tmp_path: Path):
    from ais_pipeline.rules.plain import PlainPipeline
    from tests.support import gap_cases
    from tests.support.nmea import position, tagged

    lines = gap_cases.gap_case_lines()
    (tmp_path / "feed.nmea").write_text("\n".join(lines) + "\n")
    config = PipelineConfig(input_path=tmp_path / "feed.nmea", static_ttl_s=300, gap_ttl_days=1.0)
    plain = PlainPipeline(config)  # the retention: 19 minutes

    def tag_time(line: str) -> int:
        return int(line.split("c:")[1].split("*")[0])

    def watching() -> set[int]:
        return {mmsi for mmsi, store in plain.vessels.items() if store.gap_watch()}

    at_hour_20 = gap_cases.T0 + 20 * gap_cases.HOUR
    plain.feed(line for line in lines if tag_time(line) < at_hour_20)
    silent = {gap_cases.COVERED, gap_cases.EMPTY, gap_cases.COASTAL, gap_cases.OPEN}
    assert watching() == silent
    for mmsi in silent:  # what the dedup and the tracks kept is gone, the gap's last position is not
        store = plain.vessels[mmsi]
        assert mmsi not in plain.seen and store.static("5") is None and store.track() is None
        gaps = store.gaps()
        assert gaps is not None and gaps.last is not None
    plain.feed(line for line in lines if tag_time(line) >= at_hour_20)
    assert watching() == {gap_cases.OPEN}  # the others are back, with their full state
    # A day past the open gap's last position, one neighbour still heard: its state is dropped; the
    # others, silent since hour 30, are kept for their gaps.
    lat, lon = gap_cases.PLACES[gap_cases.NEIGHBOURS[0]]
    later = gap_cases.T0 + 10 * gap_cases.HOUR + 86_400
    plain.feed(tagged(position(gap_cases.NEIGHBOURS[0], lat, lon, sog=8.0), later + k * 600) for k in range(1, 13))
    assert gap_cases.OPEN not in plain.vessels
    assert watching() == {gap_cases.COVERED, gap_cases.NEIGHBOURS[1], gap_cases.EMPTY, gap_cases.COASTAL}
