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
  gets), one slot per TaskManager; its logs, Flink's working folders, the copy, and its ``lib/``
  and ``plugins/`` (links to the package's jars; the package is not changed) live in a scratch
  folder of the cluster, removed when it stops (the tail of the logs is logged when it does not
  come up).
- The daemons run in a session of their own: the terminal's Ctrl-C reaches only this process,
  which drains the job through the REST API (as on the mini-cluster) and then stops them. They
  die with this process however it ends (PR_SET_PDEATHSIG); the scratch folder of a run killed
  outright is removed by the next one.
"""

from __future__ import annotations

import atexit
import ctypes
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from pyflink.datastream import StreamExecutionEnvironment

from ais_pipeline.errors import JobFailed, StoppedBeforeStart
from ais_pipeline.jvm.cluster import remote_environment
from ais_pipeline.pipeline.jvm_archive import without_archive
from ais_pipeline.pipeline.ports import unused_port
from ais_pipeline.pipeline.progress import rest_json
from ais_pipeline.resources import METRICS_JAR
from ais_pipeline.rules.outputs import OUTPUTS

log = logging.getLogger("ais_pipeline")

START_TIMEOUT_S = 120
STOP_TIMEOUT_S = 20
LOG_TAIL_LINES = 20


def flink_home() -> Path:
    import pyflink

    return Path(pyflink.__file__).resolve().parent


def cluster_settings(settings: Mapping[str, str], rpc_port: int, tmp: Path, taskmanagers: int) -> dict[str, str]:
    """A run's Flink settings as its own standalone cluster takes them: one slot per TaskManager
    (one interpreter each), an RPC port of its own (another cluster on this machine may hold
    flink-conf's), Flink's working folders (``jm_*``, ``tm_*``, ``flink-io-*``, the web UI's and
    the JVM's temporary files) in the cluster's scratch folder, and a Prometheus port range with
    one port for each of its processes."""
    out = dict(settings)
    out["taskmanager.numberOfTaskSlots"] = "1"
    out["jobmanager.rpc.address"] = "localhost"
    out["jobmanager.rpc.port"] = str(rpc_port)
    out["rest.address"] = "127.0.0.1"
    out["io.tmp.dirs"] = str(tmp)
    out["web.tmpdir"] = str(tmp)
    opts = out.get("env.java.opts.all", "")
    out["env.java.opts.all"] = f"{opts} -Djava.io.tmpdir={tmp}".strip()
    ports = out.get("metrics.reporter.prom.port", "")
    first, dash, last = ports.partition("-")
    if dash and first.isdigit() and last.isdigit() and int(last) - int(first) < taskmanagers:
        out["metrics.reporter.prom.port"] = f"{first}-{int(first) + taskmanagers}"
    return out


def daemon_environment(conf_dir: Path, log_dir: Path, lib: Path, plugins: Path) -> dict[str, str]:
    """The daemons' environment: this one (PYTHONPATH names the venv and this package, which thread
    mode embeds), their configuration, log, jar and plugin folders, and HADOOP_CLASSPATH without
    the metric reporter jars a local run puts there for its mini-cluster (a daemon loads them as
    a plugin; on its classpath too they clash: ClassCastException: CollectorRegistry, no
    metrics)."""
    env = dict(os.environ)
    if "JVM_ARGS" in env:
        env["JVM_ARGS"] = without_archive(env["JVM_ARGS"])
    env["FLINK_CONF_DIR"] = str(conf_dir)
    env["FLINK_LIB_DIR"] = str(lib)
    env["FLINK_PLUGINS_DIR"] = str(plugins)
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


def cluster_folders(home: Path, scratch: Path) -> tuple[Path, Path]:
    """The cluster's ``lib/`` and ``plugins/`` folders in its scratch folder, the PyFlink
    package's own left as they are (a read-only install works): ``lib/`` links the package's
    jars and flink-python's from ``opt/`` (without it a TaskManager's second job in thread mode
    failed with NoSuchFieldException: loadedLibraryNames); ``plugins/`` links the package's
    plugin folders, and its ``metrics-prometheus/`` links Flink's reporter and the job's bound one
    (ais.flink.metrics)."""
    lib, plugins = scratch / "lib", scratch / "plugins"
    lib.mkdir()
    plugins.mkdir()
    for jar in sorted((home / "lib").glob("*.jar")) + sorted((home / "opt").glob("flink-python-*.jar")):
        if not (lib / jar.name).exists():
            (lib / jar.name).symlink_to(jar.resolve())
    for folder in sorted(p for p in (home / "plugins").iterdir() if p.is_dir()):
        if folder.name != "metrics-prometheus":
            (plugins / folder.name).symlink_to(folder.resolve())
    prometheus = plugins / "metrics-prometheus"
    prometheus.mkdir()
    for jar in sorted((home / "plugins" / "metrics-prometheus").glob("*.jar")):
        if jar.name != METRICS_JAR.name:
            (prometheus / jar.name).symlink_to(jar.resolve())
    (prometheus / METRICS_JAR.name).symlink_to(METRICS_JAR.resolve())
    return lib, plugins


def die_with_parent() -> None:
    """In a daemon's process, before it runs bash and then exec's its JVM: a SIGTERM when the
    run's process ends, however it ends (SIGKILL included). Linux's PR_SET_PDEATHSIG, which
    exec keeps; elsewhere nothing."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass


PR_SET_PDEATHSIG = 1
SCRATCH_PREFIX = "ais-cluster-"


def sweep_stale_scratch() -> None:
    """Remove the scratch folders of runs that died before they could (SIGKILL): a folder whose
    ``owner`` file names a process that is gone. Their daemons died with them."""
    for folder in Path(tempfile.gettempdir()).glob(SCRATCH_PREFIX + "*"):
        try:
            owner = int((folder / "owner").read_text().strip())
        except (OSError, ValueError):
            continue
        if owner != os.getpid() and not Path(f"/proc/{owner}").exists():
            shutil.rmtree(folder, ignore_errors=True)


class TaskManagerCluster:
    """A JobManager and ``taskmanagers`` one-slot TaskManagers, up once the JobManager's REST API
    lists them all and says it is this cluster's; :meth:`close` stops them (also at exit, if the
    caller did not, and by themselves when this process dies)."""

    def __init__(self, settings: Mapping[str, str], flink_conf_dir: Path, taskmanagers: int) -> None:
        self.rest_port = int(settings["rest.port"])
        self._home = flink_home()
        sweep_stale_scratch()
        self._scratch = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX))
        (self._scratch / "owner").write_text(f"{os.getpid()}\n")
        self._log_dir = self._scratch / "log"
        self._processes: list[tuple[str, subprocess.Popen[bytes]]] = []
        atexit.register(self.close)
        try:
            lib, plugins = cluster_folders(self._home, self._scratch)
            conf_dir = self._scratch / "conf"
            tmp = self._scratch / "tmp"
            self._log_dir.mkdir()
            tmp.mkdir()
            shutil.copytree(flink_conf_dir, conf_dir)
            import yaml

            self._rpc_port = unused_port()
            own = cluster_settings(settings, self._rpc_port, tmp, taskmanagers)
            header = "# written by ais-pipeline for one run: flink-conf/config.yaml and the run's settings\n"
            (conf_dir / "config.yaml").write_text(header + yaml.safe_dump(own, sort_keys=True))
            env = daemon_environment(conf_dir, self._log_dir, lib, plugins)
            started = time.monotonic()
            self._start("the JobManager", "jobmanager.sh", env)
            for n in range(1, taskmanagers + 1):
                self._start(f"TaskManager {n}", "taskmanager.sh", env)
            self._wait_until_up(taskmanagers)
            log.info(
                "local cluster: a JobManager and %d TaskManagers of one slot, up in %.1f s",
                taskmanagers,
                time.monotonic() - started,
            )
        except KeyboardInterrupt:
            self.close()
            raise StoppedBeforeStart from None
        except BaseException:
            self.close()
            raise

    def _start(self, name: str, script: str, env: Mapping[str, str]) -> None:
        # start-foreground execs the JVM: the process is the daemon, stopped by a signal to it. Its
        # console output (what it says before its log is set up) goes to a file of its own.
        command = ["bash", str(self._home / "bin" / script), "start-foreground"]
        console = (self._log_dir / f"{script.removesuffix('.sh')}-{len(self._processes)}.console").open("wb")
        with console:
            process = subprocess.Popen(
                command,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=die_with_parent,
            )
        self._processes.append((name, process))

    def _wait_until_up(self, taskmanagers: int) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        rest = f"http://127.0.0.1:{self.rest_port}"
        while time.monotonic() < deadline:
            for name, process in self._processes:
                code = process.poll()
                if code is not None:
                    log.warning("%s", log_tail(self._log_dir))
                    raise JobFailed(f"the local cluster did not start: {name} exited with code {code}")
            try:
                if self._is_own(rest) and len(rest_json(rest, "/taskmanagers")["taskmanagers"]) >= taskmanagers:
                    return
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.2)
        log.warning("%s", log_tail(self._log_dir))
        raise JobFailed(f"the local cluster was not up within {START_TIMEOUT_S} s")

    def _is_own(self, rest: str) -> bool:
        """The JobManager on the REST port is this cluster's (another run's may hold the port)."""
        entries = rest_json(rest, "/jobmanager/config")
        values = {e["key"]: e["value"] for e in entries} if isinstance(entries, list) else {}
        return values.get("jobmanager.rpc.port") == str(self._rpc_port)

    def environment(self, settings: Mapping[str, str]) -> StreamExecutionEnvironment:
        """An execution environment whose jobs go to this cluster."""
        return remote_environment(self.rest_port, settings)

    def printed(self) -> list[str]:
        """What the TaskManagers' print sinks wrote (``--print-all``): the lines of their ``.out``
        files that name an output."""
        lines: list[str] = []
        for file in sorted(self._log_dir.glob("*taskexecutor*.out")):
            for line in file.read_text(errors="replace").splitlines():
                if line.split(">", 1)[0].split(":", 1)[0] in OUTPUTS:
                    lines.append(line)
        return lines

    def close(self) -> None:
        """Stop the daemons (SIGTERM, then SIGKILL after a while) and remove their folder. A
        Ctrl-C while it waits does not skip the SIGKILL."""
        processes, self._processes = self._processes, []
        for _, process in processes:
            if process.poll() is None:
                process.terminate()
        deadline = time.monotonic() + STOP_TIMEOUT_S
        try:
            for _, process in processes:
                try:
                    process.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass
        finally:
            for _, process in processes:
                if process.poll() is None:
                    process.kill()
                    process.wait()
            shutil.rmtree(self._scratch, ignore_errors=True)
            atexit.unregister(self.close)


def log_tail(log_dir: Path) -> str:
    """The last lines of each daemon's log and console output, for the reason it did not come up."""
    parts = []
    files = sorted(log_dir.glob("*.log")) + sorted(log_dir.glob("*.err")) + sorted(log_dir.glob("*.console"))
    for file in files:
        lines = file.read_text(errors="replace").splitlines()[-LOG_TAIL_LINES:]
        if lines:
            parts.append(f"--- {file.name}\n" + "\n".join(lines))
    return "\n".join(parts) or "(no log)"
