"""Per-vessel deduplication and lateness, in plain Python.

The Flink operator keyed by MMSI calls :meth:`VesselLogic.process` for every report of one vessel
that is not an exact copy (:mod:`ais_pipeline.rules.copies`, the dedup's first rule, decided
before) and :meth:`VesselLogic.on_timer` for its event-time timers, over a :class:`VesselStore`
that it backs with keyed state. Tests and the plain implementation back the same store with dicts.

The rules (docs/rules.md says them for users):

- near duplicate: the same position (5 decimals) as the vessel's last kept report within the near
  window;
- static and voyage reports (5, 24A, 24B): kept when the content differs from the last one kept,
  or when that one is older than the static TTL; otherwise a duplicate;
- a position report too late for every window of both kinds is late, not kept; one too late for
  one kind only is kept and also reported late for that kind;
- tracks and vessel hours: each kept position is held as a fix of the vessel's tracks
  (:class:`ais_pipeline.rules.tracks.VesselTracks`), with the category of the vessel's last kept
  static report, until the watermark passes it and it is judged: an accepted fix goes to the
  positions output and its report to the windows (as judged on arrival, delivered within the
  windows' grace); a bad fix (one the vessel could not have reached from its real track) goes to
  the ``bad_fixes`` output and nowhere else. The segments between a track's fixes are spread
  along their line over the cells they cross (:func:`ais_pipeline.rules.spread.spread`) as pane
  contributions of time (``vessel_ms``), judged late or not, with the grace, against the
  watermark that released them: time too late for its tumbling window is counted in
  ``late_vessel_ms``, and not sent.

A vessel's whole state is dropped once its newest report is older than the retention in event
time: the identity horizon of :mod:`ais_pipeline.rules.copies` (the dedup TTL, the sliding window,
the allowed lateness and the out-of-orderness), the static TTL or the tracks' cap plus the grace,
whichever is longest.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import pygeohash

# Imported with this module, not on the first gap: on a standalone cluster in thread mode, a
# TaskManager's one interpreter keeps the modules of the first job it ran, from that job's copy of
# the package, which Flink removes when the job ends; a later job could not import a module the
# first one had not.
from ais_pipeline import shore
from ais_pipeline.anchorages import load_anchorages
from ais_pipeline.rules.copies import ExactCopies, identity_horizon_ms
from ais_pipeline.rules.coverage import CoverageRules, coverage_rules
from ais_pipeline.rules.decode import DecodeError, Position, Static, decode
from ais_pipeline.rules.encounters import MARKS, EncounterSteps
from ais_pipeline.rules.gaps import Gap, GapRules, VesselGaps
from ais_pipeline.rules.loitering import Loitering
from ais_pipeline.rules.outputs import (
    bad_fix_json,
    gap_json,
    late_json,
    position_json,
    report_id,
    static_json,
    withdrawn_json,
)
from ais_pipeline.rules.parse import DeadLetter
from ais_pipeline.rules.ports import Anchorages, PortVisits
from ais_pipeline.rules.records import STATIC_TYPES, TIME_UNKNOWN, Report, VesselPane
from ais_pipeline.rules.spread import spread
from ais_pipeline.rules.tracks import HISTORY_MS, MAX_KNOTS, NOISE_M, Events, Fix, VesselTracks
from ais_pipeline.rules.transmitters import Record, TransmitterRules, VesselTransmitters
from ais_pipeline.rules.vessel_hours import MAX_GAP_MS, UNKNOWN, static_category
from ais_pipeline.rules.watermarks import LIVE_STEP_MS
from ais_pipeline.rules.windows import SLIDING, TUMBLING, WindowSpec

if TYPE_CHECKING:
    from ais_pipeline.config import PipelineConfig

KEPT_POSITION = "positions_kept"
KEPT_STATIC = "static_kept"
DUPLICATE_EXACT = "duplicates_exact"
DUPLICATE_NEAR = "duplicates_near"
DUPLICATE_STATIC = "static_duplicates"
NO_POSITION = "no_position"
LATE = "late"
DEAD_LETTER = "dead_letter"
STATIC_FROM_ROWS = "static_from_rows"
ROW_STATIC = "row"  # the supersede kind of an archive row's static fields
LATE_VESSEL_MS = "late_vessel_ms"  # vessel time too late for its tumbling window (summary: late_hours)
LATE_VESSEL_MS_SLIDING = "late_vessel_ms_sliding"  # ... too late for some sliding windows (a metric)
TRACK_BEHIND = "track_positions_unused"  # kept, but too old for the track to use (a metric)
GAPS = "gaps"  # the gaps output
GAP_TTL_MS = 14 * 86_400_000  # a silent vessel's last position is kept two weeks for its gap
BAD_FIX = "bad_fixes"  # kept as a position, then judged a bad fix (the bad_fixes output counts them)
LATE_RECORDS = "late_records_"  # + window kind: a kept position too late for that kind (a metric)
DELIVERED_LATE = "reports_delivered_too_late"  # a judged position past its windows' grace (a metric)


def minute_tally(figure: str, ts: int) -> str:
    """The tally of a figure the report charts per minute of event time: ``figure@minute``."""
    return f"{figure}@{ts - ts % 60_000}"


@dataclass(slots=True)
class Outcome:
    """What became of one report. ``late_windows`` names the window kinds it missed."""

    kind: str
    report: Report
    position: Position | None = None
    static: Static | None = None
    cell: str = ""
    late_windows: tuple[str, ...] = ()
    detail: str = ""
    # A decoded archive row's static fields, when they differ from the vessel's last kept ones:
    # a static record beside the row's own outcome (tallied as ``static_from_rows``, not a line).
    row_static: Static | None = None
    # A kept position is held until it is judged: its records and counts come with the judgement.
    held: bool = False

    @property
    def tally(self) -> str | None:
        """The tally record this outcome makes for the run summary; None when it has an output
        record of its own (kept reports, dead letters), which the summary counts instead. Exact
        and near duplicates and late reports, which the report charts per minute of event time,
        are tallied as ``figure@minute``; the summary adds those up into the figure's total."""
        if self.kind in (KEPT_POSITION, KEPT_STATIC, DEAD_LETTER):
            return None
        if self.kind in (DUPLICATE_EXACT, DUPLICATE_NEAR, LATE):
            return minute_tally(self.kind, self.report.ts)
        return self.kind

    def dead_letter(self) -> DeadLetter | None:
        if self.kind != DEAD_LETTER:
            return None
        return DeadLetter(self.report.raw, "decode", self.report.receiver, self.detail)

    def records(self) -> list[tuple[str, str]]:
        """The output records (output name, JSON) of this outcome, dead letters aside: a kept
        static report, and one late record per window kind a report missed. A kept position is
        held until it is judged: its records come then (:attr:`VesselLogic.records`)."""
        records: list[tuple[str, str]] = []
        report = self.report
        if self.held:
            pass
        elif self.kind == KEPT_POSITION and self.position is not None:
            records.append(("positions", position_json(self.position, self.cell, report_id("positions", report))))
        elif self.kind == KEPT_STATIC and self.static is not None:
            records.append(("static", static_json(self.static, report_id("static", report))))
        if self.row_static is not None:
            records.append(("static", static_json(self.row_static, report_id("static", report))))
        if self.late_windows and self.position is not None and not self.held:
            pos, cell = self.position, self.cell
            records.extend(("late", late_json(pos, cell, w, report_id("late", report, w))) for w in self.late_windows)
        return records


