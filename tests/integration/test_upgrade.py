"""A new build of the package submitted to the TaskManagers of a running standalone cluster that
ran another build: a TaskManager's embedded Python keeps the modules it imported, so the job must
not run them. It fails at once with one line naming both builds and the fix, in `flink run`'s
output and in the job's exceptions (the web UI's), and writes nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ais_pipeline.build import this_build
from ais_pipeline.config import SAMPLE_INPUT
from ais_pipeline.files import read_lines
from tests.support.kafka import read_topic, replay, rest, submit_bounded, wait_for_state
from tests.support.servers import CLUSTER, ROOT

pytestmark = pytest.mark.integration

UPGRADED = "0.1.0+upgraded"


def second_build(where: Path) -> tuple[Path, str]:
    """A copy of the package with another version string and one rule's constant changed (the
    longest segment that counts in vessel hours: 600 s to 900 s); the folder that holds it and
    its build."""
    udfs = where / "udfs"
    shutil.copytree(ROOT / "udfs", udfs, ignore=shutil.ignore_patterns("__pycache__"))
    init = udfs / "ais_pipeline" / "__init__.py"
    text = init.read_text()
    assert '__version__ = "0.1.0"' in text
    init.write_text(text.replace('__version__ = "0.1.0"', f'__version__ = "{UPGRADED}"'))
    hours = udfs / "ais_pipeline" / "rules" / "vessel_hours.py"
    text = hours.read_text()
    assert "MAX_GAP_MS = 600_000\n" in text
    hours.write_text(text.replace("MAX_GAP_MS = 600_000\n", "MAX_GAP_MS = 900_000\n"))
    env = dict(os.environ, PYTHONPATH=str(udfs))
    build = subprocess.run(
        [sys.executable, "-c", "from ais_pipeline.build import this_build; print(this_build())"],
        capture_output=True, text=True, env=env, check=True, cwd=where,
    ).stdout.strip()  # fmt: skip
    return udfs, build


def test_a_second_build_on_the_same_taskmanagers_fails_at_once_with_one_line_naming_both_builds(
    cluster: str, kafka: str, tmp_path: Path
):
    lines = list(read_lines(SAMPLE_INPUT))[:2000]
    feed = tmp_path / "feed.nmea"
    feed.write_text("\n".join(lines) + "\n")
    replay(kafka, "upgrade", feed, len(lines))
    # The checkout's build runs on both TaskManagers: their Python now holds it.
    first = submit_bounded(kafka, "upgrade", "upgrade-first", "--parallelism", "2")
    assert wait_for_state(cluster, first, {"FINISHED", "FAILED"}, timeout_s=180) == "FINISHED"
    assert read_topic(kafka, "upgrade-first.positions")

    udfs, build = second_build(tmp_path)
    assert build.startswith(f"{UPGRADED} (build ") and build != this_build()
    flags = ["--source", "kafka", "--bootstrap-servers", kafka, "--topic", "upgrade", "--bounded"]
    flags += [
        "--starting-offsets",
        "earliest",
        "--group-id",
        "upgrade-second",
        "--output-topic-prefix",
        "upgrade-second.",
    ]
    proc = subprocess.run(
        ["bash", str(CLUSTER), "submit", *flags, "--parallelism", "2"],
        capture_output=True, text=True, timeout=300, env=dict(os.environ, AIS_UDFS=str(udfs)),
    )  # fmt: skip
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output[-3000:]
    said = [line for line in output.splitlines() if "restart the TaskManagers of this cluster" in line]
    assert said, output[-3000:]
    assert said[0].startswith("ais-pipeline: error: this job is ais-pipeline " + build)
    assert f"already runs ais-pipeline {this_build()}" in said[0]
    # The web UI's exceptions of that job show the same line; the job was cancelled, not left restarting.
    jobs = [j for j in rest(cluster, "/jobs/overview")["jobs"] if j["name"] == "ais-pipeline upgrade"]
    second = max(jobs, key=lambda j: j["start-time"])
    assert second["jid"] != first and second["state"] == "CANCELED"
    history = rest(cluster, f"/jobs/{second['jid']}/exceptions")["exceptionHistory"]["entries"]
    assert any(said[0].removeprefix("ais-pipeline: error: ") in e["stacktrace"] for e in history)
    # Never the old build's outputs: the second job wrote nothing.
    assert read_topic(kafka, "upgrade-second.positions", timeout_s=5) == []
