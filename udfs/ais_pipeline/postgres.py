"""The PostgreSQL outputs (``ais-pipeline run --postgres URL``): where to, the tables, the checks
made before a job starts, the statements the job's JDBC sinks run, and the tables read back as
the records the files hold (for ``ais-pipeline report --postgres`` and the tests).

The tables are created from ``schema.sql`` when missing. Each output's sink (``ais.flink.jdbc``,
Flink's JDBC connector, at least once) runs the statement of :class:`Table`: an insert on the
record's ``id`` that does nothing when the row is there, or, for aggregates, an upsert on
(window_kind, cell, window_start) that only a higher revision wins. So a replay, a restore from
a checkpoint or a repeated run never adds a row twice: at-least-once delivery into idempotent
statements leaves the tables as if every record came exactly once.

The password never leaves this module but into the connection (psycopg here, the JDBC driver in
the job): :class:`Target` keeps it out of its repr, and errors name the server without it.
"""

from __future__ import annotations

import calendar
import json
import logging
import os
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ais_pipeline.postgres_url import PostgresError, Target, parse_url

__all__ = ["PostgresError", "Target", "parse_url"]  # with the tables' functions below

log = logging.getLogger(__name__)
SCHEMA = Path(__file__).with_name("schema.sql")
RUNS = "ais_runs"
CONNECT_TIMEOUT_S = 5


@contextmanager
def connect(target: Target, timeout_s: int = CONNECT_TIMEOUT_S) -> Iterator[Any]:
    """A psycopg connection (autocommit, UTC), closed on exit; a :class:`PostgresError` of
    one line when the server cannot be reached or refuses the login."""
    import psycopg

    options: dict[str, Any] = {"sslmode": target.sslmode} if target.sslmode else {}
    if not target.password:
        # No ~/.pgpass either: the job's JDBC driver would not read it, so neither does this.
        options["passfile"] = os.devnull
    try:
        conn = psycopg.connect(
            host=target.host,
            port=target.port,
            dbname=target.database,
            user=target.user,
            password=target.password,
            connect_timeout=timeout_s,
            autocommit=True,
            options="-c TimeZone=UTC",
            **options,
        )
    except psycopg.OperationalError as exc:
        raise PostgresError(f"PostgreSQL at {target.shown()}: {connect_failure(str(exc))}") from None
    try:
        yield conn
    finally:
        conn.close()


