"""A run's cluster shape: decided here, in :func:`shape_of`, and nowhere else; :func:`place` builds
the run's settings once and hands them to the environment of that shape
(:mod:`ais_pipeline.pipeline.environment` carries it out). The shapes:

- ``SUBMITTED``: the job script runs under ``flink run``; the job runs on that cluster, with its
  settings. A Kafka or Kinesis job is submitted and left running there once it has started
  (:mod:`ais_pipeline.pipeline.started`).
- ``OWN_TASKMANAGERS``: ``--taskmanagers N``; a JobManager and N one-slot TaskManager processes
  started for the run, an interpreter each (:mod:`ais_pipeline.pipeline.taskmanagers`).
- ``KEPT_FOR_WEB_UI``: a file run on a terminal, not ``--no-wait``, ``--follow`` or a live feed;
  a mini-cluster of this process that outlives the job, so that its web UI still shows it
  (``ais_pipeline.jvm.cluster.LocalCluster``).
- ``EARLY_MINI_CLUSTER``: any other local run; a mini-cluster whose start overlaps building the
  job, shut down with the job (``ais_pipeline.jvm.cluster.EarlyMiniCluster``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from pyflink.datastream import StreamExecutionEnvironment

from ais_pipeline.config import PipelineConfig, submitted_by_flink_cli
from ais_pipeline.pipeline import environment
from ais_pipeline.pipeline.webui import Cluster, keeps_web_ui


class Shape(Enum):
    SUBMITTED = "the cluster of flink run"
    OWN_TASKMANAGERS = "the run's own TaskManagers"
    KEPT_FOR_WEB_UI = "a mini-cluster kept for the web UI"
    EARLY_MINI_CLUSTER = "a mini-cluster started early, gone with the job"


def shape_of(config: PipelineConfig) -> Shape:
    """The one decision of where a run's job runs (the table above)."""
    if submitted_by_flink_cli():
        return Shape.SUBMITTED
    if config.taskmanagers:
        return Shape.OWN_TASKMANAGERS
    if keeps_web_ui(config):
        return Shape.KEPT_FOR_WEB_UI
    return Shape.EARLY_MINI_CLUSTER


@dataclass
class Placement:
    """A run's shape, its job's environment, and the local cluster the run started (none under
    ``flink run``); the run closes the cluster."""

    shape: Shape
    env: StreamExecutionEnvironment
    cluster: Cluster | None

    @property
    def keeps_web_ui(self) -> bool:
        return self.shape is Shape.KEPT_FOR_WEB_UI


def place(config: PipelineConfig) -> Placement:
    """The environment of a run's job on the cluster of its shape."""
    shape = shape_of(config)
    local = shape is not Shape.SUBMITTED
    environment.prepare_process(config, local)
    settings = environment.flink_settings(config, local)
    if shape is Shape.SUBMITTED:
        return Placement(shape, environment.submitted_environment(settings, config.parallelism), None)
    if shape is Shape.OWN_TASKMANAGERS:
        env, cluster = environment.taskmanagers_environment(
            settings, config.parallelism, config.flink_conf_dir, config.taskmanagers
        )
        return Placement(shape, env, cluster)
    if shape is Shape.KEPT_FOR_WEB_UI:
        env, kept = environment.kept_cluster_environment(settings, config.parallelism)
        return Placement(shape, env, kept)
    env, early = environment.early_environment(settings, config.parallelism)
    return Placement(shape, env, early)
