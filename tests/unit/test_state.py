"""The Python operators' state (ais_pipeline.functions.state) against fakes of Flink's keyed state
and timers: the dedup operator's write-behind copy writes exactly what changed when a marker
comes, a restore loads what was written (timers included), shards are kept apart, and a vessel or
group that is gone leaves no state behind."""

from __future__ import annotations

import pytest

from ais_pipeline.functions.state import VESSELS_STATE, LaneCsv, LaneGroups, ShardVessels
from ais_pipeline.rules.dedup import VesselLogic, VesselMeta
from ais_pipeline.rules.multipart import PendingGroup
from ais_pipeline.rules.tracks import Fix
from ais_pipeline.rules.windows import WindowSpec
from tests.support.flink_fakes import FakeRuntimeContext, FakeTimerService

pytestmark = pytest.mark.unit

LOGIC = VesselLogic(WindowSpec(60_000, 900_000, 60_000, 120_000), 120_000, 2_000, 86_400_000, 10_000, 6)


def bound(ctx: FakeRuntimeContext, store: ShardVessels, shard: int) -> FakeTimerService:
    ctx.key = shard  # Flink sets the current key before calling the operator
    timers = FakeTimerService(ctx)
    store.bind(shard, timers)
    return timers


def a_vessel(store: ShardVessels, mmsi: int, ts: int) -> None:
    vessel = store.vessel(mmsi)
    vessel.remember(f"payload-{ts},0", ts)
    vessel.set_meta(VesselMeta(5212345, 412345, ts, ts, ts, ts + 60_000))
    vessel.set_static("5", '{"shipname":"X"}', ts)
    vessel.register_timer(ts + 60_000)


def test_the_write_behind_copy_reaches_keyed_state_only_on_a_marker_and_only_what_changed():
    ctx = FakeRuntimeContext()
    store = ShardVessels(ctx, LOGIC.new_track, LOGIC.new_gaps)  # type: ignore[arg-type]
    bound(ctx, store, 3)
    a_vessel(store, 244000003, 1_000)
    a_vessel(store, 244000019, 2_000)
    assert ctx.held() == {}  # nothing written before the marker
    store.flush()
    held = ctx.held()[(VESSELS_STATE, 3)]
    assert sorted(held) == [244000003, 244000019]
    row = held[244000003]
    # The meta (no track timer, no gap timer, not kept for its gap alone, no ship type yet), the
    # identities, the static reports, no track, no gaps.
    assert list(row[:10]) == [5212345, 412345, 1_000, 1_000, 1_000, 61_000, -(2**63), -(2**63), 0, "unknown"]
    assert dict(row[10]) == {"payload-1000,0": 1_000}
    assert row[12] is None and row[13] is None

    # A second marker with nothing changed writes nothing; one change writes that vessel alone.
    ctx.maps[(VESSELS_STATE, 3)][244000019] = "left alone"
    store.flush()
    store.vessel(244000003).remember("payload-1500,0", 1_500)
    store.flush()
    assert ctx.maps[(VESSELS_STATE, 3)][244000019] == "left alone"
    assert dict(ctx.maps[(VESSELS_STATE, 3)][244000003][10]) == {"payload-1000,0": 1_000, "payload-1500,0": 1_500}


def test_a_restore_loads_what_was_written_with_its_cleanup_timers():
    ctx = FakeRuntimeContext()
    store = ShardVessels(ctx, LOGIC.new_track, LOGIC.new_gaps)  # type: ignore[arg-type]
    bound(ctx, store, 5)
    a_vessel(store, 244000005, 10_000)
    store.flush()

    restored = ShardVessels(ctx, LOGIC.new_track, LOGIC.new_gaps)  # type: ignore[arg-type]  # a new instance on the restored state
    bound(ctx, restored, 5)
    vessel = restored.vessel(244000005)
    assert vessel.first_seen("payload-10000,0") == 10_000
    assert vessel.meta() == VesselMeta(5212345, 412345, 10_000, 10_000, 10_000, 70_000)
    assert vessel.static("5") == ('{"shipname":"X"}', 10_000)
    assert restored.due(70_000) == {244000005}  # the cleanup timer, known again
    assert restored.keys_held() == 1