def connect_failure(message: str) -> str:
    """psycopg's connection error in a few words: the server's own FATAL line when it gave one,
    else why the socket failed."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    for line in lines:
        if "FATAL:" in line:
            return line.split("FATAL:", 1)[1].strip()
    for line in lines:
        lowered = line.lower()
        if "connection refused" in lowered:
            return "connection refused (is the server running, on that host and port?)"
        if "timeout" in lowered or "timed out" in lowered:
            return f"no answer within {CONNECT_TIMEOUT_S} s (is the host right, and reachable?)"
        if "could not translate host name" in lowered or "name or service not known" in lowered:
            return "unknown host"
    return lines[-1] if lines else "connection failed"


# -- the tables -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # as information_schema.columns.data_type names it
    field: str  # the record's JSON field; "*" for every field no other column takes


@dataclass(frozen=True)
class Table:
    """One output's table: its columns, the key a repeat is recognised by, and whether a row is
    replaced by a newer firing of its window (aggregates) or never (every other output)."""

    output: str
    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    newer_firing_wins: bool = False
    # A row replaced by a newer record of the same key when the stored one is (SQL on ``t``):
    # an open gap by its closed record.
    replaced_when: str = ""
    # Fields the record leaves out, rather than writes as null, when it has no value.
    absent_when_null: tuple[str, ...] = ()
    # A record of the output may withdraw one written before (``withdrawn``: the reason), as a
    # live run withdraws a position it wrote at once: its row is deleted and its id kept in
    # :data:`WITHDRAWN`, so that the row is not inserted again, in whichever order both come.
    withdrawable: bool = False

    @property
    def parameters(self) -> list[str]:
        """The record's field of each parameter of :meth:`statement`, in order."""
        if not self.withdrawable:
            return self.fields
        return [ID, WITHDRAWN_FIELD, WITHDRAWN_FIELD, ID, WITHDRAWN_FIELD, *self.fields, WITHDRAWN_FIELD, ID]

    @property
    def fields(self) -> list[str]:
        return [c.field for c in self.columns]

    def statement(self) -> str:
        """The JDBC statement of one record: every parameter text, cast to its column's type
        (the record's fields in :attr:`parameters`' order)."""
        names = ", ".join(c.name for c in self.columns)
        values = ", ".join(f"?::{c.type}" for c in self.columns)
        if self.withdrawable:
            return (
                f"WITH w AS (INSERT INTO {WITHDRAWN} (id, output, reason) SELECT ?::uuid, '{self.output}', ?::text"
                f" WHERE ?::text IS NOT NULL ON CONFLICT (id) DO NOTHING),"
                f" d AS (DELETE FROM {self.name} WHERE id = ?::uuid AND ?::text IS NOT NULL)"
                f" INSERT INTO {self.name} AS t ({names}) SELECT {values}"
                f" WHERE ?::text IS NULL AND NOT EXISTS (SELECT 1 FROM {WITHDRAWN} x WHERE x.id = ?::uuid)"
                f" ON CONFLICT ({', '.join(self.key)}) DO NOTHING"
            )
        sql = f"INSERT INTO {self.name} AS t ({names}) VALUES ({values}) ON CONFLICT ({', '.join(self.key)}) "
        if self.replaced_when:
            updates = ", ".join(f"{c.name} = EXCLUDED.{c.name}" for c in self.columns if c.name not in self.key)
            return sql + f"DO UPDATE SET {updates} WHERE {self.replaced_when}"
        if not self.newer_firing_wins:
            return sql + "DO NOTHING"
        updates = ", ".join(f"{c.name} = EXCLUDED.{c.name}" for c in self.columns if c.name not in self.key)
        # A firing carries the whole aggregate so far: more reports is newer, then more vessel
        # time. As many of both and a higher revision is newer too. Not the revision alone: after
        # a restore, a window's firings can be numbered differently than before (how many there
        # are depends on timing), and a revision 2 of the restored run may hold a report that the
        # first run's didn't.
        # (A row loaded from files written before vessel hours has none: any hours are newer.)
        newer = (
            "(t.reports, coalesce(t.vessel_hours, -1), t.revision)"
            " < (EXCLUDED.reports, coalesce(EXCLUDED.vessel_hours, -1), EXCLUDED.revision)"
        )
        return sql + f"DO UPDATE SET {updates} WHERE {newer}"


_TS = "timestamp with time zone"
_F = "double precision"


ID = "id"
WITHDRAWN = "ais_withdrawn"  # the ids of the records withdrawn (see Table.withdrawable)
WITHDRAWN_FIELD = "withdrawn"

# A record's id (the upserts' key) and its vessel.
_RECORD = (Column("id", "uuid", "id"), Column("mmsi", "bigint", "mmsi"))


def _position_columns() -> tuple[Column, ...]:
    return (
        *_RECORD,
        Column("msg_type", "smallint", "msg_type"),
        Column("event_time", _TS, "timestamp"),
        Column("lat", _F, "lat"),
        Column("lon", _F, "lon"),
        Column("sog", _F, "sog"),
        Column("cog", _F, "cog"),
        Column("heading", "smallint", "heading"),
        Column("receiver", "text", "receiver"),
        Column("cell", "text", "cell"),
    )