@dataclass(slots=True)
class VesselMeta:
    """What the dedup rules keep of a vessel besides its static reports. Updated
    in place (the hot path makes no copies); a store is told of every change by ``set_meta``."""

    last_lat5: int  # last kept position, in 1e-5 degrees
    last_lon5: int
    last_ts: int  # event time of the last kept position, TIME_UNKNOWN when none yet
    max_ts: int  # newest event time seen for the vessel
    pruned_at: int  # unused (kept for the state's layout: identities are the exact-copy rule's)
    cleanup_at: int  # pending cleanup timer, TIME_UNKNOWN when none
    hours_at: int = TIME_UNKNOWN  # the track's pending timer, TIME_UNKNOWN when none
    gaps_at: int = TIME_UNKNOWN  # when its silence becomes an open gap, TIME_UNKNOWN when not armed
    gap_watch: int = 0  # 1 while only what its return's gap needs is kept (silent past the retention)
    category: str = UNKNOWN  # ship type category of the last kept static report
    # The transmitters' next timer (a port gap's begin, a loitering track's end), armed lazily.
    ports_at: int = TIME_UNKNOWN


class VesselStore(Protocol):
    """The keyed state of one vessel."""

    def meta(self) -> VesselMeta | None: ...
    def set_meta(self, meta: VesselMeta) -> None: ...
    def static(self, kind: str) -> tuple[str, int] | None: ...
    def set_static(self, kind: str, content: str, ts: int) -> None: ...
    def track(self) -> VesselTracks | None: ...
    def set_track(self, track: VesselTracks | None) -> None: ...
    def gaps(self) -> VesselGaps | None: ...
    def set_gaps(self, gaps: VesselGaps | None) -> None: ...
    def transmitters(self) -> VesselTransmitters | None: ...
    def set_transmitters(self, transmitters: VesselTransmitters | None) -> None: ...
    def clear(self) -> None: ...
    def clear_but_gaps(self) -> None: ...
    def resume(self) -> None: ...
    def register_timer(self, ts: int) -> None: ...


def geohash_cell(lat: float, lon: float, precision: int) -> str:
    return pygeohash.encode(lat, lon, precision)


