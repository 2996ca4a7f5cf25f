"""The Python operators' state (ais_pipeline.functions.state) against fakes of Flink's keyed state
and timers: the dedup operator's write-behind copy writes exactly what changed when a marker
comes, a restore loads what was written (timers included), shards are kept apart, a vessel or
group that is gone leaves no state behind, and the bounded cache writes the vessels it drops
under their shard's key and reads them back as they were."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ais_pipeline.functions.state import VESSELS_STATE, LaneCsv, LaneGroups, ShardVessels, shard_keys
from ais_pipeline.rules.dedup import VesselLogic, VesselMeta
from ais_pipeline.rules.multipart import PendingGroup
from ais_pipeline.rules.tracks import Fix
from ais_pipeline.rules.windows import WindowSpec
from tests.support.flink_fakes import FakeKeySwitch, FakeRuntimeContext, FakeTimerService

pytestmark = pytest.mark.unit

LOGIC = VesselLogic(WindowSpec(60_000, 900_000, 60_000, 120_000), 120_000, 2_000, 86_400_000, 10_000, 6)


SHARDS = 128
KEYS = shard_keys(SHARDS)  # shard number -> its Flink key


def new_store(ctx: FakeRuntimeContext) -> ShardVessels:
    return ShardVessels(ctx, LOGIC.new_track, LOGIC.new_gaps, SHARDS)  # type: ignore[arg-type]


def bound(ctx: FakeRuntimeContext, store: ShardVessels, key: int) -> FakeTimerService:
    ctx.key = key  # Flink sets the current key before calling the operator
    timers = FakeTimerService(ctx)
    store.bind(key, timers)
    return timers


def marker(ctx: FakeRuntimeContext, store: ShardVessels, shard: int) -> FakeTimerService:
    """A marker for a shard, as the batcher sends one: an empty batch under the shard's key."""
    timers = bound(ctx, store, KEYS[shard])
    store.marker()
    return timers


def stored(ctx: FakeRuntimeContext, shard: int, mmsi: int) -> Any:
    """A vessel's value in keyed state, parsed."""
    return json.loads(ctx.maps[(VESSELS_STATE, KEYS[shard])][mmsi])


def a_vessel(store: ShardVessels, mmsi: int, ts: int) -> None:
    vessel = store.vessel(mmsi)
    vessel.set_static("24A", f"name-{ts}", ts)
    vessel.set_meta(VesselMeta(5212345, 412345, ts, ts, ts, ts + 60_000))
    vessel.set_static("5", '{"shipname":"X"}', ts)
    vessel.register_timer(ts + 60_000)


def test_the_shard_keys_are_the_golden_ones_the_java_batcher_has_too():
    golden = json.loads((Path(__file__).parents[1] / "golden" / "shard_keys.json").read_text())
    assert golden["shards"] == SHARDS and KEYS == golden["keys"]
    assert len(set(KEYS)) == SHARDS


def test_the_write_behind_copy_reaches_keyed_state_only_on_a_marker_and_only_what_changed():
    ctx = FakeRuntimeContext()
    store = new_store(ctx)
    marker(ctx, store, 3)  # loads shard 3 (nothing yet)
    a_vessel(store, 244000003, 1_000)  # 244000000 is 0 mod 128: shard 3
    a_vessel(store, 244000131, 2_000)  # shard 3
    assert ctx.held() == {}  # nothing written before the marker
    marker(ctx, store, 3)
    held = ctx.held()[(VESSELS_STATE, KEYS[3])]
    assert sorted(held) == [244000003, 244000131]
    # One JSON value a vessel: the meta (no track timer, no gap timer, not kept for its gap alone,
    # no ship type yet), the static reports; no track, no gaps.
    assert json.loads(held[244000003]) == {
        "m": [5212345, 412345, 1_000, 1_000, 1_000, 61_000, -(2**63), -(2**63), 0, "unknown", -(2**63)],
        "s": {"24A": ["name-1000", 1_000], "5": ['{"shipname":"X"}', 1_000]},
    }

    # A second marker with nothing changed writes nothing; one change writes that vessel alone.
    ctx.maps[(VESSELS_STATE, KEYS[3])][244000131] = "left alone"
    marker(ctx, store, 3)
    store.vessel(244000003).set_static("24A", "name-1500", 1_500)
    marker(ctx, store, 3)
    assert ctx.maps[(VESSELS_STATE, KEYS[3])][244000131] == "left alone"
    assert stored(ctx, 3, 244000003)["s"]["24A"] == ["name-1500", 1_500]