TABLES: dict[str, Table] = {
    t.output: t
    for t in (
        Table("positions", "ais_positions", _position_columns(), ("id",), withdrawable=True),
        Table(
            "static",
            "ais_static",
            (
                *_RECORD,
                Column("msg_type", "smallint", "msg_type"),
                Column("event_time", _TS, "timestamp"),
                Column("receiver", "text", "receiver"),
                Column("fields", "jsonb", "*"),
            ),
            ("id",),
        ),
        Table(
            "aggregates",
            "ais_aggregates",
            (
                Column("window_kind", "text", "window"),
                Column("cell", "text", "cell"),
                Column("window_start", _TS, "window_start"),
                Column("window_end", _TS, "window_end"),
                Column("reports", "integer", "reports"),
                Column("vessels", "integer", "vessels"),
                Column("avg_sog", _F, "avg_sog"),
                Column("revision", "integer", "revision"),
                Column("vessel_hours", _F, "vessel_hours"),
                Column("by_type", "jsonb", "by_type"),
                Column("window_seconds", "integer", "window_seconds"),
                Column("slide_seconds", "integer", "slide_seconds"),
                Column("geohash_precision", "smallint", "precision"),
                Column("sog_sum", _F, "sog_sum"),
                Column("sog_reports", "integer", "sog_reports"),
            ),
            ("window_kind", "window_seconds", "slide_seconds", "geohash_precision", "cell", "window_start"),
            newer_firing_wins=True,
        ),
        Table("late", "ais_late", (*_position_columns(), Column("window_kind", "text", "window")), ("id",)),
        Table(
            "bad_fixes",
            "ais_bad_fixes",
            (
                *_position_columns(),
                Column("implied_knots", _F, "implied_knots"),
                Column("conflicts_with", "jsonb", "conflicts_with"),
            ),
            ("id",),
        ),
        Table(
            "gaps",
            "ais_gaps",
            (
                *_RECORD,
                Column("ship_type", "text", "ship_type"),
                Column("start_time", _TS, "start_time"),
                Column("start_lat", _F, "start_lat"),
                Column("start_lon", _F, "start_lon"),
                Column("start_shore_nm", _F, "start_shore_nm"),
                Column("end_time", _TS, "end_time"),
                Column("end_lat", _F, "end_lat"),
                Column("end_lon", _F, "end_lon"),
                Column("end_shore_nm", _F, "end_shore_nm"),
                Column("hours", _F, "hours"),
                Column("positions_before", "integer", "positions_before"),
                Column("open", "boolean", "open"),
                Column("suspected_disabling", "boolean", "suspected_disabling"),
                Column("as_of", _TS, "as_of"),
                Column("coverage_cell", "text", "coverage_cell"),
                Column("coverage_reports", "integer", "coverage_reports"),
                Column("coverage_vessels", "integer", "coverage_vessels"),
            ),
            ("id",),
            replaced_when="t.open",
        ),
        Table(
            "port_visits",
            "ais_port_visits",
            (
                *_RECORD,
                Column("ship_type", "text", "ship_type"),
                Column("lat", _F, "lat"),
                Column("lon", _F, "lon"),
                Column("start_anchorage_id", "text", "start_anchorage_id"),
                Column("start_label", "text", "start_label"),
                Column("start_sublabel", "text", "start_sublabel"),
                Column("start_iso3", "text", "start_iso3"),
                Column("end_anchorage_id", "text", "end_anchorage_id"),
                Column("end_label", "text", "end_label"),
                Column("end_sublabel", "text", "end_sublabel"),
                Column("end_iso3", "text", "end_iso3"),
                Column("start_time", _TS, "start_time"),
                Column("end_time", _TS, "end_time"),
                Column("hours", _F, "hours"),
                Column("confidence", "smallint", "confidence"),
                Column("events", "jsonb", "events"),
                Column("open", "boolean", "open"),
                Column("as_of", _TS, "as_of"),
            ),
            ("id",),
            replaced_when="t.open",
        ),
        Table(
            "loitering",
            "ais_loitering",
            (
                *_RECORD,
                Column("ship_type", "text", "ship_type"),
                Column("lat", _F, "lat"),
                Column("lon", _F, "lon"),
                Column("start_time", _TS, "start_time"),
                Column("end_time", _TS, "end_time"),
                Column("hours", _F, "hours"),
                Column("avg_speed_kn", _F, "avg_speed_kn"),
                Column("distance_nm", _F, "distance_nm"),
                Column("shore_nm", _F, "shore_nm"),
                Column("start_lat", _F, "start_lat"),
                Column("start_lon", _F, "start_lon"),
                Column("end_lat", _F, "end_lat"),
                Column("end_lon", _F, "end_lon"),
                Column("published", "boolean", "published"),
                Column("open", "boolean", "open"),
                Column("as_of", _TS, "as_of"),
            ),
            ("id",),
            replaced_when="t.open",
        ),
        Table(
            "encounters",
            "ais_encounters",
            (
                Column("id", "uuid", "id"),
                Column("mmsi_1", "bigint", "mmsi_1"),
                Column("mmsi_2", "bigint", "mmsi_2"),
                Column("ship_type_1", "text", "ship_type_1"),
                Column("ship_type_2", "text", "ship_type_2"),
                Column("lat", _F, "lat"),
                Column("lon", _F, "lon"),
                Column("start_time", _TS, "start_time"),
                Column("end_time", _TS, "end_time"),
                Column("hours", _F, "hours"),
                Column("median_distance_km", _F, "median_distance_km"),
                Column("median_speed_kn", _F, "median_speed_kn"),
                Column("points_1", "integer", "points_1"),
                Column("points_2", "integer", "points_2"),
                Column("shore_nm", _F, "shore_nm"),
                Column("port_km", _F, "port_km"),
                Column("published", "boolean", "published"),
                Column("open", "boolean", "open"),
                Column("as_of", _TS, "as_of"),
            ),
            ("id",),
            replaced_when="t.open",
        ),
        Table(
            "dead_letter",
            "ais_dead_letter",
            (
                Column("id", "uuid", "id"),
                Column("reason", "text", "reason"),
                Column("receiver", "text", "receiver"),
                Column("detail", "text", "detail"),
                Column("raw", "text", "raw"),
            ),
            ("id",),
            absent_when_null=("receiver", "detail"),  # rules.outputs.dead_letter_json
        ),
    )
}

