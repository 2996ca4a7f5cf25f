"""Archives through the whole job in a mini-cluster: compressed files of every kind in one
directory read as the plain capture, a truncated archive dead-lettered with the files after it
read, a NOAA day read straight from its .csv.zst and from its GeoParquet, and the NMEA dialects
of real receivers (the US Coast Guard's NAIS fields, the Norwegian feed's reused group ids) as the
plain loop reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from ais_pipeline.config import SAMPLE_INPUT
from ais_pipeline.files import read_records
from tests.support import noaa_parquet
from tests.support.archives import Row, compressed, noaa_csv
from tests.support.jobs import SAMPLE_SUMMARY, assert_same_outputs, run_job, run_oracle

pytestmark = pytest.mark.flink

KINDS = ("", ".gz", ".bz2", ".xz", ".zst", ".zip")


def test_a_directory_of_every_compression_reads_as_the_plain_capture(tmp_path: Path):
    lines = SAMPLE_INPUT.read_bytes().splitlines(keepends=True)
    folder = tmp_path / "in"
    folder.mkdir()
    step = -(-len(lines) // len(KINDS))
    for i, kind in enumerate(KINDS):
        part = b"".join(lines[i * step : (i + 1) * step])
        target = folder / f"part-{i}.nmea"
        if kind:
            compressed(target, part, kind)
        else:
            target.write_bytes(part)
    assert sorted(p.name for p in folder.iterdir())[1:3] == ["part-1.nmea.gz", "part-2.nmea.bz2"]
    summary = run_job(folder, tmp_path / "job")
    assert {k: summary[k] for k in SAMPLE_SUMMARY} == SAMPLE_SUMMARY  # every count of decompressed lines
    run_oracle(SAMPLE_INPUT, tmp_path / "oracle")
    assert_same_outputs(tmp_path / "job", tmp_path / "oracle")


def test_a_truncated_archive_is_dead_lettered_and_the_files_after_it_are_read(fixtures: Path, tmp_path: Path):
    folder = tmp_path / "in"
    folder.mkdir()
    data = (fixtures / "aisnet__Ais1000Lines.nm4").read_bytes()
    cut = compressed(folder / "a.nm4", data, ".gz")
    cut.write_bytes(cut.read_bytes()[: len(cut.read_bytes()) // 2])
    (folder / "b.nm4").write_bytes(data)
    summary = run_job(folder, tmp_path / "job")
    assert summary["accounted_lines"] == summary["lines"]
    assert summary["dead_letter"]["corrupt_archive"] == 1  # type: ignore[index]
    (dead,) = [d for d in read_records(tmp_path / "job" / "dead_letter") if d["reason"] == "corrupt_archive"]
    assert dead["raw"] == "a.nm4.gz" and dead["detail"] == "the archive could not be read to its end: gzip: truncated"
    # The second file, whole: its 1,000 lines are read after the archive's first part.
    assert 1001 < summary["lines"] < 2001  # type: ignore[operator]  # the whole lines before the cut, too


def test_a_noaa_day_is_read_straight_from_its_csv_zst(tmp_path: Path):
    rows = [
        Row(367000000 + v, f"2025-01-01 00:{m:02d}:{s:02d}", 40.5 + v / 100 + m / 1000, -73.9 - v / 100)
        for m in range(20)
        for s in (0, 30)
        for v in range(15)
    ]
    plain = tmp_path / "ais-2025-01-01.csv"
    plain.write_text(noaa_csv(rows, "2025"))
    packed = compressed(plain, plain.read_bytes(), ".zst")
    summary = run_job(packed, tmp_path / "job")
    assert (summary["lines"], summary["positions_kept"], summary["skipped"]) == (601, 600, 1)
    assert summary["static_from_rows"] == 15 and summary["accounted_lines"] == 601
    run_oracle(plain, tmp_path / "oracle")
    assert_same_outputs(tmp_path / "job", tmp_path / "oracle")


def test_a_noaa_geoparquet_day_reads_as_the_plain_loop_and_as_its_csv_twin(tmp_path: Path):
    rows = noaa_parquet.generated_day(3000, vessels=60)
    bad = noaa_parquet.NoaaRow(367999999, rows[30].time_ms, None, None, geometry=b"\x01\x02\x00\x00\x00")
    day = noaa_parquet.write(tmp_path / "ais-2024-01-01.parquet", [*rows[:31], bad, *rows[31:]], row_group_size=1000)
    summary = run_job(day, tmp_path / "job")
    assert (summary["lines"], summary["skipped"], summary["accounted_lines"]) == (3002, 1, 3002)
    assert summary["dead_letter"] == {"malformed": 1}
    run_oracle(day, tmp_path / "oracle")
    assert_same_outputs(tmp_path / "job", tmp_path / "oracle")
    twin = tmp_path / "ais-2024-01-01.csv"
    twin.write_text(noaa_parquet.csv_twin(rows))
    run_oracle(twin, tmp_path / "csv")
    for name in ("positions", "static"):
        assert sorted(map(str, read_records(tmp_path / "job" / name))) == sorted(
            map(str, read_records(tmp_path / "csv" / name))
        )


@pytest.mark.parametrize("capture", ["noaadata__test.ais", "aisnet__Ais1000Lines.nm4"])
def test_real_receivers_dialects_read_as_the_plain_loop_reads_them(capture: str, fixtures: Path, tmp_path: Path):
    summary = run_job(fixtures / capture, tmp_path / "job")
    run_oracle(fixtures / capture, tmp_path / "oracle")
    assert_same_outputs(tmp_path / "job", tmp_path / "oracle")
    assert summary["no_time"] == 0 and summary["accounted_lines"] == summary["lines"]
    assert summary.get("dead_letter", {}).get("incomplete_multipart", 0) <= 1
