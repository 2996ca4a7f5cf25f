"""NOAA MarineCadastre's GeoParquet days as lines of text, as the job's source reads them
(``ais.flink.NoaaParquet``): this reader is the reference the Java one is held to, line for line
(``tests/golden/archives.json``).

A file is read row group by row group, in batches, never whole. Its first line is a header
(:data:`HEADER`), the NOAA 2025 CSV layout's columns with two more, ``geoparquet_row`` (the row's
number in the file, from 1) and ``geometry_problem`` (why the row's geometry gives no position,
empty when it does); each row is then one CSV line in that layout, so the rows are decided by the
same rules as the rows of NOAA's CSV files (``ais_pipeline.rules.csv_rows``), and a GeoParquet
day gives exactly what the same rows in CSV give.

The columns are read by name: ``mmsi``, ``base_date_time``, ``sog``, ``cog``, ``heading``,
``vessel_name``, ``imo``, ``call_sign``, ``vessel_type``, ``status``, ``length``, ``width``,
``draft``, ``cargo``, ``transceiver``, and the position from the geometry column that the file's
``geo`` metadata names (a WKB point, WGS 84), or without that metadata from ``latitude`` and
``longitude`` columns. ``mmsi``, ``base_date_time`` and a position are required; a missing
optional column reads as empty cells.

How a value becomes text, the same in both readers:

- null, and a float that is NaN: an empty cell; infinity: ``inf`` or ``-inf``;
- integers in decimal; a float or double as the shortest decimal that reads back as the same
  value, rounded to nearest at that many significant digits, without an exponent;
- a time (INT64 milliseconds, microseconds or nanoseconds, with or without a time zone, read as
  UTC) as ``YYYY-MM-DD HH:MM:SS``, with ``.fff`` when it has milliseconds (finer parts are cut),
  a time outside the years 1 to 9999 as its number and unit (``253402300800000ms``);
- strings as UTF-8, bytes that are not UTF-8 one U+FFFD per maximal invalid subpart, line breaks
  as spaces; quoted as CSV quotes them when they hold a comma or a quote;
- a WKB point (either byte order; ISO or EWKB Z and M variants, an EWKB SRID skipped) as its
  longitude and latitude; an empty point (NaN coordinates) and a null geometry as empty cells; any
  other geometry as empty cells and a ``geometry_problem``.

A file that is Parquet but not this layout, or that cannot be read to its end, gives the lines
read before the fault and then the ``corrupt_archive`` marker line with a cause of a fixed wording
(:class:`ArchiveFault`).
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

# The layout's columns, in the order of a line; the position's two come from the geometry.
COLUMNS = (
    "mmsi", "base_date_time", "longitude", "latitude", "sog", "cog", "heading", "vessel_name", "imo",
    "call_sign", "vessel_type", "status", "length", "width", "draft", "cargo", "transceiver",
)  # fmt: skip
HEADER = ",".join((*COLUMNS, "geoparquet_row", "geometry_problem"))
REQUIRED = ("mmsi", "base_date_time")
BATCH_ROWS = 8192  # rows decoded at a time within a row group

MAGIC = b"PAR1"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MIN_MS = -62135596800000  # 0001-01-01T00:00:00Z
_MAX_MS = 253402300799999  # 9999-12-31T23:59:59.999Z
_PER_MS = {"ms": 1, "us": 1000, "ns": 1_000_000}
_WGS84 = frozenset({"EPSG:4326", "OGC:CRS84"})
_CODECS_READ = frozenset({"UNCOMPRESSED", "SNAPPY", "GZIP", "ZSTD"})  # LZ4, LZO and Brotli are not


class ArchiveFault(Exception):
    """Why a Parquet file cannot be read to its end (the words both readers use)."""


def is_parquet(file: Path) -> bool:
    """A file the Parquet reader reads: named ``.parquet``, or starting with Parquet's magic."""
    if file.name.lower().endswith(".parquet"):
        return True
    try:
        with file.open("rb") as fh:
            return fh.read(4) == MAGIC
    except OSError:
        return False


# ---- values as text ------------------------------------------------------------------------------


def _plain(text: str) -> str:
    """A decimal in %e notation without its exponent or trailing zeros."""
    return format(Decimal(text).normalize(), "f")


