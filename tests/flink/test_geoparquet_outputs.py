"""The outputs as GeoParquet (``--output-format jsonl,geoparquet``), opened as users open them:
one run of the job on a month of a GFW track (bad fixes, gaps) and the bundled sample (static
reports, late records, a dead letter) writes both formats; every output's GeoParquet rows are its
JSON Lines records, GeoPandas and DuckDB read every output, each geometry is its record's place,
and each file's ``geo`` metadata is valid against GeoParquet 1.1.0's JSON schema."""

from __future__ import annotations

import json
import re
import shutil
import struct
from pathlib import Path
from typing import Any

import pytest

from ais_pipeline.config import SAMPLE_INPUT
from ais_pipeline.files import read_records
from ais_pipeline.geoparquet_outputs import GEOMETRY, read_part
from ais_pipeline.rules.dedup import geohash_cell
from ais_pipeline.rules.outputs import OUTPUTS
from tests.support.encounter_cases import encounter_case_lines
from tests.support.jobs import ROOT, SAMPLE_SUMMARY, final, run_job

pytestmark = pytest.mark.flink

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
KINDS = {"POINT": ["Point"], "CELL": ["Polygon"], "GAP": ["LineString", "Point"], "NONE": []}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    inputs = tmp_path_factory.mktemp("inputs")
    shutil.copy(FIXTURES / "gpsdiosegment__416000000.json", inputs / "1-track-2014-01.json")
    shutil.copy(SAMPLE_INPUT, inputs / "2-sample-2022-11.txt")
    (inputs / "3-encounters-2023-11.nmea").write_text("\n".join(encounter_case_lines()) + "\n")
    out = tmp_path_factory.mktemp("run") / "out"
    run_job(inputs, out, "--output-format", "jsonl,geoparquet", "--parallelism", "2")
    return out


def parts(out: Path, name: str) -> list[Path]:
    return sorted((out / name).glob("*.parquet"))


def canonical(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True)


def wkb(data: bytes) -> tuple[int, list[tuple[float, float]]]:
    """The type and coordinates of a little-endian WKB point, line or one-ring polygon."""
    assert data[0] == 1
    (kind,) = struct.unpack_from("<I", data, 1)
    if kind == 1:
        return kind, [struct.unpack_from("<dd", data, 5)]
    offset = 9 if kind == 2 else 13
    (n,) = struct.unpack_from("<I", data, offset - 4)
    return kind, [struct.unpack_from("<dd", data, offset + 16 * i) for i in range(n)]


def test_every_outputs_geoparquet_rows_are_its_json_lines_records(run: Path):
    for name in OUTPUTS:
        assert parts(run, name), name
        jsonl = sorted(canonical(r) for r in read_records(run / name))
        parquet = sorted(canonical(r) for p in parts(run, name) for r in read_part(p, name))
        assert jsonl and parquet == jsonl, name


def test_each_files_geo_metadata_is_valid_geoparquet_1_1_with_its_geometry_types_and_bbox(run: Path):
    import jsonschema
    import pyarrow.parquet as pq
    import pyproj.datadir
    from referencing import Registry, Resource

    schema = json.loads((FIXTURES / "geoparquet-1.1.0.schema.json").read_text())
    projjson = json.loads((Path(pyproj.datadir.get_data_dir()) / "projjson.schema.json").read_text())
    assert projjson["$id"] == "https://proj.org/schemas/v0.7/projjson.schema.json"
    registry = Registry().with_resource(projjson["$id"], Resource.from_contents(projjson))
    validator = jsonschema.Draft7Validator(schema, registry=registry)
    for name in OUTPUTS:
        for part in parts(run, name):
            table = pq.read_table(part)
            geo = json.loads(table.schema.metadata[b"geo"])
            assert [e.message for e in validator.iter_errors(geo)] == [], part
            column = geo["columns"]["geometry"]
            assert (geo["version"], geo["primary_column"], column["encoding"]) == ("1.1.0", "geometry", "WKB")
            assert column["crs"]["id"] == {"authority": "EPSG", "code": 4326}
            coords = [xy for g in table.column("geometry").to_pylist() if g is not None for xy in wkb(g)[1]]
            kinds = sorted(
                {("", "Point", "LineString", "Polygon")[wkb(g)[0]] for g in table.column("geometry").to_pylist() if g}
            )
            assert kinds == column["geometry_types"] and set(kinds) <= set(KINDS[GEOMETRY[name]]), part
            if coords:
                xs, ys = [x for x, _ in coords], [y for _, y in coords]
                assert column["bbox"] == [min(xs), min(ys), max(xs), max(ys)], part
            else:
                assert "bbox" not in column, part


