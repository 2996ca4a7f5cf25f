"""A watched directory (unbounded) at parallelism 2: the lane's watermark fires windows while the
job runs, without waiting for an end of input, and once every line is read they equal the plain
pipeline's final aggregates; the web UI's REST API shows the running job, its named operators,
the watermark and the dedup counters; stopped with SIGTERM, the run drains and its outputs and
summary are the file run's."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ais_pipeline.config import SAMPLE_INPUT, PipelineConfig
from ais_pipeline.files import read_lines, read_records
from ais_pipeline.pipeline.ports import unused_port as free_port
from ais_pipeline.rules.plain import run_plain
from tests.support.jobs import ROOT, SAMPLE_SUMMARY, assert_same_outputs, final, run_oracle
from tests.support.web import EXPECTED_DUPLICATES, EXPECTED_KEPT, EXPECTED_WATERMARK, settled, web_ui_view

pytestmark = pytest.mark.flink


def test_a_watched_directory_fires_windows_while_the_job_runs_and_the_web_ui_shows_it(tmp_path: Path):
    watched, out = tmp_path / "in", tmp_path / "out"
    watched.mkdir()
    shutil.copy(SAMPLE_INPUT, watched / SAMPLE_INPUT.name)
    cmd = [sys.executable, "-m", "ais_pipeline.jobs.ais_traffic", "--input", str(watched), "--output", str(out)]
    port = free_port()
    cmd += ["--follow", "--parallelism", "2", "--web-ui-port", str(port)]
    log = (tmp_path / "job.log").open("w")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    # Sample: 02:09:52-02:15:17. The watermark reaches 02:13:59.999, so the tumbling windows 02:12
    # and 02:13 fire while the job runs, and once all lines are read they equal the plain
    # pipeline's final aggregates. Files are committed on checkpoints (every 10 s).
    wanted = {f"2022-11-10T02:{m:02d}:00.000Z" for m in (12, 13)}
    got: list[dict[str, object]] = []
    web: dict[str, object] = {}
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            got = read_records(out / "aggregates")
            if wanted <= {str(a["window_start"]) for a in got if a["window"] == "tumbling"}:
                break
            time.sleep(2)
        # The web UI's metrics are fetched from the task managers every few seconds: poll.
        web_deadline = time.monotonic() + 60
        while time.monotonic() < web_deadline:
            web = web_ui_view(port)
            if settled(web):
                break
            time.sleep(2)
        # Every line is decided; the late firings of the windows reach the files with the next
        # checkpoint (every 10 s).
        time.sleep(12)
        got = read_records(out / "aggregates")
    finally:
        proc.send_signal(signal.SIGTERM)  # the CLI drains the job, writes the summary and exits
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    log.close()
    printed = (tmp_path / "job.log").read_text()
    assert proc.returncode == 0, printed[-3000:]
    assert "Traceback" not in printed, printed[-3000:]
    # Stopped, the run still accounts for everything it read: drained (every window fired, every
    # sink committed, as at the end of a file), its outputs and summary are the file run's.
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped"] == "drained"
    assert {k: summary[k] for k in SAMPLE_SUMMARY} == SAMPLE_SUMMARY
    assert "lines accounted for 10000 of 10000" in printed
    assert "ais-pipeline: stopped; the summary is of what was read until then" in printed
    oracle_dir = tmp_path / "oracle"
    run_oracle(SAMPLE_INPUT, oracle_dir)
    assert_same_outputs(out, oracle_dir)
    for noise in ("Using Any for unsupported type", "bigquery_storage_v1", "PYFLINK_CYTHON_ENABLED"):
        assert noise not in printed
    # Not a terminal: a progress log line every 10 s (lines so far, rate, watermark, counts).
    assert re.search(
        r"^progress: [\d,]+ lines, [\d,]+ lines/s, watermark \S+, kept [\d,]+ dup [\d,]+ late \d+$",
        printed,
        re.MULTILINE,
    ), printed[-2000:]
    job_final = {k: v for k, v in final(got).items() if k[0] == "tumbling" and k[2] in wanted}
    assert job_final, "no tumbling window fired while the job ran"
    oracle = run_plain(PipelineConfig(), list(read_lines(SAMPLE_INPUT)))
    oracle_final = final([json.loads(a) for a in oracle.aggregates])
    # (A window that holds time and no report fires once that time is known.)
    want = {k: v for k, v in oracle_final.items() if k[0] == "tumbling" and k[2] in wanted and v["reports"]}
    job_final = {k: v for k, v in job_final.items() if v["reports"]}

    # While the job runs, a window holds the reports of the positions judged so far (a vessel's
    # first position waits for its next, or for the gap cap) and the time of the segments known:
    # never more than the final aggregates, which the drained run's equal (above).
    assert len(want) > 50
    assert all(job_final[k]["reports"] <= want[k]["reports"] for k in job_final if k in want)
    assert all(job_final[k]["vessel_hours"] <= want[k]["vessel_hours"] for k in job_final if k in want)

    # What the web UI shows of the running job, through its REST API.
    assert web["state"] == "RUNNING"
    names = web["vertices"]
    assert isinstance(names, dict)
    for operator in ("read lines", "parse lines", "watermarks", "dedup by MMSI", "cell windows"):
        assert any(operator in name for name in names), operator
    windows = next(v for name, v in names.items() if name.startswith("cell windows"))
    assert windows["watermark"] == EXPECTED_WATERMARK
    dedup = next(v for name, v in names.items() if name.startswith("dedup by MMSI"))
    assert (dedup["duplicates_exact"], dedup["positions_kept"]) == (EXPECTED_DUPLICATES, EXPECTED_KEPT)
