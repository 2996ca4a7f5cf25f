"""NOAA MarineCadastre GeoParquet days of known rows, written with pyarrow in NOAA's 2024 schema
(the columns and types read from ``ais-2024-01-01.parquet``: ``mmsi`` int32, ``base_date_time``
timestamp[ms], ``sog``/``cog`` float, ..., ``geometry`` a WKB point with the GeoParquet 1.0.0
``geo`` metadata), and the same rows as a CSV file in NOAA's 2025 layout: the twin that must give
the same outputs."""

from __future__ import annotations

import json
import random
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ais_pipeline.geoparquet import number_text
from tests.support.archives import HEADER_2025

# NOAA's 2024 schema. Its data dictionary says datetime64[ns] for the time and int32 for the
# length: ``schema(time_unit="ns", length=pa.int32())`` gives that variant.
WGS84_PROJJSON = {
    "$schema": "https://proj.org/schemas/v0.7/projjson.schema.json",
    "type": "GeographicCRS",
    "name": "WGS 84",
    "datum": {"type": "GeodeticReferenceFrame", "name": "World Geodetic System 1984",
              "ellipsoid": {"name": "WGS 84", "semi_major_axis": 6378137, "inverse_flattening": 298.257223563}},
    "coordinate_system": {"subtype": "ellipsoidal", "axis": [
        {"name": "Geodetic latitude", "abbreviation": "Lat", "direction": "north", "unit": "degree"},
        {"name": "Geodetic longitude", "abbreviation": "Lon", "direction": "east", "unit": "degree"}]},
    "id": {"authority": "EPSG", "code": 4326},
}  # fmt: skip


FLOAT32 = pa.float32()


def schema(time_unit: str = "ms", length: pa.DataType = FLOAT32) -> pa.Schema:
    fields = [
        ("mmsi", pa.int32()), ("base_date_time", pa.timestamp(time_unit)), ("sog", pa.float32()),
        ("cog", pa.float32()), ("heading", pa.int32()), ("vessel_name", pa.string()), ("imo", pa.string()),
        ("call_sign", pa.string()), ("vessel_type", pa.int32()), ("status", pa.int32()), ("length", length),
        ("width", pa.int32()), ("draft", pa.float32()), ("cargo", pa.int32()), ("transceiver", pa.string()),
        ("geometry", pa.binary()),
    ]  # fmt: skip
    return pa.schema(fields)


def geo_metadata(crs: object = WGS84_PROJJSON, encoding: str = "WKB", bbox: list[float] | None = None) -> bytes:
    column: dict[str, Any] = {"encoding": encoding, "geometry_types": ["Point"]}
    if crs is not ...:
        column["crs"] = crs
    if bbox:
        column["bbox"] = bbox
    return json.dumps({"version": "1.0.0", "primary_column": "geometry", "columns": {"geometry": column}}).encode()


def wkb_point(lon: float, lat: float, big_endian: bool = False) -> bytes:
    return struct.pack(">BIdd" if big_endian else "<BIdd", 0 if big_endian else 1, 1, lon, lat)


@dataclass
class NoaaRow:
    """One row of a NOAA GeoParquet day, as its columns hold it (None: null)."""

    mmsi: int | None
    time_ms: int | None
    lon: float | None
    lat: float | None
    sog: float | None = 10.0
    cog: float | None = 90.0
    heading: int | None = 88
    vessel_name: str | None = "NORDIC STAR"
    imo: str | None = "IMO9301234"
    call_sign: str | None = "OXYZ2"
    vessel_type: int | None = 70
    status: int | None = 0
    length: float | None = 180.0
    width: int | None = 28
    draft: float | None = 9.5
    cargo: int | None = 70
    transceiver: str | None = "A"
    geometry: bytes | None = field(default=None)

    def wkb(self) -> bytes | None:
        if self.geometry is not None:
            return self.geometry
        if self.lon is None or self.lat is None:
            return None
        return wkb_point(self.lon, self.lat)