def sog_milli(sog: float | None) -> tuple[int, int]:
    """(sum, count) contribution of one report's speed, in thousandths of a knot."""
    return (0, 0) if sog is None else (round(sog * 1000), 1)


class VesselLogic:
    def __init__(
        self,
        spec: WindowSpec,
        dedup_ttl_ms: int,
        near_window_ms: int,
        static_ttl_ms: int,
        out_of_orderness_ms: int,
        geohash_precision: int,
        max_gap_ms: int = MAX_GAP_MS,
        max_knots: float = MAX_KNOTS,
        noise_m: float = NOISE_M,
        gap_rules: GapRules | None = None,
        gap_ttl_ms: int = GAP_TTL_MS,
        transmitter_rules: TransmitterRules | None = None,
        positions_at_once: bool = False,
    ) -> None:
        self.spec = spec
        # A live run writes a kept position when its report comes, before its track judges it,
        # and withdraws it if it is judged a bad fix (a file run writes it once judged).
        self.positions_at_once = positions_at_once
        # The rules per transmitter: port visits and loitering (None: both off).
        self.transmitter_rules = transmitter_rules
        # AIS gap events (None: off), and how long a silent vessel's last position is kept for
        # the gap its return would close.
        self.gap_rules = gap_rules
        self.gap_ttl_ms = gap_ttl_ms
        self.max_gap_ms = max_gap_ms
        self.max_knots = max_knots
        self.noise_nm = noise_m / 1852
        self.dedup_ttl_ms = dedup_ttl_ms
        self.near_window_ms = near_window_ms
        self.static_ttl_ms = static_ttl_ms
        self.geohash_precision = geohash_precision
        # How far behind its vessel's newest report a copy can still matter to some window.
        self.identity_horizon_ms = identity_horizon_ms(spec, dedup_ttl_ms, out_of_orderness_ms)
        # Not the tracks' hold past the cap: a vessel silent that long is dropped, held fixes and
        # all (a next position within the cap that comes later still is left without them).
        self.retention_ms = max(self.identity_horizon_ms, static_ttl_ms, max_gap_ms + spec.grace_ms)
        # What the calls since the caller last took them released (pane contributions: reports
        # of accepted fixes, and vessel time), wrote (output name, JSON line: accepted fixes'
        # positions and late records, bad fixes) and counted (positions kept, bad fixes,
        # LATE_VESSEL_MS and the metrics above): the caller drains them.
        self.released: list[VesselPane] = []
        self.records: list[tuple[str, str]] = []
        self.counts: dict[str, int] = {}

    @staticmethod
    def _hold_ms(spec: WindowSpec) -> int:
        # A track is held past the cap until every report within the cap of its last fix would be
        # late for both window kinds (never kept): a late next position still completes it.
        return max(spec.window_ms, spec.slide_size_ms) + spec.lateness_ms

    def new_gaps(self) -> VesselGaps:
        return VesselGaps(self.gap_rules.min_gap_ms if self.gap_rules is not None else 0)

    def new_track(self) -> VesselTracks:
        return VesselTracks(self.max_gap_ms, self._hold_ms(self.spec), self.max_knots, self.noise_nm)

    def _count(self, name: str, n: int) -> None:
        self.counts[name] = self.counts.get(name, 0) + n

    def process(self, store: VesselStore, report: Report, watermark: int) -> tuple[Outcome, VesselPane | None]:
        """Decide one report; returns its outcome and, for a report that counts in the windows
        at once, its contribution to the windows of its cell (a kept position is held: its
        contribution comes with its judgement, in :attr:`released`)."""
        meta = store.meta()
        ts = report.ts
        if meta is None:
            meta = VesselMeta(0, 0, TIME_UNKNOWN, ts, ts, TIME_UNKNOWN)
        elif meta.gap_watch:  # back after a silence past the retention: its full state again,
            meta.gap_watch = 0  # and dropped after the retention again (not the gap's TTL)
            meta.cleanup_at = TIME_UNKNOWN
            store.resume()
        if ts > meta.max_ts:
            meta.max_ts = ts
        if meta.cleanup_at == TIME_UNKNOWN:
            meta.cleanup_at = self.spec.timer_at_or_after(meta.max_ts + self.retention_ms)
            store.register_timer(meta.cleanup_at)
        # The tracks first take the timer steps the report's watermark has passed (the Flink
        # operator's own watermark may lag behind it, at parallelism above 1), each as its timer
        # would have: the fixes they hold are judged as they would be without this report.
        released_at = self.spec.timer_at_or_before(watermark)
        track = store.track()
        while True:  # in time order, the tracks' step first at a time (as on_timer takes them)
            steps = [t for t in (meta.hours_at if track is not None else TIME_UNKNOWN, meta.gaps_at, meta.ports_at)
                     if t != TIME_UNKNOWN and t <= released_at]  # fmt: skip
            if not steps:
                break
            at = min(steps)
            if track is not None and meta.hours_at == at:
                self._step(store, track, meta, report.mmsi)
                track = store.track()
            if meta.gaps_at == at:
                self._open_gap(store, meta, at, report.mmsi)
            if meta.ports_at == at:
                self._transmitters_step(store, meta, at, report.mmsi)
        outcome, pane = self._decide(store, report, watermark, meta)
        if report.static and report.msg_type not in STATIC_TYPES and outcome.kind != DEAD_LETTER:
            outcome.row_static = self._row_static(store, report)
        category = None
        if outcome.kind == KEPT_STATIC and outcome.static is not None:
            category = static_category(outcome.static.fields)
        if outcome.row_static is not None:
            category = static_category(outcome.row_static.fields) or category
        if category is not None:
            meta.category = category
        if outcome.kind == KEPT_POSITION and outcome.position is not None and pane is not None:
            pos = outcome.position
            assert pos.lat is not None and pos.lon is not None
            meta.last_lat5, meta.last_lon5, meta.last_ts = round(pos.lat * 1e5), round(pos.lon * 1e5), ts
            if track is None:
                track = self.new_track()
                transmitters = store.transmitters()
                if transmitters is not None and not transmitters.empty:  # a lineage id is never given twice
                    track.next_id = max(transmitters.by_lineage) + 1
            # An archive row's own ship type counts for its report and its time too.
            fix = Fix(
                ts, pos.lat, pos.lon, outcome.cell, meta.category, pane.sog_milli_sum, pane.sog_count,
                pane.tumbling, pane.sliding, pane.sliding_from, self._held_lines(outcome),
            )  # fmt: skip
            outcome.held = True
            if self.positions_at_once:
                self.records.append(("positions", fix.lines[0]))
            held = len(track.pending)
            self._decided(store, meta, track, track.add(fix), released_at, report.mmsi)
            due = track.next_timer()
            if due is not None and due <= released_at:  # a fix the watermark has passed already
                self._release(store, meta, track, released_at, report.mmsi)
                self._keep_track(store, track, meta, released_at)
            elif not held or track.pending[-1].ts != ts or meta.hours_at == TIME_UNKNOWN:
                self._keep_track(store, track, meta, released_at)
            # else: held behind others, the tracks' next step is the one already armed
            pane = None
        store.set_meta(meta)
        return outcome, pane

    @staticmethod
    def _held_lines(outcome: Outcome) -> tuple[str, ...]:
        """A kept position's output lines, written when it is accepted: its position record, then
        a late record per window kind it missed."""
        pos, cell, report = outcome.position, outcome.cell, outcome.report
        assert pos is not None
        lines = [position_json(pos, cell, report_id("positions", report))]
        lines += [late_json(pos, cell, w, report_id("late", report, w)) for w in outcome.late_windows]
        return tuple(lines)

    def _step(self, store: VesselStore, track: VesselTracks, meta: VesselMeta, mmsi: int) -> None:
        """The tracks' timer step (``meta.hours_at``), as its timer fires it."""
        at, meta.hours_at = meta.hours_at, TIME_UNKNOWN
        self._release(store, meta, track, at, mmsi)
        self._keep_track(store, track, meta, at)

    def _release(self, store: VesselStore, meta: VesselMeta, track: VesselTracks, watermark: int, mmsi: int) -> None:
        """What the watermark decides of the tracks: fixes accepted, bad fixes, segments."""
        self._decided(store, meta, track, track.advance(watermark), watermark, mmsi)

    def _decided(
        self, store: VesselStore, meta: VesselMeta, track: VesselTracks, events: Events, watermark: int, mmsi: int
    ) -> None:
        """The records and pane contributions of what the tracks decided, each contribution
        judged against ``watermark`` (the step that decided it) with the windows' grace; the
        accepted fixes to the vessel's gaps and its transmitters' rules."""
        if not events:
            return
        for fix in events.accepted:
            self._accept(fix, watermark, mmsi)
            if self.gap_rules is not None:
                self._gap_position(store, meta, fix, mmsi)
            if self.transmitter_rules is not None:
                self._transmitter_position(store, meta, track, fix, mmsi, watermark)
        for fix, conflict in events.bad:
            if self.positions_at_once:  # it was written when it came: withdrawn first
                self.records.append(("positions", withdrawn_json(fix.lines[0], BAD_FIX)))
            self.records.append((BAD_FIX, bad_fix_json(fix.lines[0], conflict)))
            self._count(BAD_FIX, 1)
        for a, b in events.segments:
            self._segment(a, b, watermark, mmsi)
        if events.behind:
            self._count(TRACK_BEHIND, events.behind)

    def _accept(self, fix: Fix, watermark: int, mmsi: int) -> None:
        """An accepted fix: its position and late records, and its report's contribution, for the
        window kinds it was in time for when it arrived and whose grace has not passed since."""
        records = self.records
        if not self.positions_at_once:  # else written when it came
            records.append(("positions", fix.lines[0]))
        self._count(KEPT_POSITION, 1)
        for line in fix.lines[1:]:
            records.append(("late", line))
            self._count(LATE_RECORDS + (TUMBLING if '"window":"tumbling"' in line else SLIDING), 1)
        fix.lines = ()  # written: a track keeps the fix (its first or last) without them
        spec = self.spec
        tumbling, sliding = fix.tumbling, fix.sliding
        late_t, late_s = spec.late_kinds_held(fix.ts, watermark)
        if (tumbling and late_t) or (sliding and late_s):
            self._count(DELIVERED_LATE, 1)
        tumbling, sliding = tumbling and not late_t, sliding and not late_s
        if not (tumbling or sliding):
            return
        sliding_from = 0
        if sliding:  # the first sliding window open both when it arrived and now (0: every one)
            arrived, now = fix.sliding_from, spec.sliding_from(fix.ts, watermark, held=True)
            sliding_from = max(arrived, now) if arrived and now else arrived or now
        self.released.append(
            VesselPane(
                fix.cell, spec.pane_start(fix.ts), mmsi, 1, fix.sog_sum, fix.sog_n, tumbling, sliding, sliding_from,
                0, fix.category,
            )
        )  # fmt: skip

    def _segment(self, a: Fix, b: Fix, watermark: int, mmsi: int) -> None:
        """A segment's time spread along its line over cells and panes, as pane contributions,
        each judged against the watermark with the windows' grace."""
        spec = self.spec
        released = self.released
        category = a.category
        pieces = spread(a.ts, a.lat, a.lon, a.cell, b.ts, b.lat, b.lon, b.cell, spec.pane_ms)
        for cell, pane_start, ms in pieces:
            late_t, late_s = spec.late_kinds_held(pane_start, watermark)
            if late_t or late_s:
                if late_t:
                    self._count(LATE_VESSEL_MS, ms)
                if late_s:
                    self._count(LATE_VESSEL_MS_SLIDING, ms)
                if late_t and late_s:
                    continue
            sliding_from = 0 if late_s else spec.sliding_from(pane_start, watermark, held=True)
            released.append(
                VesselPane(cell, pane_start, mmsi, 0, 0, 0, not late_t, not late_s, sliding_from, ms, category)
            )

    def _gap_position(self, store: VesselStore, meta: VesselMeta, fix: Fix, mmsi: int) -> None:
        """An accepted position to the vessel's gaps: the gap it closes, and the open gap its
        silence would make, armed."""
        rules = self.gap_rules
        assert rules is not None
        gaps = store.gaps()
        if gaps is None:
            gaps = VesselGaps(rules.min_gap_ms)
        gap = gaps.position(mmsi, fix.ts, fix.lat, fix.lon, fix.category)
        store.set_gaps(gaps)
        if gap is not None:
            self._gap(gap, fix.ts)
        self._arm_gap(store, meta, gaps)

    def _arm_gap(self, store: VesselStore, meta: VesselMeta, gaps: VesselGaps) -> None:
        """The open gap is known once no position before the threshold can still be accepted:
        past it by the gap cap and a watermark step (a single fix waits that long for its
        judgement)."""
        meta.gaps_at = self._once_judged(store, meta.gaps_at, gaps.opens_at())

    def _once_judged(self, store: VesselStore, armed: int, due: int | None) -> int:
        """The timer of an event due at ``due`` (None: none) that is known only once no position
        before it can still be accepted: past it by the gap cap and a watermark step; registered
        when it is not the one ``armed`` already."""
        at = TIME_UNKNOWN if due is None else self.spec.timer_at_or_after(due + self._judgement_wait_ms)
        if at != armed and at != TIME_UNKNOWN:
            store.register_timer(at)
        return at

    @property
    def _judgement_wait_ms(self) -> int:
        return self.max_gap_ms + self.spec.watermark_step_ms

    def _open_gap(self, store: VesselStore, meta: VesselMeta, at: int, mmsi: int) -> None:
        """The gaps' timer step: the vessel silent past the threshold is an open gap."""
        meta.gaps_at = TIME_UNKNOWN
        gaps = store.gaps()
        if gaps is None:
            return
        gap = gaps.advance(mmsi, at)
        store.set_gaps(gaps)
        if gap is not None:
            self._gap(gap, at)

    def _gap(self, gap: Gap, watermark: int) -> None:
        """A gap's record, with each end's distance from shore (:mod:`ais_pipeline.shore`, whose
        coast is loaded, or built, on the first gap)."""
        rules = self.gap_rules
        assert rules is not None
        start_nm = shore.distance_to_shore_nm(gap.start.lat, gap.start.lon)
        end_nm = None if gap.end is None else shore.distance_to_shore_nm(gap.end.lat, gap.end.lon)
        self.records.append((GAPS, gap_json(gap, rules, watermark, start_nm, end_nm)))
        self._count("gaps_open" if gap.is_open else "gaps_closed", 1)

    def _transmitter_position(
        self, store: VesselStore, meta: VesselMeta, track: VesselTracks, fix: Fix, mmsi: int, watermark: int
    ) -> None:
        """An accepted position to its transmitter's port visits and loitering: the records of
        what it changed, and the timer of the silences ahead, armed; the transmitters past their
        TTL forgotten."""
        rules = self.transmitter_rules
        assert rules is not None
        vessel = store.transmitters() or VesselTransmitters()
        alive = track.lineages()
        self._transmitter_records(rules.position(vessel, mmsi, fix, alive))
        vessel.forget(watermark, alive, rules.ttl_ms)
        store.set_transmitters(vessel)
        self._arm_transmitters(store, meta, vessel)

    def _arm_transmitters(self, store: VesselStore, meta: VesselMeta, vessel: VesselTransmitters) -> None:
        """A silence is known, as the gap events' open gap is, once no position before its end
        can still be accepted. The timer is armed lazily: one armed earlier is kept (it finds
        nothing due yet and arms the next), so a vessel heard all along does not move it at each
        position."""
        rules = self.transmitter_rules
        assert rules is not None
        due = rules.due(vessel)
        at = TIME_UNKNOWN if due is None else self.spec.timer_at_or_after(due + self._judgement_wait_ms)
        if at == TIME_UNKNOWN:
            return
        if meta.ports_at == TIME_UNKNOWN or at < meta.ports_at:
            store.register_timer(at)
            meta.ports_at = at

    def _transmitters_step(self, store: VesselStore, meta: VesselMeta, at: int, mmsi: int) -> None:
        """The transmitters' timer step: the silences it has passed (port gaps, loitering
        tracks' ends), and the next one armed."""
        meta.ports_at = TIME_UNKNOWN
        rules = self.transmitter_rules
        vessel = store.transmitters()
        if rules is None or vessel is None:
            return
        track = store.track()
        # The silences whose wait for the judgement of the positions around them has passed (the
        # timer is the first transmitter's; another's may be due but still waiting).
        known = at - self._judgement_wait_ms
        alive = track.lineages() if track is not None else ()
        self._transmitter_records(rules.advance(vessel, mmsi, known, at, alive))
        store.set_transmitters(None if vessel.empty else vessel)
        self._arm_transmitters(store, meta, vessel)

    def _transmitter_records(self, records: list[Record]) -> None:
        for output, line, is_open in records:
            self.records.append((output, line))
            if output != MARKS:  # the encounters' marks: what their steps take, not events
                self._count(f"{output}_{'open' if is_open else 'closed'}", 1)

    def _keep_track(self, store: VesselStore, track: VesselTracks, meta: VesselMeta, moved_to: int) -> None:
        """Store the tracks (none once they hold nothing) and arm the timer their next step needs."""
        nxt = track.next_timer()
        if nxt is None:
            # Nothing to step: kept for its lineage ends alone (a later fix may go on from one)
            # while they are recent, as long as the vessel is.
            newest = track.newest_recent()
            store.set_track(track if newest is not None and moved_to - newest < HISTORY_MS else None)
            meta.hours_at = TIME_UNKNOWN
            return
        store.set_track(track)
        # After the step the tracks were moved to (a timer at or below the watermark would fire
        # again at once): the tracks always move on at their next step.
        at = self.spec.timer_at_or_after(max(nxt, moved_to + 1))
        if at != meta.hours_at:
            meta.hours_at = at
            store.register_timer(at)

    def _row_static(self, store: VesselStore, report: Report) -> Static | None:
        """The supersede rule for an archive row's static fields: a static report when they differ
        from the last ones kept for the vessel (or those are older than the static TTL)."""
        previous = store.static(ROW_STATIC)
        ts = report.ts
        if previous is not None and previous[0] == report.static and abs(ts - previous[1]) <= self.static_ttl_ms:
            return None
        store.set_static(ROW_STATIC, report.static, ts)
        return Static(report.mmsi, 5, ts, ROW_STATIC, json.loads(report.static), report.receiver)

    def _decide(
        self, store: VesselStore, report: Report, watermark: int, meta: VesselMeta
    ) -> tuple[Outcome, VesselPane | None]:
        ts = report.ts
        try:
            decoded = decode(report)
        except DecodeError as exc:
            return Outcome(DEAD_LETTER, report, detail=str(exc)), None
        if isinstance(decoded, Static):
            previous = store.static(decoded.kind)
            content = decoded.content
            if previous is not None and previous[0] == content and abs(ts - previous[1]) <= self.static_ttl_ms:
                return Outcome(DUPLICATE_STATIC, report, static=decoded), None
            store.set_static(decoded.kind, content, ts)
            return Outcome(KEPT_STATIC, report, static=decoded), None
        pos = decoded
        if pos.lat is None or pos.lon is None:
            return Outcome(NO_POSITION, report, position=pos), None
        if (
            meta.last_ts != TIME_UNKNOWN
            and abs(ts - meta.last_ts) <= self.near_window_ms
            and round(pos.lat * 1e5) == meta.last_lat5
            and round(pos.lon * 1e5) == meta.last_lon5
        ):
            return Outcome(DUPLICATE_NEAR, report, position=pos), None
        cell = geohash_cell(pos.lat, pos.lon, self.geohash_precision)
        spec = self.spec
        late_t, late_s = spec.late_kinds(ts, watermark)
        late = tuple(
            kind for kind, is_late in ((TUMBLING, late_t), (SLIDING, late_s)) if is_late and spec.computes(kind)
        )
        if late_t and late_s:
            return Outcome(LATE, report, position=pos, cell=cell, late_windows=late), None
        outcome = Outcome(KEPT_POSITION, report, position=pos, cell=cell, late_windows=late)
        sog_sum, sog_n = sog_milli(pos.sog)
        sliding_from = 0 if late_s else self.spec.sliding_from(ts, watermark)
        pane = VesselPane(
            cell, self.spec.pane_start(ts), report.mmsi, 1, sog_sum, sog_n, not late_t, not late_s, sliding_from,
            0, meta.category,
        )  # fmt: skip
        return outcome, pane

    def on_timer(self, store: VesselStore, ts: int, mmsi: int = 0, final: bool = False) -> None:
        """Release the track's segments the watermark completes (into :attr:`released`); emit the
        open gap of a vessel silent past the threshold (not on the ``final`` watermark, the end of
        the input: that is no time passing); drop the vessel once its newest report is older than
        the retention, in event time (but what its gap needs, for the gap TTL)."""
        meta = store.meta()
        track = store.track()
        if meta is not None and track is not None and meta.hours_at == ts:
            self._step(store, track, meta, mmsi)
            store.set_meta(meta)
        if meta is not None and meta.gaps_at == ts:
            if final:
                meta.gaps_at = TIME_UNKNOWN
            else:
                self._open_gap(store, meta, ts, mmsi)
            store.set_meta(meta)
        if meta is not None and meta.ports_at == ts:
            if final:
                meta.ports_at = TIME_UNKNOWN
            else:
                self._transmitters_step(store, meta, ts, mmsi)
            store.set_meta(meta)
        if meta is not None and meta.cleanup_at == ts:
            gaps, transmitters = store.gaps(), store.transmitters()
            kept_until = TIME_UNKNOWN if gaps is None or gaps.last is None else gaps.last.ts + self.gap_ttl_ms
            rules = self.transmitter_rules
            if transmitters is not None and rules is not None and not transmitters.empty:
                kept_until = max(kept_until, transmitters.newest + rules.ttl_ms)
            if meta.max_ts + self.retention_ms <= ts and kept_until > ts:
                # Silent past the retention: only what its return's gap and transmitters need.
                store.clear_but_gaps()
                meta.gap_watch = 1
                meta.cleanup_at = self.spec.timer_at_or_after(kept_until)
                store.register_timer(meta.cleanup_at)
                store.set_meta(meta)
            elif meta.max_ts + self.retention_ms <= ts:
                store.clear()
            else:
                cleanup_at = self.spec.timer_at_or_after(max(meta.max_ts + self.retention_ms, ts + 1))
                store.register_timer(cleanup_at)
                meta.cleanup_at = cleanup_at
                store.set_meta(meta)


