"""The progress of a local run, read from its web UI's REST API while the job runs: lines read
(and the share of the input, for plain files: the bytes of the lines read of the files' size),
lines/s, the watermark as a time, positions kept, duplicates and late
reports so far, and for Kafka the consumer lag. On a terminal one refreshing line (tqdm), else a
log line every ``LOG_EVERY_S`` seconds.

The figures are the operators' metric counters (the same the summary adds up at the end), so the
line lags the job by the metric fetch interval (``metrics.fetcher.update-interval``, 1 s)."""

from __future__ import annotations

import json
import logging
import os
import sys
import time
import urllib.parse
import urllib.request
from collections import deque
from dataclasses import dataclass
from typing import Any

from ais_pipeline.rules.outputs import iso_ms

log = logging.getLogger("ais_pipeline")

POLL_EVERY_S = 1.0
LOG_EVERY_S = 10.0
RATE_OVER_S = 10.0
# operator metric -> figure; the parse operator counts lines, the dedup operator the rest.
COUNTERS = {
    "lines": "lines",
    "input_bytes": "bytes",
    "positions_kept": "kept",
    "duplicates_exact": "duplicates",
    "duplicates_near": "duplicates",
    "late": "late",
    "pendingRecords": "lag",
}
RELIST_EVERY = 5  # snapshots between two listings of a vertex's metrics
NO_WATERMARK = -(2**63)
END_OF_INPUT = 2**63 - 1  # Flink's watermark once a bounded input is read


@dataclass
class Snapshot:
    """What the job has done so far."""

    lines: int = 0
    bytes: int = 0  # of the lines read, each with its line break
    kept: int = 0
    duplicates: int = 0
    late: int = 0
    watermark_ms: int | None = None  # the cell windows' input watermark, None before the first
    lag: int | None = None  # Kafka: records behind the end of the topic


def describe(snap: Snapshot, lines_per_s: float | None, total_bytes: int | None, now_ms: int | None = None) -> str:
    """The progress line (without the bar that tqdm draws on a terminal); a rate of None is
    "pending": the job moved but its line count has not been reported since (see :class:`RecentRate`).
    ``now_ms``, a live run's wall clock: how far the watermark is behind it."""
    read = f"{snap.lines:,} lines"
    if total_bytes:
        read += f" ({min(100, 100 * snap.bytes // total_bytes)}% of the input)"
    parts = [read, "lines/s pending" if lines_per_s is None else f"{lines_per_s:,.0f} lines/s"]
    if snap.watermark_ms is None:
        watermark = "-"
    elif snap.watermark_ms >= END_OF_INPUT:
        watermark = "end of input"
    else:
        watermark = iso_ms(snap.watermark_ms)
        if now_ms is not None:
            watermark += f" ({max(now_ms - snap.watermark_ms, 0) / 1000:,.1f} s behind the clock)"
    parts.append("watermark " + watermark)
    parts.append(f"kept {snap.kept:,} dup {snap.duplicates:,} late {snap.late:,}")
    if snap.lag is not None:
        parts.append(f"lag {snap.lag:,}")
    return ", ".join(parts)


def rest_json(base: str, path: str) -> Any:
    """One GET of Flink's REST API, as JSON."""
    with urllib.request.urlopen(base + path, timeout=5) as resp:
        return json.load(resp)


class JobMetrics:
    """The figures of one running job, through the REST API at ``base``."""

    def __init__(self, base: str, job_id: str) -> None:
        self.base = base
        self.job_id = job_id
        self._ids: dict[str, list[str]] = {}  # vertex id -> the metric ids it has of COUNTERS
        self._windows: str | None = None  # the cell windows' vertex id
        self._polls = 0

    def _get(self, path: str) -> Any:
        return rest_json(self.base, path)

    def snapshot(self) -> Snapshot:
        snap = Snapshot()
        job = f"/jobs/{self.job_id}/vertices"
        if not self._ids:
            for vertex in self._get(f"/jobs/{self.job_id}")["vertices"]:
                self._ids[vertex["id"]] = []
                if vertex["name"].startswith("cell windows"):
                    self._windows = vertex["id"]
        relist = self._polls % RELIST_EVERY == 0
        self._polls += 1
        for vertex, ids in self._ids.items():
            if not ids or relist:  # registered as the tasks start (one chained operator after another)
                listed = self._get(f"{job}/{vertex}/metrics")
                ids[:] = [m["id"] for m in listed if m["id"].rsplit(".", 1)[-1] in COUNTERS]
            for start in range(0, len(ids), 40):
                for metric in self._get(f"{job}/{vertex}/metrics?get={metric_query(ids[start : start + 40])}"):
                    figure = COUNTERS[metric["id"].rsplit(".", 1)[-1]]
                    value = int(float(metric["value"]))
                    if figure == "lag":
                        snap.lag = (snap.lag or 0) + max(value, 0)
                    else:
                        setattr(snap, figure, getattr(snap, figure) + value)
        if self._windows is not None:
            marks = [int(m["value"]) for m in self._get(f"{job}/{self._windows}/watermarks")]
            if marks and min(marks) > NO_WATERMARK:
                snap.watermark_ms = min(marks)
        return snap


