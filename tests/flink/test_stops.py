"""How a local run ends when it is stopped: every stop lands on the summary, or on one line that
says why there is none, never on a traceback.

A drain is judged by the job's own result, not by the savepoint's status on the REST API: a
mini-cluster shuts down as soon as its job ends, and under load the status can come too late or
not at all. The first test makes that happen on purpose: the status is asked for only once the job
has ended, and the answer times out. The stops of --taskmanagers, Kafka, Kinesis and live-feed
runs are tested with those runs."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ais_pipeline.config import SAMPLE_INPUT, PipelineConfig
from ais_pipeline.pipeline.ports import unused_port
from ais_pipeline.pipeline.progress import JobMetrics, rest_json
from tests.support.jobs import ROOT, SAMPLE_SUMMARY

pytestmark = pytest.mark.flink

SAMPLE_LINES = 10_000


def answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def job_states(port: int) -> list[str]:
    try:
        return [j["state"] for j in rest_json(f"http://127.0.0.1:{port}", "/jobs/overview")["jobs"]]
    except (OSError, ValueError, KeyError):
        return []


def lines_read(port: int) -> int:
    """The lines the running job has read (0 before it runs, or once it has ended)."""
    base = f"http://127.0.0.1:{port}"
    try:
        running = [j["jid"] for j in rest_json(base, "/jobs/overview")["jobs"] if j["state"] == "RUNNING"]
        return JobMetrics(base, running[0]).snapshot().lines if running else 0
    except (OSError, ValueError, KeyError, IndexError):
        return 0


def interrupt_once_read(port: int, lines: int, errors: list[str]) -> threading.Thread:
    """Ctrl-C to this process once the job on ``port`` has read ``lines`` lines."""

    def run() -> None:
        deadline = time.monotonic() + 180
        while lines_read(port) < lines:
            if time.monotonic() > deadline:
                errors.append(f"the job did not read {lines} lines within 180 s")
                return
            time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGINT)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_drain_whose_cluster_closed_before_the_savepoint_was_looked_at_is_a_drain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ais_pipeline.jobs.ais_traffic import file_job
    from ais_pipeline.pipeline import execution

    watched = tmp_path / "in"
    watched.mkdir()
    shutil.copy(SAMPLE_INPUT, watched / SAMPLE_INPUT.name)
    port = unused_port()
    config = PipelineConfig(web_ui_port=port, input_path=watched, follow=True, output_dir=tmp_path / "out")
    looked: list[str] = []

    def late(base: str, path: str) -> Any:
        # The savepoint's status is asked for only after the job has ended (its mini-cluster
        # shutting down with it), and the answer does not come in time, as under load.
        if "/savepoints/" in path:
            deadline = time.monotonic() + 120
            while job_states(port) != ["FINISHED"] and time.monotonic() < deadline:
                time.sleep(0.2)
            looked.append(path)
            raise TimeoutError("timed out")
        return rest_json(base, path)

    monkeypatch.setattr(execution, "rest_json", late)
    errors: list[str] = []
    interrupt_once_read(port, SAMPLE_LINES, errors)
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        outcome = file_job(config)
    finally:
        # A stopped run leaves the stop signals ignored (and what this process starts after it
        # would inherit that): these are pytest's.
        for sig, handler in before.items():
            signal.signal(sig, handler)
    assert not errors, errors
    assert looked, "the savepoint's status was never read: the race did not happen"
    assert outcome.summary["stopped"] == "drained"
    assert {k: outcome.summary[k] for k in SAMPLE_SUMMARY} == SAMPLE_SUMMARY


def start(tmp_path: Path, *flags: str) -> tuple[subprocess.Popen[bytes], int]:
    watched = tmp_path / "in"
    watched.mkdir()
    shutil.copy(SAMPLE_INPUT, watched / SAMPLE_INPUT.name)
    port = unused_port()
    cmd = [sys.executable, "-m", "ais_pipeline.jobs.ais_traffic", "--input", str(watched), "--follow"]
    cmd += ["--output", str(tmp_path / "out"), "--web-ui-port", str(port), *flags]
    with (tmp_path / "job.log").open("w") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    return proc, port


def ended(proc: subprocess.Popen[bytes], tmp_path: Path) -> str:
    try:
        proc.wait(timeout=180)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    return (tmp_path / "job.log").read_text()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGHUP], ids=["SIGINT", "SIGHUP"])
def test_a_run_stopped_while_its_cluster_starts_ends_on_one_line_or_its_summary(tmp_path: Path, sig: int) -> None:
    proc, port = start(tmp_path)
    deadline = time.monotonic() + 120
    while not answers(port) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(sig)
    printed = ended(proc, tmp_path)
    assert "Traceback" not in printed, printed[-3000:]
    last = printed.strip().splitlines()[-1]
    if proc.returncode == 0:  # the job had started: drained, summed up
        assert json.loads((tmp_path / "out" / "summary.json").read_text())["stopped"] == "drained"
    else:
        assert proc.returncode == 130, printed[-3000:]
        assert last == "ais-pipeline: stopped before the job started", printed[-3000:]


def test_a_run_stopped_twice_while_it_drains_is_cancelled_and_says_so_in_one_line(tmp_path: Path) -> None:
    proc, port = start(tmp_path)
    deadline = time.monotonic() + 180
    while lines_read(port) < SAMPLE_LINES and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    printed = ended(proc, tmp_path)
    assert "Traceback" not in printed, printed[-3000:]
    # The drain of the sample may have ended before the second Ctrl-C was looked at: then the
    # run is drained and sums itself up.
    if proc.returncode == 0:
        assert json.loads((tmp_path / "out" / "summary.json").read_text())["stopped"] == "drained"
    else:
        assert proc.returncode == 130, printed[-3000:]
        assert printed.strip().splitlines()[-1] == (
            "ais-pipeline: stopped (the job was cancelled before it drained: no summary)"
        ), printed[-3000:]


def test_a_run_stopped_by_sighup_while_it_runs_drains_and_sums_itself_up(tmp_path: Path) -> None:
    proc, port = start(tmp_path, "--parallelism", "2")
    deadline = time.monotonic() + 180
    while lines_read(port) < SAMPLE_LINES and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.5)
    proc.send_signal(signal.SIGHUP)
    printed = ended(proc, tmp_path)
    assert proc.returncode == 0, printed[-3000:]
    assert "Traceback" not in printed, printed[-3000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["stopped"] == "drained"
    assert {k: summary[k] for k in SAMPLE_SUMMARY} == SAMPLE_SUMMARY