def window_spec(config: PipelineConfig) -> WindowSpec:
    """The windows of a run's flags (the grace: see :attr:`PipelineConfig.grace_ms`)."""
    return WindowSpec(
        config.window_ms,
        config.slide_size_ms,
        config.slide_ms,
        config.lateness_ms,
        config.grace_ms,
        tumbling=TUMBLING in config.window_kinds,
        sliding=SLIDING in config.window_kinds,
        step_limit_ms=LIVE_STEP_MS if config.input_feed else 0,
    )


def exact_copies(config: PipelineConfig) -> ExactCopies:
    """The exact-copy rule of a run's flags (its horizon is the vessel logic's identity horizon)."""
    spec = window_spec(config)
    return ExactCopies(
        spec, config.dedup_ttl_ms, identity_horizon_ms(spec, config.dedup_ttl_ms, config.out_of_orderness_ms)
    )


def transmitter_rules(config: PipelineConfig) -> TransmitterRules | None:
    """The rules per transmitter of a run's flags (None: port visits, loitering and encounters
    all off), the anchorage list read once; the distance from shore is built on the first slow
    hour."""
    ports, loitering, encounters = config.port_visits, config.loitering, config.encounters
    if ports is None and loitering is None and encounters is None:
        return None
    rules = config.track_rules
    return TransmitterRules(
        None if ports is None else PortVisits(load_anchorages(ports.anchorages), ports.rules),
        None if loitering is None else Loitering(loitering, shore.distance_to_shore_nm),
        config.gap_ttl_ms,
        rules.max_knots,
        rules.noise_m,
        encounters,
    )


