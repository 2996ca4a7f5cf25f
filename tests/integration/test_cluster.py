"""`flink run -py jobs/ais_traffic.py` on a real standalone cluster started from the PyFlink
package's own bin/ scripts (scripts/cluster.sh): the same outputs as the plain pipeline, twice in a
row on the same TaskManager (thread mode once failed a TaskManager's second job)."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from pathlib import Path

import pytest

from ais_pipeline.config import SAMPLE_INPUT
from tests.support.jobs import assert_same_outputs, run_oracle
from tests.support.servers import CLUSTER

pytestmark = pytest.mark.integration


def test_submitted_job_matches_the_plain_pipeline_twice_in_a_row(cluster: str, tmp_path: Path):
    oracle = tmp_path / "oracle"
    run_oracle(SAMPLE_INPUT, oracle)
    for attempt in ("first", "second"):
        out = tmp_path / attempt
        proc = subprocess.run(
            ["bash", str(CLUSTER), "submit", "--output", str(out)], capture_output=True, text=True, timeout=600
        )
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
        assert "lines accounted for 10000 of 10000" in proc.stdout
        assert_same_outputs(out, oracle)
    with urllib.request.urlopen(f"{cluster}/jobs/overview", timeout=10) as resp:
        jobs = json.load(resp)["jobs"]
    # File runs are named ais-pipeline (Kafka runs: ais-pipeline <topic>); the cluster is shared.
    assert [j["state"] for j in jobs if j["name"] == "ais-pipeline"] == ["FINISHED", "FINISHED"]