def test_shards_are_kept_apart_and_one_flink_timer_serves_every_vessel_due_at_a_time():
    ctx = FakeRuntimeContext()
    store = ShardVessels(ctx, LOGIC.new_track, LOGIC.new_gaps)  # type: ignore[arg-type]
    timers = bound(ctx, store, 1)
    store.vessel(244000001).register_timer(60_000)
    store.vessel(244000017).register_timer(60_000)
    assert timers.event_time == {(1, 60_000)}
    timers_2 = bound(ctx, store, 2)
    store.vessel(244000002).register_timer(60_000)
    assert timers_2.event_time == {(2, 60_000)}
    bound(ctx, store, 1)
    assert store.due(60_000) == {244000001, 244000017}
    assert store.due(60_000) == set()
    assert store.keys_held() == 3


def test_a_shards_timer_takes_every_timer_of_the_shard_the_watermark_passed_in_flinks_order():
    ctx = FakeRuntimeContext()
    store = ShardVessels(ctx, LOGIC.new_track, LOGIC.new_gaps)  # type: ignore[arg-type]
    timers = bound(ctx, store, 1)
    for mmsi, ts in ((244000001, 60_000), (244000002, 70_000), (244000003, 90_000)):
        store.vessel(mmsi).register_timer(ts)
    timers.event_time.discard((1, 60_000))  # Flink fires it: the watermark is now 80,000
    taken = []
    for ts, due in store.due_until(60_000, 80_000):
        taken.append((ts, due))
        if ts == 60_000:  # a timer registered meanwhile, before the next one due
            store.vessel(244000004).register_timer(65_000)
    assert taken == [(60_000, {244000001}), (65_000, {244000004}), (70_000, {244000002})]
    assert timers.event_time == {(1, 90_000)}  # the ones taken are not fired again
    assert list(store.due_until(60_000, 80_000)) == []


def test_a_vessel_kept_for_its_gap_alone_is_counted_apart_also_after_a_restore():
    ctx = FakeRuntimeContext()
    store = ShardVessels(ctx, LOGIC.new_track, LOGIC.new_gaps)  # type: ignore[arg-type]
    bound(ctx, store, 4)
    a_vessel(store, 244000004, 1_000)
    a_vessel(store, 244000020, 1_000)
    silent = store.vessel(244000020)
    silent.clear_but_gaps()
    meta = silent.meta()
    assert meta is not None
    meta.gap_watch = 1
    silent.set_meta(meta)
    store.flush()
    assert (store.keys_held(), store.gap_keys_held()) == (1, 1)
    assert ctx.held()[(VESSELS_STATE, 4)][244000020][10] == {}  # no identities left

    restored = ShardVessels(ctx, LOGIC.new_track, LOGIC.new_gaps)  # type: ignore[arg-type]
    bound(ctx, restored, 4)
    assert (restored.keys_held(), restored.gap_keys_held()) == (1, 1)
    restored.vessel(244000020).resume()  # heard again
    assert (restored.keys_held(), restored.gap_keys_held()) == (2, 0)
    restored.vessel(244000004).clear_but_gaps()
    restored.vessel(244000004).clear()  # past the gap's TTL
    assert (restored.keys_held(), restored.gap_keys_held()) == (1, 0)


def test_a_cleared_vessel_leaves_no_state_behind():
    ctx = FakeRuntimeContext()
    store = ShardVessels(ctx, LOGIC.new_track, LOGIC.new_gaps)  # type: ignore[arg-type]
    bound(ctx, store, 7)
    a_vessel(store, 244000007, 1_000)
    store.flush()
    vessel = store.vessel(244000007)
    for identity, _ in vessel.identities():
        vessel.forget(identity)
    vessel.clear()
    store.flush()
    assert ctx.held() == {} and store.keys_held() == 0