def terminal_width() -> int:
    """The width of the terminal stderr is on, asked of the terminal itself: a ``COLUMNS``
    variable can be stale (the readline library sets it to 80 when it starts on a terminal that
    has not said its size yet). A terminal that says 0 columns gets 100: tqdm would draw nothing."""
    try:
        columns = os.get_terminal_size(sys.stderr.fileno()).columns
    except OSError:
        columns = 0
    return columns or 100


def metric_query(ids: list[str]) -> str:
    """Metric ids for the REST API's ``?get=``, quoted: an operator's name may hold ``#`` or
    ``/`` (an MQTT topic filter), which would cut the query short."""
    return ",".join(urllib.parse.quote(i, safe="") for i in ids)


def moved(before: Snapshot | None, now: Snapshot, clock_watermark: bool = False) -> bool:
    """Whether the job did anything between two snapshots besides reading lines: a later
    watermark (not for a live run, whose watermark follows the clock through a silence), or more
    positions kept, duplicates or late reports."""
    if before is None:
        return False
    later = not clock_watermark and (now.watermark_ms or 0) > (before.watermark_ms or 0)
    return later or (now.kept, now.duplicates, now.late) != (
        before.kept,
        before.duplicates,
        before.late,
    )


class RecentRate:
    """Lines per second over the last ``RATE_OVER_S`` seconds (since the start when shorter), so
    that a run waiting for new files (``--follow``) shows 0, not a rate that decays towards it.

    A line count can reach the REST API in bursts, standing still for a whole interval while the
    job works (its watermark moving): a rate is taken from the last count seen before the window (the start of such a
    standstill), and one of no new line in the whole window while the job moved is pending (None),
    not 0. It is 0 only when nothing moved: no line, no watermark, no record decided."""

    def __init__(self, started: float) -> None:
        self._changes: deque[tuple[float, int]] = deque([(started, 0)])  # when each count was first seen

    def update(self, now: float, lines: int) -> float:
        changes = self._changes
        if lines > changes[-1][1]:
            changes.append((now, lines))
        while len(changes) > 2 and changes[1][0] <= now - RATE_OVER_S:
            changes.popleft()
        # From the last count seen at the window's start (or before it, when the count stood still
        # across it); a count unchanged is its own latest sample.
        samples = list(changes) if changes[-1][0] == now else [*changes, (now, lines)]
        while len(samples) > 2 and samples[1][0] <= now - RATE_OVER_S:
            samples.pop(0)
        then, before = samples[0]
        return max(lines - before, 0) / max(now - then, 1e-3)

    def judged(self, now: float, lines: int, moving: bool) -> float | None:
        """:meth:`update`, but None (pending) for no new line while the job moved."""
        rate = self.update(now, lines)
        return None if rate == 0 and moving else rate


class ProgressLine:
    """Shows a running job's progress: call :meth:`update` often (it polls once a second)."""

    def __init__(
        self, base: str, job_id: str, total_bytes: int | None, terminal: bool | None = None, live: bool = False
    ) -> None:
        self.metrics = JobMetrics(base, job_id)
        self.total = total_bytes
        self.live = live  # a live input: its watermark follows the clock, and the line shows how far behind
        self.terminal = sys.stderr.isatty() if terminal is None else terminal
        self.started = time.monotonic()
        self._polled = self.started
        self._rate = RecentRate(self.started)
        self._last: Snapshot | None = None
        self._bar: Any = None
        if self.terminal:
            from tqdm import tqdm

            self._bar = tqdm(
                total=total_bytes, unit="B", unit_scale=True, ncols=terminal_width(), leave=False, file=sys.stderr
            )

    def update(self) -> None:
        now = time.monotonic()
        if now - self._polled < (POLL_EVERY_S if self.terminal else LOG_EVERY_S):
            return
        self._polled = now
        try:
            snap = self.metrics.snapshot()
        except Exception as exc:  # the job is starting or ending: next time (never stop the run)
            log.debug("no progress figures: %s", exc)
            return
        rate = self._rate.judged(now, snap.lines, moved(self._last, snap, self.live))
        self._last = snap
        clock = int(time.time() * 1000) if self.live else None
        if self._bar is not None:
            self._bar.n = min(snap.bytes, self.total) if self.total else snap.bytes
            self._bar.set_postfix_str(describe(snap, rate, None, clock), refresh=False)
            self._bar.refresh()
        else:
            log.info("progress: %s", describe(snap, rate, self.total, clock))

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