def test_a_restore_loads_what_was_written_and_registers_its_timers_under_the_shards_key():
    ctx = FakeRuntimeContext()
    store = new_store(ctx)
    marker(ctx, store, 5)
    a_vessel(store, 244000005, 10_000)
    marker(ctx, store, 5)

    restored = new_store(ctx)  # a new instance on the restored state
    timers = marker(ctx, restored, 5)
    vessel = restored.vessel(244000005)
    assert vessel.static("24A") == ("name-10000", 10_000)
    assert vessel.meta() == VesselMeta(5212345, 412345, 10_000, 10_000, 10_000, 70_000)
    assert vessel.static("5") == ('{"shipname":"X"}', 10_000)
    assert timers.event_time == {(KEYS[5], 70_000)}  # the cleanup timer, registered again
    assert list(restored.due_until(70_000, 70_000)) == [(70_000, {244000005})]
    assert restored.keys_held() == 1


def test_a_batch_under_one_key_holds_vessels_of_several_shards_each_written_under_its_own_key():
    ctx = FakeRuntimeContext()
    store = new_store(ctx)
    marker(ctx, store, 1)
    marker(ctx, store, 2)
    timers = bound(ctx, store, KEYS[0])  # a batch under the subtask's first shard's key
    for mmsi in (244000001, 244000002, 244000129):
        a_vessel(store, mmsi, 0)  # its timer at 60,000
    assert timers.event_time == {(KEYS[0], 60_000)}  # one Flink timer serves every vessel due then
    marker(ctx, store, 1)
    marker(ctx, store, 2)
    assert sorted(ctx.maps[(VESSELS_STATE, KEYS[1])]) == [244000001, 244000129]
    assert sorted(ctx.maps[(VESSELS_STATE, KEYS[2])]) == [244000002]
    bound(ctx, store, KEYS[0])
    assert list(store.due_until(60_000, 60_000)) == [(60_000, {244000001, 244000002, 244000129})]
    assert list(store.due_until(60_000, 60_000)) == []
    assert store.keys_held() == 3


def test_a_vessel_of_a_shard_not_loaded_and_a_marker_under_no_shards_key_are_errors():
    ctx = FakeRuntimeContext()
    store = new_store(ctx)
    bound(ctx, store, KEYS[0])
    with pytest.raises(ValueError, match="shard 9 was not loaded"):
        store.vessel(244000009)
    bound(ctx, store, max(KEYS) + 1)
    with pytest.raises(ValueError, match="no vessel shard's key"):
        store.marker()


def test_a_vessels_timers_under_two_keys_are_taken_in_their_order_by_the_first_to_fire():
    ctx = FakeRuntimeContext()
    store = new_store(ctx)
    marker(ctx, store, 3)
    a_vessel(store, 244000003, 0)  # its cleanup timer at 60,000 (time 0's report)
    marker(ctx, store, 3)
    restored = new_store(ctx)
    shard_timers = marker(ctx, restored, 3)  # the load registers it again, under the shard's key
    lead_timers = bound(ctx, restored, KEYS[0])  # a batch under the subtask's first shard's key
    restored.vessel(244000003).register_timer(50_000)  # a step, before it
    assert shard_timers.event_time == {(KEYS[3], 60_000)} and lead_timers.event_time == {(KEYS[0], 50_000)}
    # The watermark jumps to 70,000: Flink fires the lead key's timer first (50,000).
    assert list(restored.due_until(50_000, 70_000)) == [(50_000, {244000003}), (60_000, {244000003})]
    bound(ctx, restored, KEYS[3])
    assert list(restored.due_until(60_000, 70_000)) == []  # the shard key's timer finds nothing due


def test_a_timer_takes_every_vessel_due_up_to_the_watermark_in_flinks_order():
    ctx = FakeRuntimeContext()
    store = new_store(ctx)
    marker(ctx, store, 1)
    marker(ctx, store, 2)
    marker(ctx, store, 3)
    marker(ctx, store, 4)
    timers = bound(ctx, store, KEYS[1])
    for mmsi, ts in ((244000001, 60_000), (244000002, 70_000), (244000003, 90_000)):
        store.vessel(mmsi).register_timer(ts)
    timers.event_time.discard((KEYS[1], 60_000))  # Flink fires it: the watermark is now 80,000
    taken = []
    for ts, due in store.due_until(60_000, 80_000):
        taken.append((ts, due))
        if ts == 60_000:  # a timer registered meanwhile, before the next one due
            store.vessel(244000004).register_timer(65_000)
    assert taken == [(60_000, {244000001}), (65_000, {244000004}), (70_000, {244000002})]
    assert timers.event_time == {(KEYS[1], 90_000)}  # the ones taken are not fired again
    assert list(store.due_until(60_000, 80_000)) == []


