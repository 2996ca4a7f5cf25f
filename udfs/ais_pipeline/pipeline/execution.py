"""How a job runs from this process: until it ends, or until the user stops it.

A blocking ``env.execute`` sits in a call to the JVM that a signal does not interrupt; here the job
runs detached and this process polls its status, sleeping in Python between polls, so Ctrl-C (or
SIGTERM) can stop it: by a final savepoint that first drains event time (every window fires,
every sink commits, as at the end of a file), through the cluster's REST API, or, when that
cannot be done or on a second Ctrl-C, by cancelling it. A job that fails raises
:class:`~ais_pipeline.errors.JobFailed` with its innermost cause in one line.
"""

from __future__ import annotations

import json
import logging
import signal
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyflink.datastream import StreamExecutionEnvironment

from ais_pipeline.errors import JobFailed
from ais_pipeline.jvm.gateway import innermost_cause
from ais_pipeline.pipeline.progress import ProgressLine, rest_json

log = logging.getLogger("ais_pipeline")

DRAIN_TIMEOUT_S = 120
CANCEL_TIMEOUT_S = 30


class Stopped(Exception):
    """The user stopped the run (Ctrl-C or SIGTERM); the job was drained, or cancelled."""

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

    @property
    def rest(self) -> str:
        return f"http://127.0.0.1:{self.rest_port}"


def stop_draining(rest: str, job_id: str, directory: Path) -> None:
    """Ask the cluster to stop the job with a final savepoint in ``directory`` that first drains
    event time (``POST /jobs/<id>/stop``, as ``flink stop --drain`` does)."""
    body = json.dumps({"drain": True, "targetDirectory": directory.as_uri(), "formatType": "CANONICAL"}).encode()
    request = urllib.request.Request(
        f"{rest}/jobs/{job_id}/stop", data=body, headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as resp:
        trigger = json.load(resp)["request-id"]
    deadline = time.monotonic() + DRAIN_TIMEOUT_S
    while time.monotonic() < deadline:
        status = rest_json(rest, f"/jobs/{job_id}/savepoints/{trigger}")
        if status["status"]["id"] == "COMPLETED":
            failure = status.get("operation", {}).get("failure-cause")
            if failure:
                raise RuntimeError(failure.get("class", "savepoint failed"))
            return
        time.sleep(0.2)
    raise TimeoutError(f"no savepoint within {DRAIN_TIMEOUT_S} s")


def _wait(future: Any, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not future.done() and time.monotonic() < deadline:
        time.sleep(0.2)
    return bool(future.done())


def execute(env: StreamExecutionEnvironment, name: str, local: LocalJob, drain_to: Path | None = None) -> None:
    """Run the job on its local cluster until it ends, with a progress line. Ctrl-C (or SIGTERM)
    stops it: with ``drain_to``, by a final savepoint there that drains event time, then raises
    :class:`Stopped`; without it, or on a second Ctrl-C, the job is cancelled."""
    # Python leaves SIGINT ignored when the process started with it ignored (a background job of a
    # shell without job control, a service manager): the run must still drain on it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    job = env.execute_async(name)
    done = job.get_job_execution_result()
    job_id = str(job.get_job_id())
    line = ProgressLine(local.rest, job_id, local.total_bytes)
    try:
        while not done.done():
            line.update()
            time.sleep(0.2)
    except KeyboardInterrupt:
        drained = False
        if drain_to is not None:
            log.info("stopping: draining the job (Ctrl-C again cancels it)")
            try:
                stop_draining(local.rest, job_id, drain_to)
                drained = _wait(done, DRAIN_TIMEOUT_S)
            except KeyboardInterrupt:
                pass
            except Exception as exc:  # the savepoint could not be taken: cancel instead
                log.warning("stopping: the job could not be drained (%s)", exc)
        if not drained:
            log.info("stopping: cancelling the job")
            _wait(job.cancel(), CANCEL_TIMEOUT_S)
        raise Stopped(drained) from None
    finally:
        line.close()
    try:
        done.result()
    except Exception as exc:  # the job failed: its innermost cause, in one line
        log.debug("the job failed: %s", exc)
        raise JobFailed(f"the job failed: {innermost_cause(str(exc))}") from None
