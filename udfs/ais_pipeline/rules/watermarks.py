"""The watermark of one input lane, following its receivers rather than single lines.

A *lane* is one ordered stream of lines: a file run (a file, or a directory read in name order),
or one Kafka source subtask. A *source* is a receiver (the tag block's ``s:``); lines without one
form one source of their own (``""``). The rule, for every line that carries an event time ``t``,
in input order:

1. The *consensus* ``C`` is the median event time of the last :data:`CONSENSUS_LINES` lines
   with a time, this one included (the lower median of an even count). Most recent lines agree
   on the time, so one receiver's clock or a few stray lines, hours ahead or behind, move it
   little.
2. The line *moves its source's clock* unless it is far ahead: ``t <= max(C, F) + max clock
   skew``, where ``F`` (the lane's *frontier*) is the newest time of the lines that moved a
   clock so far (it lets a slow lane, whose median is long past, move line by line). A line
   further ahead (a single line with a wrong time, a few, a receiver hours ahead) is held, and
   moves nothing, whichever source sent it, the lane's only source included; it is judged
   against the watermark like any other line. Held lines are dropped once a line at the lane's
   time (not itself far behind) comes after them, and move the clocks, in input order, once
   :data:`JUMP_LINES` of them follow one another with none between: a real jump of the whole
   lane (a pause, a file that starts a new day). A jump is also followed when the consensus has
   followed it.
3. Each source keeps ``M``, the newest time of its lines that moved its clock. A source is
   *current* while ``M >= C - idle timeout``; one that falls further behind (a clock hours
   behind, or a receiver gone quiet) is forgotten until it sends again.
4. The watermark is ``min(M of the current sources) - out-of-orderness - 1``, and never moves
   back. A clock hours ahead does not raise it (its lines move nothing); a clock hours behind
   does not hold it (it is not current).
5. Until :data:`WARM_UP_LINES` lines with a time have been seen there is no watermark, and the
   warm-up lines are held: at its end, they move their sources' clocks in input order by rule
   2 with the consensus of the warm-up lines, so a first line with a wrong clock sets nothing.

A line more than the maximum clock skew ahead of (behind) the other current sources, by the
median of their newest times, is counted for its receiver as ``clock_ahead`` (``clock_behind``),
from the warm-up on: what a wrong clock costs is visible per receiver. The only current source of
a lane is judged against its own lines: ahead when it is more than the skew plus what the lane
moves in :data:`JUMP_LINES` lines at its pace (:meth:`ReceiverWatermarks.pace`, the usual time
between lines) ahead of its newest time, or of the line before it while a jump is held; behind as
with others. A stray line of a busy lane is flagged; the next row of a sparse archive (a row every
20 minutes) is not, and a pause of such a lane only on its first line. (After a pause of the whole feed
longer than the skew, the lines until the consensus follows are counted too: at that moment a
jump of one clock and a pause of all look the same.)
Everything is decided from the input order alone, so the same lines give the same watermarks at
any speed.

**A live lane** (the job's own network input: ``received_lag_ms`` set) also knows the wall clock.
Its lines stamped on receipt (``received``: the job's source gave them its own receive time, so
they come in time order) are not a receiver's clock: they form the lane's *received clock* ``R``,
the newest of their times, and take no part in the consensus, the warm-up or the flags. When the
lane has had no line for ``received_lag_ms`` of wall clock (the operator's call: :meth:`tick`),
``R`` moves to the wall clock less that lag: a line still on its way was stamped after that (once
the lane has had a line stamped on receipt: a feed of lines with times of their own, a capture
replayed over UDP, follows its receivers alone, whatever the wall clock says). Then

- a source is current while ``M >= max(C, R) - idle timeout`` (a receiver silent for the idle
  timeout of wall clock is forgotten, so a quiet feed does not hold the watermark);
- the watermark is ``R - 1`` (lines in time order need no out-of-orderness), or the receivers'
  rule's if that is lower (during their warm-up, the oldest line held less the
  out-of-orderness), and still never moves back.

So the watermark of a feed stamped on receipt trails its newest line, and through a silence the
wall clock, by the lag; lines with times of their own keep their receivers' rule.
``java/src/main/java/ais/flink/ReceiverClocks.java`` implements the same rule in
the job; ``tests/golden/watermarks.json`` holds cases both must pass.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import deque

from ais_pipeline.rules.records import TIME_UNKNOWN

CONSENSUS_LINES = 256
WARM_UP_LINES = 64
JUMP_LINES = 32
# A live lane: how far its received clock trails the wall clock through a silence (a line goes
# from its stamp to the watermark stage in about 0.4 s: the source's 100 ms polls and the line
# batches' 250 ms), and the step its watermark moves in (the windows' step is coarser).
RECEIVED_LAG_MS = 1000
LIVE_STEP_MS = 1000
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
        jump_lines: int = JUMP_LINES,
        received_lag_ms: int | None = None,
    ) -> None:
        self.out_of_orderness_ms = out_of_orderness_ms
        self.received_lag_ms = received_lag_ms  # None: not a live lane (a file, Kafka)
        self.received = TIME_UNKNOWN  # R: the received clock of a live lane
        self.idle_timeout_ms = idle_timeout_ms
        self.max_clock_skew_ms = max_clock_skew_ms
        self.consensus_lines = consensus_lines
        self.warm_up_lines = warm_up_lines
        self.jump_lines = jump_lines
        self.watermark = TIME_UNKNOWN
        self.seen = 0  # lines with a time
        self.frontier = TIME_UNKNOWN  # F: the newest time of the lines that moved a clock
        self._recent: deque[int] = deque()  # the last consensus_lines times, in input order
        self._sorted: list[int] = []  # the same, sorted
        self._newest: dict[str, int] = {}  # source -> M
        self._by_newest: list[tuple[int, str]] = []  # (M, source), sorted
        self._held: list[tuple[str, int]] = []  # the warm-up lines, until its end
        self._ahead: list[tuple[str, int]] = []  # far-ahead lines since, until they are a jump

    def consensus(self) -> int:
        """The median event time of the recent lines (TIME_UNKNOWN before the first)."""
        s = self._sorted
        return s[(len(s) - 1) // 2] if s else TIME_UNKNOWN

    def observe(self, source: str, ts: int, received: bool = False) -> str | None:
        """One line with event time ``ts`` from ``source``; returns ``clock_ahead``,
        ``clock_behind`` or None for it. A line without a time (TIME_UNKNOWN) changes nothing.
        ``received``: the line was stamped on receipt (it moves a live lane's received clock)."""
        if ts == TIME_UNKNOWN:
            return None
        if received and self.received_lag_ms is not None:
            if ts > self.received:
                self.received = ts
                self._advance(self.consensus())
            return None
        flag = None
        if self.seen >= self.warm_up_lines and self._by_newest:  # a consensus of a few lines says little
            others = self._others_median(source)
            ahead = self.max_clock_skew_ms
            if others is None:  # a lone source, against its own lines at the lane's pace
                reference = front = self._newest[source]
                if self._ahead:  # a jump under way: the line before, held with it
                    front = max(front, self._ahead[-1][1])
                ahead += self.jump_lines * self.pace()
            else:
                reference = front = others
            if ts > front + ahead:
                flag = CLOCK_AHEAD
            elif ts < reference - self.max_clock_skew_ms:
                flag = CLOCK_BEHIND
        self._remember(ts)
        self.seen += 1
        if self.seen < self.warm_up_lines:
            self._held.append((source, ts))
            return flag
        consensus = self.consensus()
        if self._held:  # the end of the warm-up: its lines, in input order
            for held_source, held_ts in self._held:
                self._judge(held_source, held_ts, consensus)
            self._held.clear()
        self._judge(source, ts, consensus)
        self._advance(consensus)
        return flag

    def tick(self, now_ms: int) -> None:
        """The wall clock of a live lane that has had no line for ``received_lag_ms``: the received
        clock moves to ``now_ms`` less the lag (nothing for a lane that is not live, or that has
        had no line stamped on receipt: its times are its receivers', whatever the clock says)."""
        if self.received_lag_ms is None or self.received == TIME_UNKNOWN:
            return
        clock = now_ms - self.received_lag_ms
        if clock > self.received:
            self.received = clock
            self._advance(self.consensus())

    def pace(self) -> int:
        """The lane's usual time between lines: the span of the middle half of the recent lines'
        times over their count (milliseconds; 0 for a busy lane)."""
        s = self._sorted
        lo, hi = len(s) // 4, 3 * len(s) // 4
        return (s[hi] - s[lo]) // (hi - lo) if hi > lo else 0

    def _others_median(self, source: str) -> int | None:
        """The median newest time of the current sources but ``source`` (the lower median of an
        even count); None when there is no other."""
        by_newest = self._by_newest
        own = self._newest.get(source)
        n = len(by_newest) - (own is not None)
        if n <= 0:
            return None
        k = (n - 1) // 2
        if own is not None and k >= bisect_left(by_newest, (own, source)):
            k += 1
        return by_newest[k][0]

    def _judge(self, source: str, ts: int, consensus: int) -> None:
        """Rule 2: the line moves its source's clock unless it is far ahead; far-ahead lines are
        held until :attr:`jump_lines` of them follow one another (a jump of the whole lane), and
        dropped when a line at the lane's time comes after them."""
        reference = max(consensus, self.frontier)
        skew = self.max_clock_skew_ms
        if ts > reference + skew:
            ahead = self._ahead
            ahead.append((source, ts))
            if len(ahead) >= self.jump_lines:
                for ahead_source, ahead_ts in ahead:
                    self._move(ahead_source, ahead_ts)
                ahead.clear()
            return
        self._move(source, ts)
        if self._ahead and ts >= reference - skew:  # a line at the lane's time: they were strays
            self._ahead = [(s, t) for s, t in self._ahead if t <= ts + skew]

    def _move(self, source: str, ts: int) -> None:
        """The line moves its source's clock (and the lane's frontier)."""
        if ts > self.frontier:
            self.frontier = ts
        previous = self._newest.get(source)
        if previous is None or ts > previous:
            if previous is not None:
                del self._by_newest[bisect_left(self._by_newest, (previous, source))]
            self._newest[source] = ts
            insort(self._by_newest, (ts, source))

    def _remember(self, ts: int) -> None:
        recent, ordered = self._recent, self._sorted
        recent.append(ts)
        insort(ordered, ts)
        if len(recent) > self.consensus_lines:
            del ordered[bisect_left(ordered, recent.popleft())]

    def _advance(self, consensus: int) -> None:
        received = self.received
        now = max(consensus, received)  # TIME_UNKNOWN for neither
        horizon = TIME_UNKNOWN if now == TIME_UNKNOWN else now - self.idle_timeout_ms
        by_newest = self._by_newest
        while by_newest and by_newest[0][0] < horizon:  # behind the consensus: forgotten
            del self._newest[by_newest.pop(0)[1]]
        candidate = TIME_UNKNOWN
        if by_newest:
            candidate = by_newest[0][0] - self.out_of_orderness_ms - 1
        if received != TIME_UNKNOWN:
            candidate = received - 1 if candidate == TIME_UNKNOWN else min(candidate, received - 1)
            if self._held:  # receivers still in their warm-up hold it as their clocks will
                candidate = min(candidate, min(ts for _, ts in self._held) - self.out_of_orderness_ms - 1)
        if candidate > self.watermark:
            self.watermark = candidate

    def sources(self) -> dict[str, int]:
        """The current sources and their newest event times."""
        return dict(self._newest)
