"""The outputs as GeoParquet (``--output-format geoparquet``): each output's columns and geometry,
as the job's writer (``ais.flink.GeoParquetRecords``) is given them, and a part file read back as
the output's JSON records (for the summary, the report and the tests).

An output's columns are its PostgreSQL table's (:data:`ais_pipeline.postgres.TABLES`: name, type,
the record's JSON field; the field ``*`` takes every field no other column takes, as a JSON
object's text), with one change: an aggregate's ``by_type`` is a Parquet map from the ship type to
its ``vessels``, ``reports`` and ``vessel_hours``, so that SQL reaches the figures without JSON.
Times are UTC timestamps in milliseconds. The ``geometry`` column (WKB, WGS 84 longitude and
latitude) is:

- positions, late records and bad fixes: the reported point;
- aggregates: the geohash cell's box, a polygon;
- gaps: a line from the last position before the gap to the first after it, the start point
  while the gap is open;
- port visits: the port's point (the anchorage of the visit's first event);
- loitering events: the event's mean place, a point;
- encounters: the encounter's mean place, a point;
- static records and dead letters: null (they have no place).

Each file has the ``geo`` metadata of GeoParquet 1.1.0: the geometry column, its encoding (WKB),
its geometry types, its CRS (the PROJJSON of EPSG:4326) and the file's bbox.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ais_pipeline.postgres import TABLES, WITHDRAWN_FIELD
from ais_pipeline.rules.outputs import iso_ms

BY_TYPE = "by_type"  # the map's column type (GeoParquetRecords.BY_TYPE)
TIMESTAMP = "timestamp with time zone"

# How each output's geometry is made (GeoParquetRecords.Geometry).
GEOMETRY = {
    "positions": "POINT",
    "static": "NONE",
    "aggregates": "CELL",
    "late": "POINT",
    "dead_letter": "NONE",
    "bad_fixes": "POINT",
    "gaps": "GAP",
    "port_visits": "POINT",
    "loitering": "POINT",
    "encounters": "POINT",
}

PART_SUFFIX = ".parquet"


@dataclass(frozen=True)
class ParquetColumn:
    name: str
    type: str  # the PostgreSQL type the writer maps to a Parquet type, or BY_TYPE
    field: str  # the record's JSON field; "*" for every field no other column takes


def columns(output: str) -> tuple[ParquetColumn, ...]:
    """The columns of one output's files, in order, before ``geometry``. An output whose records
    may withdraw earlier ones (a live run's positions) has a last column ``withdrawn``: the reason,
    null for every other row (in PostgreSQL the withdrawn row is deleted instead)."""
    table = TABLES[output]
    cols = tuple(ParquetColumn(c.name, BY_TYPE if c.field == "by_type" else c.type, c.field) for c in table.columns)
    if table.withdrawable:
        cols += (ParquetColumn(WITHDRAWN_FIELD, "text", WITHDRAWN_FIELD),)
    return cols


def count_rows(path: Path) -> int:
    """The rows of one part file, from its footer."""
    import pyarrow.parquet as pq

    return int(pq.ParquetFile(path).metadata.num_rows)


def read_part(path: Path, output: str) -> Iterator[dict[str, Any]]:
    """The records of one part file of ``output``, as the JSON records the job emitted: each
    column's value under its field, a null as the record's null (or, for the fields a record
    leaves out when it has no value, as no field)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols = columns(output)
    absent = (*TABLES[output].absent_when_null, WITHDRAWN_FIELD)
    with pq.ParquetFile(path) as part:
        for batch in part.iter_batches(columns=[c.name for c in cols]):
            values: list[list[Any]] = []
            for c in cols:
                array = batch.column(c.name)
                if c.type == TIMESTAMP:
                    array = array.cast(pa.int64())
                values.append(array.to_pylist())
            for row in zip(*values, strict=True):
                yield _record(cols, row, absent)


def _record(cols: tuple[ParquetColumn, ...], row: tuple[Any, ...], absent: tuple[str, ...]) -> dict[str, Any]:
    record: dict[str, Any] = {}
    rest: dict[str, Any] = {}
    for c, value in zip(cols, row, strict=True):
        if value is not None:
            if c.type == TIMESTAMP:
                value = iso_ms(value)
            elif c.type == BY_TYPE:
                value = {name: figures for name, figures in value}
            elif c.type == "jsonb":
                value = json.loads(value)
        if c.field == "*":
            rest = value or {}
        elif value is not None or c.field not in absent:
            record[c.field] = value
    record.update(rest)
    return record
