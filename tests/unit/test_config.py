"""Flags and environment variables: one config object, validated, with one-line errors."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from ais_pipeline.cli import main as cli
from ais_pipeline.config import OUTPUT_KEYS, SAMPLE_INPUT, ConfigError, parse_config

pytestmark = pytest.mark.unit


def test_defaults_are_the_spec_defaults():
    c = parse_config([], environ={})
    assert (c.window_s, c.slide_size_s, c.slide_s, c.lateness_s) == (60, 900, 60, 120)
    assert (c.out_of_orderness_s, c.idle_timeout_s, c.dedup_ttl_s, c.near_window_s) == (10, 30, 120, 2.0)
    assert (c.static_ttl_s, c.geohash_precision, c.max_clock_skew_s, c.input_format) == (86400, 6, 300, "auto")
    assert c.input_path == SAMPLE_INPUT and c.output_dir is None and c.pane_ms == 60_000


def test_environment_fills_in_and_a_flag_wins():
    env = {"WINDOW_SECONDS": "30", "ALLOWED_LATENESS_SECONDS": "60", "GEOHASH_PRECISION": "5"}
    c = parse_config([], environ=env)
    assert (c.window_s, c.lateness_s, c.geohash_precision, c.pane_ms) == (30, 60, 5, 30_000)
    assert parse_config(["--window", "120"], environ=env).window_s == 120


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--window", "-5"], "--window (WINDOW_SECONDS): must be a positive number of seconds, not -5"),
        (["--slide", "70"], "--slide (SLIDE_SECONDS): 70 s does not divide the sliding window size 900 s"),
        (["--geohash-precision", "13"], "--geohash-precision (GEOHASH_PRECISION): must be between 1 and 12, not 13"),
        (["--input", "/no/such/file"], "--input: no such file or directory: /no/such/file"),
        (["--window", "abc"], "--window: expected int, got 'abc'"),
        (
            ["--input-format", "csv"],
            "--input-format (INPUT_FORMAT): must be one of auto, nmea, json, aiscatcher, gpsd, aisstream, gpsdio,"
            " noaa, dma, not 'csv'",
        ),
        (["--lanes", "many"], "--lanes (LANES): must be one of one, per-file, not 'many'"),
        (
            ["--taskmanagers", "2", "--parallelism", "3"],
            "--taskmanagers (TASKMANAGERS): 2 TaskManagers of one slot run at most --parallelism 2, not 3",
        ),
        (["--taskmanagers", "-1"], "--taskmanagers (TASKMANAGERS): must be between 0 and 64, not -1"),
        (
            ["--lanes", "per-file", "--lane-drift", "0"],
            "--lane-drift (LANE_DRIFT_SECONDS): must be a positive number of seconds, not 0",
        ),
        (
            ["--lanes", "per-file", "--input", "udp://127.0.0.1:10110"],
            "--lanes: a live feed (--input URL) is one lane; --lanes per-file is for files",
        ),
        (
            ["--source", "kafka", "--lanes", "per-file"],
            "--lanes: only a file run uses it; this one reads Kafka (--source kafka)",
        ),
        (
            ["--output", "out", "--output-format", "parquet"],
            "--output-format (OUTPUT_FORMAT): must be jsonl, geoparquet or jsonl,geoparquet, not 'parquet'",
        ),
        (
            ["--output", "out", "--output-format", "geoparquet,geoparquet"],
            "--output-format (OUTPUT_FORMAT): must be jsonl, geoparquet or jsonl,geoparquet, not"
            " 'geoparquet,geoparquet'",
        ),
        (
            ["--output-format", "geoparquet"],
            "--output-format (OUTPUT_FORMAT): only a run with --output writes files",
        ),
        (
            ["--source", "kafka", "--output", "out", "--output-format", "geoparquet"],
            "--output-format (OUTPUT_FORMAT): a Kafka run's outputs are topics; --output-format is for files",
        ),
        (
            ["--dynamodb-table", "t", "--region", "eu-west-1", "--dynamodb-windows", "hourly"],
            "--dynamodb-windows (DYNAMODB_WINDOWS): must be all, tumbling, sliding or tumbling,sliding, not 'hourly'",
        ),
        (
            [
                "--dynamodb-table",
                "t",
                "--region",
                "eu-west-1",
                "--windows",
                "tumbling",
                "--dynamodb-windows",
                "sliding",
            ],
            "--dynamodb-windows (DYNAMODB_WINDOWS): sliding windows are not computed (--windows tumbling)",
        ),
        (
            ["--bind-address", "everywhere"],
            "--bind-address (BIND_ADDRESS): must be an IP address (127.0.0.1, 0.0.0.0, ...), not 'everywhere'",
        ),
    ],
)
def test_bad_flags_get_one_line_naming_the_flag(argv, message, capsys):
    with pytest.raises(ConfigError, match="^" + message.replace("(", r"\(").replace(")", r"\)") + "$"):
        parse_config(argv, environ={})
    assert cli(["run", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"ais-pipeline: error: {message}"]


def test_bad_environment_variable_is_named():
    with pytest.raises(ConfigError, match=r"^GEOHASH_PRECISION: expected int, got 'six'$"):
        parse_config([], environ={"GEOHASH_PRECISION": "six"})


def test_input_that_is_a_pipe_gets_a_one_line_error(tmp_path: Path, capsys):
    fifo = tmp_path / "lines"
    os.mkfifo(fifo)
    assert cli(["run", "--input", str(fifo)]) == 2
    message = f"--input: not a regular file or directory: {fifo} (write the lines to a file first)"
    assert capsys.readouterr().err.strip().splitlines() == [f"ais-pipeline: error: {message}"]


def test_the_output_formats_are_json_lines_by_default_and_geoparquet_or_both_on_request():
    assert parse_config([], environ={}).output_formats == ("jsonl",)
    formats = {
        given: parse_config(["--output", "out", "--output-format", given], environ={}).output_formats
        for given in ("geoparquet", "geoparquet,jsonl", "jsonl,geoparquet")
    }
    assert formats == {
        "geoparquet": ("geoparquet",),
        "geoparquet,jsonl": ("jsonl", "geoparquet"),
        "jsonl,geoparquet": ("jsonl", "geoparquet"),
    }
    assert parse_config(["--output", "out"], environ={"OUTPUT_FORMAT": "geoparquet"}).output_formats == ("geoparquet",)
    # The variable may be set for every run: a run that writes no files (a Kafka run's outputs are
    # topics; no --output prints a sample) goes on without it. The flag there is an error.
    for argv in ([], ["--source", "kafka", "--output", "out"]):
        assert parse_config(argv, environ={"OUTPUT_FORMAT": "geoparquet"}).output_formats == ("jsonl",)


def test_input_may_be_a_directory(tmp_path: Path):
    assert parse_config(["--input", str(tmp_path)], environ={}).input_path == tmp_path


def test_web_ui_port_in_use_is_a_one_line_error(capsys):
    import socket

    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        assert cli(["run", "--web-ui-port", str(port)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"ais-pipeline: error: --web-ui-port (WEB_UI_PORT): port {port} is in use; pick another, or 0 for a free one"
    ]


def test_kafka_flags_and_environment():
    env = {"KAFKA_BOOTSTRAP_SERVERS": "b1:9092,b2:9093", "KAFKA_TOPIC": "raw", "KAFKA_BOUNDED": "true"}
    c = parse_config(["--source", "kafka", "--starting-offsets", "timestamp:1700000000000"], env)
    assert (c.source, c.bootstrap_servers, c.topic, c.bounded) == ("kafka", "b1:9092,b2:9093", "raw", True)
    assert c.starting_offsets == "timestamp:1700000000000" and c.group_id == "ais-pipeline"
    assert c.output_topics() == {
        "positions": "ais.positions",
        "static": "ais.static",
        "aggregates": "ais.aggregates",
        "late": "ais.late",
        "dead_letter": "ais.dead_letter",
        "bad_fixes": "ais.bad_fixes",
        "gaps": "ais.gaps",
        "port_visits": "ais.port_visits",
        "loitering": "ais.loitering",
        "encounters": "ais.encounters",
    }


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--bootstrap-servers", "localhost"],
            "--bootstrap-servers (KAFKA_BOOTSTRAP_SERVERS): expected host:port, got 'localhost'",
        ),
        (
            ["--starting-offsets", "yesterday"],
            "--starting-offsets (KAFKA_STARTING_OFFSETS): must be earliest, latest, committed or "
            "timestamp:<epoch ms>, not 'yesterday'",
        ),
        (["--source", "socket"], "--source (SOURCE): must be file, kafka or kinesis, not 'socket'"),
        (
            ["--checkpoint-interval", "-1"],
            "--checkpoint-interval (CHECKPOINT_INTERVAL_SECONDS): must be 0 (off) or seconds, not -1",
        ),
    ],
)
def test_bad_kafka_flags_get_one_line_naming_the_flag(argv, message):
    with pytest.raises(ConfigError) as err:
        parse_config(["--source", "kafka", *argv], environ={})
    assert str(err.value) == message


def test_kafka_client_properties_come_from_a_file_and_the_environment_and_never_show(tmp_path: Path):
    props = tmp_path / "client.properties"
    props.write_text(
        "# SASL over TLS\nsecurity.protocol=SASL_SSL\nsasl.mechanism = PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="u" password="s3cret";\n'
    )
    env = {"KAFKA_PROPERTIES_FILE": str(props), "KAFKA_CLIENT_SSL_ENDPOINT_IDENTIFICATION_ALGORITHM": "https"}
    c = parse_config(["--source", "kafka"], environ=env)
    assert c.kafka_properties["security.protocol"] == "SASL_SSL"
    assert c.kafka_properties["sasl.mechanism"] == "PLAIN"
    assert c.kafka_properties["ssl.endpoint.identification.algorithm"] == "https"
    assert "s3cret" in c.kafka_properties["sasl.jaas.config"] and "s3cret" not in repr(c)
    with pytest.raises(ConfigError, match="no such file"):
        parse_config(["--kafka-properties", str(tmp_path / "missing")], environ={})


def test_checkpoint_interval_zero_turns_checkpoints_off_for_a_local_run():
    from ais_pipeline.pipeline.environment import CHECKPOINT_INTERVAL, flink_settings

    assert flink_settings(parse_config([], environ={}))[CHECKPOINT_INTERVAL] == "10s"  # flink-conf/
    assert CHECKPOINT_INTERVAL not in flink_settings(parse_config(["--checkpoint-interval", "0"], environ={}))
    assert flink_settings(parse_config(["--checkpoint-interval", "3"], environ={}))[CHECKPOINT_INTERVAL] == "3s"


def test_a_live_inputs_run_checkpoints_every_five_seconds_unless_set():
    from ais_pipeline.pipeline.environment import CHECKPOINT_INTERVAL, flink_settings

    live = ["--input", "udp://127.0.0.1:10110"]
    assert flink_settings(parse_config(live, environ={}))[CHECKPOINT_INTERVAL] == "5s"
    assert (
        flink_settings(parse_config([*live, "--checkpoint-interval", "20"], environ={}))[CHECKPOINT_INTERVAL] == "20s"
    )


def test_any_input_writes_kafka_with_kafka_output_exactly_once_unless_live_or_asked_otherwise():
    live = parse_config(["--input", "udp://127.0.0.1:10110", "--kafka-output", "--output-topic-prefix", "x."], {})
    assert live.writes_kafka and not live.kafka_exactly_once and live.output_topics()["positions"] == "x.positions"
    # At least once, every record is keyed by its id (a window by its window).
    assert live.output_keys("positions") == ("id",) and live.output_keys("gaps") == ("id",)
    assert live.output_keys("aggregates") == OUTPUT_KEYS["aggregates"]
    asked = parse_config(["--input", "udp://127.0.0.1:10110", "--kafka-output"], {"KAFKA_DELIVERY": "exactly-once"})
    assert asked.kafka_exactly_once and asked.output_keys("positions") == OUTPUT_KEYS["positions"]
    assert parse_config(["--kafka-output"], {}).kafka_exactly_once  # a file
    topic = parse_config(["--source", "kafka", "--kafka-delivery", "at-least-once"], {})
    assert topic.writes_kafka and not topic.kafka_exactly_once
    assert not parse_config([], {"KAFKA_DELIVERY": "at-least-once"}).writes_kafka  # the environment is for every run


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--kafka-delivery", "at-least-once"], "--kafka-delivery: only a run that writes Kafka reads it (--source"
         " kafka, or --kafka-output); this one reads files"),
        (["--source", "kafka", "--kafka-output"], "--kafka-output: a Kafka run writes its outputs to Kafka anyway"),
        (["--kafka-output", "--kafka-delivery", "twice"], "--kafka-delivery (KAFKA_DELIVERY): must be exactly-once or"
         " at-least-once, not 'twice'"),
        (["--kafka-output", "--output", "o", "--output-format", "geoparquet"], "--output-format (OUTPUT_FORMAT): a"
         " Kafka run's outputs are topics; --output-format is for files"),
    ],
)  # fmt: skip
def test_kafka_output_flags_that_do_not_fit_get_one_line(argv, message):
    with pytest.raises(ConfigError) as err:
        parse_config(argv, environ={})
    assert str(err.value) == message


def test_a_local_run_listens_on_loopback_and_takes_no_jars_unless_opened():
    from ais_pipeline.pipeline.environment import flink_settings

    closed = flink_settings(parse_config([], environ={}))
    assert closed["rest.bind-address"] == closed["metrics.reporter.prom.host"] == "127.0.0.1"
    assert closed["jobmanager.bind-host"] == closed["taskmanager.bind-host"] == "127.0.0.1"
    assert (closed["web.submit.enable"], closed["web.cancel.enable"]) == ("false", "true")
    assert closed["metrics.reporter.prom.factory.class"] == "ais.flink.metrics.BoundPrometheusReporterFactory"
    assert not parse_config([], environ={}).open_to_network
    opened = parse_config([], environ={"BIND_ADDRESS": "0.0.0.0"})
    assert opened.open_to_network
    settings = flink_settings(opened)
    assert settings["rest.bind-address"] == settings["metrics.reporter.prom.host"] == "0.0.0.0"
    assert settings["jobmanager.bind-host"] == settings["taskmanager.bind-host"] == "127.0.0.1"  # RPC stays closed
    assert settings["web.submit.enable"] == "false"


def test_a_runs_own_cluster_has_one_slot_per_taskmanager_stays_closed_and_keeps_its_reporters_as_plugins(
    monkeypatch: pytest.MonkeyPatch,
):
    from ais_pipeline.pipeline.environment import flink_settings
    from ais_pipeline.pipeline.taskmanagers import cluster_settings, daemon_environment
    from ais_pipeline.resources import METRICS_JAR

    config = parse_config(["--taskmanagers", "2", "--parallelism", "2", "--web-ui-port", "8123"], environ={})
    settings = cluster_settings(flink_settings(config), rpc_port=16123, tmp=Path("/tmp/c/tmp"), taskmanagers=2)
    assert settings["taskmanager.numberOfTaskSlots"] == "1"  # the mini-cluster's would be 2
    assert (settings["jobmanager.rpc.port"], settings["rest.port"], settings["rest.bind-port"]) == (
        "16123",
        "8123",
        "8123",
    )
    assert settings["rest.bind-address"] == settings["metrics.reporter.prom.host"] == "127.0.0.1"
    assert settings["jobmanager.bind-host"] == settings["taskmanager.bind-host"] == "127.0.0.1"
    assert settings["restart-strategy.type"] == "none"  # a local run fails at once, with its cause
    assert settings["python.executable"] == sys.executable

    prometheus = "/venv/pyflink/plugins/metrics-prometheus/flink-metrics-prometheus-2.3.0.jar"
    monkeypatch.setenv("HADOOP_CLASSPATH", os.pathsep.join(["/opt/hadoop.jar", prometheus, str(METRICS_JAR)]))
    env = daemon_environment(Path("/tmp/c/conf"), Path("/tmp/c/log"), Path("/tmp/c/lib"), Path("/tmp/c/plugins"))
    assert env["HADOOP_CLASSPATH"] == "/opt/hadoop.jar"
    assert (env["FLINK_CONF_DIR"], env["FLINK_LOG_DIR"], env["FLINK_PID_DIR"]) == (
        "/tmp/c/conf",
        "/tmp/c/log",
        "/tmp/c/log",
    )
    assert (env["FLINK_LIB_DIR"], env["FLINK_PLUGINS_DIR"]) == ("/tmp/c/lib", "/tmp/c/plugins")


def test_replay_tool_leaves_out_java_only_client_properties():
    from ais_pipeline.tools.replay import librdkafka_properties

    props = {"security.protocol": "SASL_SSL", "sasl.jaas.config": "x", "ssl.truststore.location": "/t"}
    assert librdkafka_properties(props) == {"security.protocol": "SASL_SSL"}


def test_client_class_names_are_shaded_for_the_sql_connector_jar():
    from ais_pipeline.pipeline.kafka import for_shaded_connector

    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";'
    shaded = "org.apache.flink.kafka.shaded.org.apache.kafka."
    fixed = for_shaded_connector(
        {
            "sasl.jaas.config": jaas,
            "sasl.login.callback.handler.class": "org.apache.kafka.common.security.X",
            "partitioner.class": shaded + "clients.producer.RoundRobinPartitioner",  # already shaded
            "security.protocol": "SASL_SSL",
        }
    )
    assert fixed["sasl.jaas.config"] == "org.apache.flink.kafka.shaded." + jaas
    assert fixed["sasl.login.callback.handler.class"] == shaded + "common.security.X"
    assert fixed["partitioner.class"] == shaded + "clients.producer.RoundRobinPartitioner"
    assert fixed["security.protocol"] == "SASL_SSL"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--topic", "raw"], "--topic: only a Kafka run reads it (--source kafka); this one reads files"),
        (["--bounded"], "--bounded: only a Kafka or Kinesis run reads it; this one reads files"),
        (["--source", "kafka", "--follow"], "--follow: only a file run uses it; this one reads Kafka (--source kafka)"),
        (
            ["--source", "kafka", "--input", "x"],
            "--input: only a file run uses it; this one reads Kafka (--source kafka)",
        ),
    ],
)
def test_a_flag_the_source_cannot_use_is_a_one_line_error(argv, message):
    with pytest.raises(ConfigError) as err:
        parse_config(argv, environ={})
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--stream", "s"], "--stream: only a Kinesis run reads it (--source kinesis); this one reads files"),
        (
            ["--source", "kinesis", "--stream", "s", "--topic", "t", "--region", "r"],
            "--topic: only a Kafka run reads it (--source kafka); this one reads Kinesis (--source kinesis)",
        ),
        (
            ["--source", "kinesis", "--stream", "s"],
            "--region (AWS_REGION): Kinesis and DynamoDB need an AWS region (us-east-1, eu-west-1, ...)",
        ),
        (["--source", "kinesis", "--region", "r"], "--stream (KINESIS_STREAM): a Kinesis run reads a stream: name it"),
        (
            ["--source", "kinesis", "--region", "r", "--stream", "s", "--starting-position", "at-timestamp:yesterday"],
            "--starting-position (KINESIS_STARTING_POSITION): must be trim-horizon, latest or"
            " at-timestamp:<ISO 8601 time or epoch ms>, not 'at-timestamp:yesterday'",
        ),
        (
            ["--dynamodb-table", "t", "--region", "r", "--dynamodb-endpoint", "localhost:5000"],
            "--dynamodb-endpoint (DYNAMODB_ENDPOINT): must be an http:// or https:// URL, not 'localhost:5000'",
        ),
    ],
)
def test_bad_kinesis_and_dynamodb_flags_get_one_line_naming_the_flag(argv, message):
    with pytest.raises(ConfigError) as err:
        parse_config(argv, environ={})
    assert str(err.value) == message


def test_kinesis_flags_and_their_environment():
    env = {"AWS_REGION": "eu-west-1", "KINESIS_STREAM": "ais", "DYNAMODB_TABLE": "agg", "DYNAMODB_CREATE": "1"}
    config = parse_config(["--source", "kinesis", "--starting-position", "at-timestamp:2024-06-01T00:00:00Z"], env)
    assert (config.region, config.stream, config.dynamodb_table, config.dynamodb_create) == (
        "eu-west-1",
        "ais",
        "agg",
        True,
    )
    assert config.starting_position == "at-timestamp:2024-06-01T00:00:00Z"
    assert parse_config(["--source", "kinesis", "--bounded"], env).bounded


@pytest.mark.parametrize("flag", ["--bad-fix-speed", "--bad-fix-noise"])
def test_a_bad_fix_threshold_must_be_a_finite_number(flag: str):
    with pytest.raises(ConfigError, match=f"^{flag} .*: must be a finite number, not nan$"):
        parse_config([flag, "nan"], {})


def test_the_hours_grace_is_the_gap_cap_and_a_pane_unless_set():
    assert parse_config([], {}).grace_ms == 660_000
    assert parse_config(["--max-gap", "300", "--window", "30", "--slide", "30"], {}).grace_ms == 330_000
    assert parse_config(["--hours-grace", "0"], {}).grace_ms == 0


def test_the_dynamodb_table_gets_the_window_kinds_asked_for_of_those_computed():
    table = ["--dynamodb-table", "t", "--region", "eu-west-1"]
    assert parse_config(table, environ={}).dynamodb_window_kinds == ("tumbling", "sliding")
    assert parse_config([*table, "--windows", "sliding"], environ={}).dynamodb_window_kinds == ("sliding",)
    only = parse_config(table, environ={"DYNAMODB_WINDOWS": "tumbling"})
    assert only.dynamodb_window_kinds == ("tumbling",) and only.window_kinds == ("tumbling", "sliding")
