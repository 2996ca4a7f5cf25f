"""Flags and environment variables: one config object, validated, with one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.ais_pipeline import main
from udfs.config import SAMPLE_INPUT, ConfigError, parse_config

pytestmark = pytest.mark.unit


def test_defaults_are_the_spec_defaults():
    c = parse_config([], environ={})
    assert (c.window_s, c.slide_size_s, c.slide_s, c.lateness_s) == (60, 900, 60, 120)
    assert (c.out_of_orderness_s, c.idle_timeout_s, c.dedup_ttl_s, c.near_window_s) == (10, 30, 120, 2.0)
    assert (c.static_ttl_s, c.geohash_precision, c.max_clock_skew_s, c.input_format) == (86400, 6, 300, "nmea")
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
        (["--input-format", "csv"], "--input-format (INPUT_FORMAT): must be nmea or json, not 'csv'"),
    ],
)
def test_bad_flags_get_one_line_naming_the_flag(argv, message, capsys):
    with pytest.raises(ConfigError, match="^" + message.replace("(", r"\(").replace(")", r"\)") + "$"):
        parse_config(argv, environ={})
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"ais-pipeline: error: {message}"]


def test_bad_environment_variable_is_named():
    with pytest.raises(ConfigError, match=r"^GEOHASH_PRECISION: expected int, got 'six'$"):
        parse_config([], environ={"GEOHASH_PRECISION": "six"})


def test_input_may_be_a_directory(tmp_path: Path):
    assert parse_config(["--input", str(tmp_path)], environ={}).input_path == tmp_path


def test_web_ui_port_in_use_is_a_one_line_error(capsys):
    import socket

    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        assert main(["--web-ui-port", str(port)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"ais-pipeline: error: --web-ui-port (WEB_UI_PORT): port {port} is in use; pick another, or 0 for a free one"
    ]
