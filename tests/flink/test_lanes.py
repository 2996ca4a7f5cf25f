"""A directory read with a lane per file (``--lanes per-file``) at parallelism 2: two fleets' files
of the same hour, each file decided as a run of that file alone would decide it (its own
watermark, lateness and dedup), the aggregates those runs' sums; one lane (the default) reads the
second file behind the watermark the first one left, so much of it is late."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ais_pipeline.config import PipelineConfig
from ais_pipeline.files import read_lines, read_records
from ais_pipeline.rules.plain import run_plain
from bench.gen_feed import generate
from tests.support.jobs import final, run_job, run_oracle

pytestmark = pytest.mark.flink

LINES = 8000


def fleets(folder: Path) -> list[Path]:
    """Two seeded feeds of the same hour: different vessels, the same receivers."""
    folder.mkdir()
    paths = []
    for seed in (1, 2):
        path = folder / f"fleet-{seed}.nmea"
        path.write_text("".join(line + "\n" for line in generate(LINES, seed)))
        paths.append(path)
    return paths


def canonical(directories: list[Path], name: str) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for d in directories for r in read_records(d / name))


def test_a_lane_per_file_decides_each_file_as_its_own_run_and_sums_the_windows(tmp_path: Path):
    files = fleets(tmp_path / "in")
    summary = run_job(tmp_path / "in", tmp_path / "job", "--lanes", "per-file", "--parallelism", "2")
    alone = []
    late_ms = 0
    for i, path in enumerate(files):
        run_oracle(path, tmp_path / f"alone-{i}")
        alone.append(tmp_path / f"alone-{i}")
        late_ms += run_plain(PipelineConfig(input_path=path), list(read_lines(path))).totals["late_vessel_ms"]
    for name in ("positions", "static", "late", "dead_letter"):
        assert canonical([tmp_path / "job"], name) == canonical(alone, name), name
    assert summary["lines"] == 2 * (LINES + 500) == summary["accounted_lines"]
    assert summary["late_hours"] == round(late_ms / 3.6e6, 6)

    # The vessels of the two files differ: each window's figures are the two runs' sums.
    want: dict[tuple[str, str, str], tuple[int, int, float]] = {}
    for directory in alone:
        for key, a in final(read_records(directory / "aggregates")).items():
            r, v, h = want.get(key, (0, 0, 0.0))
            want[key] = (r + int(a["reports"]), v + int(a["vessels"]), h + float(a["vessel_hours"]))  # type: ignore[call-overload, arg-type]
    got = final(read_records(tmp_path / "job" / "aggregates"))
    assert set(got) == set(want)
    for key, a in got.items():
        reports, vessels, hours = want[key]
        assert (a["reports"], a["vessels"]) == (reports, vessels), key
        assert abs(float(a["vessel_hours"]) - hours) <= 2e-6, key  # type: ignore[arg-type]  # each rounded to 6 decimals


def test_one_lane_reads_the_second_file_behind_the_watermark_the_first_one_left(tmp_path: Path):
    fleets(tmp_path / "in")
    one_lane = run_plain(PipelineConfig(input_path=tmp_path / "in"), list(read_lines(tmp_path / "in")))
    alone = [
        run_plain(PipelineConfig(input_path=path), list(read_lines(path)))
        for path in sorted((tmp_path / "in").iterdir())
    ]
    assert sum(r.totals.get("late", 0) for r in alone) == 0
    # The second file starts where the first one started, its 20 minutes behind the watermark the
    # first one left: its reports that every window has closed for are late.
    assert one_lane.totals["late"] == 978