def table(rows: list[NoaaRow], time_unit: str = "ms", length: pa.DataType = FLOAT32) -> pa.Table:
    per = {"ms": 1, "us": 1000, "ns": 1_000_000}[time_unit]
    target = schema(time_unit, length)
    columns: dict[str, list[Any]] = {name: [] for name in target.names}
    for r in rows:
        for name in target.names:
            if name == "base_date_time":
                columns[name].append(None if r.time_ms is None else r.time_ms * per)
            elif name == "geometry":
                columns[name].append(r.wkb())
            elif name == "length" and r.length is not None and pa.types.is_integer(length):
                columns[name].append(int(r.length))
            else:
                columns[name].append(getattr(r, name))
    arrays = [
        pa.array(columns[f.name], type=pa.int64()).cast(f.type)
        if f.name == "base_date_time"
        else pa.array(columns[f.name], type=f.type)
        for f in target
    ]
    return pa.Table.from_arrays(arrays, schema=target)


def write(path: Path, rows: list[NoaaRow], **options: Any) -> Path:
    """A NOAA GeoParquet day of these rows (GeoParquet 1.0.0 metadata, WGS 84, snappy, as NOAA's)."""
    path.write_bytes(
        parquet_bytes(table(rows, options.pop("time_unit", "ms"), options.pop("length", pa.float32())), **options)
    )
    return path


def parquet_bytes(
    t: pa.Table,
    *,
    compression: str = "snappy",
    row_group_size: int = 100_000,
    geo: bytes | None = None,
    dictionary: bool = True,
) -> bytes:
    """A table as a Parquet file's bytes, with ``geo`` metadata (the default: NOAA's; b"": none)."""
    if geo != b"":
        t = t.replace_schema_metadata({b"geo": geo if geo is not None else geo_metadata()})
    out = pa.BufferOutputStream()
    pq.write_table(t, out, compression=compression, row_group_size=row_group_size, use_dictionary=dictionary)
    return bytes(out.getvalue())


def _time_text(ms: int) -> str:
    t = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
    text = t.strftime("%Y-%m-%d %H:%M:%S")
    return text + f".{ms % 1000:03d}" if ms % 1000 else text


def _cell(value: object, single: bool = True) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return number_text(value, single)
    text = str(value)
    return '"' + text.replace('"', '""') + '"' if "," in text or '"' in text else text


def csv_twin(rows: Iterable[NoaaRow]) -> str:
    """The same rows as NOAA's 2025 CSV layout writes them (longitude first, a space in the time)."""
    lines = [HEADER_2025]
    for r in rows:
        cells = [
            _cell(r.mmsi), "" if r.time_ms is None else _time_text(r.time_ms), _cell(r.lon, False), _cell(r.lat, False),
            _cell(r.sog), _cell(r.cog), _cell(r.heading), _cell(r.vessel_name), _cell(r.imo), _cell(r.call_sign),
            _cell(r.vessel_type), _cell(r.status), _cell(r.length), _cell(r.width), _cell(r.draft), _cell(r.cargo),
            _cell(r.transceiver),
        ]  # fmt: skip
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


DAY_MS = 1704067200000  # 2024-01-01T00:00:00Z


def generated_day(rows: int, vessels: int = 500, seed: int = 2024) -> list[NoaaRow]:
    """A NOAA-like day: ``vessels`` vessels sailing straight lines off the US east coast, one row a
    minute each in time order (NOAA downsamples to the whole minute), float32 speeds and courses,
    static fields beside every row."""
    rng = random.Random(seed)
    fleet = []
    for v in range(vessels):
        lat, lon = 25 + rng.random() * 15, -80 + rng.random() * 10
        fleet.append((367_000_000 + v * 37, lat, lon, rng.uniform(-0.002, 0.002), rng.uniform(-0.002, 0.002)))
    out: list[NoaaRow] = []
    minute = 0
    while len(out) < rows:
        for mmsi, lat, lon, dlat, dlon in fleet:
            if len(out) == rows:
                break
            sog = float(struct.unpack("<f", struct.pack("<f", round(rng.uniform(0, 20), 1)))[0])
            out.append(
                NoaaRow(
                    mmsi,
                    DAY_MS + minute * 60_000,
                    round(lon + dlon * minute, 5),
                    round(lat + dlat * minute, 5),
                    sog=sog,
                    cog=float(struct.unpack("<f", struct.pack("<f", round(rng.uniform(0, 359.9), 1)))[0]),
                    heading=rng.randrange(360),
                    vessel_name=f"VESSEL {mmsi % 1000}",
                    imo=f"IMO{9_000_000 + mmsi % 1_000_000}",
                    call_sign=f"W{mmsi % 10000:04d}",
                    vessel_type=rng.choice((30, 31, 37, 52, 60, 70, 80)) if mmsi % 7 else None,
                    length=float(100 + mmsi % 200),
                    width=20 + mmsi % 20,
                    draft=float(struct.unpack("<f", struct.pack("<f", 5 + (mmsi % 50) / 10))[0]),
                    cargo=None,
                    transceiver="A" if mmsi % 5 else "B",
                )
            )
        minute += 1
    return out


