"""Event-time windows over panes, in plain Python.

Both window kinds are made of panes of ``gcd(tumbling size, slide)``: a report updates one pane
instead of the 15 windows a 900 s / 60 s sliding window would put it in. A window fires when the
watermark passes its end; a contribution that arrives within the allowed lateness fires it again
with the next ``revision``; once the watermark passes ``end + lateness + grace`` the window is
closed (the grace: contributions decided in time but delivered later, see :class:`WindowSpec`).

``WindowSpec`` holds the arithmetic (shared with the dedup rules, which decide lateness);
``CellWindows`` is the per-cell logic, over a small store interface that the plain loop and the
tests back with dicts. It is the reference for the job's Java window operator
(``java/src/main/java/ais/flink/CellWindows.java``): the golden cases in
``tests/golden/windows.json`` run against both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import gcd
from typing import Protocol

from ais_pipeline.rules.records import Int32, VesselPane
from ais_pipeline.rules.vessel_hours import ALL_CATEGORIES

TUMBLING = "tumbling"
SLIDING = "sliding"


@dataclass(frozen=True)
class WindowSpec:
    """The window arithmetic. ``lateness_ms`` is the allowed lateness a report is judged by when it
    arrives; ``grace_ms`` is how much longer a window takes contributions that were decided in
    time but delivered later: vessel time, known only once a segment's second position is, and a
    position held until it is judged (the gap cap by default). A window is closed, and its state
    dropped, once the watermark passes its end plus both."""

    window_ms: int
    slide_size_ms: int
    slide_ms: int
    lateness_ms: int
    grace_ms: int = 0
    # The window kinds computed and written (``--windows``): a kind left out fires nothing, and
    # panes are kept only as long as the kinds computed need them. What a report is late for is
    # judged for both kinds all the same (positions and gaps do not depend on the choice); late
    # records are written for the kinds computed.
    tumbling: bool = True
    sliding: bool = True
    # A finer step for the watermark (a live run's: 1 s), 0 for none; it must divide the others.
    step_limit_ms: int = 0
    pane_ms: int = field(init=False)
    # The step the job's Flink watermark moves in (``ais.flink.ReceiverWatermarks``): every
    # window end, pane end, allowed lateness and grace is a multiple of it, so every event-time
    # timer can fall on ``k * step - 1`` and fire after the same record as with an exact watermark.
    watermark_step_ms: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pane_ms", gcd(self.window_ms, self.slide_ms))
        step = gcd(gcd(gcd(self.pane_ms, self.lateness_ms), self.grace_ms), self.step_limit_ms)
        object.__setattr__(self, "watermark_step_ms", step)

    def timer_at_or_after(self, ts: int) -> int:
        """The first ``k * watermark_step_ms - 1`` at or after ``ts``: a timer time that a stepped
        watermark reaches after the same record as the exact one."""
        step = self.watermark_step_ms
        return -(-(ts + 1) // step) * step - 1

    def timer_at_or_before(self, watermark: int) -> int:
        """The last ``k * watermark_step_ms - 1`` at or before ``watermark``: the newest timer time
        a watermark has fired."""
        step = self.watermark_step_ms
        return (watermark + 1) // step * step - 1

    def pane_start(self, ts: int) -> int:
        return ts - ts % self.pane_ms

    def tumbling_end(self, ts: int) -> int:
        return ts - ts % self.window_ms + self.window_ms

    def last_sliding_end(self, ts: int) -> int:
        """End of the last sliding window that contains ``ts``."""
        return ts - ts % self.slide_ms + self.slide_size_ms

    def sliding_ends(self, ts: int) -> range:
        """Ends of every sliding window that contains ``ts``, earliest first."""
        first = ts - ts % self.slide_ms + self.slide_ms
        return range(first, self.last_sliding_end(ts) + 1, self.slide_ms)

    def sliding_from(self, ts: int, watermark: int, held: bool = False) -> int:
        """The first end of a sliding window containing ``ts`` that is still open at
        ``watermark`` (for a report; ``held``: for a contribution delivered late, with the
        grace); 0 when all of them are (the caller knows the last one is open)."""
        first = ts - ts % self.slide_ms + self.slide_ms
        limit = watermark + 1 - self.lateness_ms - (self.grace_ms if held else 0)  # closed: end <= limit
        if first > limit:
            return 0
        return first + ((limit - first) // self.slide_ms + 1) * self.slide_ms

    def closed(self, window_end: int, watermark: int) -> bool:
        """Flink's rule, with the grace: a window takes nothing more once ``max timestamp +
        allowed lateness + grace <= watermark``."""
        return window_end - 1 + self.lateness_ms + self.grace_ms <= watermark

    def late_kinds(self, ts: int, watermark: int) -> tuple[bool, bool]:
        """(too late for every tumbling window, too late for every sliding window) of ``ts``:
        :meth:`closed` for its tumbling window and its last sliding one (hot: inlined)."""
        limit = watermark + 1 - self.lateness_ms  # closed: end <= limit
        return (
            ts - ts % self.window_ms + self.window_ms <= limit,
            ts - ts % self.slide_ms + self.slide_size_ms <= limit,
        )

    def late_kinds_held(self, ts: int, watermark: int) -> tuple[bool, bool]:
        """:meth:`late_kinds` for a contribution delivered after its report or segment was
        decided (vessel time, a judged position): with the grace."""
        limit = watermark + 1 - self.lateness_ms - self.grace_ms
        return (
            ts - ts % self.window_ms + self.window_ms <= limit,
            ts - ts % self.slide_ms + self.slide_size_ms <= limit,
        )

    def next_end_after(self, pane_start: int, boundary: int) -> int | None:
        """The first end after ``boundary`` of a window (of a kind computed) that contains the
        pane; None when every one of them ends at or before it."""
        ends = []
        tumbling = self.tumbling_end(pane_start)
        if self.tumbling and tumbling > boundary:
            ends.append(tumbling)
        sliding = max(pane_start - pane_start % self.slide_ms, boundary - boundary % self.slide_ms) + self.slide_ms
        if self.sliding and sliding <= self.last_sliding_end(pane_start):
            ends.append(sliding)
        return min(ends, default=None)

    def last_end(self, pane_start: int) -> int:
        """The last end of a window (of a kind computed) that contains the pane."""
        tumbling = self.tumbling_end(pane_start) if self.tumbling else 0
        return max(tumbling, self.last_sliding_end(pane_start) if self.sliding else 0)

    def pane_retired_at(self, pane_start: int) -> int:
        """Watermark from which no window (of a kind computed) containing the pane can fire any more."""
        return self.last_end(pane_start) - 1 + self.lateness_ms + self.grace_ms

    def computes(self, kind: str) -> bool:
        return self.tumbling if kind == TUMBLING else self.sliding


@dataclass
class KindAcc:
    """What a pane holds for one window kind: reports (and their speeds), the vessels heard as
    (mmsi, category) pairs, and per category the reports and the vessel time."""

    reports: int = 0
    sog_milli_sum: int = 0
    sog_count: int = 0
    vessels: list[tuple[int, str]] = field(default_factory=list)
    type_reports: dict[str, int] = field(default_factory=dict)
    type_ms: dict[str, int] = field(default_factory=dict)

    def add(self, v: VesselPane) -> None:
        cat = v.category
        if v.reports:
            self.reports += v.reports
            self.sog_milli_sum += v.sog_milli_sum
            self.sog_count += v.sog_count
            if (v.mmsi, cat) not in self.vessels:
                self.vessels.append((v.mmsi, cat))
            self.type_reports[cat] = self.type_reports.get(cat, 0) + v.reports
        if v.vessel_ms:
            self.type_ms[cat] = self.type_ms.get(cat, 0) + v.vessel_ms


@dataclass
class PaneAcc:
    """What a cell holds for one pane, per window kind (a late contribution may count for one
    kind only)."""

    t: KindAcc = field(default_factory=KindAcc)
    s: KindAcc = field(default_factory=KindAcc)
    # Late contributions that count only in the sliding windows ending at or after their
    # ``sliding_from``.
    s_late: list[VesselPane] = field(default_factory=list)

    def add(self, v: VesselPane) -> None:
        if v.tumbling:
            self.t.add(v)
        if v.sliding and v.sliding_from:
            self.s_late.append(v)
        elif v.sliding:
            self.s.add(v)


@dataclass(frozen=True)
class Aggregate:
    """One firing of one window of one cell: the ``aggregates`` output (made by the Java operator
    ``ais.flink.CellWindows`` in the job, by :class:`CellWindows` in the plain loop).

    ``sog_sum`` and ``sog_reports`` are the SOG of the reports that had one, added up, and their
    count (``avg_sog`` is their quotient, rounded). ``vessel_hours`` is the time vessels spent in
    the cell within the window (:mod:`ais_pipeline.rules.vessel_hours`), in hours rounded to 6
    decimals. The per-type
    breakdown is four columns, one entry per ship type category with reports or time, in the
    order of :data:`ais_pipeline.rules.vessel_hours.ALL_CATEGORIES`."""

    window: str
    cell: str
    window_start: int
    window_end: int
    reports: Int32
    vessels: Int32
    avg_sog: float | None
    revision: Int32
    vessel_hours: float = 0.0
    type_names: list[str] = field(default_factory=list)
    type_vessels: list[Int32] = field(default_factory=list)
    type_reports: list[Int32] = field(default_factory=list)
    type_hours: list[float] = field(default_factory=list)
    # The sum of the reports' SOG in knots (exact: a sum of thousandths) and how many reports had
    # one: what a store that adds (the DynamoDB table's ``sog_sum``) keeps beside the mean.
    sog_sum: float = 0.0
    sog_reports: Int32 = 0


MS_PER_HOUR = 3_600_000


def hours(ms: int) -> float:
    """Milliseconds as hours, rounded to 6 decimals (the Java side rounds the same way)."""
    return round(ms / MS_PER_HOUR, 6)


class CellStore(Protocol):
    """The keyed state of one cell."""

    def panes(self) -> list[tuple[int, PaneAcc]]: ...
    def get_pane(self, pane_start: int) -> PaneAcc | None: ...
    def put_pane(self, pane_start: int, acc: PaneAcc) -> None: ...
    def remove_pane(self, pane_start: int) -> None: ...
    def revision(self, window: str, start: int) -> int | None: ...
    def set_revision(self, window: str, start: int, revision: int) -> None: ...
    def revisions(self) -> list[tuple[str, int]]: ...
    def remove_revision(self, window: str, start: int) -> None: ...
    def register_timer(self, ts: int) -> None: ...


def _aggregate(kind: str, cell: str, start: int, end: int, panes: list[PaneAcc], revision: int) -> Aggregate | None:
    # Hot (every cell at every window end): plain loops.
    reports = sog_sum = sog_n = 0
    vessels: set[tuple[int, str]] = set()
    type_reports: dict[str, int] = {}
    type_ms: dict[str, int] = {}
    tumbling = kind == TUMBLING
    for p in panes:
        accs = [p.t if tumbling else p.s]
        if not tumbling and p.s_late:  # late contributions, counted from their sliding_from on
            late = KindAcc()
            for v in p.s_late:
                if v.sliding_from <= end:
                    late.add(v)
            accs.append(late)
        for acc in accs:
            if acc.reports:
                reports += acc.reports
                sog_sum += acc.sog_milli_sum
                sog_n += acc.sog_count
                vessels.update(acc.vessels)
                for cat, n in acc.type_reports.items():
                    type_reports[cat] = type_reports.get(cat, 0) + n
            for cat, n in acc.type_ms.items():
                type_ms[cat] = type_ms.get(cat, 0) + n
    ms = sum(type_ms.values())
    if reports == 0 and ms == 0:
        return None
    avg = round(sog_sum / sog_n / 1000, 3) if sog_n else None
    per_type: dict[str, int] = {}
    mmsis = set()
    for mmsi, cat in vessels:
        mmsis.add(mmsi)
        per_type[cat] = per_type.get(cat, 0) + 1
    keys = type_reports.keys() | type_ms.keys()
    names = list(keys) if len(keys) == 1 else [c for c in ALL_CATEGORIES if c in keys]  # one: the common case
    return Aggregate(
        kind, cell, start, end, reports, len(mmsis), avg, revision, hours(ms), names,
        [per_type.get(name, 0) for name in names],
        [type_reports.get(name, 0) for name in names],
        [hours(type_ms.get(name, 0)) for name in names],
        sog_sum / 1000, sog_n,
    )  # fmt: skip


def _has_content(kind: str, end: int, panes: list[PaneAcc]) -> bool:
    """Whether a window of these panes holds a report or time: whether it fired (``_aggregate``
    is not None), without adding it up."""
    for p in panes:
        acc = p.t if kind == TUMBLING else p.s
        if acc.reports or acc.type_ms:
            return True
        if kind == SLIDING and any(v.sliding_from <= end and (v.reports or v.vessel_ms) for v in p.s_late):
            return True
    return False


class CellWindows:
    """Tumbling and sliding aggregates of one geohash cell."""

    def __init__(self, spec: WindowSpec) -> None:
        self.spec = spec

    def _fire_late(
        self,
        store: CellStore,
        cell: str,
        kind: str,
        start: int,
        end: int,
        fired_before: bool,
        panes: list[tuple[int, PaneAcc]],
    ) -> Aggregate | None:
        """Fire a window again for a contribution that came after the watermark passed its end.

        Only these firings write a revision to state: a window with content when the watermark
        passed its end fired then as revision 0 (``on_timer``, no state written), so a window
        without a stored revision has revision 0 exactly when it had content before."""
        previous = store.revision(kind, start)
        if previous is None:
            previous = 0 if fired_before else None
        revision = 0 if previous is None else previous + 1
        agg = _aggregate(kind, cell, start, end, [acc for p, acc in panes if start <= p < end], revision)
        if agg is not None:
            store.set_revision(kind, start, revision)
        return agg

    def _first_boundary_after(self, pane_start: int, watermark: int) -> int:
        """The first window end of the pane that the watermark has not reached, or later."""
        pane_ms = self.spec.pane_ms
        boundary = pane_start + pane_ms
        if boundary - 1 <= watermark:
            boundary = (watermark + 1) - (watermark + 1) % pane_ms + pane_ms
        return boundary

    def on_contribution(self, store: CellStore, v: VesselPane, watermark: int) -> list[Aggregate]:
        """Add a vessel's pane contribution. A window it belongs to whose end the watermark has
        passed, but not its end plus the allowed lateness, fires again at once (Flink's
        event-time trigger does the same); the others fire on their timers."""
        spec = self.spec
        ends: list[tuple[str, int, int]] = []
        if v.tumbling and spec.tumbling:
            end = spec.tumbling_end(v.pane_start)
            ends.append((TUMBLING, end - spec.window_ms, end))
        if v.sliding and spec.sliding:
            ends.extend(
                (SLIDING, end - spec.slide_size_ms, end)
                for end in spec.sliding_ends(v.pane_start)
                if end >= v.sliding_from
            )
        due = [(k, s, e) for k, s, e in ends if e - 1 <= watermark and not spec.closed(e, watermark)]
        fired_before: list[bool] = []
        if due:  # a late contribution: which of its windows had content (and so fired) before it
            panes = store.panes()
            for kind, start, end in due:
                fired_before.append(_has_content(kind, end, [a for p, a in panes if start <= p < end]))
        acc = store.get_pane(v.pane_start)
        if acc is None:
            acc = PaneAcc()
            boundary = self._first_boundary_after(v.pane_start, watermark)
            if boundary <= spec.last_end(v.pane_start):
                store.register_timer(boundary - 1)
            store.register_timer(spec.pane_retired_at(v.pane_start))
        acc.add(v)
        store.put_pane(v.pane_start, acc)
        out: list[Aggregate] = []
        after = store.panes() if due else []
        for (kind, start, end), before in zip(due, fired_before, strict=True):
            agg = self._fire_late(store, v.cell, kind, start, end, before, after)
            if agg:
                out.append(agg)
        return out

    def on_timer(self, store: CellStore, cell: str, ts: int) -> list[Aggregate]:
        """Fire the windows that end at ``ts + 1``; drop what no window can use any more."""
        spec = self.spec
        boundary = ts + 1
        panes = store.panes()
        if not panes:
            return []
        out: list[Aggregate] = []
        on_boundary = boundary % spec.pane_ms == 0
        if on_boundary:
            for kind, size, every in (
                (TUMBLING, spec.window_ms, spec.window_ms),
                (SLIDING, spec.slide_size_ms, spec.slide_ms),
            ):
                if boundary % every or not spec.computes(kind):
                    continue
                start = boundary - size
                inside = [acc for p, acc in panes if start <= p < boundary]
                # Revision 0 leaves no trace in state (see _fire_late). A window a late
                # contribution already fired (it came before this timer) has a stored revision.
                if inside and store.revision(kind, start) is None:
                    agg = _aggregate(kind, cell, start, boundary, inside, 0)
                    if agg is not None:
                        out.append(agg)
        # Panes come oldest first, and a newer pane never retires before an older one. Revisions
        # are dropped along with them: a window closes before the last of its panes retires.
        retired = False
        for pane_start, _ in panes:
            if spec.pane_retired_at(pane_start) > ts:
                break
            store.remove_pane(pane_start)
            retired = True
        if retired:
            for kind, start in store.revisions():
                size = spec.window_ms if kind == TUMBLING else spec.slide_size_ms
                if spec.closed(start + size, ts):
                    store.remove_revision(kind, start)
        # Chain the next end of a window that holds a pane: windows end only on boundaries, and
        # one without a pane fires nothing, so a cell whose panes lie years apart (a clock off
        # before the watermark starts) skips the years between them.
        if on_boundary:
            ends = [e for p, _ in panes if (e := spec.next_end_after(p, boundary)) is not None]
            if ends:
                store.register_timer(min(ends) - 1)
        return out


class DictCellStore:
    """A :class:`CellStore` in plain dicts, for tests and the plain implementation."""

    def __init__(self) -> None:
        self._panes: dict[int, PaneAcc] = {}
        self._revisions: dict[tuple[str, int], int] = {}
        self.timers: set[int] = set()

    def panes(self) -> list[tuple[int, PaneAcc]]:
        return sorted(self._panes.items())

    def get_pane(self, pane_start: int) -> PaneAcc | None:
        return self._panes.get(pane_start)

    def put_pane(self, pane_start: int, acc: PaneAcc) -> None:
        self._panes[pane_start] = acc

    def remove_pane(self, pane_start: int) -> None:
        del self._panes[pane_start]

    def revision(self, window: str, start: int) -> int | None:
        return self._revisions.get((window, start))

    def set_revision(self, window: str, start: int, revision: int) -> None:
        self._revisions[(window, start)] = revision

    def revisions(self) -> list[tuple[str, int]]:
        return list(self._revisions)

    def remove_revision(self, window: str, start: int) -> None:
        del self._revisions[(window, start)]

    def register_timer(self, ts: int) -> None:
        self.timers.add(ts)
