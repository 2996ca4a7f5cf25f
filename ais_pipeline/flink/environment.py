"""Where the job runs: a local mini-cluster configured from ``flink-conf/config.yaml``, or the
cluster of ``flink run``; and the file source of a local run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pyflink.common import Configuration
from pyflink.datastream import DataStream, StreamExecutionEnvironment

from ais_pipeline.config import PROJECT_ROOT, ConfigError, PipelineConfig, submitted_by_flink_cli

if TYPE_CHECKING:
    from ais_pipeline.flink.jvm import LocalCluster

CHECKPOINT_INTERVAL = "execution.checkpointing.interval"
PROMETHEUS_HOST = "metrics.reporter.prom.host"
METRICS_JAR = PROJECT_ROOT / "build" / "java" / "ais-flink-helpers-metrics.jar"


def flink_settings(config: PipelineConfig) -> dict[str, str]:
    """flink-conf/config.yaml flattened, plus what a local run must set for itself."""
    import yaml

    def flatten(prefix: str, node: object, out: dict[str, str]) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                flatten(f"{prefix}.{key}" if prefix else str(key), value, out)
        elif isinstance(node, list):
            out[prefix] = ";".join(str(v) for v in node)
        elif isinstance(node, bool):
            out[prefix] = "true" if node else "false"
        else:
            out[prefix] = str(node)

    interval = config.checkpoint_interval_s
    if submitted_by_flink_cli():  # the cluster has its own settings; -pyexec names its Python
        settings = {"parallelism.default": str(config.parallelism)}
        if interval:
            settings[CHECKPOINT_INTERVAL] = f"{interval}s"
        return settings
    settings = {}
    conf_file = config.flink_conf_dir / "config.yaml"
    if conf_file.exists():
        flatten("", yaml.safe_load(conf_file.read_text()) or {}, settings)
    if interval == 0:
        settings.pop(CHECKPOINT_INTERVAL, None)
    elif interval is not None:
        settings[CHECKPOINT_INTERVAL] = f"{interval}s"
    settings["parallelism.default"] = str(config.parallelism)
    # The mini-cluster has one TaskManager: it needs a slot per parallel subtask of the job.
    slots = int(settings.get("taskmanager.numberOfTaskSlots", "1"))
    settings["taskmanager.numberOfTaskSlots"] = str(max(slots, config.parallelism))
    settings["python.executable"] = sys.executable
    settings["python.client.executable"] = sys.executable
    settings["rest.port"] = str(config.web_ui_port)
    settings["rest.bind-port"] = str(config.web_ui_port)
    # Closed by default (flink-conf has loopback everywhere): --bind-address opens the web UI /
    # REST API and the Prometheus endpoint, nothing else (a mini-cluster has no remote workers).
    settings["rest.bind-address"] = config.bind_address
    settings[PROMETHEUS_HOST] = config.bind_address
    return settings


def reporters_on_gateway_classpath() -> None:
    """Let a local run load the metric reporters of flink-conf (Prometheus, served on one address
    by ``ais.flink.metrics.BoundPrometheusReporterFactory``).

    A cluster loads reporters as plugins from the package's plugins/ folder; Flink's mini-cluster
    creates its metric registry without a plugin manager, so there a reporter must be on the
    classpath. PyFlink's local gateway adds ``HADOOP_CLASSPATH`` to its classpath."""
    import glob

    import pyflink

    plugins = os.path.join(os.path.dirname(pyflink.__file__), "plugins")
    prometheus = glob.glob(os.path.join(plugins, "metrics-prometheus", "flink-metrics-prometheus-*.jar"))
    jars = [*sorted(prometheus), str(METRICS_JAR)]
    current = [p for p in os.environ.get("HADOOP_CLASSPATH", "").split(os.pathsep) if p]
    os.environ["HADOOP_CLASSPATH"] = os.pathsep.join(dict.fromkeys([*current, *jars]))


def local_environment(config: PipelineConfig, cluster: list[LocalCluster] | None = None) -> StreamExecutionEnvironment:
    """A StreamExecutionEnvironment on a local mini-cluster configured from flink-conf/ (or, under
    ``flink run``, on that cluster). With ``cluster`` (a list to put it in), the mini-cluster is
    one of this process's own that outlives the job (:class:`ais_pipeline.flink.jvm.LocalCluster`:
    its web UI still shows the finished job); the caller closes it."""
    # Thread mode embeds the interpreter in the JVM; it finds the venv's packages (pemja, pyflink)
    # and this project only through PYTHONPATH, which the JVM inherits from this process.
    site = [p for p in sys.path if p.endswith("site-packages")]
    paths = [str(PROJECT_ROOT), *site, *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(p for p in paths if p))
    if not submitted_by_flink_cli():
        reporters_on_gateway_classpath()
        # PyFlink starts a "loopback" Beam worker pool in this process for local runs (a gRPC
        # server on every interface, one per StreamExecutionEnvironment object, of which the job
        # makes several), for Python workers in process mode. Thread mode embeds them in the JVM;
        # "process" tells PyFlink that the JVM starts any such workers itself, as on a cluster.
        os.environ["_python_worker_execution_mode"] = "process"
    settings = flink_settings(config)
    if cluster is not None and not submitted_by_flink_cli():
        from ais_pipeline.flink.jvm import LocalCluster

        started = LocalCluster(settings)
        cluster.append(started)
        env = started.environment(settings)
        env.set_parallelism(config.parallelism)
        return env
    conf = Configuration()
    for key, value in settings.items():
        conf.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_parallelism(config.parallelism)
    return env


def file_source(env: StreamExecutionEnvironment, config: PipelineConfig) -> DataStream:
    """Lines of a file, or of every file under a directory in name order (``ais.flink.OrderedFiles``,
    one reader): bounded (the job ends with the input), or, with --follow, watching for new
    files until the job is stopped."""
    from ais_pipeline.flink.jvm import OrderedFiles

    return OrderedFiles(str(config.input_path), 1000 if config.follow else 0).read(env, "read lines", "source-lines")


def connector_jars(profile: str, what: str) -> list[Path]:
    """The jars of one profile of ``connectors/pom.xml`` (``build/jars/<profile>/``), fetched from
    Maven Central by ``scripts/fetch-jars.sh`` when they are not all there yet (its ``.complete``
    marker); a one-line error naming ``what`` when Maven cannot fetch them."""
    directory = PROJECT_ROOT / "build" / "jars" / profile
    if not (directory / ".complete").exists():
        script = PROJECT_ROOT / "scripts" / "fetch-jars.sh"
        done = subprocess.run(["bash", str(script), profile], capture_output=True, text=True)
        if done.returncode != 0:
            raise ConfigError(f"could not fetch the {what}: {done.stderr.strip()[-500:]}")
    return sorted(directory.glob("*.jar"))