RUN_COLUMNS = (
    ("run_id", "uuid"),
    ("started_at", _TS),
    ("finished_at", _TS),
    ("source", "text"),
    ("summary", "json"),
)


def prepare(target: Target) -> None:
    """Before a job starts: the server answers, takes the login, has the database; the tables
    are created when missing, and each one there has this version's columns and key. Each
    failure is a :class:`PostgresError` of one line."""
    import psycopg

    with connect(target) as conn:
        try:
            with conn.transaction():
                conn.execute(SCHEMA.read_text(encoding="utf-8"))
        except psycopg.Error as exc:
            # A table of another shape makes an index fail: say which table, and how it differs.
            check_tables(conn, target)
            why = first_line(exc)
            raise PostgresError(f"PostgreSQL at {target.shown()}: cannot create the tables: {why}") from None
        add_vessel_hours(conn)
        add_window_key(conn)
        add_sog_sums(conn)
        check_tables(conn, target)
        missing = spatial(conn, target)
    if missing:
        log.warning("%s", missing)


def _columns(conn: Any, table: str) -> list[str]:
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND table_name = %s ORDER BY ordinal_position",
        (table,),
    ).fetchall()
    return [r[0] for r in rows]


_WINDOW_KEY = ("window_seconds", "slide_seconds", "geohash_precision")
_SOG_SUMS = ("sog_sum", "sog_reports")
DEFAULT_SLIDE_S = 60


def add_vessel_hours(conn: Any) -> None:
    """An ``ais_aggregates`` table of the versions before vessel hours (exactly their columns)
    gets the two columns at its end; any other table is left to :func:`check_tables`."""
    added = ("vessel_hours", "by_type", *_WINDOW_KEY, *_SOG_SUMS)
    before = [c.name for c in TABLES["aggregates"].columns if c.name not in added]
    if _columns(conn, "ais_aggregates") == before:
        conn.execute("ALTER TABLE ais_aggregates ADD COLUMN vessel_hours double precision, ADD COLUMN by_type jsonb")


def _aggregates_before(conn: Any, added: tuple[str, ...]) -> bool:
    """Whether ``ais_aggregates`` has exactly this version's columns but ``added`` (with or
    without the PostGIS column after them): the table of the version before those columns."""
    before = [c.name for c in TABLES["aggregates"].columns if c.name not in added]
    geometry = GEOMETRY_COLUMNS["ais_aggregates"][0]
    return _columns(conn, "ais_aggregates") in (before, [*before, geometry])


def _drop_aggregates_geometry(conn: Any) -> None:
    """Drop the PostGIS column of ``ais_aggregates``, if it has one, so that columns added next
    come before it; :func:`spatial` makes it again, last."""
    geometry = GEOMETRY_COLUMNS["ais_aggregates"][0]
    if geometry in _columns(conn, "ais_aggregates"):
        conn.execute(f"ALTER TABLE ais_aggregates DROP COLUMN {geometry}")


