"""Encounters in the job, at parallelism 1 and 2: the generated encounter cases (a pair side by
side for three hours in the open ocean, a pair together twice within the merge gap, a pair
moored in port) give each pair's records, the same as the plain loop's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ais_pipeline.files import read_records
from tests.support.encounter_cases import ENCOUNTERS, encounter_case_lines
from tests.support.jobs import assert_same_outputs, run_job, run_oracle

pytestmark = pytest.mark.flink


@pytest.fixture(scope="module")
def encounter_cases(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The feed and the plain loop's outputs of it."""
    base = tmp_path_factory.mktemp("encounter-cases")
    feed = base / "encounters.nmea"
    feed.write_text("\n".join(encounter_case_lines()) + "\n")
    run_oracle(feed, base / "oracle")
    return feed, base / "oracle"


def records_by_pair(directory: Path) -> dict[tuple[int, int], list[dict[str, Any]]]:
    out: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for r in read_records(directory / "encounters"):
        out.setdefault(tuple(sorted((int(r["mmsi_1"]), int(r["mmsi_2"])))), []).append(r)  # type: ignore[arg-type]
    return out


@pytest.mark.parametrize("parallelism", [1, 2])
def test_the_generated_encounter_cases_give_their_records_in_the_job(
    parallelism: int, encounter_cases: tuple[Path, Path], tmp_path: Path
):
    feed, oracle = encounter_cases
    run_job(feed, tmp_path, "--parallelism", str(parallelism))
    assert_same_outputs(tmp_path, oracle)
    got = records_by_pair(tmp_path)
    want = {tuple(sorted(pair)): w for pair, w in ENCOUNTERS.items() if w is not None}
    assert sorted(got) == sorted(want)
    for pair, (hours, is_open) in want.items():
        records = got[pair]
        assert [r["open"] for r in records] == [True, is_open]  # written open at two hours, then closed
        assert len({r["id"] for r in records}) == 1
        assert records[-1]["hours"] == hours and records[-1]["published"]
