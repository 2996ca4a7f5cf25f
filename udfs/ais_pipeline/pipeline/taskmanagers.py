"""A local run on several Python interpreters: a standalone Flink cluster of the run's own, a
JobManager and ``--taskmanagers N`` TaskManagers of one slot each, started as processes as the
PyFlink package's ``bin/`` scripts start them and stopped when the run ends.

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
- The daemons' JVMs are started directly, with the command line Flink's scripts
  (``jobmanager.sh``/``taskmanager.sh start-foreground``) would give them
  (:func:`daemon_command`): the scripts run three helper JVMs per daemon to read the settings and
  work out its memory, which the run's own JVM works out once here (:func:`daemon_memory`).
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
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from pyflink.datastream import StreamExecutionEnvironment

from ais_pipeline.errors import JobFailed, StoppedBeforeStart
from ais_pipeline.jvm.cluster import daemon_memory, java_specification_version, remote_environment
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


def script_exports(home: Path, settings: Mapping[str, str]) -> dict[str, str]:
    """The variables ``config.sh`` exports to a daemon's JVM besides those
    :func:`daemon_environment` sets: the package's ``bin/`` and ``opt/`` folders, and the logs'
    settings the log4j configuration reads."""
    return {
        "FLINK_BIN_DIR": str(home / "bin"),
        "FLINK_OPT_DIR": str(home / "opt"),
        "MAX_LOG_FILE_NUMBER": os.environ.get("MAX_LOG_FILE_NUMBER") or str(settings.get("env.log.max", "10")),
        "ROOT_LOG_LEVEL": os.environ.get("ROOT_LOG_LEVEL") or str(settings.get("env.log.level", "INFO")),
    }


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


# The daemons Flink's scripts start: the script's name for the service, its main class, and the
# role of its own Java options (``env.java.opts.<role>``).
SERVICES = {
    "jobmanager.sh": ("standalonesession", "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint",
                      "jobmanager"),
    "taskmanager.sh": ("taskexecutor", "org.apache.flink.runtime.taskexecutor.TaskManagerRunner", "taskmanager"),
}  # fmt: skip


def flink_classpath(lib: Path) -> str:
    """``config.sh``'s ``constructFlinkClassPath``: the jars of ``lib`` in name order, flink-dist's
    last."""
    jars = sorted(str(p) for p in lib.iterdir() if p.name.endswith(".jar") and not p.is_dir())
    dist = [j for j in jars if Path(j).name.startswith("flink-dist")]
    if len(dist) != 1:
        raise JobFailed(f"the local cluster: {len(dist)} flink-dist jars in {lib}, not one")
    return ":".join([j for j in jars if j not in dist] + dist)


def daemon_command(
    script: str,
    settings: Mapping[str, str],
    memory: tuple[str, str],
    env: Mapping[str, str],
    java_version: int,
    index: int,
) -> tuple[list[str], Path]:
    """The command line Flink's ``<script> start-foreground`` execs for a daemon (``config.sh``,
    the script, ``flink-console.sh``), from the cluster's settings, the daemon's ``memory`` (JVM
    parameters and dynamic configuration, as :func:`daemon_memory` gives them), the daemons'
    environment (:func:`daemon_environment`) and the daemon's number among those of its kind;
    and the prefix of its log files (``.log``, and ``.out`` and ``.err`` for what it prints).
    Options are split into words as the shell splits them; a Hadoop or HBase install the scripts
    would look for (``HADOOP_HOME``, ``/etc/hadoop/conf``) is not looked for: a local run's
    classpath is ``HADOOP_CLASSPATH``."""
    service, main_class, role = SERVICES[script]

    def setting(key: str, default: str = "") -> str:
        return str(settings.get(key, "")).strip() or default

    java_home = setting("env.java.home") or env.get("JAVA_HOME", "")
    java = f"{java_home}/bin/java" if java_home and Path(java_home).is_dir() else "java"
    general = env.get("FLINK_ENV_JAVA_OPTS", "")
    if not general:
        opts = setting("env.java.opts.all") or setting("env.java.opts")
        default_opts = setting("env.java.default-opts.all")
        general = "-XX:+IgnoreUnrecognizedVMOptions " + f"{default_opts} {opts}".strip('"')
        if java_version > 17:
            general += " -Djava.security.manager=allow"
    own = env.get(f"FLINK_ENV_JAVA_OPTS_{'JM' if role == 'jobmanager' else 'TM'}", "")
    if not own:
        own = f"{setting(f'env.java.default-opts.{role}')} {setting(f'env.java.opts.{role}')}".strip('"')
    jvm_args = env.get("JVM_ARGS", "")
    if role == "taskmanager" and not general.strip() and not own.strip():
        jvm_args += " -XX:+UseG1GC"
    jvm_args += f" {memory[0]}"
    conf_dir, log_dir = Path(env["FLINK_CONF_DIR"]), Path(env["FLINK_LOG_DIR"])
    user = env.get("FLINK_IDENT_STRING") or env.get("USER", "")
    prefix = log_dir / f"flink-{user}-{service}-{index}-{env.get('HOSTNAME') or socket.gethostname()}"
    logging_flags = [
        f"-Dlog.file={prefix}.log",
        f"-Dlog4j.configuration=file:{conf_dir}/log4j-console.properties",
        f"-Dlog4j.configurationFile=file:{conf_dir}/log4j-console.properties",
        f"-Dlogback.configurationFile=file:{conf_dir}/logback-console.xml",
    ]
    if env.get("STD_REDIRECT_TO_FILE", setting("env.stdout-err.redirect-to-file", "false")) == "true":
        logging_flags.insert(0, "-Dconsole.log.level=OFF")
    hadoop_conf = env.get("HADOOP_CONF_DIR") or setting("env.hadoop.conf.dir")
    yarn_conf = env.get("YARN_CONF_DIR") or setting("env.yarn.conf.dir")
    classpath = (
        f"{flink_classpath(Path(env['FLINK_LIB_DIR']))}::{env.get('HADOOP_CLASSPATH', '')}:{hadoop_conf}:{yarn_conf}"
    )
    # taskmanager.sh puts the configuration folder before the dynamic configuration, jobmanager.sh after.
    config_dir = ["--configDir", str(conf_dir)]
    dynamic = memory[1].split()
    arguments = [*config_dir, *dynamic] if role == "taskmanager" else [*dynamic, *config_dir]
    return [
        java,
        *jvm_args.split(),
        *shlex.split(f"{general} {own}"),
        *logging_flags,
        "-classpath",
        classpath,
        main_class,
        *arguments,
    ], prefix


def die_with_parent() -> None:
    """In a daemon's process, before it exec's its JVM: a SIGTERM when the
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
            env.update(script_exports(self._home, own))
            started = time.monotonic()
            memory, java_version = daemon_memory(conf_dir), java_specification_version()
            for n, script in enumerate(["jobmanager.sh"] + ["taskmanager.sh"] * taskmanagers):
                service = SERVICES[script][0]
                command, log_prefix = daemon_command(script, own, memory[service], env, java_version, max(n - 1, 0))
                self._start(f"TaskManager {n}" if n else "the JobManager", command, log_prefix, env)
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

    def _start(self, name: str, command: list[str], log_prefix: Path, env: Mapping[str, str]) -> None:
        # The process is the daemon's JVM, stopped by a signal to it. What it prints goes to its
        # .out and .err files, as the scripts send it (STD_REDIRECT_TO_FILE).
        out, err = Path(f"{log_prefix}.out").open("wb"), Path(f"{log_prefix}.err").open("wb")
        with out, err:
            process = subprocess.Popen(
                command,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
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
