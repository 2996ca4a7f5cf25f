"""Loitering in the job, at parallelism 1 and 2: the generated loitering cases (a vessel idling
ten hours offshore, one slow in port, one slow for too short a time, one idling to the end of
the input) give each case's records, the same as the plain loop's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ais_pipeline.files import read_records
from tests.support.jobs import assert_same_outputs, run_job, run_oracle
from tests.support.loitering_cases import LOITERING, loitering_case_lines

pytestmark = pytest.mark.flink


@pytest.fixture(scope="module")
def loitering_cases(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The feed and the plain loop's outputs of it."""
    base = tmp_path_factory.mktemp("loitering-cases")
    feed = base / "loitering.nmea"
    feed.write_text("\n".join(loitering_case_lines()) + "\n")
    run_oracle(feed, base / "oracle")
    return feed, base / "oracle"


def last_records(directory: Path) -> dict[int, dict[str, Any]]:
    """Each vessel's event by its last record (one event per case)."""
    out: dict[int, dict[str, Any]] = {}
    for r in read_records(directory / "loitering"):
        out[int(r["mmsi"])] = r
    return out


@pytest.mark.parametrize("parallelism", [1, 2])
def test_the_generated_loitering_cases_give_their_records_in_the_job(
    parallelism: int, loitering_cases: tuple[Path, Path], tmp_path: Path
):
    feed, oracle = loitering_cases
    run_job(feed, tmp_path, "--parallelism", str(parallelism))
    assert_same_outputs(tmp_path, oracle)
    got = last_records(tmp_path)
    want = {mmsi: w for mmsi, w in LOITERING.items() if w is not None}
    assert sorted(got) == sorted(want)
    for mmsi, (hours, is_open) in want.items():
        assert got[mmsi]["open"] is is_open and hours <= got[mmsi]["hours"] < hours + 1.5
