"""Local Flink clusters: one that outlives the jobs run on it, and one started early for a run's job."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pyflink.datastream import StreamExecutionEnvironment

from ais_pipeline.jvm.gateway import configuration, java_environment, jvm, string_array


class LocalCluster:
    """Flink's ``MiniCluster`` started by this process: jobs go to it through its REST API (a
    remote environment), so that its web UI still shows a finished job. (PyFlink's local executor
    starts a mini-cluster per job and shuts it down, web UI and all, when the job ends.)"""

    def __init__(self, settings: Mapping[str, str]) -> None:
        flink = jvm().org.apache.flink
        slots = int(settings.get("taskmanager.numberOfTaskSlots", "1"))
        builder = flink.runtime.minicluster.MiniClusterConfiguration.Builder()
        built = builder.setConfiguration(configuration(settings)).setNumTaskManagers(1)
        self._cluster = flink.runtime.minicluster.MiniCluster(built.setNumSlotsPerTaskManager(slots).build())
        self._cluster.start()

    @property
    def rest_port(self) -> int:
        return int(self._cluster.getRestAddress().get().getPort())

    def environment(self, settings: Mapping[str, str]) -> StreamExecutionEnvironment:
        """An execution environment whose jobs go to this cluster (a local one would start a
        mini-cluster of its own)."""
        return remote_environment(self.rest_port, settings)

    def close(self) -> None:
        self._cluster.close()


class EarlyMiniCluster:
    """``ais.flink.local.EarlyMiniCluster``: a local run's mini-cluster, its start begun in the
    background as soon as the run's environment exists, so that it overlaps building the job. The
    environment's first job runs on it, through Flink's own local executor, and shuts it down when
    it ends (as the mini-cluster of PyFlink's local environment does)."""

    def __init__(self, settings: Mapping[str, str]) -> None:
        self._cluster = jvm().ais.flink.local.EarlyMiniCluster.starting(configuration(settings))

    def environment(self) -> StreamExecutionEnvironment:
        return StreamExecutionEnvironment(self._cluster.environment())

    def close(self) -> None:
        """Shut the cluster down if no job took it (a job's cluster ends with the job)."""
        self._cluster.closeUnlessTaken()


def remote_environment(rest_port: int, settings: Mapping[str, str]) -> StreamExecutionEnvironment:
    """An execution environment whose jobs go to the cluster whose REST API is on this machine's
    ``rest_port``, configured by ``settings``."""
    j_env = jvm().org.apache.flink.streaming.api.environment.StreamExecutionEnvironment.createRemoteEnvironment(
        "127.0.0.1", rest_port, configuration(settings), string_array([])
    )
    return StreamExecutionEnvironment(j_env)


def daemon_memory(conf_dir: Path) -> dict[str, tuple[str, str]]:
    """What Flink's start scripts ask ``BashJavaUtils`` (a JVM of its own per daemon) for each
    standalone daemon's memory, computed here in the run's JVM from the configuration in
    ``conf_dir``, the same way: per daemon (``taskexecutor``, ``standalonesession``), its JVM
    parameters (``-Xmx``, ``-Xms``, direct memory, metaspace) and its dynamic configuration
    (``-D key=value`` pairs), each as one line of text."""
    flink = jvm().org.apache.flink
    conf = flink.configuration.GlobalConfiguration.loadConfiguration(str(conf_dir))
    tm_utils = flink.runtime.clusterframework.TaskExecutorProcessUtils
    tm = tm_utils.processSpecFromConfig(conf)
    jm_utils = flink.runtime.jobmanager.JobManagerProcessUtils
    jm = jm_utils.processSpecFromConfig(conf)
    return {
        "taskexecutor": (
            str(flink.runtime.util.config.memory.ProcessMemoryUtils.generateJvmParametersStr(tm)),
            str(tm_utils.generateDynamicConfigsStr(tm)),
        ),
        "standalonesession": (
            str(jm_utils.generateJvmParametersStr(jm, conf)),
            str(jm_utils.generateDynamicConfigsStr(jm)),
        ),
    }


def java_specification_version() -> int:
    """The major version of the Java that runs this process's JVM (and the daemons')."""
    version = str(jvm().java.lang.System.getProperty("java.specification.version"))
    return int(version.rsplit(".", 1)[-1])


def client_rest_url(env: StreamExecutionEnvironment) -> str:
    """The REST API of the cluster an environment submits to (under ``flink run``: its
    ``rest.address`` and ``rest.port``, from the cluster's settings and the command's options)."""
    options = jvm().org.apache.flink.configuration.RestOptions
    conf = java_environment(env).getConfiguration()
    return f"http://{conf.get(options.ADDRESS)}:{conf.get(options.PORT)}"
