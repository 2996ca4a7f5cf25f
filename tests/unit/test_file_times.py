"""A file's lines without a time of their own take a time from the file, never from the clock
(:class:`ais_pipeline.rules.lane.LaneParser` with ``untimed_ms``; ``ais_pipeline.archives.input_time``):
the time the lane told last, a receiver's GPS time in a ``$--ZDA`` sentence included, and before the
lane's first, the first time the input tells. Checked on the real AMSA capture, whose times are
its receivers' ``$GPZDA`` sentences, the Gatehouse ``$PGHP`` times and a few trailing Unix times."""

from __future__ import annotations

from pathlib import Path

import pytest

from ais_pipeline.archives import input_time
from ais_pipeline.config import PipelineConfig, parse_config, with_input_time
from ais_pipeline.files import read_lines
from ais_pipeline.rules.lane import DictGroupStores, LaneParser
from ais_pipeline.rules.plain import run_plain
from ais_pipeline.rules.prefixes import zda_time
from ais_pipeline.rules.records import TIME_UNKNOWN
from tests.support.nmea import BASE, position, tagged

pytestmark = pytest.mark.unit

RISKY = Path(__file__).parents[1] / "fixtures" / "risky__ais.txt.gz"
ZDA = "$GPZDA,114702.51,27,01,2012,,*66"  # a line of the AMSA capture


def assigned(parser: LaneParser, lines: list[str], now_ms: int = 4_000_000_000_000) -> list[int]:
    groups = DictGroupStores()
    out = []
    for line in lines:
        entry = parser.line(line, now_ms, groups)
        out.append(TIME_UNKNOWN if entry is None else entry.assigned)
    return out


def test_a_zda_sentence_is_the_receivers_gps_time():
    assert zda_time(ZDA) == 1_327_664_822_510  # 2012-01-27T11:47:02.510Z
    assert zda_time(ZDA.replace("*66", "*67")) is None  # a wrong checksum tells nothing
    assert zda_time("$GPRMC,114702.51,A,*00") is None


def test_a_files_line_without_a_time_takes_the_time_its_lane_told_last_and_before_any_the_inputs():
    bare = position(244_000_001, 52.0, 3.0)
    parser = LaneParser("auto", 300_000, 60_000, untimed_ms=1_000)
    got = assigned(parser, [bare, tagged(position(244_000_002, 52.1, 3.1), BASE), bare, ZDA, bare, bare])
    assert got == [1_000, BASE * 1000, BASE * 1000, TIME_UNKNOWN, 1_327_664_822_510, 1_327_664_822_510]
    assert parser.tallies.count("no_time") == 4  # still counted as lines without a time of their own


def test_a_kafka_or_live_lane_without_untimed_ms_takes_the_ingestion_time_as_before():
    parser = LaneParser("auto", 300_000, 60_000)
    assert assigned(parser, [ZDA, position(244_000_001, 52.0, 3.0)], now_ms=77) == [TIME_UNKNOWN, 77]


def test_the_input_time_is_its_first_told_time_or_the_files_time(tmp_path: Path):
    assert input_time(RISKY, "auto", 300_000) == 1_327_664_822_510  # its first $GPZDA, line 16
    timeless = tmp_path / "timeless.nmea"
    timeless.write_text(position(244_000_001, 52.0, 3.0) + "\n")
    assert input_time(timeless, "auto", 300_000) == int(timeless.stat().st_mtime * 1000)
    config = parse_config(["--input", str(RISKY)], {})
    assert config.input_time_ms == 1_327_664_822_510
    assert parse_config(["--input", "udp://127.0.0.1:10110"], {}).input_time_ms is None


def test_the_amsa_capture_gives_the_same_outputs_whatever_the_clock_says():
    config = with_input_time(PipelineConfig(input_path=RISKY))
    lines = list(read_lines(RISKY))
    today = run_plain(config, lines, now_ms=1_800_000_000_000)
    later = run_plain(config, lines, now_ms=1_900_000_000_000)
    assert today.named() == later.named() and today.totals == later.totals
    assert today.totals["no_time"] > 20_000  # most of its sentences tell no time themselves
    kept = today.totals["positions_kept"] if "positions_kept" in today.totals else len(today.positions)
    assert kept > 10_000
    assert all(p.split('"timestamp":"', 1)[1].startswith("2012-01-27") for p in today.positions)
