"""A local run on ``--taskmanagers 2`` at parallelism 2: the job runs on a cluster of its own, a
JobManager and two TaskManager processes of one slot each (an interpreter each), with each
parallel operator's two subtasks on the two of them; the web UI shows it on the run's port; a
SIGINT to the run's whole process group (a terminal's Ctrl-C reaches every process of the
foreground group) drains the job (the daemons, in a session of their own, outlive the signal until
the drain is done), the outputs and summary are the plain loop's, and no daemon or file of the
cluster is left behind."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from ais_pipeline.config import SAMPLE_INPUT
from ais_pipeline.pipeline.ports import unused_port
from tests.support.jobs import ROOT, SAMPLE_SUMMARY, assert_same_outputs, run_oracle
from tests.support.web import settled, web_ui_view

pytestmark = pytest.mark.flink


def get(port: int, path: str) -> dict[str, object]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as resp:
        return json.load(resp)  # type: ignore[no-any-return]


def cluster_daemons() -> dict[int, str]:
    """The JVMs of a run's own cluster (their command lines name its scratch folder)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            except OSError:
                continue
            if cmdline and cmdline[0].endswith("java") and any("/ais-cluster-" in arg for arg in cmdline):
                found[int(entry.name)] = next(a for a in cmdline if "/ais-cluster-" in a)
    return found


def test_taskmanagers_run_the_job_on_one_slot_processes_that_drain_on_a_signal_and_go_with_the_run(
    tmp_path: Path,
):
    watched, out = tmp_path / "in", tmp_path / "out"
    watched.mkdir()
    shutil.copy(SAMPLE_INPUT, watched / SAMPLE_INPUT.name)
    before = set(cluster_daemons())
    port = unused_port()
    cmd = [sys.executable, "-m", "ais_pipeline.jobs.ais_traffic", "--input", str(watched), "--output", str(out)]
    cmd += ["--follow", "--taskmanagers", "2", "--parallelism", "2", "--web-ui-port", str(port)]
    log = (tmp_path / "job.log").open("w")
    proc = subprocess.Popen(
        cmd,
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        # As from an interactive shell: a command started in the background inherits SIGINT ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    web: dict[str, object] = {}
    taskmanagers: dict[str, object] = {}
    placement: dict[str, object] = {}
    daemons: dict[int, str] = {}
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                web = web_ui_view(port)
            except (OSError, ValueError):  # the cluster is starting, or the job is not submitted yet
                time.sleep(1)
                continue
            if settled(web):
                break
            time.sleep(2)
        taskmanagers = get(port, "/taskmanagers")
        (job,) = get(port, "/jobs/overview")["jobs"]  # type: ignore[attr-defined]
        vertices = get(port, f"/jobs/{job['jid']}")["vertices"]
        dedup = next(v for v in vertices if v["name"].startswith("dedup by MMSI"))  # type: ignore[attr-defined]
        placement = get(port, f"/jobs/{job['jid']}/vertices/{dedup['id']}/taskmanagers")
        daemons = {pid: arg for pid, arg in cluster_daemons().items() if pid not in before}
    finally:
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the run and everything in its process group
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    log.close()
    printed = (tmp_path / "job.log").read_text()
    assert proc.returncode == 0, printed[-3000:]
    assert settled(web), web

    # Two TaskManagers of one slot; the dedup's two subtasks one on each.
    tms = taskmanagers["taskmanagers"]
    assert isinstance(tms, list) and [tm["slotsNumber"] for tm in tms] == [1, 1], tms
    hosts = placement["taskmanagers"]
    assert isinstance(hosts, list) and len(hosts) == 2, hosts
    assert sorted(tm["taskmanager-id"] for tm in hosts) == sorted(tm["id"] for tm in tms)
    assert len(daemons) == 3, daemons  # the JobManager and the two TaskManagers

    # Drained: every window fired, every sink committed, the outputs are the plain loop's.
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped"] == "drained"
    assert {k: summary[k] for k in SAMPLE_SUMMARY} == SAMPLE_SUMMARY
    run_oracle(SAMPLE_INPUT, tmp_path / "oracle")
    assert_same_outputs(out, tmp_path / "oracle")

    # Gone with the run: its daemons, its cluster folder, its web UI.
    assert not set(daemons) & set(cluster_daemons())
    for arg in daemons.values():  # -Dlog.file=/tmp/ais-cluster-XXXX/log/flink-....log
        scratch = re.search(r"/\S*?/ais-cluster-[^/]+", arg)
        assert scratch is not None and not Path(scratch.group(0)).exists(), arg
    with pytest.raises(OSError):
        get(port, "/overview")
