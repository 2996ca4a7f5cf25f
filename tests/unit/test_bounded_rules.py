"""The rules keep their state bounded: identities are pruned behind a vessel's newest report, a
silent vessel is dropped by its event-time timer, and a cell drops its panes once every window is
closed."""

from __future__ import annotations

import pytest

from ais_pipeline.rules.copies import ExactCopies
from ais_pipeline.rules.dedup import DictVesselStore, VesselLogic
from ais_pipeline.rules.parse import parse_nmea
from ais_pipeline.rules.records import Report, VesselPane
from ais_pipeline.rules.windows import CellWindows, DictCellStore, WindowSpec
from tests.support.nmea import BASE, position, tagged

pytestmark = pytest.mark.unit

SPEC = WindowSpec(window_ms=60_000, slide_size_ms=900_000, slide_ms=60_000, lateness_ms=120_000)
T0 = (BASE - BASE % 60) * 1000


def logic() -> VesselLogic:
    return VesselLogic(SPEC, 120_000, 2_000, 86_400_000, 10_000, 6)


def report(i: int, t_ms: int) -> Report:
    r = parse_nmea(tagged(position(244000001, 52.0 + i / 1000, 4.0), t_ms // 1000))
    assert isinstance(r, Report)
    return r


def test_identities_are_pruned_behind_the_vessels_newest_report():
    horizon = logic().identity_horizon_ms  # TTL + sliding size + lateness + out-of-orderness
    assert horizon == 120_000 + 900_000 + 120_000 + 10_000
    copies, seen = ExactCopies(SPEC, 120_000, horizon), None
    for i in range(200):  # one report every 30 s for 100 minutes
        r = report(i, T0 + i * 30_000)
        copy, seen, _ = copies.decide(seen, r.ts, r.msg_type, r.identity)
        assert not copy
    assert seen is not None
    newest = T0 + 199 * 30_000
    assert all(first >= newest - horizon - 120_000 for first in seen.ids.values())
    assert len(seen.ids) <= (horizon + 120_000) // 30_000 + 1 < 200


def test_a_silent_vessel_is_dropped_by_its_cleanup_timer():
    vessel, store = logic(), DictVesselStore()
    vessel.process(store, report(0, T0), T0 - 10_001)
    meta = store.meta()
    # Its cleanup, and its vessel-hours track's next step (the position waits for the watermark).
    assert meta is not None and store.timers == {meta.cleanup_at, meta.hours_at}
    assert meta.hours_at == SPEC.timer_at_or_after(T0)
    # The static TTL is longer; the timer falls on the last millisecond of the watermark's step
    # (a minute here), the first a stepped watermark reaches after the same record as an exact one.
    assert meta.cleanup_at == SPEC.timer_at_or_after(T0 + max(vessel.identity_horizon_ms, 86_400_000))
    assert meta.cleanup_at == T0 + 86_400_000 + 59_999
    vessel.on_timer(store, meta.cleanup_at - 1)  # not its timer: nothing happens
    assert store.meta() is not None
    vessel.on_timer(store, meta.cleanup_at)
    assert store.meta() is None and store.static("5") is None


def test_a_vessel_heard_again_moves_its_cleanup_instead_of_losing_state():
    vessel, store = logic(), DictVesselStore()
    vessel.process(store, report(0, T0), T0 - 10_001)
    first_cleanup = store.meta().cleanup_at  # type: ignore[union-attr]
    vessel.process(store, report(1, T0 + 3_600_000), T0 + 3_590_000)
    store.timers.clear()
    vessel.on_timer(store, first_cleanup)
    meta = store.meta()
    assert meta is not None and store.timers == {T0 + 3_600_000 + 86_400_000 + 59_999} == {meta.cleanup_at}


def test_a_vessels_track_holds_nothing_once_its_positions_are_used():
    vessel, store = logic(), DictVesselStore()
    for i in range(3):  # one a minute: two segments of a minute each
        vessel.process(store, report(i, T0 + i * 60_000), T0 + i * 60_000 - 10_001)
    track = store.track()
    assert track is not None and len(track.pending) == 2 and len(track.tracks) == 1
    meta = store.meta()
    assert meta is not None
    while meta.hours_at != -(2**63):
        vessel.on_timer(store, meta.hours_at, 244000001)
    time = [(p.pane_start - T0, p.vessel_ms) for p in vessel.released if p.vessel_ms]
    assert time == [(0, 60_000), (60_000, 60_000)]
    assert sum(p.reports for p in vessel.released) == 3  # each position's report, once judged
    track = store.track()  # the last position dropped past the gap cap: only its lineage's end is held
    assert track is not None and track.pending == [] and track.tracks == []
    assert [f.ts for f in track.recent] == [T0 + 120_000]


def test_timers_fall_on_the_last_millisecond_of_a_watermark_step():
    assert SPEC.watermark_step_ms == 60_000  # gcd of the pane (60 s) and the lateness (120 s)
    assert WindowSpec(60_000, 900_000, 60_000, 90_000).watermark_step_ms == 30_000
    assert [SPEC.timer_at_or_after(T0 + d) for d in (-1, 0, 59_999, 60_000)] == [
        T0 - 1,
        T0 + 59_999,
        T0 + 59_999,
        T0 + 119_999,
    ]


def test_a_cell_drops_its_panes_and_revisions_once_every_window_is_closed():
    windows, store = CellWindows(SPEC), DictCellStore()
    pane = VesselPane("u14zg4", T0, 244000001, 1, 10_000, 1, True, True)
    windows.on_contribution(store, pane, T0 - 10_001)
    assert [p for p, _ in store.panes()] == [T0]
    retire = SPEC.pane_retired_at(T0)
    assert retire == T0 + 900_000 - 1 + 120_000  # the last sliding window's end + lateness
    fired = []
    while store.timers:  # fire timers in time order, new ones included, as the watermark would
        ts = min(store.timers)
        store.timers.discard(ts)
        fired += windows.on_timer(store, "u14zg4", ts)
    assert store.panes() == [] and store.revisions() == []
    assert sorted((a.window, a.revision) for a in fired) == [("sliding", 0)] * 15 + [("tumbling", 0)]


def test_a_report_ahead_of_its_vessels_timers_takes_their_steps_first_as_they_would_have_fired():
    """At parallelism above 1 a report's watermark (its lane's) can be ahead of the operator's:
    the track's timers not fired yet are taken first, each at its own step, so the segments and
    their lateness are those of a run whose timers fired in time."""

    def run(fire_timers: bool) -> list[VesselPane]:
        vessel, store = logic(), DictVesselStore()
        times = [0, 170_000, 400_000, 1_200_000]  # the last one's watermark passes every step before it
        for i, t in enumerate(times):
            meta = store.meta()
            while fire_timers and meta is not None and meta.hours_at <= SPEC.timer_at_or_before(T0 + t - 10_001):
                vessel.on_timer(store, meta.hours_at, 244000001)
            vessel.process(store, report(i, T0 + t), T0 + t - 10_001)
        return vessel.released

    in_time = run(fire_timers=True)
    time = [(p.pane_start - T0, p.vessel_ms) for p in in_time if p.vessel_ms]
    assert time[:3] == [(0, 60_000), (60_000, 60_000), (120_000, 50_000)]
    assert run(fire_timers=False) == in_time
