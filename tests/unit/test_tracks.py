"""A vessel's tracks (ais_pipeline.rules.tracks): each rule on small cases, then on a real track
with bad fixes added: a bad fix costs only itself, wherever it falls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ais_pipeline.config import PipelineConfig
from ais_pipeline.files import read_lines
from ais_pipeline.rules.outputs import applied, final_aggregates
from ais_pipeline.rules.plain import PlainResult, run_plain
from ais_pipeline.rules.tracks import Events, Fix, VesselTracks, distance_nm, fits
from tests.support.bad_fixes import moved_rows

pytestmark = pytest.mark.unit

MIN = 60_000
T0 = 1_700_000_040_000
HERE = (54.0, 10.0)
FAR = (55.5, 10.0)  # 90 nm north: no vessel gets there in minutes


def fix(t_s: float, where: tuple[float, float] = HERE, north_m: float = 0.0) -> Fix:
    return Fix(T0 + round(t_s * 1000), where[0] + north_m / 111_200, where[1], "cell", "cargo")


def run(fixes: list[Fix], until_s: float = 3600) -> Events:
    """Every fix, in arrival order, then the watermark past them all: what was decided."""
    tracks = VesselTracks(max_gap_ms=10 * MIN)
    out = Events()
    for f in fixes:
        got = tracks.add(f)
        out.accepted += got.accepted
        out.bad += got.bad
        out.segments += got.segments
    got = tracks.advance(T0 + round(until_s * 1000))
    out.accepted += got.accepted
    out.bad += got.bad
    out.segments += got.segments
    assert tracks.empty  # nothing held once the watermark is past every fix and the cap
    return out


def times(fixes: list[Fix]) -> list[float]:
    return sorted((f.ts - T0) / 1000 for f in fixes)


def spans(events: Events) -> list[tuple[float, float]]:
    return sorted(((a.ts - T0) / 1000, (b.ts - T0) / 1000) for a, b in events.segments)


def test_a_fix_fits_when_the_vessel_could_have_got_there_at_the_speed_plus_the_noise():
    a = fix(0)
    assert distance_nm(a, fix(0, north_m=1852)) == pytest.approx(1.0, rel=1e-3)
    assert fits(a, fix(60, north_m=1852 * 50 / 60), 50, 0.27)  # 50 kn for a minute
    assert not fits(a, fix(60, north_m=1852 * 50 / 60 + 600), 50, 0.27)  # and 100 m more than the noise
    assert fits(a, fix(0, north_m=400), 50, 0.27)  # GPS noise at the same second
    assert fits(a, fix(1, FAR), 0, 0.27)  # 0 knots: the rule is off


def test_a_steady_track_is_accepted_with_a_segment_between_each_two_fixes():
    got = run([fix(t, north_m=t * 5) for t in (0, 10, 20, 30)])  # about 10 kn
    assert times(got.accepted) == [0, 10, 20, 30] and not got.bad
    assert spans(got) == [(0, 10), (10, 20), (20, 30)]


def test_a_bad_first_report_is_judged_once_the_next_two_agree():
    got = run([fix(0, FAR), fix(10), fix(20), fix(30)])
    assert times(got.accepted) == [10, 20, 30] and spans(got) == [(10, 20), (20, 30)]
    ((bad, conflict),) = got.bad
    assert bad.ts == T0 and (conflict.ts, conflict.lat) == (T0 + 10_000, HERE[0]) and conflict.knots is not None


def test_a_bad_fix_in_the_middle_of_a_track_costs_only_itself():
    got = run([fix(0), fix(10), fix(20, FAR), fix(30), fix(40)])
    assert times(got.accepted) == [0, 10, 30, 40] and times([b for b, _ in got.bad]) == [20]
    assert spans(got) == [(0, 10), (10, 30), (30, 40)]  # the good fixes' segment goes over it


def test_a_bad_last_report_is_judged_at_the_cap():
    got = run([fix(0), fix(10), fix(20, FAR)])
    assert times(got.accepted) == [0, 10] and times([b for b, _ in got.bad]) == [20]


def test_one_receivers_bad_decode_of_a_transmission_others_heard_right_is_a_bad_fix():
    got = run([fix(0), fix(10), fix(10, FAR), fix(20)])  # the same second, 90 nm off
    (bad, conflict) = got.bad[0]
    assert times([bad]) == [10] and conflict.knots is None and conflict.seconds == 0
    assert times(got.accepted) == [0, 10, 20]


def test_a_vessel_seen_once_is_kept():
    got = run([fix(0, FAR)])
    assert times(got.accepted) == [0] and not got.bad and not got.segments


def test_two_single_fixes_that_disagree_are_both_kept_no_judgement_without_a_real_track():
    got = run([fix(0), fix(60, FAR)])
    assert times(got.accepted) == [0, 60] and not got.bad and not got.segments


def test_two_vessels_sending_one_mmsi_far_apart_keep_two_tracks_and_no_segment_joins_them():
    fixes = [fix(t, HERE if t % 20 == 0 else FAR, north_m=t) for t in range(0, 200, 10)]
    got = run(fixes)
    assert len(got.accepted) == 20 and not got.bad
    assert all(abs(a.lat - b.lat) < 0.01 for a, b in got.segments)
    assert len(got.segments) == 18  # ten fixes each: nine segments a track


def test_a_vessel_that_reappears_far_away_after_a_silence_over_the_cap_starts_a_new_track():
    got = run([fix(0), fix(10), fix(11 * 60, FAR), fix(11 * 60 + 10, FAR)])
    assert times(got.accepted) == [0, 10, 660, 670] and not got.bad
    assert spans(got) == [(0, 10), (660, 670)]


def test_a_late_fix_joins_the_track_it_fits_or_is_a_bad_fix_when_it_fits_none_near_it():
    tracks = VesselTracks(max_gap_ms=10 * MIN)
    for t in (60, 70, 80):
        tracks.add(fix(t))
    tracks.advance(T0 + 80_000)
    before = tracks.add(fix(30))  # before the first fix, within the cap: the segment to it
    assert times(before.accepted) == [30] and spans(before) == [(30, 60)]
    far = tracks.add(fix(40, FAR))  # a late one that fits nothing within the cap
    assert times([b for b, _ in far.bad]) == [40] and not far.accepted


# The real track: a month of MMSI 416000000 from Global Fishing Watch's segmenter's tests, with rows
# 1.5 degrees north of real ones, at the times of real rows, added, one before its first row.
GFW = Path(__file__).parents[1] / "fixtures" / "gpsdiosegment__416000000.json"


def test_bad_fixes_added_to_a_real_track_cost_only_themselves():
    rows = list(read_lines(GFW))
    config = PipelineConfig(input_path=GFW)
    clean = run_plain(config, rows, now_ms=1_800_000_000_000)
    dirty = run_plain(config, moved_rows(rows), now_ms=1_800_000_000_000)
    added = len(moved_rows(rows)) - len(rows)
    assert added == 5
    assert sorted(dirty.positions) == sorted(clean.positions)

    def final(result: PlainResult) -> dict[tuple[str, str, str], dict[str, object]]:
        aggregates = final_aggregates(json.loads(a) for a in result.aggregates)
        return {k: {f: v for f, v in a.items() if f != "revision"} for k, a in aggregates.items()}

    assert final(dirty) == final(clean)
    moved = [json.loads(b) for b in dirty.bad_fixes if json.loads(b)["sog"] == 99]
    assert len(moved) == added and len(dirty.bad_fixes) == len(clean.bad_fixes) + added
    assert not {b["cell"] for b in moved} & {cell for _, cell, _ in final(dirty)}  # their cells hold nothing


def test_a_live_run_writes_each_position_when_it_comes_and_withdraws_the_bad_fixes_to_the_file_runs_positions():
    # The real track with bad fixes added, run as a live run decides it (each kept position
    # written at once, before its track judges it) and as a file run does.
    rows = moved_rows(list(read_lines(GFW)), every=50)
    file_run = run_plain(PipelineConfig(input_path=GFW), rows, now_ms=1_800_000_000_000)
    live = run_plain(PipelineConfig(input_path=GFW, input_feed="udp://127.0.0.1:10110"), rows, now_ms=1_800_000_000_000)
    written = [json.loads(p) for p in live.positions]
    withdrawn = [p for p in written if p.get("withdrawn")]
    assert len(withdrawn) == len(live.bad_fixes) == len(file_run.bad_fixes) > 6
    assert {p["withdrawn"] for p in withdrawn} == {"bad_fixes"}
    order = [p["id"] for p in written]
    assert all(order.index(p["id"]) < order.index(p["id"], order.index(p["id"]) + 1) for p in withdrawn)
    canonical = lambda records: sorted(json.dumps(r, sort_keys=True) for r in records)  # noqa: E731
    assert canonical(applied(written)) == canonical(json.loads(p) for p in file_run.positions)
    assert sorted(live.bad_fixes) == sorted(file_run.bad_fixes)


EQUATOR = (0.0, 0.0)


def test_a_bad_fix_near_a_track_does_not_take_the_tracks_next_fix_from_it():
    # 0 s and 60 s a minute apart on the equator (about 10 kn); at 70 s a fix about a mile off,
    # beaten by the track; at 190 s the track's next fix, which fits both: it goes on the track.
    def at(t: float, lon: float, north_nm: float = 0.0) -> Fix:
        return Fix(T0 + round(t * 1000), north_nm / 60, lon, "cell", "cargo")

    got = run([at(0, 0.0), at(60, 0.003), at(70, 0.0033, 1.0), at(190, 0.0093)])
    assert times(got.accepted) == [0, 60, 190] and times([b for b, _ in got.bad]) == [70]
    assert spans(got) == [(0, 60), (60, 190)]


@pytest.mark.parametrize("silence_min", [20, 60, 90])  # 90 nm in 90 min: 60 kn
def test_a_fix_after_a_silence_is_judged_by_where_the_vessel_was_before_it(silence_min: int):
    tracks = VesselTracks(max_gap_ms=10 * MIN, hold_ms=17 * MIN)
    out = Events()
    for f in (fix(0), fix(10)):
        tracks.add(f)
    for step in range(0, (silence_min + 1) * 60, 60):  # the watermark goes on while it is silent
        got = tracks.advance(T0 + step * 1000)
        out.accepted += got.accepted
    back = silence_min * 60
    tracks.add(fix(back, north_m=200))  # where it was: supported
    tracks.add(fix(back + 30, FAR))  # 90 nm off 30 s later: not supported, beaten by the other
    got = tracks.advance(T0 + (back + 3600) * 1000)
    assert times(got.accepted) == [back] and times([b for b, _ in got.bad]) == [back + 30]


def test_a_late_fix_is_not_judged_against_a_single_fix_that_is_itself_bad():
    tracks = VesselTracks(max_gap_ms=10 * MIN)
    for f in (fix(0), fix(60)):
        tracks.add(f)
    tracks.advance(T0 + 60_000)
    tracks.add(fix(400, FAR))  # beaten by the real track at once
    tracks.advance(T0 + 750_000)
    late = tracks.add(fix(700, north_m=300))  # where the vessel was: not a bad fix
    rest = tracks.advance(T0 + 2_000_000)
    assert times(late.accepted + rest.accepted) == [700]
    assert times([b for b, _ in late.bad + rest.bad]) == [400]


def _step_all(tracks: VesselTracks, fixes: list[Fix], step_s: int = 60, until_s: int = 0) -> Events:
    """Each fix added when its minute comes, the watermark stepping a minute at a time, as the
    job's timers move it; the state is written and read back at every step."""
    out = Events()
    last = max(f.ts for f in fixes) - T0 + 3600_000 if not until_s else until_s * 1000
    by_time = sorted(fixes, key=lambda f: f.ts)
    i = 0
    for at in range(0, last + 1, step_s * 1000):
        while i < len(by_time) and by_time[i].ts - T0 <= at:
            tracks.add(by_time[i])
            i += 1
        got = tracks.advance(T0 + at)
        out.accepted += got.accepted
        out.bad += got.bad
        out.segments += got.segments
        state = json.loads(json.dumps(tracks.to_list()))
        tracks = VesselTracks(tracks.max_gap_ms, tracks.hold_ms).restore(state)
    return out


