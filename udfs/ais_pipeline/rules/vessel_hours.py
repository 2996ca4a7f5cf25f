"""Vessel hours per cell, as maritime planners measure density (plain Python): the time vessels
spend in each cell, by ship type, instead of how often they were heard.

- **Segments.** A vessel's kept positions, in event-time order, are held until the watermark
  passes them (so that out-of-order reports are sorted first). The segment from position k to
  position k+1 gives the time ``t(k+1) - t(k)`` to the cell of position k when that gap is at
  most ``max_gap_ms`` (600 s by default); a longer gap is a hole in coverage and gives nothing.
  The last position gives nothing until its next one is known; once the watermark passes
  ``t(k) + max_gap_ms`` with no next position, the vessel fell silent. The position is still held
  for ``hold_ms`` more (the job: the allowed lateness plus the longest window), until no report
  within the cap of it can be kept any more: a position that comes that late still completes its
  segment, whose time in closed windows is then counted as late instead of lost.
- **Panes.** A segment's time is split at pane boundaries, so each window holds the time that
  falls inside it (:func:`split_at_panes`).
- **Ship type.** The category of the vessel's most recent static report when the position was
  kept (a CSV row's own vessel type), grouped as :data:`CATEGORIES` says; ``unknown`` without one.

:class:`Track` is one vessel's held positions; it holds nothing once they are used.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

MAX_GAP_MS = 600_000

# AIS ship and cargo type codes (ITU-R M.1371, message 5 / 24B) -> category, in the spirit of
# EMODnet's vessel density maps. Codes not listed are "other"; no static report: "unknown".
CATEGORIES: tuple[tuple[str, tuple[range, ...]], ...] = (
    ("fishing", (range(30, 31),)),
    ("service", (range(31, 33), range(50, 60))),  # towing, pilot, SAR, tug, port tender, law enforcement, medical
    ("sailing", (range(36, 37),)),
    ("pleasure", (range(37, 38),)),
    ("high_speed", (range(40, 50),)),
    ("passenger", (range(60, 70),)),
    ("cargo", (range(70, 80),)),
    ("tanker", (range(80, 90),)),
)
OTHER, UNKNOWN = "other", "unknown"
ALL_CATEGORIES = (*(name for name, _ in CATEGORIES), OTHER, UNKNOWN)

# Archive rows that name the ship type instead of giving its code (the Danish Maritime
# Authority's "Ship type" column), lower-cased: the code's category. Any other name is "other".
NAMED_TYPES = {
    "fishing": "fishing",
    "towing": "service", "towing long/wide": "service", "tug": "service", "pilot": "service", "sar": "service",
    "port tender": "service", "anti-pollution": "service", "law enforcement": "service", "medical": "service",
    "not party to conflict": "service",
    "sailing": "sailing",
    "pleasure": "pleasure",
    "hsc": "high_speed",
    "passenger": "passenger",
    "cargo": "cargo",
    "tanker": "tanker",
}  # fmt: skip


def ship_category(code: int | None) -> str:
    """The category of an AIS ship type code; ``unknown`` for none."""
    if code is None:
        return UNKNOWN
    for name, ranges in CATEGORIES:
        if any(code in r for r in ranges):
            return name
    return OTHER


def static_category(fields: dict[str, object]) -> str | None:
    """The category a static report's decoded fields give (``ship_type``: a code, or an archive
    row's type name); None when they hold no ship type (a 24A report: name only)."""
    value = fields.get("ship_type")
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return OTHER
    if isinstance(value, int):
        return ship_category(value)
    if isinstance(value, float) and value.is_integer():
        return ship_category(int(value))
    return NAMED_TYPES.get(str(value).strip().lower(), OTHER)


def split_at_panes(start_ms: int, end_ms: int, pane_ms: int) -> list[tuple[int, int]]:
    """The time from ``start_ms`` to ``end_ms`` as (pane start, milliseconds in that pane)."""
    out = []
    t = start_ms
    while t < end_ms:
        pane = t - t % pane_ms
        upto = min(end_ms, pane + pane_ms)
        out.append((pane, upto - t))
        t = upto
    return out


