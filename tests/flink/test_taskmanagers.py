"""A local run on ``--taskmanagers 2`` at parallelism 2: the job runs on a cluster of its own, a
JobManager and two TaskManager processes of one slot each (an interpreter each), with each
parallel operator's two subtasks on the two of them; the web UI shows it on the run's port; a
SIGINT to the run's whole process group (a terminal's Ctrl-C reaches every process of the
foreground group) drains the job (the daemons, in a session of their own, outlive the signal until
the drain is done), the outputs and summary are the plain loop's, and no daemon or file of the
cluster is left behind."""

from __future__ import annotations

import http.client
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

from ais_pipeline.config import SAMPLE_INPUT, PipelineConfig
from ais_pipeline.errors import JobFailed
from ais_pipeline.jvm.cluster import daemon_memory, java_specification_version
from ais_pipeline.pipeline.environment import flink_settings
from ais_pipeline.pipeline.ports import unused_port
from ais_pipeline.pipeline.taskmanagers import (
    SERVICES,
    TaskManagerCluster,
    cluster_folders,
    cluster_settings,
    daemon_command,
    daemon_environment,
    flink_home,
    script_exports,
    sweep_stale_scratch,
)
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
    assert "Traceback" not in printed, printed[-3000:]
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


def start_run(tmp_path: Path, *flags: str) -> tuple[subprocess.Popen[bytes], int]:
    """A --follow run of the bundled sample on a cluster of its own (one TaskManager), in a session
    of its own: signals go to the run's process alone, as `kill` sends them."""
    watched = tmp_path / "in"
    watched.mkdir(exist_ok=True)
    shutil.copy(SAMPLE_INPUT, watched / SAMPLE_INPUT.name)
    port = unused_port()
    cmd = [sys.executable, "-m", "ais_pipeline.jobs.ais_traffic", "--input", str(watched), "--output"]
    cmd += [str(tmp_path / "out"), "--follow", "--taskmanagers", "1", "--web-ui-port", str(port), *flags]
    log = (tmp_path / "job.log").open("w")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    log.close()
    return proc, port


def wait_until(check, timeout_s: float = 180) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return False


def job_running(port: int) -> bool:
    try:
        return any(j["state"] == "RUNNING" for j in get(port, "/jobs/overview")["jobs"])  # type: ignore[attr-defined]
    except (OSError, ValueError, http.client.HTTPException):  # not up yet, or another server's port for now
        return False


@pytest.mark.parametrize(
    "how",
    ["SIGTERM while the cluster starts", "SIGHUP while the job runs", "SIGINT twice: while it drains", "SIGKILL"],
)
def test_a_run_stopped_at_any_moment_leaves_no_daemon_and_no_folder(how: str, tmp_path: Path):
    before = set(cluster_daemons())
    proc, port = start_run(tmp_path)
    mine: dict[int, str] = {}
    working: list[str] = []

    def daemons() -> dict[int, str]:
        mine.update({pid: arg for pid, arg in cluster_daemons().items() if pid not in before})
        return mine

    try:
        if how.startswith("SIGTERM"):
            assert wait_until(lambda: bool(daemons())), "no daemon started"
            proc.send_signal(signal.SIGTERM)
        else:
            assert wait_until(lambda: job_running(port)), (tmp_path / "job.log").read_text()[-3000:]
            for arg in daemons().values():
                folder = re.search(r"/\S*?/ais-cluster-[^/]+", arg)
                if folder is not None and (Path(folder.group(0)) / "tmp").is_dir():
                    working.extend(p.name for p in (Path(folder.group(0)) / "tmp").iterdir())
            if how.startswith("SIGHUP"):
                proc.send_signal(signal.SIGHUP)
            elif how.startswith("SIGINT"):
                proc.send_signal(signal.SIGINT)
                time.sleep(1.0)
                proc.send_signal(signal.SIGINT)
            else:
                proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    printed = (tmp_path / "job.log").read_text()
    assert mine, printed[-3000:]
    # The daemons go with the run, however it ended (SIGKILL: by the kernel's parent-death signal).
    assert wait_until(lambda: not set(mine) & set(cluster_daemons()), 60), printed[-3000:]
    scratch = {re.search(r"/\S*?/ais-cluster-[^/]+", arg).group(0) for arg in mine.values()}  # type: ignore[union-attr]
    if how == "SIGKILL":
        assert proc.returncode == -signal.SIGKILL
        sweep_stale_scratch()  # what the next run does first
    else:
        # 0: drained (a --follow run ends so); 130: cancelled, or stopped before the job started.
        assert proc.returncode in (0, 130), printed[-3000:]
        assert "Traceback" not in printed, printed[-3000:]
        if how.startswith("SIGTERM"):
            assert "stopped before the job started" in printed
    assert not any(Path(s).exists() for s in scratch), scratch
    if working:  # Flink's working folders were in the cluster's folder, not the system's /tmp
        assert all(any(n.startswith(kind) for n in working) for kind in ("jm_", "tm_", "flink-io-")), working


