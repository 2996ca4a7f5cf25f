"""The job on RocksDB (``--state-backend rocksdb``) gives the plain loop's outputs, as the job on
the heap (hashmap, flink-conf's default; every other job test) does: the same positions, static
reports, late records, dead letters, bad fixes, gaps and final aggregates, at parallelism 1 and 2;
and so does the job whose dedup operator holds only a handful of vessels in Python
(``--vessel-cache 5``: every batch writes vessels to the state backend and reads them back), on
either backend.

The input is one directory of real captures, oldest first (files are read in name order as one
stream): GFW's month of a shared MMSI (tracks, bad fixes, gaps), GFW's sparse satellite track,
the bundled shore capture (fan-in duplicates, multipart, late copies) and the case of four static
amendments heard by two receivers."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ais_pipeline.config import SAMPLE_INPUT
from tests.support.jobs import assert_same_outputs, run_job, run_oracle

pytestmark = pytest.mark.flink
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

CAPTURES = (
    "gpsdiosegment__416000000.json",
    "gpsdiosegment__263576000.json",
    SAMPLE_INPUT.name,
    "static-amendments-two-receivers.nmea",
)


@pytest.fixture(scope="module")
def captures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("captures")
    for n, name in enumerate(CAPTURES, 1):
        source = SAMPLE_INPUT if name == SAMPLE_INPUT.name else FIXTURES / name
        shutil.copy(source, folder / f"{n:02d}-{name}")
    return folder


@pytest.fixture(scope="module")
def oracle(captures: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("oracle")
    run_oracle(captures, out)
    return out


@pytest.mark.parametrize(
    ("backend", "parallelism", "cache"),
    [("rocksdb", 1, "50000"), ("rocksdb", 2, "5"), ("hashmap", 1, "5")],
)
def test_real_captures_give_the_plain_loops_outputs_on_either_backend_and_with_a_tiny_vessel_cache(
    backend: str, parallelism: int, cache: str, captures: Path, oracle: Path, tmp_path: Path
):
    flags = ("--parallelism", str(parallelism), "--state-backend", backend, "--vessel-cache", cache)
    summary = run_job(captures, tmp_path, *flags)
    assert_same_outputs(tmp_path, oracle)
    assert summary["lines"] == summary["accounted_lines"]
    assert summary["bad_fixes"] > 0 and summary["duplicates_exact"] > 0
