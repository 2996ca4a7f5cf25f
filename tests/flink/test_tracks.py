"""Tracks and bad fixes in the job, at parallelism 1 and 2: a month of a real GFW track (sparse,
several transmitters on one MMSI) gives the plain loop's outputs with no vessel time late and its
hours where an independent spread puts them; bad fixes added to it, and to the bundled sample,
cost only themselves: the same positions and final aggregates as without them, their cells empty."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ais_pipeline.config import SAMPLE_INPUT
from ais_pipeline.files import read_lines, read_records
from tests.support.bad_fixes import MOVED_SPEED, moved_rows, moved_transmissions
from tests.support.independent_hours import elsewhere, hours_per_cell, tumbling_hours_per_cell
from tests.support.jobs import assert_same_outputs, final, run_job, run_oracle

pytestmark = pytest.mark.flink

GFW = Path(__file__).parents[1] / "fixtures" / "gpsdiosegment__416000000.json"


@pytest.fixture(scope="module")
def gfw_oracle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gfw-oracle")
    run_oracle(GFW, out)
    return out


@pytest.mark.parametrize("parallelism", [1, 2])
def test_a_sparse_real_track_loses_no_time_and_its_hours_are_where_its_segments_go(
    parallelism: int, gfw_oracle: Path, tmp_path: Path
):
    summary = run_job(GFW, tmp_path, "--parallelism", str(parallelism))
    assert_same_outputs(tmp_path, gfw_oracle)
    want = hours_per_cell(read_records(tmp_path / "positions"))
    got = tumbling_hours_per_cell(read_records(tmp_path / "aggregates"))
    assert sum(want.values()) > 40
    assert summary["late_hours"] == 0.0  # under 0.5 % of the hours, the target: none
    assert elsewhere(got, want) < 0.03
    # The only source of a sparse lane is judged at its pace: only its long silences are a jump
    # ahead, not every row (1,587 of 1,668 rows when it was judged as a busy lane's source).
    assert summary["receivers"]["(none)"]["clock_ahead"] == 9


def unrevised(directory: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    finals = final(read_records(directory / "aggregates"))
    return {k: {f: v for f, v in a.items() if f != "revision"} for k, a in finals.items()}


def assert_bad_fixes_cost_only_themselves(job: Path, clean_oracle: Path, added: int) -> None:
    positions = lambda d: sorted(json.dumps(p, sort_keys=True) for p in read_records(d / "positions"))  # noqa: E731
    assert positions(job) == positions(clean_oracle)
    assert unrevised(job) == unrevised(clean_oracle)
    moved = [b for b in read_records(job / "bad_fixes") if b["sog"] == MOVED_SPEED]
    assert len(moved) == added
    assert not {b["cell"] for b in moved} & {cell for _, cell, _ in unrevised(job)}


def test_bad_fixes_added_to_a_real_track_one_before_its_first_row_cost_only_themselves(
    gfw_oracle: Path, tmp_path: Path
):
    rows = list(read_lines(GFW))
    feed = tmp_path / "moved.json"
    feed.write_text("\n".join(moved_rows(rows)) + "\n")
    run_job(feed, tmp_path / "job", "--parallelism", "2")
    assert_bad_fixes_cost_only_themselves(tmp_path / "job", gfw_oracle, added=5)


def test_a_moved_copy_of_a_transmission_several_receivers_heard_is_a_bad_fix_and_nothing_else(tmp_path: Path):
    lines = list(read_lines(SAMPLE_INPUT))
    feed = tmp_path / "moved.nmea"
    feed.write_text("\n".join(moved_transmissions(lines)) + "\n")
    run_job(feed, tmp_path / "job")
    run_oracle(SAMPLE_INPUT, tmp_path / "clean")
    assert_bad_fixes_cost_only_themselves(tmp_path / "job", tmp_path / "clean", added=4)
