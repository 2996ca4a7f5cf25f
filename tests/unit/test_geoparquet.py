"""NOAA's GeoParquet days through the plain loop's reader (``ais_pipeline.geoparquet``): a value's
text, and a generated 2024 day in NOAA's schema giving exactly what the same rows in NOAA's CSV
layout give. (The lines of the golden GeoParquet files are in tests/golden/archives.json, which
the job's reader gives too.)"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from ais_pipeline.files import read_lines, read_records
from ais_pipeline.geoparquet import HEADER, number_text, time_text, wkb_point
from tests.support import noaa_parquet
from tests.support.jobs import final, run_oracle

pytestmark = pytest.mark.unit


def f32(x: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


@pytest.mark.parametrize(
    ("value", "single", "text"),
    [
        (f32(12.3), True, "12.3"),
        (f32(359.9), True, "359.9"),
        (f32(123456789.0), True, "123456790"),
        (f32(1e-7), True, "0.0000001"),
        (3.4028234663852886e38, True, "340282350000000000000000000000000000000"),  # rounding up overflows
        (0.1, False, "0.1"),
        (-74.01234, False, "-74.01234"),
        (1e-10, False, "0.0000000001"),
        (89.99999999999999, False, "89.99999999999999"),
        (1e22, False, "10000000000000000000000"),
        (-0.0, False, "0"),
        (float("nan"), True, ""),
        (float("-inf"), False, "-inf"),
    ],
)
def test_a_float_is_the_shortest_decimal_that_reads_back_as_it(value: float, single: bool, text: str):
    assert number_text(value, single) == text


def test_a_time_is_utc_with_its_milliseconds_and_out_of_range_as_its_number():
    assert time_text(1704067200000, "ms") == "2024-01-01 00:00:00"
    assert time_text(1704067200123_456_789 // 1000, "us") == "2024-01-01 00:00:00.123"
    assert time_text(1704067200123_999_999, "ns") == "2024-01-01 00:00:00.123"  # finer parts cut
    assert time_text(-1, "ms") == "1969-12-31 23:59:59.999"
    assert time_text(-62135596800000, "ms") == "0001-01-01 00:00:00"
    assert time_text(-62135596800001, "ms") == "-62135596800001ms"


def test_wkb_points_in_every_flavour_and_what_is_not_one():
    little = struct.pack("<BIdd", 1, 1, -74.5, 40.25)
    assert wkb_point(little) == ("-74.5", "40.25", "")
    assert wkb_point(struct.pack(">BIdd", 0, 1, -74.5, 40.25)) == ("-74.5", "40.25", "")
    assert wkb_point(struct.pack("<BIIdd", 1, 0x20000001, 4326, -74.5, 40.25)) == ("-74.5", "40.25", "")  # EWKB SRID
    assert wkb_point(struct.pack("<BIdddd", 1, 3001, -74.5, 40.25, 1.0, 2.0)[:-8]) == ("", "", "WKB of 29 bytes")  # ZM
    assert wkb_point(struct.pack("<BIdd", 1, 1, float("nan"), float("nan"))) == ("", "", "")  # POINT EMPTY
    assert wkb_point(struct.pack("<BII", 1, 2, 0)) == ("", "", "a WKB geometry of type 2, not a point")
    assert wkb_point(b"\x02" + little[1:]) == ("", "", "WKB byte order 2")


def test_a_bad_geometry_is_a_dead_letter_that_names_its_row(tmp_path: Path):
    rows = noaa_parquet.golden_rows()
    noaa_parquet.write(tmp_path / "day.parquet", rows)
    run_oracle(tmp_path / "day.parquet", tmp_path / "out")
    details = {d["detail"] for d in read_records(tmp_path / "out" / "dead_letter")}
    assert "row 5: geometry: a WKB geometry of type 2, not a point" in details
    assert "row 6: geometry: WKB of 3 bytes" in details
    assert "row 16: geometry: WKB byte order 7" in details
    assert "row 13: MMSI '' is not a 9-digit number" in details
    assert any(d.startswith("row 12: time '253402300800000ms'") for d in details)


def test_a_generated_2024_day_gives_exactly_what_its_csv_twin_gives(tmp_path: Path):
    # NOAA's schema (int32 MMSI, float32 speeds, WKB points), nulls, both time types; a bad
    # geometry has no CSV twin and is left out of the twin, where it is a dead letter of its own.
    rows = noaa_parquet.generated_day(3000, vessels=60)
    rows[10].sog = rows[11].cog = rows[12].vessel_name = None
    rows[20].vessel_name = 'SEA, "STAR"'
    bad = noaa_parquet.NoaaRow(367999999, rows[30].time_ms, None, None, geometry=b"\x01\x02\x00\x00\x00")
    twin = tmp_path / "ais-2024-01-01.csv"
    twin.write_text(noaa_parquet.csv_twin(rows))
    run_oracle(twin, tmp_path / "csv")
    for unit in ("ms", "ns"):
        day = noaa_parquet.write(
            tmp_path / f"ais-2024-01-01-{unit}.parquet", [*rows[:31], bad, *rows[31:]], time_unit=unit
        )
        run_oracle(day, tmp_path / unit)
        for name in ("positions", "static", "late", "bad_fixes", "gaps"):
            assert sorted(map(json.dumps, read_records(tmp_path / unit / name))) == sorted(
                map(json.dumps, read_records(tmp_path / "csv" / name))
            ), name
        assert final(read_records(tmp_path / unit / "aggregates")) == final(
            read_records(tmp_path / "csv" / "aggregates")
        )
        (dead,) = read_records(tmp_path / unit / "dead_letter")
        assert dead["detail"] == "row 32: geometry: a WKB geometry of type 2, not a point"
    assert len(read_records(tmp_path / "csv" / "positions")) > 2900
    assert next(iter(read_lines(day))) == HEADER
