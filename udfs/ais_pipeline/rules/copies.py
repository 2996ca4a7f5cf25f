"""Exact copies: the dedup's first rule, decided from a vessel's reports' identities alone.

Every transmission is heard by several receivers (shore stations with overlapping coverage, a
satellite later): each copy is the same payload. A position report (any type but the static 5
and 24, whose copies the static supersede rule handles) is an **exact copy** when its vessel sent
a report of the same identity (the armored payload with its fill bits, or an archive row's own
identity) whose event time is within the dedup TTL of its own. A copy is counted
(``duplicates_exact``, by minute of event time) and changes nothing else: not the vessel's
newest time, its timers or its tracks.

Each vessel remembers the identities of its reports that were not copies, each with its event
time, every report type but the static ones, decoded or not (a second copy of a payload that
does not decode is a copy, not a second dead letter). What it remembers is bounded in event
time, by the ``horizon``: how far behind the vessel's newest report a copy can still matter to a
window (the TTL, the sliding window's size, the allowed lateness and the out-of-orderness):

- an identity older than the horizon behind the vessel's newest time is forgotten, looked at
  each time the newest time has moved a TTL since the last look;
- a vessel's identities are dropped when the watermark passes its newest time plus the horizon
  (a timer at the first watermark step at or after that time; one that finds the newest time
  moved is set again).

This module is the rule's reference: the plain loop runs it, and the job runs its Java twin
(``ais.flink.ExactCopies``, before the reports are batched for the vessel operator), which the
golden cases in ``tests/golden/exact_copies.json`` hold to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ais_pipeline.rules.records import STATIC_TYPES
from ais_pipeline.rules.windows import WindowSpec


def identity_horizon_ms(spec: WindowSpec, ttl_ms: int, out_of_orderness_ms: int) -> int:
    """How far behind its vessel's newest report a copy can still matter to some window."""
    return ttl_ms + spec.slide_size_ms + spec.lateness_ms + out_of_orderness_ms


@dataclass(slots=True)
class SeenIdentities:
    """One vessel's state for the rule: its newest event time, when its identities were last
    pruned, its cleanup timer, and the identities of its reports with their first event time."""

    newest: int
    pruned_at: int
    cleanup_at: int
    ids: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ExactCopies:
    """The rule, with the dedup TTL, the horizon and the watermark's step (``spec``)."""

    spec: WindowSpec
    ttl_ms: int
    horizon_ms: int

    def decide(
        self, seen: SeenIdentities | None, ts: int, msg_type: int, identity: str
    ) -> tuple[bool, SeenIdentities, int | None]:
        """Whether a report is an exact copy; the vessel's state after it (the same object,
        changed, when there was one); and the cleanup timer to register, if one is new."""
        if seen is None:
            seen = SeenIdentities(ts, ts, self.spec.timer_at_or_after(ts + self.horizon_ms))
            timer: int | None = seen.cleanup_at
        else:
            timer = None
            if msg_type not in STATIC_TYPES:
                first = seen.ids.get(identity)
                if first is not None and abs(ts - first) <= self.ttl_ms:
                    return True, seen, None
            if ts > seen.newest:
                seen.newest = ts
            if seen.newest - seen.pruned_at >= self.ttl_ms:
                horizon = seen.newest - self.horizon_ms
                seen.ids = {i: first for i, first in seen.ids.items() if first >= horizon}
                seen.pruned_at = seen.newest
        if msg_type not in STATIC_TYPES:
            seen.ids[identity] = ts
        return False, seen, timer

    def on_timer(self, seen: SeenIdentities, ts: int) -> tuple[SeenIdentities | None, int | None]:
        """A timer of the vessel fired at ``ts``: its state after it (None: dropped) and the timer
        to register next, if any."""
        if seen.cleanup_at != ts:
            return seen, None
        if seen.newest + self.horizon_ms <= ts:
            return None, None
        seen.cleanup_at = self.spec.timer_at_or_after(max(seen.newest + self.horizon_ms, ts + 1))
        return seen, seen.cleanup_at