def number_text(value: float, single: bool) -> str:
    """A float (``single``: a 32-bit one) as the shortest decimal that reads back as the same value,
    rounded to nearest at that many significant digits."""
    if math.isnan(value):
        return ""
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    for digits in range(1, 10 if single else 18):
        text = f"{value:.{digits - 1}e}"
        back = float(text)
        if single:
            try:
                back = struct.unpack("<f", struct.pack("<f", back))[0]
            except OverflowError:  # rounded past the largest float: does not read back
                continue
        if back == value:
            return _plain(text)
    return _plain(repr(value))  # not reached: 9 and 17 digits always read back


def time_text(value: int, unit: str) -> str:
    """An INT64 time in ``unit`` ("ms", "us", "ns") since the epoch, UTC."""
    ms = value // _PER_MS[unit]
    if not _MIN_MS <= ms <= _MAX_MS:
        return f"{value}{unit}"
    t = _EPOCH + timedelta(milliseconds=ms)
    text = f"{t.year:04d}-{t.month:02d}-{t.day:02d} {t.hour:02d}:{t.minute:02d}:{t.second:02d}"
    return text + f".{ms % 1000:03d}" if ms % 1000 else text


def string_text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace").replace("\r\n", " ").replace("\r", " ").replace("\n", " ")


def cell(text: str) -> str:
    """A cell of a CSV line: quoted when it holds a comma or a quote."""
    if "," in text or '"' in text:
        return '"' + text.replace('"', '""') + '"'
    return text