def cluster_settings_on_a_free_port() -> dict[str, str]:
    settings = dict(flink_settings(PipelineConfig(input_path=SAMPLE_INPUT)))
    settings["rest.port"] = settings["rest.bind-port"] = str(unused_port())
    return settings


def test_a_run_does_not_take_another_runs_cluster_on_its_port_for_its_own():
    settings = cluster_settings_on_a_free_port()
    first = TaskManagerCluster(settings, PipelineConfig(input_path=SAMPLE_INPUT).flink_conf_dir, 1)
    try:
        with pytest.raises(JobFailed, match=r"^the local cluster did not start: the JobManager exited with code"):
            TaskManagerCluster(settings, PipelineConfig(input_path=SAMPLE_INPUT).flink_conf_dir, 1)
    finally:
        first.close()


def test_a_daemon_that_fails_before_its_jvm_starts_is_named_with_its_exit_code(caplog):
    settings = cluster_settings_on_a_free_port()
    settings["env.java.opts.jobmanager"] = "-javaagent:/nonexistent/agent-of-this-test.jar"
    with pytest.raises(JobFailed, match=r"^the local cluster did not start: the JobManager exited with code 1$"):
        TaskManagerCluster(settings, PipelineConfig(input_path=SAMPLE_INPUT).flink_conf_dir, 1)
    assert "agent-of-this-test.jar" in caplog.text  # what it wrote to its console before it could log


def test_print_all_prints_what_the_taskmanagers_printed(fixtures: Path, tmp_path: Path):
    cmd = [sys.executable, "-m", "ais_pipeline.jobs.ais_traffic", "--input", str(fixtures / "aisnet__Ais1000Lines.nm4")]
    cmd += ["--print-all", "--taskmanagers", "1", "--web-ui-port", "0", "--no-wait"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    printed = [line for line in proc.stdout.splitlines() if line.startswith("positions>")]
    assert len(printed) == 743
    assert json.loads(printed[0].partition("> ")[2])["mmsi"] > 0


@pytest.mark.parametrize("script", ["jobmanager.sh", "taskmanager.sh"])
def test_a_daemon_starts_with_the_command_line_flinks_own_script_gives_it(script: str, tmp_path: Path):
    """The script run as it was, with a ``java`` that writes down its arguments instead of
    starting the daemon (the script's helper JVMs run on the real one): the command the cluster
    starts a daemon with is the same, word for word."""
    import yaml

    home = flink_home()
    lib, plugins = cluster_folders(home, tmp_path)
    conf_dir, log_dir = tmp_path / "conf", tmp_path / "log"
    log_dir.mkdir()
    shutil.copytree(PipelineConfig(input_path=SAMPLE_INPUT).flink_conf_dir, conf_dir)
    own = cluster_settings(cluster_settings_on_a_free_port(), unused_port(), tmp_path, 2)
    (conf_dir / "config.yaml").write_text(yaml.safe_dump(own, sort_keys=True))
    recorded = tmp_path / "argv"
    fake_home = tmp_path / "jdk"
    (fake_home / "bin").mkdir(parents=True)
    real = Path(shutil.which("java") or "java").resolve()
    (fake_home / "bin" / "java").write_text(
        "#!/bin/bash\n"
        f'case "$*" in *BashJavaUtils*|*-XshowSettings*) exec {real} "$@";; esac\n'
        f'printf "%s\\n" "$0" "$@" > {recorded}\n'
    )
    (fake_home / "bin" / "java").chmod(0o755)
    env = daemon_environment(conf_dir, log_dir, lib, plugins)
    env.update(script_exports(home, own))
    env["JAVA_HOME"] = str(fake_home)
    done = subprocess.run(["bash", str(home / "bin" / script), "start-foreground"], env=env, timeout=120)
    assert done.returncode == 0
    ours, _ = daemon_command(
        script, own, daemon_memory(conf_dir)[SERVICES[script][0]], env, java_specification_version(), 0
    )

    assert ours == recorded.read_text().splitlines()
