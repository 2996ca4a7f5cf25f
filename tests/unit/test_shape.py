"""A run's cluster shape, decided in one place (no JVM here)."""

from __future__ import annotations

import sys

import pytest

from ais_pipeline.config import parse_config
from ais_pipeline.pipeline.environment import CHECKPOINT_INTERVAL, flink_settings
from ais_pipeline.pipeline.shape import Shape, shape_of

pytestmark = pytest.mark.unit


class Terminal:
    def isatty(self) -> bool:
        return True


def test_each_local_run_gets_its_shape_and_flink_run_the_submitted_one(monkeypatch):
    monkeypatch.delenv("PYFLINK_GATEWAY_PORT", raising=False)
    assert shape_of(parse_config(["--no-wait"], environ={})) is Shape.EARLY_MINI_CLUSTER
    assert shape_of(parse_config(["--taskmanagers", "2", "--parallelism", "2"], environ={})) is Shape.OWN_TASKMANAGERS
    assert shape_of(parse_config([], environ={})) is Shape.EARLY_MINI_CLUSTER  # not on a terminal (pytest)
    monkeypatch.setattr(sys, "stdin", Terminal())
    monkeypatch.setattr(sys, "stdout", Terminal())
    assert shape_of(parse_config([], environ={})) is Shape.KEPT_FOR_WEB_UI  # a file run on a terminal
    assert shape_of(parse_config(["--follow"], environ={})) is Shape.EARLY_MINI_CLUSTER
    monkeypatch.setenv("PYFLINK_GATEWAY_PORT", "25333")  # the job script under flink run
    assert shape_of(parse_config([], environ={})) is Shape.SUBMITTED


def test_a_submitted_job_sets_only_what_its_flags_set_and_a_local_one_flink_confs_too():
    config = parse_config(["--checkpoint-interval", "3", "--parallelism", "2"], environ={})
    assert flink_settings(config, local=False) == {"parallelism.default": "2", CHECKPOINT_INTERVAL: "3s"}
    local = flink_settings(config)
    assert local[CHECKPOINT_INTERVAL] == "3s" and local["restart-strategy.type"] == "none"
    assert local["taskmanager.numberOfTaskSlots"] == "2" and local["rest.bind-address"] == "127.0.0.1"