def test_two_vessels_sharing_one_mmsi_far_apart_keep_both_even_when_one_is_heard_every_twenty_minutes():
    # A heard every minute from 5 min on; B, 90 nm off, twice at first, then every 20 min: each
    # later B fix fits no open track, and goes on from B's last fix (its lineage), so none is
    # judged against A.
    a = [fix(t * 60, north_m=t * 100) for t in range(5, 120)]
    b = [fix(t * 60 + 30, FAR, north_m=t * 50) for t in [0, 1, *range(20, 120, 20)]]
    got = _step_all(VesselTracks(max_gap_ms=10 * MIN, hold_ms=3 * MIN), a + b)
    assert not got.bad and len(got.accepted) == len(a) + len(b)
    assert all(abs(x.lat - y.lat) < 0.1 for x, y in got.segments)  # no segment joins them


def test_a_far_fix_heard_after_a_day_of_silence_while_another_track_is_open_is_a_bad_fix():
    # B's lineage ended more than a day (gpsdio-segment's max_hours) before its next fix.
    a = [fix(t * 60) for t in range(0, 26 * 60, 10)]
    b = [fix(0, FAR), fix(60, FAR), fix((24 * 60 + 30) * 60, FAR)]
    got = _step_all(VesselTracks(max_gap_ms=10 * MIN, hold_ms=3 * MIN), a + b, step_s=600)
    assert times([x for x, _ in got.bad]) == [(24 * 60 + 30) * 60]


