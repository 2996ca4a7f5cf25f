"""The environments a job runs in, one per cluster shape (:mod:`ais_pipeline.pipeline.shape`
chooses the shape; this module carries it out): the settings of a run from
``flink-conf/config.yaml`` and its flags, the process's preparation for a local JVM, and the
environment on the cluster of ``flink run``, on an early mini-cluster, on a mini-cluster kept for
the web UI, or on a run's own TaskManagers."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pyflink.common import Configuration
from pyflink.datastream import StreamExecutionEnvironment

from ais_pipeline.config import LIVE_CHECKPOINT_S, PipelineConfig
from ais_pipeline.pipeline.jvm_archive import use_archive
from ais_pipeline.resources import METRICS_JAR, PACKAGE

if TYPE_CHECKING:
    from ais_pipeline.jvm.cluster import EarlyMiniCluster, LocalCluster
    from ais_pipeline.pipeline.taskmanagers import TaskManagerCluster

CHECKPOINT_INTERVAL = "execution.checkpointing.interval"
PROMETHEUS_HOST = "metrics.reporter.prom.host"
RESTART_STRATEGY = "restart-strategy.type"
TASKMANAGER_JAVA_OPTS = "env.java.opts.taskmanager"
STATE_BACKEND = "state.backend.type"
# The heap of a local run's JVM on RocksDB: a million vessels' run held about 300 MB on it (the
# JobManager, the web UI and the operators' objects between calls; the state is in RocksDB).
LOCAL_ROCKSDB_HEAP = "-Xmx1g"
INCREMENTAL_CHECKPOINTS = "execution.checkpointing.incremental"


def state_backend_settings(config: PipelineConfig) -> dict[str, str]:
    """What ``--state-backend`` sets for the job, on a local run and under ``flink run`` alike
    (nothing when it is not given: flink-conf's, or the cluster's, backend). RocksDB keeps the
    state on local disk, its memory (block cache and write buffers) within Flink's managed memory,
    and checkpoints incrementally: a checkpoint uploads the files written since the last one.

    Its index and filter blocks are partitioned, and its files have Bloom filters: a block cache
    smaller than the state's index blocks otherwise reads a file's whole index (about 250 KB at a
    million vessels) again for every point read that misses the cache, and the end of a million
    vessels' input, which reads each vessel back once, ran at about 1,000 vessels a second."""
    if config.state_backend is None:
        return {}
    settings = {STATE_BACKEND: config.state_backend}
    if config.state_backend == "rocksdb":
        settings[INCREMENTAL_CHECKPOINTS] = "true"
        settings["state.backend.rocksdb.memory.managed"] = "true"
        settings["state.backend.rocksdb.memory.partitioned-index-filters"] = "true"
        settings["state.backend.rocksdb.use-bloom-filter"] = "true"
    return settings


def flink_settings(config: PipelineConfig, local: bool = True) -> dict[str, str]:
    """flink-conf/config.yaml flattened, plus what a local run must set for itself; for a job
    submitted to the cluster of ``flink run`` (``local=False``), only what the job's flags set."""
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
    if not local:  # the cluster has its own settings; -pyexec names its Python
        settings = {"parallelism.default": str(config.parallelism), **state_backend_settings(config)}
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
    elif config.input_feed:
        settings[CHECKPOINT_INTERVAL] = f"{LIVE_CHECKPOINT_S}s"
    settings["parallelism.default"] = str(config.parallelism)
    settings.update(state_backend_settings(config))
    # A local run fails at once, with its cause (a cluster keeps flink-conf's strategy: restarts
    # with a growing delay, which made a failing local run take minutes to give up).
    for key in [k for k in settings if k.startswith("restart-strategy.")]:
        del settings[key]
    settings[RESTART_STRATEGY] = "none"
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