# ---- the golden GeoParquet files (tests/golden/archives/, read by both readers) -------------------


def _point_z_iso(lon: float, lat: float) -> bytes:
    return struct.pack("<BIddd", 1, 1001, lon, lat, 7.5)


def _ewkb_srid_z(lon: float, lat: float) -> bytes:
    return struct.pack(">BIIddd", 0, 0x80000001 | 0x20000000, 4326, lon, lat, 7.5)


def golden_rows() -> list[NoaaRow]:
    """Rows that show each rule of a value's text: nulls, NaN and infinity, milliseconds, times
    before 1970 and after 9999, names with commas, quotes and line breaks, and every kind of
    geometry."""
    t = DAY_MS
    linestring = struct.pack("<BII", 1, 2, 2) + struct.pack("<dddd", -74.0, 40.0, -74.1, 40.1)
    return [
        NoaaRow(367000001, t, -74.01234, 40.70123, sog=12.300000190734863, cog=359.8999938964844, heading=511),
        NoaaRow(367000002, t + 60_000, -73.5, 40.5, sog=None, cog=None, heading=None, vessel_name=None, imo=None,
                call_sign=None, vessel_type=None, status=None, length=None, width=None, draft=None, cargo=None,
                transceiver=None),
        NoaaRow(367000003, t + 61_123, -73.25, 40.25, vessel_name='SEA, "STAR"'),
        NoaaRow(367000004, t + 62_000, -73.125, 40.125, vessel_name="LINE\nBREAK\r\nNAME\rEND"),
        NoaaRow(367000005, t + 63_000, None, None, geometry=linestring),
        NoaaRow(367000006, t + 64_000, None, None, geometry=b"\x01\x01\x00"),
        NoaaRow(367000007, t + 65_000, None, None, geometry=wkb_point(float("nan"), float("nan"))),
        NoaaRow(367000008, t + 66_000, None, None, geometry=wkb_point(-70.000001, 41.999999, big_endian=True)),
        NoaaRow(367000009, t + 67_000, None, None, geometry=_ewkb_srid_z(-71.5, 42.5)),
        NoaaRow(367000010, t + 68_000, None, None, geometry=_point_z_iso(-72.5, 43.5)),
        NoaaRow(367000011, -1_500, -74.0, 40.0),
        NoaaRow(367000012, 253402300800000, -74.0, 40.0),
        NoaaRow(None, t + 69_000, -74.0, 40.0),
        NoaaRow(367000014, None, -74.0, 40.0),
        NoaaRow(367000015, t + 70_000, -74.0, 40.0, sog=float("nan"), cog=float("inf"), draft=1e-7,
                length=123456789.0),
        NoaaRow(367000016, t + 71_000, None, None, geometry=b"\x07" + bytes(20)),
        NoaaRow(367000017, t + 72_000, 0.1, -0.0, sog=0.0, cog=-0.0),
        NoaaRow(367000018, t + 73_000, 1e-10, 89.99999999999999, sog=102.30000305175781, draft=0.1),
        NoaaRow(367000019, t + 74_000, -74.0, 40.0, length=3.4028234663852886e38),  # the largest float
    ]  # fmt: skip


