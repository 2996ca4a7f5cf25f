"""How a job runs from this process: until it ends, or until the user stops it.

A blocking ``env.execute`` sits in a call to the JVM that a signal does not interrupt; here the job
runs detached and this process polls its status between short sleeps. While it runs, SIGINT
(Ctrl-C), SIGTERM and SIGHUP are counted, not raised (:class:`StopSignals`): an exception in the
middle of a call to the JVM would leave the job's state unknown to this process. The first stops
the job by a final savepoint that first drains event time (every window fires, every sink
commits, as at the end of a file), through the cluster's REST API; a second one, a drain that
fails or one that takes too long, cancels it.

The job's own result is the judge of how it ended: a job whose result is in has ended, whatever a
REST endpoint says or fails to say (a mini-cluster closes as soon as its job ends, its REST API
with it). A job that finished after the drain was asked for was drained; one that is still
running is cancelled; a job that has ended is never cancelled. A job that fails raises
:class:`~ais_pipeline.errors.JobFailed` with its innermost cause in one line.
"""

from __future__ import annotations

import http.client
import json
import logging
import signal
import sys
import threading
import time
import urllib.request
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from pyflink.datastream import StreamExecutionEnvironment

from ais_pipeline.errors import JobFailed, StoppedBeforeStart
from ais_pipeline.jvm.gateway import innermost_cause
from ais_pipeline.pipeline.progress import ProgressLine, rest_json

log = logging.getLogger("ais_pipeline")

DRAIN_TIMEOUT_S = 120
CANCEL_TIMEOUT_S = 30
POLL_S = 0.2
# What a REST call to a cluster that is starting, closing or gone raises.
REST_ERRORS = (OSError, ValueError, KeyError, http.client.HTTPException)


class Stopped(Exception):
    """The user stopped the run (Ctrl-C, SIGTERM or SIGHUP); the job was drained, or cancelled."""

    def __init__(self, drained: bool) -> None:
        super().__init__("drained" if drained else "cancelled")
        self.drained = drained


@dataclass(frozen=True)
class LocalJob:
    """A job on a local cluster: where its REST API is (the progress line, the drain), and the
    size of its input in bytes when it is known (a file run of plain files that does not follow
    its directory)."""

    rest_port: int
    total_bytes: int | None = None
    live: bool = False  # a live input: the progress line shows the watermark's lag behind the clock

    @property
    def rest(self) -> str:
        return f"http://127.0.0.1:{self.rest_port}"


_REQUESTED = [0]  # stops raised by :func:`interrupt` that no run has taken yet


def interrupt(signum: int, frame: FrameType | None) -> None:
    """The handler of SIGINT, SIGTERM and SIGHUP before a run's job is submitted: a
    KeyboardInterrupt, remembered. Raised in the middle of a library's cleanup (py4j frees JVM
    objects from finalizers, where an exception is printed and dropped) it would be lost; the
    run's :class:`StopSignals` starts from the stops remembered, so the run stops anyway."""
    _REQUESTED[0] += 1
    raise KeyboardInterrupt


def stop_requested() -> bool:
    """Whether a stop signal came that no run has taken yet: one that came while the job was being
    made. An exception after it (a call to the JVM cut in the middle by the stop leaves py4j's
    connection out of step) is that stop's doing, not a defect."""
    return _REQUESTED[0] > 0