def add_window_key(conn: Any) -> None:
    """An ``ais_aggregates`` table of the versions whose key was (kind, cell, start) gets the
    window's size, slide and geohash precision, filled in from its rows (the size from start and
    end, the precision from the cell, a sliding window's slide from the smallest step between its
    starts, else 60 s, the default), and the key that holds them; its PostGIS column, generated
    from the cell, is made again after them. Any other table is left to :func:`check_tables`."""
    if not _aggregates_before(conn, (*_WINDOW_KEY, *_SOG_SUMS)):
        return
    with conn.transaction():
        _drop_aggregates_geometry(conn)
        conn.execute(
            "ALTER TABLE ais_aggregates ADD COLUMN window_seconds integer,"
            " ADD COLUMN slide_seconds integer, ADD COLUMN geohash_precision smallint"
        )
        step = conn.execute(
            "SELECT min(d) FROM (SELECT extract(epoch FROM window_start - lag(window_start)"
            " OVER (PARTITION BY cell ORDER BY window_start))::integer AS d"
            " FROM ais_aggregates WHERE window_kind = 'sliding') s WHERE d > 0"
        ).fetchone()[0]
        slide = int(step) if step else DEFAULT_SLIDE_S
        conn.execute(
            "UPDATE ais_aggregates SET window_seconds = extract(epoch FROM window_end - window_start)::integer,"
            " geohash_precision = length(cell),"
            " slide_seconds = CASE WHEN window_kind = 'sliding' THEN %s"
            " ELSE extract(epoch FROM window_end - window_start)::integer END",
            (slide,),
        )
        conn.execute(
            "ALTER TABLE ais_aggregates ALTER COLUMN window_seconds SET NOT NULL,"
            " ALTER COLUMN slide_seconds SET NOT NULL, ALTER COLUMN geohash_precision SET NOT NULL"
        )
        (primary,) = conn.execute(
            "SELECT conname FROM pg_constraint WHERE conrelid = 'ais_aggregates'::regclass AND contype = 'p'"
        ).fetchone()
        conn.execute(f'ALTER TABLE ais_aggregates DROP CONSTRAINT "{primary}"')
        key = ", ".join(TABLES["aggregates"].key)
        conn.execute(f"ALTER TABLE ais_aggregates ADD PRIMARY KEY ({key})")


def add_sog_sums(conn: Any) -> None:
    """An ``ais_aggregates`` table of the versions before ``sog_sum`` and ``sog_reports`` (exactly
    their columns, with or without the PostGIS column) gets the two at its end, null in the rows
    it holds (their sums are not known from the mean); the PostGIS column, generated from the
    cell, is made again after them. Any other table is left to :func:`check_tables`."""
    if not _aggregates_before(conn, _SOG_SUMS):
        return
    with conn.transaction():
        _drop_aggregates_geometry(conn)
        conn.execute("ALTER TABLE ais_aggregates ADD COLUMN sog_sum double precision, ADD COLUMN sog_reports integer")


# With PostGIS: geometry columns that the server computes from each row (generated columns, so
# the sinks' statements and their idempotence are those of a server without it), GiST-indexed.
GEOMETRY_COLUMNS = {
    "ais_positions": ("geom", "geometry(Point, 4326)", "ST_SetSRID(ST_MakePoint(lon, lat), 4326)"),
    "ais_bad_fixes": ("geom", "geometry(Point, 4326)", "ST_SetSRID(ST_MakePoint(lon, lat), 4326)"),
    # From the gap's start to its end (its start alone while it is open).
    "ais_gaps": (
        "line",
        "geometry(LineString, 4326)",
        "ST_MakeLine(ST_SetSRID(ST_MakePoint(start_lon, start_lat), 4326),"
        " ST_SetSRID(ST_MakePoint(coalesce(end_lon, start_lon), coalesce(end_lat, start_lat)), 4326))",
    ),
    "ais_aggregates": ("cell_geom", "geometry(Polygon, 4326)", "ST_GeomFromGeoHash(cell)"),
    # The port: the anchorage of the visit's first event.
    "ais_port_visits": ("geom", "geometry(Point, 4326)", "ST_SetSRID(ST_MakePoint(lon, lat), 4326)"),
    # The event's mean place.
    "ais_loitering": ("geom", "geometry(Point, 4326)", "ST_SetSRID(ST_MakePoint(lon, lat), 4326)"),
    # The encounter's mean place.
    "ais_encounters": ("geom", "geometry(Point, 4326)", "ST_SetSRID(ST_MakePoint(lon, lat), 4326)"),
}


def spatial(conn: Any, target: Target) -> str | None:
    """The tables' geometry columns and their indexes, when the server has PostGIS (the extension
    is created if it is available and not there yet); otherwise the one line that says why not."""
    import psycopg

    if conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'postgis'").fetchone() is None:
        return f"PostgreSQL at {target.shown()} has no PostGIS: the tables get no geometry columns"
    # Only what is missing: an ALTER locks its table (and adding a column rewrites it), so a
    # start against tables that have everything changes nothing.
    try:
        with conn.transaction():
            if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'postgis'").fetchone() is None:
                conn.execute("CREATE EXTENSION postgis")
            indexes = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes").fetchall()}
            for table, (column, kind, value) in GEOMETRY_COLUMNS.items():
                if column not in _columns(conn, table):
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind} GENERATED ALWAYS AS ({value}) STORED")
                if f"{table}_{column}" not in indexes:
                    conn.execute(f"CREATE INDEX {table}_{column} ON {table} USING GIST ({column})")
    except psycopg.Error as exc:
        why = first_line(exc)
        return f"PostgreSQL at {target.shown()}: PostGIS not enabled ({why}): the tables get no geometry columns"
    return None


