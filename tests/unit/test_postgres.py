"""The PostgreSQL outputs' rules without a server: the URL and where the password comes from, the
statements each table's sink runs, the one-line connection errors, and the records' stable ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ais_pipeline import postgres
from ais_pipeline.config import ConfigError, PipelineConfig, parse_config
from ais_pipeline.files import read_lines
from ais_pipeline.rules import outputs
from ais_pipeline.rules.outputs import record_id
from ais_pipeline.rules.plain import run_plain

pytestmark = pytest.mark.unit

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_the_url_gives_the_target_and_the_password_comes_from_url_file_or_pgpassword(tmp_path: Path):
    target = postgres.parse_url("postgresql://ais:s%40cret@db.example:6543/traffic?sslmode=require", environ={})
    assert (target.host, target.port, target.database, target.user, target.password, target.sslmode) == (
        "db.example", 6543, "traffic", "ais", "s@cret", "require",
    )  # fmt: skip
    assert target.jdbc_url() == "jdbc:postgresql://db.example:6543/traffic?sslmode=require"
    assert target.shown() == "postgresql://ais@db.example:6543/traffic"
    assert "s@cret" not in repr(target) and "cret" not in target.jdbc_url()
    secret = tmp_path / "pw"
    secret.write_text("from-file\n")
    assert postgres.parse_url("postgres://ais@h/db", str(secret), {"PGPASSWORD": "env"}).password == "from-file"
    assert postgres.parse_url("postgres://ais@h/db", "", {"PGPASSWORD": "env"}).password == "env"
    assert postgres.parse_url("postgres://ais:url@h/db", str(secret), {"PGPASSWORD": "env"}).port == 5432


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://a@h/db", "--postgres (POSTGRES_URL): expected postgresql://user:password@host:port/database"),
        ("postgresql://h/db", "--postgres (POSTGRES_URL): expected postgresql://user:password@host:port/database"
         " (user, host and database)"),
        ("postgresql://a@h:port/db", "--postgres (POSTGRES_URL): the port is not a number"),
        ("postgresql://a@h/db?user=b", "--postgres (POSTGRES_URL): unknown URL parameter 'user' (only sslmode)"),
    ],
)  # fmt: skip
def test_a_bad_url_is_a_one_line_error_naming_the_flag(url: str, message: str):
    with pytest.raises(ConfigError) as err:
        parse_config(["--postgres", url], {})
    assert str(err.value) == message


def test_the_flags_and_environment_of_the_postgres_outputs():
    config = parse_config(["--postgres-batch-size", "50"], {"POSTGRES_URL": "postgresql://u:p@h:1/d"})
    assert config.postgres == postgres.Target("h", 1, "d", "u", "p")
    assert (config.postgres_batch_size, config.postgres_batch_interval_ms, config.postgres_retries) == (50, 500, 5)
    assert "'p'" not in repr(config)
    assert PipelineConfig().postgres is None
    with pytest.raises(ConfigError, match=r"^--postgres-batch-size \(POSTGRES_BATCH_SIZE\): must be at least 1"):
        parse_config(["--postgres-batch-size", "0"], {})


def test_each_table_merges_on_its_key_and_only_a_newer_firing_of_the_same_window_replaces_an_aggregate():
    assert postgres.TABLES["dead_letter"].statement() == (
        "INSERT INTO ais_dead_letter AS t (id, reason, receiver, detail, raw)"
        " VALUES (?::uuid, ?::text, ?::text, ?::text, ?::text) ON CONFLICT (id) DO NOTHING"
    )
    assert postgres.TABLES["aggregates"].statement() == (
        "INSERT INTO ais_aggregates AS t (window_kind, cell, window_start, window_end, reports, vessels, avg_sog,"
        " revision, vessel_hours, by_type, window_seconds, slide_seconds, geohash_precision, sog_sum, sog_reports)"
        " VALUES (?::text, ?::text, ?::timestamp with time zone,"
        " ?::timestamp with time zone, ?::integer, ?::integer, ?::double precision, ?::integer,"
        " ?::double precision, ?::jsonb, ?::integer, ?::integer, ?::smallint, ?::double precision, ?::integer)"
        " ON CONFLICT (window_kind, window_seconds, slide_seconds, geohash_precision, cell, window_start)"
        " DO UPDATE SET window_end = EXCLUDED.window_end, reports = EXCLUDED.reports, vessels = EXCLUDED.vessels,"
        " avg_sog = EXCLUDED.avg_sog, revision = EXCLUDED.revision, vessel_hours = EXCLUDED.vessel_hours,"
        " by_type = EXCLUDED.by_type, sog_sum = EXCLUDED.sog_sum, sog_reports = EXCLUDED.sog_reports"
        " WHERE (t.reports, coalesce(t.vessel_hours, -1), t.revision)"
        " < (EXCLUDED.reports, coalesce(EXCLUDED.vessel_hours, -1), EXCLUDED.revision)"
    )
    assert postgres.TABLES["static"].fields == ["id", "mmsi", "msg_type", "timestamp", "receiver", "*"]
    assert postgres.TABLES["late"].fields[-1] == "window"


def test_every_table_of_the_schema_file_is_one_the_sinks_write_the_withdrawn_ids_or_the_runs_table():
    schema = postgres.SCHEMA.read_text()
    created = [line.split()[5] for line in schema.splitlines() if line.startswith("CREATE TABLE IF NOT EXISTS")]
    assert created == [*(t.name for t in postgres.TABLES.values()), postgres.WITHDRAWN, postgres.RUNS]


@pytest.mark.parametrize(
    ("message", "said"),
    [
        ('connection failed: connection to server at "127.0.0.1", port 1 failed: FATAL:  password authentication'
         ' failed for user "ais"', 'password authentication failed for user "ais"'),
        ('connection failed: connection to server at "127.0.0.1", port 1 failed: Connection refused\n\tIs the'
         " server running on that host and accepting TCP/IP connections?",
         "connection refused (is the server running, on that host and port?)"),
        ("connection timeout expired", "no answer within 5 s (is the host right, and reachable?)"),
    ],
)  # fmt: skip
def test_connection_failures_are_said_in_a_few_words(message: str, said: str):
    assert postgres.connect_failure(message) == said


def test_a_record_id_is_the_name_based_uuid_java_makes_of_the_same_name():
    # java.util.UUID.nameUUIDFromBytes of the same name, in jshell:
    # "positions\u001f244660000\u001f13aG?i0P00PD;88MD5MTDww@2D7k,0\u001f1668045600000"
    assert record_id("positions", 244660000, "13aG?i0P00PD;88MD5MTDww@2D7k,0", 1668045600000) == (
        "4a6c73c4-88ed-30f8-b0e2-1fa721912543"
    )


def test_kept_records_have_ids_unique_in_a_run_and_the_same_in_every_run():
    config = PipelineConfig(input_path=FIXTURES / "libais__tagblock.nmea")
    lines = list(read_lines(config.input_path))
    first, again = run_plain(config, lines), run_plain(config, lines)
    for name in ("positions", "static", "late", "dead_letter"):
        ids = [json.loads(r)["id"] for r in getattr(first, name)]
        assert ids == [json.loads(r)["id"] for r in getattr(again, name)], name
        if name != "dead_letter":  # the same bad line twice is one dead letter in a store
            assert len(set(ids)) == len(ids), name
    assert first.positions, "the fixture has positions"


def test_the_config_the_python_operators_pickle_holds_no_credentials():
    config = parse_config(["--postgres", "postgresql://u:s3cret@h/d"], {"KAFKA_CLIENT_SASL_PASSWORD": "k4fka"})
    assert config.postgres is not None and config.kafka_properties == {"sasl.password": "k4fka"}
    clean = config.without_secrets()
    assert clean.postgres is None and clean.kafka_properties == {}
    assert clean.parallelism == config.parallelism and clean.window_s == config.window_s


def test_a_password_only_in_the_url_is_flagged_for_a_warning():
    assert postgres.parse_url("postgresql://u:pw@h/d", environ={}).password_in_url
    assert not postgres.parse_url("postgresql://u@h/d", environ={"PGPASSWORD": "pw"}).password_in_url


def test_an_aggregate_of_an_earlier_versions_files_gets_its_windows_key():
    old = (
        '{"window":"sliding","cell":"u4pruy","window_start":"2022-11-10T01:46:00.000Z",'
        '"window_end":"2022-11-10T02:01:00.000Z","reports":3,"vessels":1,"avg_sog":10.5,"revision":0}'
    )
    assert outputs.with_window_key(old, 60) == (
        '{"window":"sliding","window_seconds":900,"slide_seconds":60,"precision":6,"cell":"u4pruy",'
        '"window_start":"2022-11-10T01:46:00.000Z","window_end":"2022-11-10T02:01:00.000Z","reports":3,'
        '"vessels":1,"avg_sog":10.5,"revision":0}'
    )
    tumbling = old.replace("sliding", "tumbling").replace("01:46", "02:00")
    assert '"window_seconds":60,"slide_seconds":60,"precision":6' in outputs.with_window_key(tumbling, 300)
    current = outputs.with_window_key(old, 60)
    assert outputs.with_window_key(current, 300) == current
