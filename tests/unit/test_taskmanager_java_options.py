"""flink-conf's TaskManager JVM options reach the JVM of a local run, whose mini-cluster is its
TaskManager, before the user's own JVM_ARGS (the JVM takes the last of an option given twice)."""

import dataclasses
import os
from pathlib import Path

import pytest
import yaml

from ais_pipeline.config import PipelineConfig
from ais_pipeline.pipeline.environment import (
    TASKMANAGER_JAVA_OPTS,
    flink_settings,
    state_backend_settings,
    taskmanager_java_options,
)
from ais_pipeline.resources import FLINK_CONF

pytestmark = pytest.mark.unit

C2_LATER = (
    "-XX:Tier4InvocationThreshold=50000 -XX:Tier4MinInvocationThreshold=6000"
    " -XX:Tier4CompileThreshold=150000 -XX:Tier4BackEdgeThreshold=400000"
)


@pytest.fixture(autouse=True)
def no_jvm_args(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JVM_ARGS", raising=False)


def test_flink_conf_compiles_only_the_hottest_code_with_c2():
    conf = yaml.safe_load((FLINK_CONF / "config.yaml").read_text())
    assert conf["env"]["java"]["opts"]["taskmanager"] == C2_LATER
    assert flink_settings(PipelineConfig())[TASKMANAGER_JAVA_OPTS] == C2_LATER


def test_a_local_run_gives_them_to_its_jvm_once():
    taskmanager_java_options(PipelineConfig())
    taskmanager_java_options(PipelineConfig())  # a second environment of the same process
    assert os.environ["JVM_ARGS"] == C2_LATER


def test_the_users_own_options_come_after_and_win(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("JVM_ARGS", "-XX:TieredStopAtLevel=1 -Xmx2g")
    taskmanager_java_options(PipelineConfig())
    assert os.environ["JVM_ARGS"] == f"{C2_LATER} -XX:TieredStopAtLevel=1 -Xmx2g"


def test_a_flink_conf_without_them_adds_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "config.yaml").write_text("python:\n  execution-mode: thread\n")
    monkeypatch.setenv("JVM_ARGS", "-Xmx2g")
    taskmanager_java_options(dataclasses.replace(PipelineConfig(), flink_conf_dir=tmp_path))
    assert os.environ["JVM_ARGS"] == "-Xmx2g"


def test_a_local_run_on_rocksdb_caps_its_heap_before_the_users_options(monkeypatch: pytest.MonkeyPatch):
    taskmanager_java_options(PipelineConfig(state_backend="rocksdb"))
    assert os.environ["JVM_ARGS"] == f"{C2_LATER} -Xmx1g"
    monkeypatch.setenv("JVM_ARGS", "-Xmx3g")
    taskmanager_java_options(PipelineConfig(state_backend="rocksdb"))
    assert os.environ["JVM_ARGS"] == f"{C2_LATER} -Xmx1g -Xmx3g"  # the user's, last, wins


def test_rocksdb_comes_with_incremental_checkpoints_managed_memory_partitioned_indexes_and_bloom_filters():
    settings = flink_settings(PipelineConfig(state_backend="rocksdb"))
    assert {k: v for k, v in settings.items() if k.startswith(("state.", "execution.checkpointing.incr"))} == {
        "state.backend.type": "rocksdb",
        "execution.checkpointing.incremental": "true",
        "state.backend.rocksdb.memory.managed": "true",
        "state.backend.rocksdb.memory.partitioned-index-filters": "true",
        "state.backend.rocksdb.use-bloom-filter": "true",
    }
    assert state_backend_settings(PipelineConfig(state_backend="hashmap")) == {"state.backend.type": "hashmap"}
    conf = yaml.safe_load((FLINK_CONF / "config.yaml").read_text())  # and for a cluster that picks RocksDB there
    assert conf["state"]["backend"]["rocksdb"] == {
        "memory": {"partitioned-index-filters": True},
        "use-bloom-filter": True,
    }
