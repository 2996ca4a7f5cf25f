"""The watermark of one input lane, following its receivers rather than single reports.

A *lane* is one ordered stream of lines: a file run (a file, or a directory read in name order),
or one Kafka source subtask. A *source* is a receiver (the tag block's ``s:``); lines without one
form one source of their own (``""``). The rule, for every line that carries an event time, in
input order:

1. The *consensus* ``C`` is the median event time of the last :data:`CONSENSUS_LINES` lines
   with a time (the lower median of an even count). Most recent lines agree on the time, so one
   receiver's clock, hours ahead or behind, moves it little.
2. Each source keeps the newest event time it has sent, ``M``. A source is *current* while
   ``M >= C - idle timeout``; one that falls further behind (a clock hours behind, or a receiver
   gone quiet) is forgotten until it sends again.
3. The watermark is ``min(M of the current sources) - out-of-orderness - 1``, and never moves
   back. A clock hours ahead does not raise it (it is not the minimum); a clock hours behind does
   not hold it (it is not current); a single source is its own consensus, as before this rule.
4. Until :data:`WARM_UP_LINES` lines with a time have been seen there is no watermark: a first
   line with a wrong clock must not set one that the lines after it cannot undo.

A line more than the maximum clock skew ahead of (behind) the current sources, by the median of
their newest times, is counted for its receiver as ``clock_ahead`` (``clock_behind``), from the
warm-up on: what a wrong clock costs is visible per receiver. (After a pause of the whole feed
longer than the skew, the first line of each receiver is counted too: at that moment a jump of
one clock and a pause of all look the same.)
Everything is decided from the input order alone, so the same lines give the same watermarks at
any speed. ``java/src/main/java/ais/flink/ReceiverWatermarks.java`` implements the same rule in
the job; ``tests/golden/watermarks.json`` holds cases both must pass.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import deque

from ais_pipeline.rules.records import TIME_UNKNOWN

CONSENSUS_LINES = 256
WARM_UP_LINES = 64
CLOCK_AHEAD = "clock_ahead"
CLOCK_BEHIND = "clock_behind"


class ReceiverWatermarks:
    """The watermark of one lane (see the module docstring). ``watermark`` is the watermark in
    force before the next line; :meth:`observe` takes one line's source and event time."""

    def __init__(
        self,
        out_of_orderness_ms: int,
        idle_timeout_ms: int,
        max_clock_skew_ms: int,
        consensus_lines: int = CONSENSUS_LINES,
        warm_up_lines: int = WARM_UP_LINES,
    ) -> None:
        self.out_of_orderness_ms = out_of_orderness_ms
        self.idle_timeout_ms = idle_timeout_ms
        self.max_clock_skew_ms = max_clock_skew_ms
        self.consensus_lines = consensus_lines
        self.warm_up_lines = warm_up_lines
        self.watermark = TIME_UNKNOWN
        self.seen = 0  # lines with a time
        self._recent: deque[int] = deque()  # the last consensus_lines times, in input order
        self._sorted: list[int] = []  # the same, sorted
        self._newest: dict[str, int] = {}  # source -> M
        self._by_newest: list[tuple[int, str]] = []  # (M, source), sorted

    def consensus(self) -> int:
        """The median event time of the recent lines (TIME_UNKNOWN before the first)."""
        s = self._sorted
        return s[(len(s) - 1) // 2] if s else TIME_UNKNOWN

    def observe(self, source: str, ts: int) -> str | None:
        """One line with event time ``ts`` from ``source``; returns ``clock_ahead``,
        ``clock_behind`` or None for it. A line without a time (TIME_UNKNOWN) changes nothing."""
        if ts == TIME_UNKNOWN:
            return None
        flag = None
        by_newest = self._by_newest
        if self.seen >= self.warm_up_lines and by_newest:  # a consensus of a few lines says little
            reference = by_newest[(len(by_newest) - 1) // 2][0]
            if ts > reference + self.max_clock_skew_ms:
                flag = CLOCK_AHEAD
            elif ts < reference - self.max_clock_skew_ms:
                flag = CLOCK_BEHIND
        self._remember(ts)
        self.seen += 1
        previous = self._newest.get(source)
        if previous is None or ts > previous:
            if previous is not None:
                del self._by_newest[bisect_left(self._by_newest, (previous, source))]
            self._newest[source] = ts
            insort(self._by_newest, (ts, source))
        if self.seen >= self.warm_up_lines:
            self._advance()
        return flag

    def _remember(self, ts: int) -> None:
        recent, ordered = self._recent, self._sorted
        recent.append(ts)
        insort(ordered, ts)
        if len(recent) > self.consensus_lines:
            del ordered[bisect_left(ordered, recent.popleft())]

    def _advance(self) -> None:
        horizon = self.consensus() - self.idle_timeout_ms
        by_newest = self._by_newest
        while by_newest and by_newest[0][0] < horizon:  # behind the consensus: forgotten
            del self._newest[by_newest.pop(0)[1]]
        if by_newest:
            candidate = by_newest[0][0] - self.out_of_orderness_ms - 1
            if candidate > self.watermark:
                self.watermark = candidate

    def sources(self) -> dict[str, int]:
        """The current sources and their newest event times."""
        return dict(self._newest)