def encounter_steps(config: PipelineConfig) -> EncounterSteps | None:
    """The encounters' keyed steps of a run's flags (None: off). A mark's time is judged once the
    watermark is past it by the resampling's gap (a later position makes it, at most that much
    later), the vessel operator's wait for a position's judgement (it is accepted by then) and two
    watermark steps (the vessel operator's timers are rounded up to one)."""
    rules = config.encounters
    if rules is None:
        return None
    step = window_spec(config).watermark_step_ms
    return EncounterSteps(rules, rules.max_gap_ms + config.track_rules.max_gap_ms + 2 * step)


PORT_REACH_KM = 50.0  # an encounter's distance to the nearest anchorage is given up to this


@dataclass(frozen=True)
class EncounterPlaces:
    """A place's distance to the nearest anchorage of the run's list (None: none within
    :data:`PORT_REACH_KM`, or port visits off) and from shore (nm). It holds the list itself, as
    the vessel operator does (shipped in the job: a TaskManager has no file of it)."""

    anchorages: Anchorages | None

    def __call__(self, lat: float, lon: float) -> tuple[float | None, float]:
        port_km = None
        if self.anchorages is not None:
            nearest = self.anchorages.nearest(lat, lon, PORT_REACH_KM)
            port_km = None if nearest is None else nearest[1]
        return port_km, shore.distance_to_shore_nm(lat, lon)