def test_a_vessel_kept_for_its_gap_alone_is_counted_apart_also_after_a_restore():
    ctx = FakeRuntimeContext()
    store = new_store(ctx)
    marker(ctx, store, 4)
    a_vessel(store, 244000004, 1_000)
    a_vessel(store, 244000132, 1_000)
    silent = store.vessel(244000132)
    silent.clear_but_gaps()
    meta = silent.meta()
    assert meta is not None
    meta.gap_watch = 1
    silent.set_meta(meta)
    marker(ctx, store, 4)
    assert (store.keys_held(), store.gap_keys_held()) == (1, 1)
    assert stored(ctx, 4, 244000132).keys() == {"m"}  # its smallest form: no static, no track

    restored = new_store(ctx)
    marker(ctx, restored, 4)
    assert (restored.keys_held(), restored.gap_keys_held()) == (1, 1)
    restored.vessel(244000132).resume()  # heard again
    assert (restored.keys_held(), restored.gap_keys_held()) == (2, 0)
    restored.vessel(244000004).clear_but_gaps()
    restored.vessel(244000004).clear()  # past the gap's TTL
    assert (restored.keys_held(), restored.gap_keys_held()) == (1, 0)


def test_a_cleared_vessel_leaves_no_state_behind():
    ctx = FakeRuntimeContext()
    store = new_store(ctx)
    marker(ctx, store, 7)
    a_vessel(store, 244000007, 1_000)
    marker(ctx, store, 7)
    vessel = store.vessel(244000007)
    vessel.clear()
    marker(ctx, store, 7)
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
    store = new_store(ctx)
    marker(ctx, store, 65)  # 211000001 is 65 mod 128
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
    marker(ctx, store, 65)
    restored = new_store(ctx)
    marker(ctx, restored, 65)
    again = restored.vessel(211000001).track()
    assert again is not None
    assert (again.pending, again.tracks, again.released_to, again.next_id) == (
        track.pending, track.tracks, track.released_to, track.next_id,
    )  # fmt: skip
    assert len(again.tracks) == 2 and again.tracks[1].beaten is not None
    due = list(restored.due_until(1_019_999, 1_019_999))
    assert due == [(1_019_999, {211000001})]  # the tracks' timer, mapped back to its vessel


def a_written_shard(
    ctx: FakeRuntimeContext,
    shard: int,
    count: int,
    apart: int,
    then: Callable[[ShardVessels, int, int], None] | None = None,
) -> list[int]:
    """``count`` vessels of a shard, the n-th heard at ``n * apart`` (and ``then`` done to it),
    written to keyed state by a store that is then left: what a restore finds."""
    store = new_store(ctx)
    marker(ctx, store, shard)
    vessels = [244000000 + shard + 128 * i for i in range(count)]
    for n, mmsi in enumerate(vessels):
        a_vessel(store, mmsi, n * apart)
        if then is not None:
            then(store, n, mmsi)
    marker(ctx, store, shard)
    return vessels


def bounded_store(ctx: FakeRuntimeContext, limit: int) -> tuple[ShardVessels, FakeKeySwitch]:
    switch = FakeKeySwitch(ctx)
    store = ShardVessels(ctx, LOGIC.new_track, LOGIC.new_gaps, SHARDS, limit, switch)  # type: ignore[arg-type]
    return store, switch


def test_the_bounded_cache_writes_the_vessels_it_drops_under_their_shards_key_and_reads_them_back():
    ctx = FakeRuntimeContext()
    store, _ = bounded_store(ctx, 10)
    for shard in (1, 2):
        marker(ctx, store, shard)
    timers = bound(ctx, store, KEYS[0])  # a batch under the subtask's first shard's key
    vessels = [244000001 + 128 * i for i in range(15)] + [244000002 + 128 * i for i in range(15)]  # shards 1, 2
    for n, mmsi in enumerate(vessels):
        a_vessel(store, mmsi, n * 1_000)
    store.evict()  # the end of the call: down to 9 of 10, the 21 used longest ago written first
    assert store.cached() == 9 and list(store.cache) == vessels[21:]
    assert ctx.key == KEYS[0]  # the batch's key again
    written = {mmsi for shard in (1, 2) for mmsi in ctx.maps.get((VESSELS_STATE, KEYS[shard]), {})}
    assert written == set(vessels[:21])
    assert all(key == KEYS[0] for key, _ in timers.event_time)  # no timer under a switched key
    assert (store.vessels_held, store.keys_held()) == (30, 30)

    # Heard again: read back before the batch that needs it, as it was.
    store.prefetch([vessels[0], vessels[20], 244000001 + 128 * 20])  # two in keyed state, one new
    vessel = store.vessel(vessels[0])
    assert vessel.static("24A") == ("name-0", 0) and vessel.static("5") == ('{"shipname":"X"}', 0)
    assert vessel.meta() == VesselMeta(5212345, 412345, 0, 0, 0, 60_000)
    assert store.cached() == 11 and ctx.key == KEYS[0]
    assert (store.vessels_held, store.keys_held()) == (30, 30)

    # A marker writes what changed since: the vessels held and changed.
    vessel.set_static("24A", "name-500", 500)
    marker(ctx, store, 1)
    assert stored(ctx, 1, vessels[0])["s"]["24A"] == ["name-500", 500]