def wkb_point(raw: bytes) -> tuple[str, str, str]:
    """A WKB geometry as (longitude, latitude, problem)."""
    if len(raw) < 5:
        return "", "", f"WKB of {len(raw)} bytes"
    order = raw[0]
    if order not in (0, 1):
        return "", "", f"WKB byte order {order}"
    end = "<" if order == 1 else ">"
    (kind,) = struct.unpack(end + "I", raw[1:5])
    at = 5
    dims = 2
    if kind & 0x20000000:  # EWKB: an SRID follows
        at += 4
    if kind & 0x80000000:
        dims += 1
    if kind & 0x40000000:
        dims += 1
    base = kind & 0x0FFFFFFF
    if base >= 1000:  # ISO: 1001 Z, 2001 M, 3001 ZM
        dims += {1: 1, 2: 1, 3: 2}.get(base // 1000, 0)
        base %= 1000
    if base != 1:
        return "", "", f"a WKB geometry of type {base}, not a point"
    if len(raw) < at + 8 * dims:
        return "", "", f"WKB of {len(raw)} bytes"
    x, y = struct.unpack(end + "dd", raw[at : at + 16])
    if math.isnan(x) and math.isnan(y):
        return "", "", ""
    return number_text(x, False), number_text(y, False), ""


# ---- the file ------------------------------------------------------------------------------------


def _crs_key(crs: object) -> str:
    """A GeoParquet CRS as the text its check compares (and a fault names)."""
    if crs is None:
        return "undefined"
    if isinstance(crs, str):
        return crs
    if isinstance(crs, dict):
        ident = crs.get("id")
        if isinstance(ident, dict) and "authority" in ident and "code" in ident:
            return f"{_json_text(ident['authority'])}:{_json_text(ident['code'])}"
        return "without an id"
    return "unreadable"


def _json_text(value: object) -> str:
    """A JSON scalar as Jackson's asText() gives it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (dict, list)):
        return ""
    return str(value)


def _geometry_column(metadata: dict[bytes, bytes] | None) -> str | None:
    """The primary geometry column of a GeoParquet file's ``geo`` metadata, None without it."""
    if not metadata or b"geo" not in metadata:
        return None
    name: object = None
    try:
        geo = json.loads(metadata[b"geo"])
        name = geo["primary_column"]
        column = geo["columns"][name]
    except (ValueError, KeyError, TypeError):
        column = None
    if not isinstance(column, dict) or not isinstance(name, str):
        raise ArchiveFault("parquet: its geo metadata names no primary geometry column")
    encoding = column.get("encoding")
    text = encoding if isinstance(encoding, str) else "missing"
    if text.upper() != "WKB":
        raise ArchiveFault(f"parquet: the geometry is not WKB-encoded (its encoding is {text})")
    if "crs" in column:
        key = _crs_key(column["crs"])
        if key not in _WGS84:
            raise ArchiveFault(f"parquet: the geometry's CRS is {key}, not WGS 84 (EPSG:4326 or OGC:CRS84)")
    return name


def _kind(field: Any) -> str:
    """How a column is read: "int", "float", "double", "string", "time:<unit>"; else a fault."""
    import pyarrow as pa

    t = field.type
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_integer(t):
        return "int"
    if pa.types.is_float32(t):
        return "float"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "string"
    if pa.types.is_timestamp(t) and (t.unit in _PER_MS or t.unit == "s"):
        return f"time:{t.unit}"
    raise ArchiveFault(f"parquet: column {field.name} is of a type that is not read")


def noaa_lines(file: Path) -> Iterator[str]:
    """The header line, then one line per row (see the module's text). Raises ArchiveFault."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        reader = pq.ParquetFile(file)
    except (OSError, pa.ArrowException):
        raise ArchiveFault("parquet: not a Parquet file (its footer cannot be read)") from None
    with reader:
        schema = reader.schema_arrow
        names = {name.lower(): name for name in schema.names}
        geometry = _geometry_column(schema.metadata)
        if geometry is not None and geometry.lower() not in names:
            geometry = None
        lacking = [c for c in REQUIRED if c not in names]
        if geometry is None and not {"latitude", "longitude"} <= names.keys():
            lacking.append("geometry")
        if lacking:
            raise ArchiveFault(f"parquet: not the NOAA AIS layout, it lacks {', '.join(lacking)}")
        wanted = [c for c in COLUMNS if c in names and (geometry is None or c not in ("latitude", "longitude"))]
        kinds: dict[str, str] = {}
        for c in wanted:  # mmsi first
            kinds[c] = _kind(schema.field(names[c]))
            if c == "mmsi" and kinds[c] not in ("int", "string"):
                raise ArchiveFault(f"parquet: column {names[c]} is of a type that is not read")
        read = [names[c] for c in wanted]
        if geometry is not None:
            geometry = names[geometry.lower()]
            try:
                holds_bytes = _kind(schema.field(geometry)) == "string"
            except ArchiveFault:
                holds_bytes = False
            if not holds_bytes:
                raise ArchiveFault(f"parquet: the geometry column {geometry} does not hold bytes")
            read.append(geometry)
        yield HEADER
        row = 0
        requested = set(read)
        for group in range(reader.num_row_groups):
            chunks = reader.metadata.row_group(group)
            for j in range(chunks.num_columns):
                chunk = chunks.column(j)
                if chunk.path_in_schema in requested and chunk.compression not in _CODECS_READ:
                    raise ArchiveFault(f"parquet: pages compressed with {chunk.compression} are not read")
            batches = reader.iter_batches(BATCH_ROWS, row_groups=[group], columns=read, use_threads=False)
            while True:
                try:
                    batch = next(batches)
                except StopIteration:
                    break
                except (OSError, pa.ArrowException):
                    raise ArchiveFault(f"parquet: row group {group + 1} cannot be read") from None
                columns = [_texts(batch.column(i), kinds[c]) for i, c in enumerate(wanted)]
                points = (
                    [wkb_point(g) if g is not None else ("", "", "") for g in _bytes(batch.column(len(wanted)))]
                    if geometry is not None
                    else None
                )
                by_name = dict(zip(wanted, columns, strict=True))
                for i in range(batch.num_rows):
                    row += 1
                    cells = []
                    for c in COLUMNS:
                        if points is not None and c == "longitude":
                            cells.append(points[i][0])
                        elif points is not None and c == "latitude":
                            cells.append(points[i][1])
                        else:
                            values = by_name.get(c)
                            cells.append("" if values is None else cell(values[i]))
                    cells.append(str(row))
                    cells.append(cell(points[i][2]) if points is not None else "")
                    yield ",".join(cells)


def _bytes(column: Any) -> list[bytes | None]:
    import pyarrow as pa

    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        column = column.cast(pa.binary())
    return column.to_pylist()  # type: ignore[no-any-return]


def _texts(column: Any, kind: str) -> list[str]:
    """A column's values as the cells' text."""
    if kind == "string":
        return ["" if v is None else string_text(v) for v in _bytes(column)]
    import pyarrow as pa

    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    if kind.startswith("time:"):
        unit = kind[5:]
        scale = 1000 if unit == "s" else 1  # a time Arrow keeps in seconds is stored in milliseconds
        unit = "ms" if unit == "s" else unit
        return ["" if v is None else time_text(v * scale, unit) for v in column.cast(pa.int64()).to_pylist()]
    values = column.to_pylist()
    if kind == "int":
        return ["" if v is None else str(v) for v in values]
    single = kind == "float"
    return ["" if v is None else number_text(v, single) for v in values]