def _custom(columns: dict[str, pa.Array], **options: Any) -> bytes:
    return parquet_bytes(pa.table(columns), **options)


def golden_cases() -> dict[str, tuple[str, Any]]:
    """File name -> (what it shows, a function giving its bytes)."""
    rows = golden_rows()
    day = parquet_bytes(table(rows), row_group_size=5)
    few = rows[:4]
    binary_names = table(few).set_column(
        5, "vessel_name", pa.array([b"\xc3\xa9T\xc3\xa9", b"BAD \xff\xfe", None, b"OK"], type=pa.binary())
    )
    binary_names = binary_names.set_column(0, "mmsi", pa.array([r.mmsi for r in few], type=pa.int64()))
    binary_names = binary_names.set_column(11, "width", pa.array([4_000_000_000, 1, None, 2], type=pa.uint32()))
    latlon = {
        "mmsi": pa.array([367000001, 367000002], type=pa.int32()),
        "base_date_time": pa.array([DAY_MS * 1000, DAY_MS * 1000 + 1_500_000], type=pa.int64()).cast(
            pa.timestamp("us", tz="UTC")
        ),
        "latitude": pa.array([40.5, None], type=pa.float64()),
        "longitude": pa.array([-73.5, -73.25], type=pa.float64()),
        "sog": pa.array([1.5, 2.5], type=pa.float64()),
    }
    not_noaa = {"a": pa.array([1, 2]), "b": pa.array(["x", "y"])}
    bad_type = table(few).set_column(2, "sog", pa.array([True, False, None, True]))
    return {
        "noaa-day.parquet": ("NOAA's 2024 schema, snappy, row groups of 5: every rule of a value's text", lambda: day),
        "noaa-ns-zstd.parquet": (
            "times in nanoseconds, lengths in int32, zstd, a CRS left to its default (OGC:CRS84)",
            lambda: parquet_bytes(table(few, "ns", pa.int32()), compression="zstd", geo=geo_metadata(crs=...)),
        ),
        "noaa-binary-names.parquet": (
            "names as bytes that are not all UTF-8, an int64 MMSI, an unsigned width, gzip, no dictionary",
            lambda: parquet_bytes(binary_names, compression="gzip", dictionary=False),
        ),
        "noaa-latlon.parquet": (
            "no geo metadata: latitude and longitude columns; microseconds with a time zone; uncompressed",
            lambda: _custom(latlon, compression="none", geo=b""),
        ),
        "noaa-empty.parquet": ("no rows: the header alone", lambda: parquet_bytes(table([]))),
        "nan-bbox.parquet": (
            "geo metadata with a bbox of NaN (as json.dumps writes an empty day's)",
            lambda: parquet_bytes(table(few), geo=geo_metadata(bbox=[float("nan")] * 4)),
        ),
        "by-content.dat": ("a Parquet file told by its magic, whatever its name", lambda: parquet_bytes(table(few))),
        "not-noaa.parquet": ("Parquet of other columns: the columns it lacks", lambda: _custom(not_noaa, geo=b"")),
        "projected.parquet": (
            "a CRS other than WGS 84",
            lambda: parquet_bytes(
                table(few), geo=geo_metadata(crs={**WGS84_PROJJSON, "id": {"authority": "EPSG", "code": 3857}})
            ),
        ),
        "crs-undefined.parquet": (
            "a CRS of null (undefined)",
            lambda: parquet_bytes(table(few), geo=geo_metadata(crs=None)),
        ),
        "native-points.parquet": (
            "a geometry encoding other than WKB",
            lambda: parquet_bytes(table(few), geo=geo_metadata(encoding="point")),
        ),
        "bad-type.parquet": ("a column of a type that is not read", lambda: parquet_bytes(bad_type)),
        "lz4.parquet": (
            "pages of a codec that is not read",
            lambda: parquet_bytes(table(few), compression="lz4"),
        ),
        "cut.parquet": ("a Parquet file cut short has no footer", lambda: day[: len(day) // 2]),
    }