@dataclass(frozen=True, slots=True)
class Fix:
    """A kept position, as the track needs it."""

    ts: int
    cell: str
    category: str


def _ts(fix: Fix) -> int:
    return fix.ts


@dataclass(frozen=True, slots=True)
class Segment:
    """Time a vessel spent in a cell within one pane."""

    cell: str
    category: str
    pane_start: int
    ms: int


def _merge(out: list[Segment], seg: Segment) -> None:
    """Append a segment to ``out``, added to the last one when it is of the same cell, pane and
    category."""
    if out:
        prev = out[-1]
        if prev.pane_start == seg.pane_start and prev.cell == seg.cell and prev.category == seg.category:
            out[-1] = Segment(seg.cell, seg.category, seg.pane_start, prev.ms + seg.ms)
            return
    out.append(seg)


@dataclass
class Track:
    """One vessel's positions until they are used: the pending ones (not yet passed by the
    watermark, in event-time order), the last one released (waiting for its next), and the
    start of the chain of segments that ends at it (every gap in it under the cap).

    A position older than the last one released comes after its time was decided. Older than
    the chain's start, within the cap of it, it completes the segment to the start at once
    (:meth:`add` returns it). Inside the chain, its interval is already counted, in the segment
    it falls in (the time is the same, the cell that of the segment's start); further back than
    the cap from the start, it gives nothing: either way it is not used, and the caller counts it."""

    max_gap_ms: int
    pane_ms: int
    hold_ms: int = 0
    pending: list[Fix] = field(default_factory=list)
    last: Fix | None = None
    start: Fix | None = None

    def add(self, fix: Fix) -> list[Segment] | None:
        """Hold a position (``[]``); for one older than the chain's start (within the cap), the
        segment from it to the start; None for one the track cannot use."""
        last, start = self.last, self.start
        if last is None or fix.ts >= last.ts:
            pending = self.pending
            if not pending or fix.ts >= pending[-1].ts:  # in order: the common case
                pending.append(fix)
            else:
                bisect.insort(pending, fix, key=_ts)
            return []
        if start is not None and 0 < start.ts - fix.ts <= self.max_gap_ms:
            self.start = fix
            return self._segment(fix, start)
        return None

    def _segment(self, a: Fix, b: Fix) -> list[Segment]:
        gap = b.ts - a.ts
        if not 0 < gap <= self.max_gap_ms:
            return []
        pane = a.ts - a.ts % self.pane_ms
        if b.ts <= pane + self.pane_ms:  # within one pane: the common case
            return [Segment(a.cell, a.category, pane, gap)]
        return [Segment(a.cell, a.category, pane, ms) for pane, ms in split_at_panes(a.ts, b.ts, self.pane_ms)]

    def advance(self, watermark: int) -> list[Segment]:
        """The segments the watermark completes, those in the same cell, pane and category as
        one (their time added up: one contribution instead of several); positions used are
        dropped."""
        out: list[Segment] = []
        pending = self.pending
        n = 0
        while n < len(pending) and pending[n].ts <= watermark:
            n += 1
        if n:
            last = self.last
            for nxt in pending[:n]:
                if last is not None and nxt.ts - last.ts <= self.max_gap_ms:
                    for seg in self._segment(last, nxt):
                        _merge(out, seg)
                else:
                    self.start = nxt  # the first position, or one after a hole: a chain starts
                last = nxt
            self.last = last
            del pending[:n]
        if self.last is not None and watermark >= self._dropped_at(self.last):
            # Silent past the cap, and no report within it can be kept now (a held one, later
            # than the watermark, is past the cap: a hole).
            self.last = self.start = None
        return out

    @property
    def empty(self) -> bool:
        return not self.pending and self.last is None

    def next_timer(self) -> int | None:
        """The event time at which :meth:`advance` has something to do."""
        last = self.last
        if self.pending:
            first = self.pending[0].ts
            return first if last is None else min(first, self._dropped_at(last))
        return None if last is None else self._dropped_at(last)

    def _dropped_at(self, last: Fix) -> int:
        return last.ts + self.max_gap_ms + self.hold_ms