def _unraisable(unraisable: Any) -> None:
    """Python's hook for an exception it cannot raise (in a finalizer): a stop raised there is
    remembered by :func:`interrupt` and stops the run; its traceback is not printed."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        return
    sys.__unraisablehook__(unraisable)


def install_interrupt() -> None:
    """Stop on SIGINT, SIGTERM and SIGHUP from the program's first step (SIGINT too when the
    process started with it ignored: the run still stops on it)."""
    for sig in StopSignals.SIGNALS:
        signal.signal(sig, interrupt)
    sys.unraisablehook = _unraisable


class StopSignals:
    """SIGINT, SIGTERM and SIGHUP counted while the block runs, and the handlers of before put
    back after it. Python leaves SIGINT ignored when the process started with it ignored (a
    background job of a shell without job control, a service manager): the run still stops on it.
    Outside the main thread (where no handler can be set) nothing is counted. Once one was counted,
    they stay ignored after the block: the run is ending."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self) -> None:
        self.count = 0
        self._before: dict[int, Any] = {}

    def take_requested(self) -> None:
        """Count the stops :func:`interrupt` raised that never stopped the run (lost on the way)."""
        self.count += _REQUESTED[0]
        _REQUESTED[0] = 0

    def _on(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread() and not self._before:
            for sig in self.SIGNALS:
                self._before[sig] = signal.signal(sig, self._on)
        self.take_requested()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        # A run that was told to stop is ending: one more Ctrl-C (a user pressing it twice) must
        # not cut short what is left of it, nor kill the process while Python shuts down (which
        # puts back the default handler of any signal that has a Python one), so the signals stay
        # ignored from then on.
        for sig, handler in self._before.items():
            if self.count:
                signal.signal(sig, signal.SIG_IGN)
            else:
                signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        self._before.clear()


class RunningJob:
    """A submitted job, judged by its own result: :meth:`ended` once the result is in (finished,
    failed or cancelled), :meth:`failure` the innermost cause when it did not finish."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.result = client.get_job_execution_result()
        self.id = str(client.get_job_id())

    def ended(self) -> bool:
        return bool(self.result.done())

    def failure(self) -> str | None:
        """None for a job that finished (its result in, without an error); else why not."""
        try:
            self.result.result()
        except Exception as exc:
            log.debug("the job did not finish: %s", exc)
            return innermost_cause(str(exc))
        return None

    def cancel(self) -> None:
        """Cancel the job unless it has ended, and wait for its end; a cluster that closed with
        the job (or a job that ended meanwhile) is the end it is, not an error."""
        if self.ended():
            return
        log.info("stopping: cancelling the job")
        try:
            cancelled = self.client.cancel()
            deadline = time.monotonic() + CANCEL_TIMEOUT_S
            while not cancelled.done() and not self.ended() and time.monotonic() < deadline:
                time.sleep(POLL_S)
        except Exception as exc:
            if not self.ended():
                log.warning("stopping: the job could not be cancelled (%s)", innermost_cause(str(exc)))


def request_drain(rest: str, job_id: str, directory: Path) -> str:
    """Ask the cluster to stop the job with a final savepoint in ``directory`` that first drains
    event time (``POST /jobs/<id>/stop``, as ``flink stop --drain`` does); the trigger's id."""
    body = json.dumps({"drain": True, "targetDirectory": directory.as_uri(), "formatType": "CANONICAL"}).encode()
    request = urllib.request.Request(
        f"{rest}/jobs/{job_id}/stop", data=body, headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as resp:
        return str(json.load(resp)["request-id"])


def still_starting(failure: dict[str, Any]) -> bool:
    """Whether a savepoint failed only because some of the job's tasks were not running yet (a
    stop that came as the job was being deployed)."""
    return "Not all required tasks are currently running" in str(failure.get("stack-trace", ""))


def drain(job: RunningJob, rest: str, directory: Path, stops: StopSignals) -> bool:
    """Stop the job by a final savepoint that drains event time; whether it ended so. It did when
    its result came in without an error after the drain was asked for, whatever the savepoint's
    REST status said meanwhile (an error there is looked at again, then the job's result; a
    savepoint that failed because some task was not running yet is asked for again). False
    when a further stop signal came, the savepoint failed, or nothing ended within
    ``DRAIN_TIMEOUT_S``: the caller cancels the job."""
    asked = stops.count
    try:
        trigger: str | None = request_drain(rest, job.id, directory)
    except REST_ERRORS as exc:  # the job may have ended meanwhile (its cluster with it)
        log.debug("the drain could not be asked for: %s", exc)
        trigger = None
        if not job.ended():
            log.warning("stopping: the job could not be drained (%s)", exc)
            return False
    deadline = time.monotonic() + DRAIN_TIMEOUT_S
    savepoint_done = False
    while time.monotonic() < deadline:
        if job.ended():
            return job.failure() is None
        if stops.count > asked:
            return False
        if trigger is not None and not savepoint_done:
            try:
                status = rest_json(rest, f"/jobs/{job.id}/savepoints/{trigger}")
            except REST_ERRORS as exc:  # closing with the job, or busy: the job's result decides
                log.debug("the savepoint's status could not be read: %s", exc)
            else:
                if status["status"]["id"] == "COMPLETED":
                    failure = status.get("operation", {}).get("failure-cause")
                    if failure and not job.ended() and still_starting(failure):
                        # Asked for before every task of the job ran: ask again once they do.
                        log.debug("the drain came before the job's tasks ran: asked for again")
                        time.sleep(POLL_S)
                        try:
                            trigger = request_drain(rest, job.id, directory)
                        except REST_ERRORS as exc:
                            log.debug("the drain could not be asked for again: %s", exc)
                        continue
                    if failure and not job.ended():
                        log.warning("stopping: the job could not be drained (%s)", failure.get("class", "failed"))
                        return False
                    savepoint_done = True  # the job ends next: wait for its result
        time.sleep(POLL_S)
    if job.ended():
        return job.failure() is None
    log.warning("stopping: the job did not drain within %d s", DRAIN_TIMEOUT_S)
    return False


def execute(
    env: StreamExecutionEnvironment,
    name: str,
    local: LocalJob,
    drain_to: Path | None = None,
    stops: StopSignals | None = None,
) -> None:
    """Run the job on its local cluster until it ends, with a progress line. A stop signal stops
    it: with ``drain_to``, by a final savepoint there that drains event time, then raises
    :class:`Stopped`; without it, on a second signal, or when the drain fails, the job is
    cancelled. A job that ends by itself as the signal comes has simply ended. ``stops``: the
    caller's count of stop signals, when it keeps counting them after the job (while it sums the
    run up); else the signals are counted while this runs."""
    with StopSignals() if stops is None else nullcontext(stops) as stops:
        if stops.count:  # a stop came before the job was submitted (one lost on the way, too)
            raise StoppedBeforeStart
        job = RunningJob(env.execute_async(name))
        line = ProgressLine(local.rest, job.id, local.total_bytes, live=local.live)
        try:
            while not job.ended() and not stops.count:
                line.update()
                time.sleep(POLL_S)
        finally:
            line.close()
        if not job.ended():
            raise Stopped(stop(job, local.rest, drain_to, stops))
    failure = job.failure()
    if failure is not None:  # the job failed: its innermost cause, in one line
        raise JobFailed(f"the job failed: {failure}")


def stop(job: RunningJob, rest: str, drain_to: Path | None, stops: StopSignals) -> bool:
    """Stop a running job: drain it (with ``drain_to``), else or when that fails cancel it;
    whether it was drained. A job that fails meanwhile raises :class:`JobFailed`."""
    if drain_to is not None:
        log.info("stopping: draining the job (Ctrl-C again cancels it)")
        if drain(job, rest, drain_to, stops):
            return True
    job.cancel()
    if not job.ended():
        return False
    failure = job.failure()
    if failure is None:
        return drain_to is not None  # it finished by the drain after all (else: by itself)
    if "cancel" in failure.lower():  # JobCancellationException: "Job was cancelled."
        return False
    raise JobFailed(f"the job failed: {failure}")
