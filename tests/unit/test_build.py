"""The package's build, as every job carries it, and what a TaskManager holding another build says."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ais_pipeline import __version__
from ais_pipeline.build import BuildMismatch, check_job_build, this_build
from ais_pipeline.pipeline.started import all_running, build_mismatch

pytestmark = pytest.mark.unit

ROOT = Path(__file__).parents[2]


def build_of(udfs: Path) -> str:
    return subprocess.run(
        [sys.executable, "-c", "from ais_pipeline.build import this_build; print(this_build())"],
        capture_output=True, text=True, check=True, cwd=udfs.parent, env={"PYTHONPATH": str(udfs)},
    ).stdout.strip()  # fmt: skip


def test_a_build_is_the_version_and_the_sources_so_one_changed_constant_is_another_build(tmp_path: Path):
    assert this_build().startswith(f"{__version__} (build ") and len(this_build()) == len(__version__) + 21
    udfs = tmp_path / "udfs"
    shutil.copytree(ROOT / "udfs", udfs, ignore=shutil.ignore_patterns("__pycache__", "jars"))
    assert build_of(udfs) == this_build()  # a copy of the same files: the same build
    hours = udfs / "ais_pipeline" / "rules" / "vessel_hours.py"
    hours.write_text(hours.read_text().replace("MAX_GAP_MS = 600_000", "MAX_GAP_MS = 900_000"))
    changed = build_of(udfs)
    assert changed.startswith(f"{__version__} (build ") and changed != this_build()


def test_an_operator_of_another_build_fails_with_one_line_naming_both_and_the_fix():
    check_job_build(this_build())  # the same build: nothing
    check_job_build("")  # an operator made before builds were carried: not checked
    with pytest.raises(BuildMismatch) as err:
        check_job_build("0.2.0 (build 0123456789ab)")
    line = str(err.value)
    assert "\n" not in line
    assert line.startswith("this job is ais-pipeline 0.2.0 (build 0123456789ab), but this TaskManager's Python")
    assert f"already runs ais-pipeline {this_build()}" in line
    assert line.endswith("restart the TaskManagers of this cluster to run the new build")


def test_the_submission_finds_the_line_in_the_jobs_exceptions_as_the_rest_api_gives_them():
    with pytest.raises(BuildMismatch) as err:
        check_job_build("0.2.0 (build 0123456789ab)")
    trace = (
        "java.lang.RuntimeException: Failed to open\n\tat org.apache.flink...\nCaused by: "
        f"pemja.core.PythonException: <class 'ais_pipeline.build.BuildMismatch'>: {err.value}\n"
        "\tat /x/ais_pipeline/build.py.check_job_build(build.py:80)\n"
    )
    history = {"exceptionHistory": {"entries": [{"stacktrace": "java.io.IOException: other", "concurrentExceptions": [
        {"stacktrace": trace}]}]}}  # fmt: skip
    assert build_mismatch(history) == str(err.value)
    assert build_mismatch({"exceptionHistory": {"entries": [{"stacktrace": "java.io.IOException: other"}]}}) is None
    assert build_mismatch({}) is None


def test_a_job_has_started_when_every_vertex_runs():
    job = {"state": "RUNNING", "vertices": [{"status": "RUNNING"}, {"status": "INITIALIZING"}]}
    assert not all_running(job)
    job["vertices"][1]["status"] = "RUNNING"
    assert all_running(job)
    assert not all_running({"state": "RESTARTING", "vertices": [{"status": "RUNNING"}]})


def test_the_command_says_its_version_and_build(capsys):
    from ais_pipeline.cli import main

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"ais-pipeline {this_build()}\n"
