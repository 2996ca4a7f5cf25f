"""Numbers that do not depend on parallelism, timing or read order (issue: static supersede at
any parallelism; watermarks one bad clock cannot poison; directory runs independent of read
order). The whole job in a mini-cluster, against the plain loop and exact expectations."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ais_pipeline.config import SAMPLE_INPUT
from ais_pipeline.files import read_lines, read_records
from tests.support.feeds import HOUR, amendments_feed, moved_ahead, receivers_feed
from tests.support.jobs import assert_same_outputs, final, run_job, run_oracle

pytestmark = pytest.mark.flink


def outputs_of(directory: Path) -> dict[str, list[str]]:
    """Every output record, canonical and sorted, and each aggregate's final firing (how many
    revisions a window goes through depends on timing, as Flink defines it: docs/watermarks.md)."""
    names = ("positions", "static", "late", "dead_letter")
    out = {n: sorted(json.dumps(r, sort_keys=True) for r in read_records(directory / n)) for n in names}
    finals = final(read_records(directory / "aggregates")).values()
    out["aggregates"] = sorted(
        json.dumps({k: v for k, v in a.items() if k != "revision"}, sort_keys=True) for a in finals
    )
    return out


@pytest.mark.parametrize("parallelism", [1, 2, pytest.param(4, marks=pytest.mark.slow)])
def test_static_amendments_heard_by_two_receivers_are_judged_in_input_order(
    parallelism: int, fixtures: Path, tmp_path: Path
):
    # One vessel's four type 5 reports 10 s apart, destinations alternating, each heard by two
    # receivers with their own sequence ids: every amendment kept, from the first receiver.
    case = fixtures / "static-amendments-two-receivers.nmea"
    summary = run_job(case, tmp_path / "out", "--parallelism", str(parallelism))
    run_oracle(case, tmp_path / "oracle")
    assert_same_outputs(tmp_path / "out", tmp_path / "oracle")
    kept = sorted(
        (r["timestamp"][11:19], r["receiver"], r["destination"]) for r in read_records(tmp_path / "out" / "static")
    )
    assert kept == [
        ("00:00:00", "SHORE-0", "LE HAVRE"),
        ("00:00:10", "SHORE-0", "SOUTHAMPTON"),
        ("00:00:20", "SHORE-0", "LE HAVRE"),
        ("00:00:30", "SHORE-0", "SOUTHAMPTON"),
    ]
    assert (summary["static_kept"], summary["static_duplicates"]) == (4, 4)


@pytest.mark.parametrize("parallelism", [2, pytest.param(4, marks=pytest.mark.slow)])
def test_a_feed_of_many_amendments_gives_the_plain_loops_static_reports_at_any_parallelism(
    parallelism: int, tmp_path: Path
):
    feed = tmp_path / "amendments.nmea"
    feed.write_text("\n".join(amendments_feed()) + "\n")
    run_job(feed, tmp_path / "out", "--parallelism", str(parallelism))
    run_oracle(feed, tmp_path / "oracle")
    assert_same_outputs(tmp_path / "out", tmp_path / "oracle")
    assert outputs_of(tmp_path / "out")["static"] == outputs_of(tmp_path / "oracle")["static"]
    assert len(read_records(tmp_path / "out" / "static")) > 150


def test_a_directory_of_captures_from_three_epochs_gives_the_same_outputs_every_run(fixtures: Path, tmp_path: Path):
    # The bundled sample (2022), a 2023 capture and a 2014 one: read in name order, as one lane.
    directory = tmp_path / "in"
    directory.mkdir()
    shutil.copy(SAMPLE_INPUT, directory / SAMPLE_INPUT.name)  # aislistener__... (2022)
    shutil.copy(fixtures / "aistools__errors.nmea", directory)  # 2023, after it by name
    shutil.copy(fixtures / "risky__nmea-timestamped.txt", directory)  # 2014, last by name
    run_oracle(directory, tmp_path / "oracle")
    want = outputs_of(tmp_path / "oracle")
    for run, parallelism in enumerate((1, 2, 1, 2)):
        out = tmp_path / f"run{run}"
        summary = run_job(directory, out, "--parallelism", str(parallelism))
        assert outputs_of(out) == want, f"run {run} at parallelism {parallelism}"
        assert_same_outputs(out, tmp_path / "oracle")  # and every window's revisions without a gap
    # The 2014 capture comes after 2022 in name order: 8 years behind the watermark, it is late.
    assert summary["positions_kept"] == 7294 + 3 and summary["late"] == 100
    assert summary["receivers"]["(none)"]["late"] == 100


def test_a_receiver_5_h_ahead_and_the_satellite_capture_through_the_job_at_parallelism_2(
    fixtures: Path, tmp_path: Path
):
    feed = tmp_path / "fast-clock.nmea"
    feed.write_text("\n".join(receivers_feed(offsets={"r3": 5 * HOUR})) + "\n")
    for name, path in (("fast", feed), ("satellite", fixtures / "risky__exact-earth-with-tag-block.txt")):
        summary = run_job(path, tmp_path / name, "--parallelism", "2")
        run_oracle(path, tmp_path / f"{name}-oracle")
        assert_same_outputs(tmp_path / name, tmp_path / f"{name}-oracle")
        assert summary["late"] == 0 and read_records(tmp_path / name / "late") == []
    assert summary["positions_kept"] == 178
    assert summary["receivers"] == {"(none)": {"clock_ahead": 1, "clock_behind": 12, "late": 0, "future_timestamp": 0}}


@pytest.mark.parametrize(
    ("capture", "parallelism"),
    [
        ("kystverket-6h", 1),
        ("kystverket-6h", 2),
        ("noaa-published-2024-06-01.csv", 1),
        ("noaa-published-2025-06-01.csv", 2),
        ("risky__exact-earth-with-tag-block.txt", 1),
        ("noaadata__test.ais", 2),
    ],
)
def test_single_source_captures_with_stray_lines_keep_the_plain_loops_outputs(
    capture: str, parallelism: int, fixtures: Path, tmp_path: Path
):
    # One line far ahead of its lane moves no watermark, the lane's only source included: the
    # Norwegian capture (c:, no s:) with line 301 moved 6 h ahead, NOAA day starts as published
    # (day-end rows among the first), the satellite capture and the NAIS file as they are.
    if capture == "kystverket-6h":
        path = tmp_path / "kystverket-6h.nm4"
        lines = moved_ahead(list(read_lines(fixtures / "aisnet__Ais1000Lines.nm4")), 300, 6 * HOUR)
        path.write_text("\n".join(lines) + "\n")
    else:
        path = fixtures / capture
    summary = run_job(path, tmp_path / "job", "--parallelism", str(parallelism))
    run_oracle(path, tmp_path / "oracle")
    assert_same_outputs(tmp_path / "job", tmp_path / "oracle")
    assert summary["accounted_lines"] == summary["lines"]
    if capture.startswith(("kystverket", "noaa-published")):
        assert (summary["positions_kept"], summary["late"]) == (743, 0)