def encounter_where(config: PipelineConfig) -> EncounterPlaces:
    """The places of a run's encounters: its anchorage list read (once per version of the file)."""
    ports = config.port_visits
    return EncounterPlaces(None if ports is None else load_anchorages(ports.anchorages))


def vessel_logic(config: PipelineConfig) -> VesselLogic:
    """The dedup and track rules of a run's flags, as the job and the plain loop run them."""
    rules = config.track_rules
    return VesselLogic(
        window_spec(config),
        config.dedup_ttl_ms,
        config.near_window_ms,
        config.static_ttl_ms,
        config.out_of_orderness_ms,
        config.geohash_precision,
        rules.max_gap_ms,
        rules.max_knots,
        rules.noise_m,
        config.gap_rules,
        config.gap_ttl_ms,
        transmitter_rules(config),
        positions_at_once=bool(config.input_feed),
    )


class DictVesselStore:
    """A :class:`VesselStore` in plain dicts, for tests and the plain implementation."""

    def __init__(self) -> None:
        self._meta: VesselMeta | None = None
        self._static: dict[str, tuple[str, int]] = {}
        self._track: VesselTracks | None = None
        self._gaps: VesselGaps | None = None
        self._transmitters: VesselTransmitters | None = None
        self.timers: set[int] = set()

    def meta(self) -> VesselMeta | None:
        return self._meta

    def set_meta(self, meta: VesselMeta) -> None:
        self._meta = meta

    def static(self, kind: str) -> tuple[str, int] | None:
        return self._static.get(kind)

    def set_static(self, kind: str, content: str, ts: int) -> None:
        self._static[kind] = (content, ts)

    def track(self) -> VesselTracks | None:
        return self._track

    def set_track(self, track: VesselTracks | None) -> None:
        self._track = track

    def gaps(self) -> VesselGaps | None:
        return self._gaps

    def set_gaps(self, gaps: VesselGaps | None) -> None:
        self._gaps = gaps

    def transmitters(self) -> VesselTransmitters | None:
        return self._transmitters

    def set_transmitters(self, transmitters: VesselTransmitters | None) -> None:
        self._transmitters = transmitters

    def clear(self) -> None:
        self._meta = None
        self._static.clear()
        self._track = None
        self._gaps = None
        self._transmitters = None

    def clear_but_gaps(self) -> None:
        self._static.clear()
        self._track = None

    def resume(self) -> None:
        pass

    def gap_watch(self) -> bool:
        """Whether only what the vessel's return's gap needs is kept."""
        return self._meta is not None and bool(self._meta.gap_watch)

    def register_timer(self, ts: int) -> None:
        self.timers.add(ts)


def coverage_rules_of(config: PipelineConfig) -> CoverageRules | None:
    """The coverage's rules of a run with gaps on (None: off)."""
    rules = config.gap_rules
    if rules is None:
        return None
    spec = window_spec(config)
    return coverage_rules(
        config.lateness_ms,
        config.grace_ms,
        rules.min_gap_ms,
        config.max_gap_ms,
        spec.watermark_step_ms,
        config.gap_ttl_ms,
    )
