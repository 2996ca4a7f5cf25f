"""The archives people download, through the plain loop (the rules the job runs): NOAA
MarineCadastre CSV in both layouts, the Danish Maritime Authority's aisdk CSV, compressed files of
every kind the job reads, and the rows that cannot be read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ais_pipeline import files
from ais_pipeline.config import PipelineConfig
from ais_pipeline.files import read_lines, read_records, write_outputs
from ais_pipeline.rules.csv_rows import layout_of_header, parse_row
from ais_pipeline.rules.parse import DeadLetter
from ais_pipeline.rules.plain import run_plain
from ais_pipeline.rules.records import Report
from tests.support.archives import HEADER_2024, HEADER_2025, Row, compressed, noaa_csv

pytestmark = pytest.mark.unit

NOW = 1_900_000_000_000  # a wall clock after every archive


def run(path: Path, tmp_path: Path, **knobs: object) -> tuple[dict[str, object], Path]:
    config = PipelineConfig(input_path=path, **knobs)  # type: ignore[arg-type]
    lines = list(read_lines(path))
    out = tmp_path / "out"
    result = run_plain(config, lines, now_ms=NOW)
    write_outputs(result, out)
    return files.summarize(result.tallies, len(lines), out), out


def day(rows: list[Row], layout: str, tmp_path: Path, name: str = "ais-2025-01-01.csv") -> Path:
    path = tmp_path / name
    path.write_text(noaa_csv(rows, layout))
    return path


# Two vessels a minute apart, a repeated row, a near duplicate, a renamed vessel and one without a fix.
ROWS = [
    Row(367000001, "2025-01-01 00:00:00", 40.50001, -73.90002),
    Row(367000002, "2025-01-01 00:00:05", 40.60001, -73.80002, transceiver="B", name="SMALL ONE"),
    Row(367000001, "2025-01-01 00:00:00", 40.50001, -73.90002),  # the same row again: an exact duplicate
    Row(367000001, "2025-01-01 00:00:01", 40.50001, -73.90002),  # the same place 1 s later: near
    Row(367000001, "2025-01-01 00:01:00", 40.51001, -73.91002, name="NORDIC STAR II"),  # renamed
    Row(367000002, "2025-01-01 00:01:05", 91.0, 181.0, transceiver="B", name="SMALL ONE"),  # no fix
]


@pytest.mark.parametrize("layout", ["2024", "2025"])
def test_a_noaa_day_in_either_layout_gives_the_same_reports(layout: str, tmp_path: Path):
    summary, out = run(day(ROWS, layout, tmp_path), tmp_path)
    figures = ("lines", "positions_kept", "duplicates_exact", "duplicates_near", "no_position", "skipped")
    assert {k: summary[k] for k in figures} == {
        "lines": 7,
        "positions_kept": 3,
        "duplicates_exact": 1,
        "duplicates_near": 1,
        "no_position": 1,
        "skipped": 1,  # the header
    }
    assert summary["accounted_lines"] == 7
    # Positions are written once they are judged (the watermark has passed them): in time order.
    positions = sorted(read_records(out / "positions"), key=lambda p: (p["timestamp"], p["mmsi"]))
    assert [(p["mmsi"], p["msg_type"], p["timestamp"], p["lat"], p["lon"]) for p in positions] == [
        (367000001, 1, "2025-01-01T00:00:00.000Z", 40.50001, -73.90002),
        (367000002, 18, "2025-01-01T00:00:05.000Z", 40.60001, -73.80002),
        (367000001, 1, "2025-01-01T00:01:00.000Z", 40.51001, -73.91002),
    ]
    assert positions[0]["sog"] == 10.0 and positions[0]["heading"] == 88 and positions[0]["receiver"] is None
    # Static fields: a static record when they change, under the supersede rule; not lines.
    static = read_records(out / "static")
    assert [(s["mmsi"], s["shipname"], s["timestamp"]) for s in static] == [
        (367000001, "NORDIC STAR", "2025-01-01T00:00:00.000Z"),
        (367000002, "SMALL ONE", "2025-01-01T00:00:05.000Z"),
        (367000001, "NORDIC STAR II", "2025-01-01T00:01:00.000Z"),
    ]
    assert static[0] | {"id": ""} == {
        "id": "", "mmsi": 367000001, "msg_type": 5, "timestamp": "2025-01-01T00:00:00.000Z", "callsign": "OXYZ2",
        "cargo": 70, "draught": 9.5, "imo": "IMO9301234", "length": 180, "ship_type": 70, "shipname": "NORDIC STAR",
        "width": 28, "receiver": None,
    }  # fmt: skip
    assert (summary["static_kept"], summary["static_from_rows"]) == (0, 3)


def test_the_identity_of_a_row_is_mmsi_time_position_speed_course_and_heading():
    layout = layout_of_header(HEADER_2025)
    assert layout is not None and layout.name == "noaa-2025"
    tail = "90.0,88,X,,,70,0,1,1,1,70,A"
    one = parse_row(f"367000001,2025-01-01 00:00:00,-73.900021,40.500014,10.0,{tail}", layout, 2)
    two = parse_row(f"367000001,2025-01-01 00:00:00,-73.900024,40.500011,10.0,{tail.replace('X', 'Y')}", layout, 3)
    moved = parse_row(f"367000001,2025-01-01 00:00:00,-73.900021,40.500014,10.1,{tail}", layout, 4)
    assert isinstance(one, Report) and isinstance(two, Report) and isinstance(moved, Report)
    assert one.identity == two.identity == "367000001|1735689600000|40.50001|-73.90002|10.0|90.0|88"
    assert moved.identity != one.identity


def test_the_danish_aisdk_sample_reads_day_first_times_and_placeholders(fixtures: Path, tmp_path: Path):
    summary, out = run(fixtures / "mobiml__test_aisdk_20180208_sample.csv", tmp_path)
    assert (summary["lines"], summary["positions_kept"], summary["skipped"], summary["accounted_lines"]) == (
        11,
        10,
        1,
        11,
    )
    (first,) = [p for p in read_records(out / "positions") if p["mmsi"] == 265177000]  # the first row
    assert (first["mmsi"], first["timestamp"], first["lat"], first["lon"], first["sog"], first["heading"]) == (
        265177000, "2018-02-08T00:00:00.000Z", 57.602225, 11.644943, 15.7, 63,
    )  # fmt: skip
    # Every static field of the sample is a placeholder ("Unknown", "Undefined", empty): none kept.
    assert summary["static_from_rows"] == 0


DMA_HEADER = (
    "# Timestamp,Type of mobile,MMSI,Latitude,Longitude,Navigational status,ROT,SOG,COG,Heading,IMO,Callsign,"
    "Name,Ship type,Cargo type,Width,Length,Type of position fixing device,Draught,Destination,ETA,Data source type"
)


def test_dma_base_stations_and_aids_to_navigation_are_other_types_and_91_181_is_no_position(tmp_path: Path):
    rows = [
        "27/02/2023 10:00:00,Class A,219000001,55.5,10.5,Under way,0,12.1,45.0,44,9123456,OZAB,ANNA,Cargo,,20,120,"
        "GPS,7.2,AARHUS,27/02/2023 18:00:00,AIS",
        "27/02/2023 10:00:01,Base Station,2190001,55.6,10.6,Unknown value,,,,,Unknown,,,Undefined,,,,GPS,,,,AIS",
        "27/02/2023 10:00:02,AtoN,992191234,55.7,10.7,Unknown value,,,,,Unknown,,,Undefined,,,,GPS,,,,AIS",
        "27/02/2023 10:00:03,Class B,219000002,91.000000,181.000000,Unknown value,,,,,Unknown,,,Undefined,,,,GPS,"
        ",,,AIS",
    ]  # fmt: skip
    path = tmp_path / "aisdk-2023-02-27.csv"
    path.write_text("\n".join([DMA_HEADER, *rows]) + "\n")
    summary, out = run(path, tmp_path)
    assert (summary["positions_kept"], summary["other_types"], summary["no_position"]) == (1, 2, 1)
    (static,) = read_records(out / "static")
    assert (static["shipname"], static["imo"], static["destination"], static["ship_type"]) == (
        "ANNA", 9123456, "AARHUS", "Cargo",
    )  # fmt: skip


def test_rows_that_cannot_be_read_are_dead_letters_with_their_line_number(tmp_path: Path):
    good = noaa_csv([Row(367000001, "2024-03-01 00:00:00", 40.5, -73.9)], "2024").splitlines()
    bad = [
        "367000002,2024-03-01T00:00:01,40.5,-73.9,10.0",  # columns missing
        "367000003,2024-03-01T00:00:02,forty,-73.9,10.0,90.0,88,X,IMO1,C,70,0,1,1,1,70,A",  # text in a number
        "367000004,01/03/2024 00:00:03,40.5,-73.9,10.0,90.0,88,X,IMO1,C,70,0,1,1,1,70,A",  # a day-first date
        "36700000X,2024-03-01T00:00:04,40.5,-73.9,10.0,90.0,88,X,IMO1,C,70,0,1,1,1,70,A",  # no MMSI
    ]
    path = tmp_path / "AIS_2024_03_01.csv"
    path.write_text("\n".join([*good, *bad]) + "\n")
    summary, out = run(path, tmp_path)
    assert summary["dead_letter"] == {"malformed": 4} and summary["accounted_lines"] == summary["lines"] == 6
    details = [d["detail"] for d in read_records(out / "dead_letter")]
    assert details == [
        "line 3: 5 columns, the noaa-2024 header has 17",
        "line 4: a number field holds text (could not convert string to float: 'forty')",
        "line 5: time '01/03/2024 00:00:03' is not %Y-%m-%d %H:%M:%S (noaa-2024)",
        "line 6: MMSI '36700000X' is not a 9-digit number",
    ]
    assert read_records(out / "dead_letter")[0]["raw"] == bad[0]


def test_an_explicit_csv_format_wants_its_header_and_auto_reads_a_directory_that_mixes_formats(
    fixtures: Path, tmp_path: Path
):
    row = "367000001,2024-03-01T00:00:00,40.5,-73.9,10.0,90.0,88,X,IMO1,C,70,0,1,1,1,70,A"
    headless = tmp_path / "headless.csv"
    headless.write_text(row + "\n")
    summary, _ = run(headless, tmp_path, input_format="noaa")
    assert summary["dead_letter"] == {"malformed": 1}
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "a-nmea.txt").write_text((fixtures / "risky__nmea-timestamped.txt").read_text())
    (mixed / "b-dma.csv").write_text((fixtures / "mobiml__test_aisdk_20180208_sample.csv").read_text())
    (mixed / "c-noaa.csv").write_text(noaa_csv(ROWS, "2025"))  # in time order: 2014, 2018, 2025
    summary, _ = run(mixed, tmp_path)
    nmea_only, _ = run(mixed / "a-nmea.txt", tmp_path / "n")
    assert summary["positions_kept"] == nmea_only["positions_kept"] + 3 + 10  # type: ignore[operator]
    assert summary["accounted_lines"] == summary["lines"] and summary["dead_letter"] == nmea_only["dead_letter"]


@pytest.mark.parametrize("kind", [".gz", ".bz2", ".xz", ".zst", ".zip"])
def test_every_compression_reads_as_the_plain_file(kind: str, fixtures: Path, tmp_path: Path):
    plain = fixtures / "aisnet__Ais1000Lines.nm4"
    packed = compressed(tmp_path / plain.name, plain.read_bytes(), kind)
    assert list(read_lines(packed)) == list(read_lines(plain))
    assert files.count_input_lines(packed) == 1000


def test_a_zip_archive_is_its_members_in_name_order(tmp_path: Path):
    import zipfile

    archive = tmp_path / "days.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("b.csv", "b1\nb2")
        z.writestr("a.csv", "a1\na2\n")
    assert list(read_lines(archive)) == ["a1", "a2", "b1", "b2"]


def test_a_truncated_archive_is_a_dead_letter_naming_it_and_the_files_after_it_are_read(fixtures: Path, tmp_path: Path):
    folder = tmp_path / "in"
    folder.mkdir()
    data = (fixtures / "aisnet__Ais1000Lines.nm4").read_bytes()
    whole = compressed(folder / "a.nm4", data, ".gz")
    whole.write_bytes(whole.read_bytes()[: len(whole.read_bytes()) // 2])
    (folder / "b.nm4").write_bytes(data)
    lines = list(read_lines(folder))
    marker = [line for line in lines if line.startswith("\x1fcorrupt_archive\x1f")]
    assert marker == ["\x1fcorrupt_archive\x1fa.nm4.gz\x1fgzip: truncated"]
    assert lines[-1000:] == list(read_lines(folder / "b.nm4"))
    summary, out = run(folder, tmp_path)
    (dead,) = [d for d in read_records(out / "dead_letter") if d["reason"] == "corrupt_archive"]
    assert dead["raw"] == "a.nm4.gz"
    assert dead["detail"] == "the archive could not be read to its end: gzip: truncated"
    assert summary["accounted_lines"] == summary["lines"] == len(lines)


def test_headers_are_found_behind_a_bom_quotes_or_an_index_column_and_odd_rows_are_refused():
    assert layout_of_header("\ufeff" + HEADER_2024) is not None
    assert layout_of_header(",".join(f'"{n}"' for n in HEADER_2025.split(","))) is not None
    layout = layout_of_header("," + HEADER_2024)
    assert layout is not None and layout.width == 18 and dict(layout.columns)["mmsi"] == 1
    for line in ("!AIVDM,1,1,,A,mmsi,0*00", '{"mmsi": 1, "timestamp": 2}', "367000001,2024-03-01T00:00:00,40.5"):
        assert layout_of_header(line) is None
    noaa = layout_of_header(HEADER_2024)
    assert noaa is not None
    shifted = parse_row(
        "367000001,2024-03-01T00:00:00,40.5,-73.9,10.0,90.0,88,SMITH, JOHN,IMO1,C,70,0,1,1,1,70,A", noaa, 7
    )
    assert isinstance(shifted, DeadLetter) and shifted.detail == "line 7: 18 columns, the noaa-2024 header has 17"
    quoted = parse_row(
        '367000001,2024-03-01T00:00:00,40.5,-73.9,10.0,90.0,88,"SMITH, JOHN",IMO1,C,70,0,1,1,1,70,A', noaa, 8
    )
    assert isinstance(quoted, Report) and json.loads(quoted.static)["shipname"] == "SMITH, JOHN"
    odd = parse_row("³67000001,2024-03-01T00:00:00,40.5,-73.9,10.0,90.0,88,X,IMO1,C,70,0,1,1,1,70,A", noaa, 9)
    assert isinstance(odd, DeadLetter) and "is not a 9-digit number" in odd.detail


def test_a_dead_letters_line_number_counts_the_blank_lines_too(tmp_path: Path):
    path = tmp_path / "AIS_2024_03_01.csv"
    path.write_text(HEADER_2024 + "\n\n\n367000009,2024-03-01T00:00:00,40.5\n")
    _, out = run(path, tmp_path)
    assert [d["detail"] for d in read_records(out / "dead_letter")] == [
        "line 4: 3 columns, the noaa-2024 header has 17"
    ]


def test_every_kind_of_broken_archive_is_one_dead_letter_and_an_empty_one_is_no_line(tmp_path: Path):
    import gzip

    import zstandard

    data = b"".join(b"!AIVDM,%d\n" % i for i in range(50_000))
    flipped = bytearray(gzip.compress(data))
    flipped[len(flipped) // 2] ^= 0xFF
    cases = {
        "flip.gz": bytes(flipped),
        "junk.zst": b"not zstd at all",
        "cut.zst": zstandard.ZstdCompressor().compress(data)[:5000],
        "junk.zip": b"PK not a zip",
    }
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        lines = list(read_lines(tmp_path / name))
        assert lines[-1].startswith(f"\x1fcorrupt_archive\x1f{name}\x1f"), name
        if name == "cut.zst":  # what was read before the cut is whole
            assert all(line.startswith("!AIVDM,") for line in lines[:-1])
    for name in ("empty.gz", "empty.zst", "empty.zip"):
        (tmp_path / name).write_bytes(b"")
        assert list(read_lines(tmp_path / name)) == []