def test_geopandas_opens_every_output_with_each_records_place(run: Path):
    import geopandas as gpd
    import pandas as pd

    for name in OUTPUTS:
        frame = pd.concat([gpd.read_parquet(p) for p in parts(run, name)], ignore_index=True)
        assert isinstance(frame, gpd.GeoDataFrame) and frame.crs.to_epsg() == 4326, name
        assert len(frame) == len(read_records(run / name)), name
        if GEOMETRY[name] == "NONE":
            assert frame.geometry.isna().all(), name
        elif GEOMETRY[name] == "POINT":
            assert (frame.geometry.x == frame["lon"]).all() and (frame.geometry.y == frame["lat"]).all(), name
        elif GEOMETRY[name] == "CELL":
            # Each box is its geohash cell: its centre is in the cell.
            b = frame.geometry.bounds
            centres = zip((b.miny + b.maxy) / 2, (b.minx + b.maxx) / 2, frame["cell"], strict=True)
            cells = [geohash_cell(lat, lon, len(cell)) for lat, lon, cell in centres]
            assert cells == list(frame["cell"]), name
        else:
            for gap, geometry in zip(frame.itertuples(), frame.geometry, strict=True):
                start = (gap.start_lon, gap.start_lat)
                want = [start] if gap.open else [start, (gap.end_lon, gap.end_lat)]
                assert list(geometry.coords) == want, name
    gaps = gpd.read_parquet(parts(run, "gaps")[0])
    assert {"LineString"} <= set(gaps.geom_type), "a closed gap is a line"


def test_duckdb_reads_every_output_and_sums_hours_per_cell_by_ship_type_as_the_json_lines_do(run: Path):
    import duckdb

    con = duckdb.connect()
    for name in OUTPUTS:
        (count,) = con.execute(f"SELECT count(*) FROM read_parquet('{run / name}/*.parquet')").fetchall()[0]
        assert count == len(read_records(run / name)), name
    # The README's query, on this run: each tumbling window's highest revision, its vessel hours
    # per cell and ship type.
    (query,) = [q for q in re.findall(r"```sql\n(.*?)```", (ROOT / "README.md").read_text(), re.S) if "aggregates" in q]
    rows = con.execute(query.replace("out/noaa-2024-01-01", str(run))).fetchall()
    want: dict[tuple[str, str], float] = {}
    for (kind, cell, _), aggregate in final(read_records(run / "aggregates")).items():
        if kind == "tumbling":
            for ship_type, figures in aggregate["by_type"].items():  # type: ignore[attr-defined]
                want[(cell, ship_type)] = want.get((cell, ship_type), 0.0) + figures["vessel_hours"]
    got = {(cell, ship_type): hours for cell, ship_type, hours in rows}
    assert got.keys() == want.keys() and len(got) > 100
    assert all(got[k] == pytest.approx(want[k], abs=1e-9) for k in want)
    assert sum(h for (_, t), h in got.items() if t != "unknown") > 0  # the track's typed vessel is there
    # The geometry is GeoParquet's: DuckDB types the column by its metadata, its bytes are WKB.
    (kind,) = con.execute(f"SELECT typeof(geometry) FROM read_parquet('{run}/positions/*.parquet') LIMIT 1").fetchall()[
        0
    ]
    assert kind.startswith("GEOMETRY"), kind


def test_a_geoparquet_only_run_sums_itself_up_from_its_parquet_files(tmp_path: Path):
    out = tmp_path / "out"
    summary = run_job(SAMPLE_INPUT, out, "--output-format", "geoparquet")
    assert {k: summary[k] for k in SAMPLE_SUMMARY} == SAMPLE_SUMMARY
    assert not list(out.glob("*/*.jsonl"))
    written = {p.parent.name for p in out.glob("*/*.parquet")}  # a part at each checkpoint: how many is timing
    # No bad fix, no gap; three visits (vessels first heard in port, silent there four hours).
    assert written == {"positions", "static", "aggregates", "late", "dead_letter", "port_visits"}