def group(deadline: int, next_num: int = 2) -> PendingGroup:
    return PendingGroup(2, next_num, "539aMs", "\\g:1-2-7837*00\\!AIVDM,2,1,0,,539aMs,0*12", "117", 1_000, deadline)


def test_a_new_multipart_group_arms_its_deadline_rounded_up_to_the_second_and_leaves_nothing_once_cleared():
    ctx = FakeRuntimeContext()
    ctx.key = 0  # the lane
    groups = LaneGroups(ctx)  # type: ignore[arg-type]
    timers = FakeTimerService(ctx)
    groups.timers = timers
    groups.store("g:7837").put(group(deadline=61_001))
    groups.store("g:9999").put(group(deadline=30_000))
    assert timers.processing_time == {(0, 62_000), (0, 30_000)}
    groups.store("g:7837").put(group(deadline=61_001, next_num=3))  # the same group goes on: no new timer
    assert len(timers.processing_time) == 2
    assert groups.pending() == ["g:7837", "g:9999"]
    assert groups.expired(30_000) == ["g:9999"]
    assert groups.store("g:7837").get() == group(deadline=61_001, next_num=3)
    for key in groups.pending():
        groups.store(key).clear()
    assert ctx.held() == {}


def test_a_restored_parser_goes_on_in_the_csv_file_whose_header_it_will_not_read_again():
    from ais_pipeline.rules.lane import DictGroupStores, LaneParser
    from ais_pipeline.rules.records import Report
    from tests.support.archives import Row, noaa_csv

    lines = noaa_csv([Row(367000001, f"2025-01-01 00:00:0{i}", 40.5 + i / 100, -73.9) for i in range(4)], "2025")
    header, *rows = lines.splitlines()
    ctx = FakeRuntimeContext()
    ctx.key = 0
    csv, parser = LaneCsv(ctx), LaneParser("auto", 300_000, 60_000)  # type: ignore[arg-type]
    csv.load(parser)
    for line in [header, *rows[:2]]:
        parser.parse(line)
    csv.save(parser)
    restored_csv, restored = LaneCsv(ctx), LaneParser("auto", 300_000, 60_000)  # type: ignore[arg-type]
    restored_csv.load(restored)  # the source goes on after the lines it had emitted
    assert restored.csv_state() == (header, 3)
    assert all(isinstance(restored.parse(row), Report) for row in rows[2:])
    assert restored.line(rows[3], 1_900_000_000_000, DictGroupStores()) is not None


def test_a_restore_loads_a_vessels_tracks_and_their_timer():
    ctx = FakeRuntimeContext()
    store = ShardVessels(ctx, LOGIC.new_track, LOGIC.new_gaps)  # type: ignore[arg-type]
    bound(ctx, store, 3)
    a_vessel(store, 211000001, 1_000_000)
    vessel = store.vessel(211000001)
    track = LOGIC.new_track()
    lines = ('{"id":"x","mmsi":211000001}', '{"window":"tumbling"}')
    for ts, lat in ((900_000, 54.0), (960_000, 54.001), (961_000, 55.5)):  # the last one conflicts
        track.add(Fix(ts, lat, 10.0, "u1x55w", "cargo", 10_000, 1, True, False, 1_020_000, lines))
    track.advance(961_000)
    track.add(Fix(1_020_000, 54.002, 10.0, "u1x55w", "tanker"))
    vessel.set_track(track)
    meta = vessel.meta()
    assert meta is not None
    meta.hours_at = 1_019_999
    vessel.set_meta(meta)
    store.flush()
    restored = ShardVessels(ctx, LOGIC.new_track, LOGIC.new_gaps)  # type: ignore[arg-type]
    bound(ctx, restored, 3)
    again = restored.vessel(211000001).track()
    assert again is not None
    assert (again.pending, again.tracks, again.released_to, again.next_id) == (
        track.pending, track.tracks, track.released_to, track.next_id,
    )  # fmt: skip
    assert len(again.tracks) == 2 and again.tracks[1].beaten is not None
    assert restored.due(1_019_999) == {211000001}  # the tracks' timer, mapped back to its vessel
