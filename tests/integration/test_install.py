"""The package as a user installs it: `pip install .` into an empty virtualenv (its build runs
Maven on java/ and carries flink-conf and the sample inside the package), then `ais-pipeline run`
from another folder runs the bundled sample, with no file of the checkout on its path; neither it nor
the editable install of `make setup` prints a setuptools warning."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.servers import ROOT

pytestmark = pytest.mark.integration


def test_pip_install_into_an_empty_venv_runs_the_bundled_sample_from_another_folder(tmp_path: Path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    install = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", str(ROOT)],
        capture_output=True, text=True, timeout=900, env=env,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr[-3000:]
    assert "Warning" not in install.stderr, install.stderr[-3000:]  # setuptools' warnings are build output
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import ais_pipeline, ais_pipeline.resources as r;"
         "print(ais_pipeline.__file__); print(r.FLINK_CONF); print(r.SAMPLE_INPUT); print(r.HELPERS_JAR.is_file())"],
        capture_output=True, text=True, cwd=elsewhere, env=env, timeout=60,
    )  # fmt: skip
    package, conf, sample, jar = where.stdout.split("\n")[:4]
    assert str(ROOT) not in package + conf + sample and jar == "True", where.stdout + where.stderr
    run = subprocess.run(
        [str(venv / "bin" / "ais-pipeline"), "run", "--no-wait", "--web-ui-port", "0", "--output", "out"],
        capture_output=True, text=True, cwd=elsewhere, env=env, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads((elsewhere / "out" / "summary.json").read_text())
    assert (summary["lines"], summary["positions_kept"], summary["accounted_lines"]) == (10000, 7294, 10000)
    assert "lines accounted for 10000 of 10000" in run.stdout
    # The editable install `make setup` makes, as quiet: no setuptools warning, no notice.
    editable = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", "--no-deps", "-e", str(ROOT)],
        capture_output=True, text=True, timeout=900, env=env,
    )  # fmt: skip
    assert editable.returncode == 0, editable.stderr[-3000:]
    assert "Warning" not in editable.stderr and "Editable installation" not in editable.stderr, editable.stderr
