"""A local run's mini-cluster starts while its job is being built, and stops with the run also
when the job is never submitted."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ais_pipeline.config import SAMPLE_INPUT, PipelineConfig
from ais_pipeline.pipeline.ports import bindable, unused_port
from ais_pipeline.pipeline.progress import rest_json

pytestmark = pytest.mark.flink


def test_the_web_ui_is_up_before_any_job_and_its_port_is_free_once_a_run_that_never_submitted_ends(
    tmp_path: Path,
) -> None:
    from ais_pipeline.pipeline.runs import FileRun

    port = unused_port()
    config = PipelineConfig(web_ui_port=port, input_path=SAMPLE_INPUT, output_dir=tmp_path, no_wait=True)
    overview = None
    with FileRun(config):
        deadline = time.monotonic() + 60
        while overview is None and time.monotonic() < deadline:
            try:
                overview = rest_json(f"http://127.0.0.1:{port}", "/jobs/overview")
            except OSError:
                time.sleep(0.2)

    assert overview == {"jobs": []}  # the cluster was up, with no job submitted to it
    deadline = time.monotonic() + 30
    while not bindable(port) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert bindable(port)