@pytest.mark.parametrize("moved_first", [False, True])
def test_a_moved_reading_of_a_transmission_is_a_bad_fix_even_where_another_transmitter_was(moved_first: bool):
    # Two transmitters on one MMSI: A at HERE every 15 min (over the cap: each fix goes on from A's
    # lineage), C at FAR until 2 h before. At 3 h a reading of A's transmission moved to where C
    # was: it fits C's lineage at 0 kn, but A's fix of the same second is the one that is right.
    a = [fix(t * 60) for t in range(0, 4 * 60, 15)]
    c = [fix(t * 60, FAR) for t in range(1, 60, 15)]
    moved = fix(3 * 3600, FAR)
    real = next(f for f in a if f.ts == moved.ts)
    a.remove(real)
    tracks = VesselTracks(max_gap_ms=10 * MIN, hold_ms=3 * MIN)
    got = _step_all(tracks, a + c + ([moved, real] if moved_first else [real, moved]))
    assert [(x.ts, x.lat) for x, _ in got.bad] == [(moved.ts, FAR[0])]
    assert len(got.accepted) == len(a) + len(c) + 1


def test_tracks_written_before_lineages_are_read_back_with_their_one_history_fix():
    tracks = VesselTracks(max_gap_ms=10 * MIN)
    old = [[], [], T0, 3, fix(0).to_list()]  # the history was one fix
    assert [f.ts for f in tracks.restore(old).recent] == [T0]
    assert VesselTracks(max_gap_ms=10 * MIN).restore([[], [], T0, 3, None]).recent == []
    track = [0, fix(0).to_list(), fix(60).to_list(), 2, True, True, [], None, True]  # no continued flag
    assert not tracks.restore([[], [track], T0, 1, None]).tracks[0].continued
