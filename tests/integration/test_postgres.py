"""The PostgreSQL outputs on a real server (scripts/postgres.sh, started by the tests): a file run
into the tables holds exactly its files' outputs, a second run of the same input changes no row,
a higher revision replaces an aggregate's row and an older one does not, Kafka in and PostgreSQL
out survive a killed TaskManager and a restarted database with the tables of the uninterrupted
run, and bad conditions are one-line errors before any JVM starts, with the password nowhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ais_pipeline import postgres
from ais_pipeline.config import SAMPLE_INPUT
from ais_pipeline.files import read_records
from ais_pipeline.pipeline.ports import unused_port
from ais_pipeline.rules.outputs import OUTPUTS, final_aggregates
from tests.support.kafka import (
    replay_feed,
    submit_bounded,
    wait_for_state,
    wait_until_midstream,
    wait_until_only_live_taskmanagers,
)
from tests.support.servers import CLUSTER, ROOT, TASKMANAGERS, PostgresServer
from tests.support.web import assert_on_no_page

pytestmark = pytest.mark.integration

TABLE_NAMES = [postgres.TABLES[name].name for name in OUTPUTS]


def cli(*args: str, env: dict[str, str] | None = None, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "ais_pipeline.cli", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env)


def canonical(records: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in records)


def as_stored(directory: Path, revisions: bool = True) -> dict[str, list[str]]:
    """What a store that merges on the outputs' keys holds of an output directory: each record
    once by its id, each aggregate at its highest revision (without the revision number when
    ``revisions`` is False: how many firings a window had depends on timing)."""
    held: dict[str, list[str]] = {}
    for name in OUTPUTS:
        records = read_records(directory / name)
        if name == "aggregates":
            records = list(final_aggregates(records).values())
            if not revisions:
                records = [{k: v for k, v in r.items() if k != "revision"} for r in records]
        else:
            records = list({r["id"]: r for r in records}.values())
        held[name] = canonical(records)
    return held


def in_tables(target: postgres.Target, revisions: bool = True) -> dict[str, list[str]]:
    tables = postgres.read_outputs(target)
    if not revisions:
        tables["aggregates"] = [{k: v for k, v in r.items() if k != "revision"} for r in tables["aggregates"]]
    return {name: canonical(records) for name, records in tables.items()}


def every_row(target: postgres.Target) -> dict[str, list[tuple[Any, ...]]]:
    """Every column of every row of the outputs' tables."""
    with postgres.connect(target) as conn:
        return {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2, 3").fetchall() for t in TABLE_NAMES}


def test_a_file_run_into_postgres_holds_its_outputs_and_a_second_run_changes_no_row(
    postgres_server: PostgresServer, tmp_path: Path
):
    target = postgres_server.create_database("file_run")
    password = postgres_server.password
    url = postgres_server.url("file_run").replace("ais@", f"ais:{password}@")
    first = cli("run", "--output", str(tmp_path / "first"), "--postgres", url, "--no-wait", "--web-ui-port", "0")
    assert first.returncode == 0, first.stderr[-3000:]
    assert in_tables(target) == as_stored(tmp_path / "first")
    rows = every_row(target)
    assert [len(rows[t]) for t in TABLE_NAMES] == [7294, 926, 99671, 230, 1, 0, 0, 3, 0, 0]
    # Late reports, vessel time and judged positions fired windows again: those rows hold their
    # last firing.
    with postgres.connect(target) as conn:
        assert conn.execute("SELECT max(revision), count(*) FROM ais_aggregates WHERE revision > 0").fetchone() == (
            31,
            702,
        )

    # PostGIS (scripts/postgres.sh installs it): positions and cells answer a spatial query
    # about a box (the Persian Gulf) as the files do.
    assert "PostGIS" not in first.stderr
    assert in_box_of_tables(target) == in_box_of_files(tmp_path / "first")

    # The report drawn from the tables is the report of the run's files.
    pg_env = dict(os.environ, PGPASSWORD=password)
    assert cli("report", str(tmp_path / "first")).returncode == 0
    from_db = cli("report", str(tmp_path / "db-report"), "--postgres", postgres_server.url("file_run"), env=pg_env)
    assert from_db.stdout.strip() == f"report in {tmp_path / 'db-report'}/index.html", from_db.stderr[-2000:]
    for name in ("index.html", "density.png", "types.png", "duplicates.png"):
        assert (tmp_path / "db-report" / name).read_bytes() == (tmp_path / "first" / "report" / name).read_bytes()

    second = cli("run", "--output", str(tmp_path / "second"), "--postgres", url, "--no-wait", "--web-ui-port", "0")
    assert second.returncode == 0, second.stderr[-3000:]
    assert every_row(target) == rows
    with postgres.connect(target) as conn:
        runs = conn.execute("SELECT source, summary FROM ais_runs ORDER BY started_at").fetchall()
    assert [source for source, _ in runs] == [str(SAMPLE_INPUT)] * 2
    file_summary = json.loads((tmp_path / "first" / "summary.json").read_text())
    assert [s["positions_kept"] for _, s in runs] == [7294, 7294]
    assert {k: v for k, v in runs[0][1].items() if k != "seconds"} == {
        k: v for k, v in file_summary.items() if k != "seconds"
    }
    for done in (first, second):
        assert password not in done.stdout + done.stderr
    assert "outputs also into PostgreSQL postgresql://ais@127.0.0.1:" in first.stderr
    assert "warning: the password in the --postgres URL is visible to other users" in first.stderr


BOX = (48.0, 23.0, 57.0, 30.0)  # lon, lat, lon, lat: the Persian Gulf, busy in the sample


def in_box_of_tables(target: postgres.Target) -> tuple[int, list[str], float]:
    """Positions in the box, the cells of final tumbling aggregates that intersect it, and their
    vessel hours, by PostGIS."""
    envelope = "ST_MakeEnvelope(%s, %s, %s, %s, 4326)"
    with postgres.connect(target) as conn:
        (positions,) = conn.execute(
            f"SELECT count(*) FROM ais_positions WHERE ST_Intersects(geom, {envelope})", BOX
        ).fetchone()
        cells = conn.execute(
            "SELECT cell, sum(vessel_hours) FROM ais_aggregates"
            f" WHERE window_kind = 'tumbling' AND ST_Intersects(cell_geom, {envelope}) GROUP BY cell ORDER BY cell",
            BOX,
        ).fetchall()
    return positions, [c for c, _ in cells], round(sum(h for _, h in cells), 6)


def in_box_of_files(directory: Path) -> tuple[int, list[str], float]:
    """The same from the output files, with the geohash boxes decoded in Python."""
    import pygeohash

    lon0, lat0, lon1, lat1 = BOX
    positions = sum(
        1 for p in read_records(directory / "positions") if lon0 <= p["lon"] <= lon1 and lat0 <= p["lat"] <= lat1
    )
    hours: dict[str, float] = {}
    for (window, cell, _), a in final_aggregates(read_records(directory / "aggregates")).items():
        lat, lon, dlat, dlon = pygeohash.decode_exactly(cell)
        if (
            window == "tumbling"
            and lon - dlon <= lon1
            and lon + dlon >= lon0
            and lat - dlat <= lat1
            and lat + dlat >= lat0
        ):
            hours[cell] = hours.get(cell, 0.0) + float(a["vessel_hours"])
    return positions, sorted(hours), round(sum(hours.values()), 6)


def aggregate(revision: int, reports: int) -> dict[str, Any]:
    return {
        "window": "tumbling",
        "window_seconds": 60,
        "slide_seconds": 60,
        "precision": 6,
        "cell": "u4pruy",
        "window_start": "2022-11-10T02:00:00.000Z",
        "window_end": "2022-11-10T02:01:00.000Z",
        "reports": reports,
        "vessels": 1,
        "avg_sog": 10.5 if reports else None,
        "sog_sum": 10.5 * reports,
        "sog_reports": reports,
        "vessel_hours": 0.0,
        "by_type": {"unknown": {"vessels": 1, "reports": reports, "vessel_hours": 0.0}} if reports else {},
        "revision": revision,
    }


def load(
    server: PostgresServer, database: str, directory: Path, records: list[dict[str, Any]], output: str = "aggregates"
) -> None:
    (directory / output).mkdir(parents=True, exist_ok=True)
    (directory / output / "part-0.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    env = dict(os.environ, PGPASSWORD=server.password)
    done = cli("load", str(directory), "--postgres", server.url(database), env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == f"loaded {directory} into {server.url(database)}"


def test_a_geoparquet_run_loads_into_postgres_as_its_records_are(postgres_server: PostgresServer, tmp_path: Path):
    out = tmp_path / "geoparquet"
    run = cli("run", "--output", str(out), "--output-format", "geoparquet", "--no-wait", "--web-ui-port", "0")
    assert run.returncode == 0, run.stderr[-3000:]
    assert not list(out.glob("*/*.jsonl"))
    target = postgres_server.create_database("geoparquet_load")
    env = dict(os.environ, PGPASSWORD=postgres_server.password)
    done = cli("load", str(out), "--postgres", postgres_server.url("geoparquet_load"), env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert in_tables(target) == as_stored(out)
    assert [len(rows) for rows in every_row(target).values()] == [7294, 926, 99671, 230, 1, 0, 0, 3, 0, 0]


def test_a_later_firing_replaces_an_aggregate_row_and_an_older_revision_never_does(
    postgres_server: PostgresServer, tmp_path: Path
):
    target = postgres_server.create_database("revisions")
    load(postgres_server, "revisions", tmp_path / "a", [aggregate(0, 3)])
    assert postgres.read_outputs(target, ("aggregates",))["aggregates"] == [aggregate(0, 3)]
    # A file of an earlier version (no window size, slide or precision) loads as one of this one.
    earlier = {k: v for k, v in aggregate(0, 3).items() if k not in ("window_seconds", "slide_seconds", "precision")}
    load(postgres_server, "revisions", tmp_path / "a0", [earlier])
    assert postgres.read_outputs(target, ("aggregates",))["aggregates"] == [aggregate(0, 3)]
    # A late report fired the window again: revision 1 replaces the row.
    load(postgres_server, "revisions", tmp_path / "b", [aggregate(1, 4)])
    assert postgres.read_outputs(target, ("aggregates",))["aggregates"] == [aggregate(1, 4)]
    # The older firing arriving again (a replay, a restore), alone or after a newer one, changes nothing.
    load(postgres_server, "revisions", tmp_path / "c", [aggregate(0, 3)])
    load(postgres_server, "revisions", tmp_path / "d", [aggregate(2, 5), aggregate(1, 4)])
    assert postgres.read_outputs(target, ("aggregates",))["aggregates"] == [aggregate(2, 5)]
    # After a restore the firings may be numbered anew: a revision 2 with more reports is newer.
    load(postgres_server, "revisions", tmp_path / "e", [aggregate(2, 6), aggregate(1, 5)])
    assert postgres.read_outputs(target, ("aggregates",))["aggregates"] == [aggregate(2, 6)]


def test_an_aggregates_table_made_before_vessel_hours_gets_their_columns_and_keeps_its_rows(
    postgres_server: PostgresServer,
):
    target = postgres_server.create_database("before_hours")
    with postgres.connect(target) as conn:
        conn.execute(
            "CREATE TABLE ais_aggregates (window_kind text NOT NULL, cell text NOT NULL,"
            " window_start timestamptz NOT NULL, window_end timestamptz NOT NULL, reports integer NOT NULL,"
            " vessels integer NOT NULL, avg_sog double precision, revision integer NOT NULL,"
            " PRIMARY KEY (window_kind, cell, window_start))"
        )
        conn.execute("INSERT INTO ais_aggregates VALUES ('tumbling', 'u4pruy', now(), now(), 3, 1, 10.5, 0)")
    postgres.prepare(target)
    postgres.prepare(target)  # a second start changes nothing
    with postgres.connect(target) as conn:
        columns = conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'ais_aggregates'"
            " ORDER BY ordinal_position"
        ).fetchall()
        row = conn.execute(
            "SELECT reports, vessel_hours, by_type, ST_Within(cell_geom, ST_MakeEnvelope(10, 57, 11, 58, 4326))"
            " FROM ais_aggregates"
        ).fetchone()
    assert [c for (c,) in columns][-8:] == [
        "vessel_hours", "by_type", "window_seconds", "slide_seconds", "geohash_precision", "sog_sum", "sog_reports",
        "cell_geom",
    ]  # fmt: skip
    assert row == (3, None, None, True)  # u4pruy: the Skagerrak, 57.6 N 10.4 E


def primary_key(conn: Any) -> list[str]:
    (key,) = conn.execute(
        "SELECT array_agg(a.attname::text ORDER BY k.n) FROM pg_index i"
        " CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)"
        " JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum"
        " WHERE i.indrelid = 'ais_aggregates'::regclass AND i.indisprimary"
    ).fetchone()
    return list(key)


def test_an_aggregates_table_keyed_without_the_window_size_gets_the_windows_key_from_its_rows(
    postgres_server: PostgresServer,
):
    # As the previous version made it (with PostGIS): keyed on (window_kind, cell, window_start).
    target = postgres_server.create_database("before_window_key")
    with postgres.connect(target) as conn:
        conn.execute("CREATE EXTENSION postgis")
        conn.execute(
            "CREATE TABLE ais_aggregates (window_kind text NOT NULL, cell text NOT NULL,"
            " window_start timestamptz NOT NULL, window_end timestamptz NOT NULL, reports integer NOT NULL,"
            " vessels integer NOT NULL, avg_sog double precision, revision integer NOT NULL,"
            " vessel_hours double precision, by_type jsonb, PRIMARY KEY (window_kind, cell, window_start))"
        )
        conn.execute(
            "ALTER TABLE ais_aggregates ADD COLUMN cell_geom geometry(Polygon, 4326)"
            " GENERATED ALWAYS AS (ST_GeomFromGeoHash(cell)) STORED"
        )
        for kind, start, end in [
            ("tumbling", "2022-11-10T02:00:00Z", "2022-11-10T02:05:00Z"),
            ("sliding", "2022-11-10T01:50:00Z", "2022-11-10T02:05:00Z"),
            ("sliding", "2022-11-10T01:55:00Z", "2022-11-10T02:10:00Z"),
        ]:
            conn.execute(
                "INSERT INTO ais_aggregates (window_kind, cell, window_start, window_end, reports, vessels, revision)"
                " VALUES (%s, 'u4pruy', %s, %s, 3, 1, 0)",
                (kind, start, end),
            )
    postgres.prepare(target)
    postgres.prepare(target)  # a second start changes nothing
    with postgres.connect(target) as conn:
        rows = conn.execute(
            "SELECT window_kind, window_seconds, slide_seconds, geohash_precision, cell_geom IS NOT NULL, sog_sum"
            " FROM ais_aggregates ORDER BY window_kind, window_start"
        ).fetchall()
        key = primary_key(conn)
    # The size from start and end, the slide from the steps between the sliding windows' starts;
    # SOG sums unknown (null).
    assert rows == [
        ("sliding", 900, 300, 6, True, None),
        ("sliding", 900, 300, 6, True, None),
        ("tumbling", 300, 300, 6, True, None),
    ]
    assert key == ["window_kind", "window_seconds", "slide_seconds", "geohash_precision", "cell", "window_start"]


def test_runs_with_other_windows_into_one_database_keep_each_others_rows(
    postgres_server: PostgresServer, fixtures: Path, tmp_path: Path
):
    target = postgres_server.create_database("two_windows")
    env = dict(os.environ, PGPASSWORD=postgres_server.password)
    finals = {}
    for window in ("60", "300"):
        out = tmp_path / window
        done = cli(
            "run", "--input", str(fixtures / "aisnet__Ais1000Lines.nm4"), "--output", str(out), "--window", window,
            "--web-ui-port", "0", "--postgres", postgres_server.url("two_windows"), env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        finals[window] = final_aggregates(read_records(out / "aggregates"))
    stored = postgres.read_outputs(target, ("aggregates",))["aggregates"]
    by_size: dict[int, int] = {}
    for a in stored:
        if a["window"] == "tumbling":
            by_size[int(a["window_seconds"])] = by_size.get(int(a["window_seconds"]), 0) + 1  # type: ignore[call-overload]
    tumbling = {w: sum(1 for (kind, _, _) in f if kind == "tumbling") for w, f in finals.items()}
    assert by_size == {60: tumbling["60"], 300: tumbling["300"]}
    # Both runs' sliding windows (900 s every 60 s) are the same windows: one row each.
    sliding = [a for a in stored if a["window"] == "sliding"]
    assert len(sliding) == sum(1 for (kind, _, _) in finals["60"] if kind == "sliding")


def test_a_dead_letter_with_a_nul_is_stored_with_a_replacement_character(postgres_server: PostgresServer, tmp_path):
    target = postgres_server.create_database("nul")
    dead = {"id": "5f0c3c8e-2f59-3a7c-9d39-0b4c8c3f6a11", "raw": "!AIVDM\u0000x", "reason": "not_text"}
    load(postgres_server, "nul", tmp_path / "a", [dead], output="dead_letter")
    assert postgres.read_outputs(target, ("dead_letter",))["dead_letter"] == [dict(dead, raw="!AIVDM\ufffdx")]


def test_bad_conditions_are_one_line_errors_within_seconds_and_the_password_is_never_shown(
    postgres_server: PostgresServer, tmp_path: Path
):
    wrong = "not-the-password-4711"
    free = unused_port()
    env = dict(os.environ, PGPASSWORD=postgres_server.password)
    mismatched = postgres_server.create_database("mismatched")
    with postgres.connect(mismatched) as conn:
        conn.execute("CREATE TABLE ais_positions (id uuid PRIMARY KEY, mmsi bigint)")
    cases = [
        (
            postgres_server.url("ais").replace("ais@", f"ais:{wrong}@"),
            f'PostgreSQL at {postgres_server.url("ais")}: password authentication failed for user "ais"',
        ),
        (
            f"postgresql://ais:{wrong}@127.0.0.1:{free}/ais",
            f"PostgreSQL at postgresql://ais@127.0.0.1:{free}/ais: connection refused"
            " (is the server running, on that host and port?)",
        ),
        (
            postgres_server.url("no_such_db"),
            f'PostgreSQL at {postgres_server.url("no_such_db")}: database "no_such_db" does not exist',
        ),
        (
            postgres_server.url("mismatched"),
            f"table ais_positions in {postgres_server.url('mismatched')} does not match this version's schema"
            " (expected: id uuid, mmsi bigint, msg_type smallint, event_time timestamp with time zone, lat double"
            " precision, lon double precision, sog double precision, cog double precision, heading smallint,"
            " receiver text, cell text; found: id uuid, mmsi bigint): drop or rename it, or use another database",
        ),
    ]
    for url, message in cases:
        started = time.monotonic()
        done = cli(
            "run", "--output", str(tmp_path / "out"), "--postgres", url, "--no-wait", "--web-ui-port", "0", env=env
        )
        assert time.monotonic() - started < 15
        assert done.returncode == 2
        assert done.stderr.strip().splitlines() == [f"ais-pipeline: error: {message}"]
        assert wrong not in done.stdout + done.stderr and postgres_server.password not in done.stderr
    # The password from a file works as well as from the URL or PGPASSWORD.
    secret = tmp_path / "pgpass"
    secret.write_text(postgres_server.password + "\n")
    no_password = {k: v for k, v in os.environ.items() if k != "PGPASSWORD"}
    done = cli(
        "load", str(tmp_path / "nothing"), "--postgres", postgres_server.url("ais"), "--postgres-password-file",
        str(secret), env=no_password,
    )  # fmt: skip
    assert done.stderr.strip() == f"ais-pipeline: error: {tmp_path / 'nothing'}: no output directories" + (
        " (positions, static, aggregates, late, dead_letter, bad_fixes, gaps, port_visits, loitering, encounters)"
        " to load"
    )


# -- Kafka in, PostgreSQL out, on the standalone cluster, with failures ---------------------------


def submit_into(server: PostgresServer, database: str, kafka: str, topic: str, name: str) -> str:
    """The bounded Kafka job on the cluster, its outputs into ``database`` too; the password
    reaches the job from PGPASSWORD of the submitting process."""
    os.environ["PGPASSWORD"] = server.password
    try:
        return submit_bounded(kafka, topic, name, "--postgres", server.url(database), "--postgres-retries", "3")
    finally:
        del os.environ["PGPASSWORD"]


@pytest.mark.slow  # a TaskManager killed: test_faults.py; PostgreSQL's own failure: the next test
def test_kafka_into_postgres_with_a_taskmanager_killed_holds_the_uninterrupted_tables(
    cluster: str, kafka: str, postgres_server: PostgresServer, feed: Path, oracle: Path
):
    target = postgres_server.create_database("kafka_kill")
    replay_feed(kafka, "pg-kill", feed)
    job = submit_into(postgres_server, "kafka_kill", kafka, "pg-kill", "pgkill")
    wait_until_midstream(cluster, job)
    assert_on_no_page(cluster, job, postgres_server.password)
    subprocess.run(["bash", str(CLUSTER), "kill-taskmanager"], check=True, capture_output=True)
    subprocess.run(["bash", str(CLUSTER), "add-taskmanager", str(TASKMANAGERS)], check=True, capture_output=True)
    assert wait_for_state(cluster, job, {"FINISHED"}, timeout_s=400) == "FINISHED"
    assert in_tables(target, revisions=False) == as_stored(oracle, revisions=False)
    for log in (ROOT / "log" / "flink").glob("*"):
        assert postgres_server.password not in log.read_text(errors="replace"), log
    wait_until_only_live_taskmanagers(cluster)


def test_kafka_into_postgres_with_the_database_restarted_holds_the_uninterrupted_tables(
    cluster: str, kafka: str, postgres_server: PostgresServer, feed: Path, oracle: Path
):
    target = postgres_server.create_database("kafka_restart")
    replay_feed(kafka, "pg-restart", feed)
    job = submit_into(postgres_server, "kafka_restart", kafka, "pg-restart", "pgrestart")
    wait_until_midstream(cluster, job)
    postgres_server.run("stop")
    time.sleep(5)
    postgres_server.run("start")
    assert wait_for_state(cluster, job, {"FINISHED"}, timeout_s=400) == "FINISHED"
    assert in_tables(target, revisions=False) == as_stored(oracle, revisions=False)


def test_without_postgis_one_line_says_so_and_the_tables_work_without_geometry(
    postgres_server: PostgresServer, fixtures: Path, tmp_path: Path
):
    # A role that may not create the extension (PostGIS is not a trusted extension): a server
    # whose owner did not enable it for you is the same to the job as one without it.
    with postgres.connect(postgres_server.target("ais")) as conn:
        conn.execute("DROP DATABASE IF EXISTS no_postgis WITH (FORCE)")
        conn.execute("DROP ROLE IF EXISTS plain_user")
        conn.execute("CREATE ROLE plain_user LOGIN PASSWORD 'plain-secret'")
        conn.execute("CREATE DATABASE no_postgis OWNER plain_user")
    url = f"postgresql://plain_user@127.0.0.1:{postgres_server.port}/no_postgis"
    env = dict(os.environ, PGPASSWORD="plain-secret")
    out = tmp_path / "out"
    done = cli(
        "run", "--input", str(fixtures / "aisnet__Ais1000Lines.nm4"), "--output", str(out), "--web-ui-port", "0",
        "--postgres", url, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    said = [line for line in done.stderr.splitlines() if "PostGIS" in line]
    assert len(said) == 1 and said[0].startswith(f"PostgreSQL at {url}: PostGIS not enabled ("), said
    assert said[0].endswith("): the tables get no geometry columns") and "plain-secret" not in done.stderr
    target = postgres.parse_url(url, environ={"PGPASSWORD": "plain-secret"})
    with postgres.connect(target) as conn:
        columns = {r[0] for r in conn.execute("SELECT column_name FROM information_schema.columns").fetchall()}
    assert "geom" not in columns and "cell_geom" not in columns
    stored = postgres.read_outputs(target, ("positions", "aggregates"))
    assert len(stored["positions"]) == 743
    assert len(stored["aggregates"]) == len(final_aggregates(read_records(out / "aggregates")))


def test_a_run_on_taskmanagers_of_its_own_writes_postgresql_as_the_mini_cluster_does(
    postgres_server: PostgresServer, fixtures: Path, tmp_path: Path
):
    target = postgres_server.create_database("taskmanagers")
    env = dict(os.environ, PGPASSWORD=postgres_server.password)
    out = tmp_path / "out"
    done = cli(
        "run", "--input", str(fixtures / "aisnet__Ais1000Lines.nm4"), "--output", str(out), "--web-ui-port", "0",
        "--taskmanagers", "2", "--parallelism", "2", "--postgres", postgres_server.url("taskmanagers"), env=env,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert in_tables(target, revisions=False) == as_stored(out, revisions=False)
    assert len(postgres.read_outputs(target, ("positions",))["positions"]) == 743


def test_the_loitering_cases_run_into_postgres_hold_each_events_last_word_and_its_point(
    postgres_server: PostgresServer, tmp_path: Path
):
    from tests.support.loitering_cases import IDLE, STILL, loitering_case_lines

    feed = tmp_path / "loitering.nmea"
    feed.write_text("\n".join(loitering_case_lines()) + "\n")
    target = postgres_server.create_database("loitering")
    url = postgres_server.url("loitering").replace("ais@", f"ais:{postgres_server.password}@")
    done = cli("run", "--input", str(feed), "--output", str(tmp_path / "out"), "--postgres", url, "--no-wait",
               "--web-ui-port", "0", "--windows", "tumbling")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert in_tables(target)["loitering"] == as_stored(tmp_path / "out")["loitering"]
    with postgres.connect(target) as conn:
        rows = conn.execute(
            "SELECT mmsi, open, published, round(ST_X(geom)::numeric, 6) = round(lon::numeric, 6)"
            " FROM ais_loitering ORDER BY mmsi"
        ).fetchall()
    assert rows == [(IDLE, False, True, True), (STILL, True, True, True)]


def test_the_encounter_cases_run_into_postgres_at_parallelism_2_hold_each_encounters_last_word_and_its_point(
    postgres_server: PostgresServer, tmp_path: Path
):
    from tests.support.encounter_cases import MEET, TWICE, encounter_case_lines

    feed = tmp_path / "encounters.nmea"
    feed.write_text("\n".join(encounter_case_lines()) + "\n")
    target = postgres_server.create_database("encounters")
    url = postgres_server.url("encounters").replace("ais@", f"ais:{postgres_server.password}@")
    done = cli("run", "--input", str(feed), "--output", str(tmp_path / "out"), "--postgres", url, "--no-wait",
               "--web-ui-port", "0", "--windows", "tumbling", "--parallelism", "2")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert in_tables(target)["encounters"] == as_stored(tmp_path / "out")["encounters"]
    with postgres.connect(target) as conn:
        rows = conn.execute(
            "SELECT mmsi_1, mmsi_2, ship_type_1, ship_type_2, open, published, hours,"
            " round(ST_X(geom)::numeric, 6) = round(lon::numeric, 6) FROM ais_encounters ORDER BY 1"
        ).fetchall()
    assert rows == [
        (*sorted(MEET), "fishing", "cargo", False, True, 3.0, True),
        (*sorted(TWICE), "fishing", "cargo", False, True, 8.0, True),
    ]