def check_tables(conn: Any, target: Target) -> None:
    """Each table that is there has this version's columns, in order, and its unique key."""
    expected = {t.name: ([(c.name, c.type) for c in t.columns], t.key) for t in TABLES.values()}
    expected[RUNS] = (list(RUN_COLUMNS), ("run_id",))
    for name, (columns, key) in expected.items():
        found = conn.execute(
            "SELECT column_name, data_type FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND table_name = %s ORDER BY ordinal_position",
            (name,),
        ).fetchall()
        if not found:
            continue
        geometry = GEOMETRY_COLUMNS.get(name)
        if geometry and found and tuple(found[-1]) == (geometry[0], "USER-DEFINED"):
            found = found[:-1]  # the PostGIS column, after this version's columns
        if [tuple(r) for r in found] != columns:
            want = ", ".join(f"{c} {t}" for c, t in columns)
            have = ", ".join(f"{c} {t}" for c, t in found)
            raise PostgresError(
                f"table {name} in {target.shown()} does not match this version's schema"
                f" (expected: {want}; found: {have}): drop or rename it, or use another database"
            )
        unique = conn.execute(
            "SELECT array_agg(a.attname::text ORDER BY k.n) FROM pg_index i"
            " CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)"
            " JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum"
            " WHERE i.indrelid = %s::regclass AND i.indisunique GROUP BY i.indexrelid",
            (name,),
        ).fetchall()
        if not any(tuple(r[0]) == key for r in unique):
            raise PostgresError(
                f"table {name} in {target.shown()} has no unique key on ({', '.join(key)}),"
                " which its writes merge on: drop or rename it, or use another database"
            )


def first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


# -- runs -----------------------------------------------------------------------------------------


def start_run(target: Target, source: str) -> str:
    """A row in ais_runs for a run that starts now; returns its id."""
    run_id = str(uuid.uuid4())
    with connect(target) as conn:
        conn.execute(
            f"INSERT INTO {RUNS} (run_id, started_at, source) VALUES (%s, now(), %s)",
            (run_id, source),
        )
    return run_id


def finish_run(target: Target, run_id: str, summary: Mapping[str, object] | None) -> None:
    """The run's end, with the summary of a file run."""
    with connect(target) as conn:
        conn.execute(
            f"UPDATE {RUNS} SET finished_at = now(), summary = %s::json WHERE run_id = %s",
            (None if summary is None else json.dumps(summary), run_id),
        )


# -- reading the tables back ----------------------------------------------------------------------


def _iso(value: datetime) -> str:
    from ais_pipeline.rules.outputs import iso_ms

    utc = value.astimezone(UTC)
    return iso_ms(calendar.timegm(utc.utctimetuple()) * 1000 + utc.microsecond // 1000)


def _record(table: Table, row: Mapping[str, Any]) -> dict[str, object]:
    """A row as the JSON record the files hold for it (the same fields and values)."""
    record: dict[str, object] = {}
    for column in table.columns:
        value = row[column.name]
        if isinstance(value, uuid.UUID):
            value = str(value)
        elif isinstance(value, datetime):
            value = _iso(value)
        if column.field == "*":
            record.update(value)
        elif column.field in table.absent_when_null and value is None:
            continue  # the record's JSON leaves it out
        else:
            record[column.field] = value
    return record


def read_outputs(target: Target, outputs: tuple[str, ...] = tuple(TABLES)) -> dict[str, list[dict[str, object]]]:
    """Every row of the outputs' tables, as records, ordered by their key."""
    from psycopg.rows import dict_row

    found: dict[str, list[dict[str, object]]] = {}
    with connect(target) as conn:
        for output in outputs:
            table = TABLES[output]
            cur = conn.cursor(row_factory=dict_row)
            rows = cur.execute(
                f"SELECT {', '.join(c.name for c in table.columns)} FROM {table.name} ORDER BY {', '.join(table.key)}"
            ).fetchall()
            found[output] = [_record(table, r) for r in rows]
    return found


def latest_run_summary(target: Target) -> dict[str, object] | None:
    """The summary of the newest finished run with one, if any."""
    with connect(target) as conn:
        row = conn.execute(
            f"SELECT summary FROM {RUNS} WHERE summary IS NOT NULL ORDER BY finished_at DESC LIMIT 1"
        ).fetchone()
    return None if row is None else dict(row[0])