def test_a_vessel_cleared_and_heard_again_before_its_shard_is_written_starts_anew_with_a_bounded_cache():
    ctx = FakeRuntimeContext()
    store, _ = bounded_store(ctx, 2)
    marker(ctx, store, 1)
    for mmsi in (244000001, 244000129, 244000257):
        a_vessel(store, mmsi, 1_000)
    marker(ctx, store, 1)  # all three in keyed state
    bound(ctx, store, KEYS[1])
    store.vessel(244000001).clear()  # gone: its removal waits for the next marker
    store.evict()
    store.prefetch([244000001])  # not read back from keyed state, where its old row still is
    assert store.vessel(244000001).meta() is None
    a_vessel(store, 244000001, 5_000)
    marker(ctx, store, 1)
    assert stored(ctx, 1, 244000001)["s"]["24A"] == ["name-5000", 5_000]


def test_a_restore_with_a_bounded_cache_holds_part_of_a_shard_and_registers_every_vessels_timer():
    ctx = FakeRuntimeContext()
    vessels = a_written_shard(ctx, 6, 8, 60_000)

    restored, switch = bounded_store(ctx, 3)
    timers = marker(ctx, restored, 6)
    assert restored.cached() == 3 and restored.vessels_held == 8
    assert timers.event_time == {(KEYS[6], n * 60_000 + 60_000) for n in range(8)}
    bound(ctx, restored, KEYS[0])
    due = [mmsi for _, vessels_due in restored.due_until(60_000, 10**9) for mmsi in vessels_due]
    assert due == vessels
    restored.prefetch(due)
    assert all(restored.holds(mmsi) for mmsi in due) and switch.switches == 1  # one switch for the shard
    assert restored.vessel(vessels[7]).meta() == VesselMeta(5212345, 412345, 420_000, 420_000, 420_000, 480_000)


def test_firing_takes_each_vessels_timers_in_their_order_reading_each_vessel_once_with_a_bounded_cache():
    ctx = FakeRuntimeContext()

    def track_timer(store: ShardVessels, n: int, mmsi: int) -> None:  # each cleanup due at 60,000 + n * 1,000
        vessel = store.vessel(mmsi)
        meta = vessel.meta()
        assert meta is not None
        meta.hours_at = 200_000 - n * 1_000  # and its track's, latest first
        vessel.set_meta(meta)

    vessels = a_written_shard(ctx, 7, 6, 1_000, track_timer)

    restored, switch = bounded_store(ctx, 2)
    marker(ctx, restored, 7)  # holds 2 of the 6 in Python
    bound(ctx, restored, KEYS[0])
    reads: list[int] = []
    state = restored._state
    get = state.get
    state.get = lambda mmsi: reads.append(mmsi) or get(mmsi)  # type: ignore[method-assign]
    fired: list[tuple[int, int]] = []
    chunks = 0

    def on_timer(vessel: Any, ts: int, mmsi: int) -> None:
        fired.append((mmsi, ts))
        if ts == 200_000:  # the first vessel asks for one more timer, before the watermark
            vessel.register_timer(300_000)
        if ts == 300_000:
            vessel.clear()  # gone: its later timers find nothing

    for _ in restored.fire(60_000, 10**9, on_timer):
        chunks += 1
    # Each vessel's timers in their order, the vessels in the order of their first timer due.
    assert fired == [
        (vessels[0], 60_000), (vessels[0], 200_000), (vessels[0], 300_000),
        *[(mmsi, t) for n, mmsi in enumerate(vessels[1:], 1) for t in (60_000 + n * 1_000, 200_000 - n * 1_000)],
    ]  # fmt: skip
    assert len(reads) == len(set(reads)) >= 4  # no vessel read twice (each has timers due far apart)
    assert switch.switches == len(reads) and chunks == 6  # chunks of half the cache: one vessel each
    assert restored.cached() <= 2 and ctx.key == KEYS[0]
    assert list(restored.due_until(60_000, 10**9)) == []
