"""A job submitted to a cluster by ``flink run``, watched until it has started: every task running
(each Python operator opened, its build checked: :mod:`ais_pipeline.build`), or its start failed.

A TaskManager whose Python holds another build of this package fails each of the job's attempts
as its operators open; the cluster would restart the job again and again. Here the first such
failure ends the submission: the job is cancelled and its one line (both builds and the fix) is
the error ``flink run`` prints; the web UI's exceptions show it too."""

from __future__ import annotations

import logging
import time
import urllib.error
import urllib.request
from typing import Any

from ais_pipeline.build import MISMATCH_LINE
from ais_pipeline.errors import JobFailed
from ais_pipeline.pipeline.progress import rest_json

log = logging.getLogger("ais_pipeline")

START_TIMEOUT_S = 30.0
POLL_S = 0.5
ENDED = {"FAILED", "CANCELED", "FINISHED", "SUSPENDED"}


def build_mismatch(exceptions: dict[str, Any]) -> str | None:
    """The one line of a build mismatch among a job's exceptions (the REST API's
    ``/jobs/<id>/exceptions``), if it has one."""
    entries = list(exceptions.get("exceptionHistory", {}).get("entries", []))
    for entry in list(entries):
        entries += entry.get("concurrentExceptions", [])
    for entry in entries:
        found = MISMATCH_LINE.search(str(entry.get("stacktrace", "")))
        if found:
            return found.group(1).strip()
    return None


def all_running(job: dict[str, Any]) -> bool:
    """Every vertex of the job (the REST API's ``/jobs/<id>``) has all its tasks running (or done)."""
    return job.get("state") == "RUNNING" and all(v.get("status") in ("RUNNING", "FINISHED") for v in job["vertices"])


def await_start(rest: str, job_id: str, timeout_s: float = START_TIMEOUT_S) -> None:
    """Return once the job runs (or has ended by itself); :class:`JobFailed` with the one line
    of a build mismatch, the job cancelled. A cluster whose REST API this client cannot reach is
    not watched (a warning)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            line = build_mismatch(rest_json(rest, f"/jobs/{job_id}/exceptions?maxExceptions=10"))
            if line is not None:
                request = urllib.request.Request(f"{rest}/jobs/{job_id}?mode=cancel", method="PATCH")
                urllib.request.urlopen(request, timeout=10).close()
                raise JobFailed(line)
            job = rest_json(rest, f"/jobs/{job_id}")
        except (urllib.error.URLError, OSError) as exc:
            log.warning("job %s submitted; its start not watched: the REST API at %s: %s", job_id, rest, exc)
            return
        if job.get("state") in ENDED or all_running(job):
            return
        if time.monotonic() > deadline:
            log.warning("job %s submitted; not all its tasks are running after %.0f s", job_id, timeout_s)
            return
        time.sleep(POLL_S)
