"""A local run on several Python interpreters: a standalone Flink cluster of the run's own, a
JobManager and ``--taskmanagers N`` TaskManagers of one slot each, started as processes from the
PyFlink package's ``bin/`` scripts and stopped when the run ends.

In thread mode each JVM embeds one Python interpreter, which every slot of that JVM shares (one
GIL): the in-process mini-cluster of a plain local run has one, whatever the parallelism. N
TaskManager processes are N interpreters, so ``--parallelism N`` runs the Python operators on N
cores at once.

- Closed as a plain local run is: the web UI / REST API on ``--web-ui-port`` and
  ``--bind-address``, RPC, blobs and data on loopback (flink-conf/config.yaml), a free RPC port.
- Its settings are a copy of flink-conf/config.yaml with the run's own (the same a mini-cluster
  gets), one slot per TaskManager; its logs and the copy live in a scratch folder of the cluster,
  removed when it stops (the tail of the logs goes into the error when it does not come up).
- The daemons run in a session of their own: the terminal's Ctrl-C reaches only this process,
  which drains the job through the REST API (as on the mini-cluster) and then stops them.
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from pyflink.datastream import StreamExecutionEnvironment

from ais_pipeline.errors import JobFailed
from ais_pipeline.jvm.cluster import remote_environment
from ais_pipeline.pipeline.ports import unused_port
from ais_pipeline.pipeline.progress import rest_json
from ais_pipeline.resources import METRICS_JAR

log = logging.getLogger("ais_pipeline")

START_TIMEOUT_S = 120
STOP_TIMEOUT_S = 20
LOG_TAIL_LINES = 20


def flink_home() -> Path:
    import pyflink

    return Path(pyflink.__file__).resolve().parent


def cluster_settings(settings: Mapping[str, str], rpc_port: int) -> dict[str, str]:
    """A run's Flink settings as its own standalone cluster takes them: one slot per TaskManager
    (one interpreter each), and an RPC port of its own (another cluster on this machine may hold
    flink-conf's)."""
    out = dict(settings)
    out["taskmanager.numberOfTaskSlots"] = "1"
    out["jobmanager.rpc.address"] = "localhost"
    out["jobmanager.rpc.port"] = str(rpc_port)
    out["rest.address"] = "127.0.0.1"
    return out


def daemon_environment(conf_dir: Path, log_dir: Path) -> dict[str, str]:
    """The daemons' environment: this one (PYTHONPATH names the venv and this package, which thread
    mode embeds), their configuration and log folders, and HADOOP_CLASSPATH without the metric
    reporter jars a local run puts there for its mini-cluster (a daemon loads them as a plugin;
    on its classpath too they clash: ClassCastException: CollectorRegistry, no metrics)."""
    env = dict(os.environ)
    env["FLINK_CONF_DIR"] = str(conf_dir)
    env["FLINK_LOG_DIR"] = str(log_dir)
    env["FLINK_PID_DIR"] = str(log_dir)
    env["STD_REDIRECT_TO_FILE"] = "true"  # the .out file holds what Python operators print
    hadoop = [
        p
        for p in env.get("HADOOP_CLASSPATH", "").split(os.pathsep)
        if p and "metrics-prometheus" not in p and Path(p).name != METRICS_JAR.name
    ]
    env["HADOOP_CLASSPATH"] = os.pathsep.join(hadoop)
    return env


def install_cluster_jars(home: Path) -> None:
    """What the package's cluster needs in its own folders (as scripts/cluster.sh does):
    flink-python's jar in lib/ (without it a TaskManager's second job in thread mode failed with
    NoSuchFieldException: loadedLibraryNames) and the job's bound Prometheus reporter beside
    Flink's in plugins/metrics-prometheus/."""
    for jar in (home / "opt").glob("flink-python-*.jar"):
        if not (home / "lib" / jar.name).exists():
            shutil.copy2(jar, home / "lib" / jar.name)
    plugin = home / "plugins" / "metrics-prometheus" / METRICS_JAR.name
    if not plugin.exists() or plugin.read_bytes() != METRICS_JAR.read_bytes():
        shutil.copy2(METRICS_JAR, plugin)


class TaskManagerCluster:
    """A JobManager and ``taskmanagers`` one-slot TaskManagers, up once the JobManager's REST API
    lists them all; :meth:`close` stops them (also at exit, if the caller did not)."""

    def __init__(self, settings: Mapping[str, str], flink_conf_dir: Path, taskmanagers: int) -> None:
        self.rest_port = int(settings["rest.port"])
        self._home = flink_home()
        self._scratch = Path(tempfile.mkdtemp(prefix="ais-cluster-"))
        self._processes: list[subprocess.Popen[bytes]] = []
        atexit.register(self.close)
        try:
            install_cluster_jars(self._home)
            conf_dir = self._scratch / "conf"
            log_dir = self._scratch / "log"
            log_dir.mkdir()
            shutil.copytree(flink_conf_dir, conf_dir)
            import yaml

            own = cluster_settings(settings, unused_port())
            header = "# written by ais-pipeline for one run: flink-conf/config.yaml and the run's settings\n"
            (conf_dir / "config.yaml").write_text(header + yaml.safe_dump(own, sort_keys=True))
            env = daemon_environment(conf_dir, log_dir)
            started = time.monotonic()
            self._start("jobmanager.sh", env)
            for _ in range(taskmanagers):
                self._start("taskmanager.sh", env)
            self._wait_until_up(taskmanagers, log_dir)
            log.info(
                "local cluster: a JobManager and %d TaskManagers of one slot, up in %.1f s",
                taskmanagers,
                time.monotonic() - started,
            )
        except BaseException:
            self.close()
            raise

    def _start(self, script: str, env: Mapping[str, str]) -> None:
        # start-foreground execs the JVM: the process is the daemon, stopped by a signal to it.
        command = ["bash", str(self._home / "bin" / script), "start-foreground"]
        self._processes.append(
            subprocess.Popen(
                command, env=dict(env), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True
            )
        )

    def _wait_until_up(self, taskmanagers: int, log_dir: Path) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        rest = f"http://127.0.0.1:{self.rest_port}"
        while time.monotonic() < deadline:
            ended = [p for p in self._processes if p.poll() is not None]
            if ended:
                raise JobFailed(f"the local cluster did not start (a daemon exited):\n{log_tail(log_dir)}")
            try:
                if len(rest_json(rest, "/taskmanagers")["taskmanagers"]) >= taskmanagers:
                    return
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.2)
        raise JobFailed(f"the local cluster was not up within {START_TIMEOUT_S} s:\n{log_tail(log_dir)}")

    def environment(self, settings: Mapping[str, str]) -> StreamExecutionEnvironment:
        """An execution environment whose jobs go to this cluster."""
        return remote_environment(self.rest_port, settings)

    def close(self) -> None:
        """Stop the daemons (SIGTERM, then SIGKILL after a while) and remove their folder."""
        processes, self._processes = self._processes, []
        for process in processes:
            if process.poll() is None:
                process.terminate()
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for process in processes:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(self._scratch, ignore_errors=True)
        atexit.unregister(self.close)


def log_tail(log_dir: Path) -> str:
    """The last lines of each daemon's log, for an error that says why it did not come up."""
    parts = []
    for file in sorted(log_dir.glob("*.log")) + sorted(log_dir.glob("*.err")):
        lines = file.read_text(errors="replace").splitlines()[-LOG_TAIL_LINES:]
        if lines:
            parts.append(f"--- {file.name}\n" + "\n".join(lines))
    return "\n".join(parts) or "(no log)"