def taskmanager_java_options(config: PipelineConfig) -> None:
    """A local run's mini-cluster is its TaskManager: it runs in the JVM this process starts
    (PyFlink's gateway), which gets flink-conf's TaskManager options through ``JVM_ARGS``, before
    the options already there (the JVM takes the last of an option given twice: the user's win).
    On RocksDB the state is off the heap, and the heap is capped (``LOCAL_ROCKSDB_HEAP``): the JVM
    otherwise grows it towards a quarter of the machine's memory under the allocations of a large
    fleet, though what it holds stays small."""
    settings = flink_settings(config)
    options = settings.get(TASKMANAGER_JAVA_OPTS, "")
    if settings.get(STATE_BACKEND) == "rocksdb":  # --state-backend rocksdb, or flink-conf's choice
        options = f"{options} {LOCAL_ROCKSDB_HEAP}".strip()
    current = os.environ.get("JVM_ARGS", "")
    if options and not current.startswith(options):
        os.environ["JVM_ARGS"] = f"{options} {current}".strip()


def prepare_process(config: PipelineConfig, local: bool = True) -> None:
    """Thread mode embeds the interpreter in the JVM; it finds the venv's packages (pemja, pyflink)
    and this package only through PYTHONPATH, which the JVM inherits from this process. A local
    run's JVM also gets the metric reporters, the TaskManager's Java options and the class archive."""
    site = [p for p in sys.path if p.endswith("site-packages")]
    paths = [str(PACKAGE.parent), *site, *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(p for p in paths if p))
    if local:
        reporters_on_gateway_classpath()
        taskmanager_java_options(config)
        use_archive()
        # PyFlink starts a "loopback" Beam worker pool in this process for local runs (a gRPC
        # server on every interface, one per StreamExecutionEnvironment object, of which the job
        # makes several), for Python workers in process mode. Thread mode embeds them in the JVM;
        # "process" tells PyFlink that the JVM starts any such workers itself, as on a cluster.
        os.environ["_python_worker_execution_mode"] = "process"


def local_environment(config: PipelineConfig) -> StreamExecutionEnvironment:
    """PyFlink's own environment, for a job besides the run's (``ais-pipeline load``): a local
    mini-cluster configured from flink-conf/, one per job, gone with it."""
    prepare_process(config)
    return submitted_environment(flink_settings(config), config.parallelism)


def submitted_environment(settings: Mapping[str, str], parallelism: int) -> StreamExecutionEnvironment:
    """PyFlink's environment with ``settings``: under ``flink run``, on that cluster; else a local
    mini-cluster of PyFlink's, one per job."""
    conf = Configuration()
    for key, value in settings.items():
        conf.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_parallelism(parallelism)
    return env


def early_environment(
    settings: Mapping[str, str], parallelism: int
) -> tuple[StreamExecutionEnvironment, EarlyMiniCluster]:
    """On a mini-cluster that starts while the job is being built (the caller closes it if the
    job never ran; the job's end shuts it down)."""
    from ais_pipeline.jvm.cluster import EarlyMiniCluster

    cluster = EarlyMiniCluster(settings)
    try:
        env = cluster.environment()
        env.set_parallelism(parallelism)
    except BaseException:
        cluster.close()
        raise
    return env, cluster


def kept_cluster_environment(
    settings: Mapping[str, str], parallelism: int
) -> tuple[StreamExecutionEnvironment, LocalCluster]:
    """On a local mini-cluster of this process's own, which outlives the job (its web UI still
    shows the finished job); the caller closes the cluster."""
    from ais_pipeline.jvm.cluster import LocalCluster

    cluster = LocalCluster(settings)
    env = cluster.environment(settings)
    env.set_parallelism(parallelism)
    return env, cluster


def taskmanagers_environment(
    settings: Mapping[str, str], parallelism: int, conf_dir: Path, taskmanagers: int
) -> tuple[StreamExecutionEnvironment, TaskManagerCluster]:
    """On a local cluster of ``taskmanagers`` one-slot TaskManager processes started for the run
    (an interpreter each); the caller closes the cluster."""
    from ais_pipeline.pipeline.taskmanagers import TaskManagerCluster

    cluster = TaskManagerCluster(settings, conf_dir, taskmanagers)
    env = cluster.environment(settings)
    env.set_parallelism(parallelism)
    return env, cluster
