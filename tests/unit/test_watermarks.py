"""The watermark follows the receivers (docs/watermarks.md; ais_pipeline/rules/watermarks.py):
a receiver's clock hours ahead or behind makes none of the other receivers' reports late, a pause
of the whole feed loses nothing, one receiver is treated as before, and a bad clock is counted
for its receiver. Through the plain loop, on generated feeds (tests/feeds.py) and a real
satellite capture."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ais_pipeline.config import PipelineConfig
from ais_pipeline.files import read_lines
from ais_pipeline.rules import outputs
from ais_pipeline.rules.plain import PlainPipeline, PlainResult
from tests.support.feeds import HOUR, T0, receivers_feed

pytestmark = pytest.mark.unit

NOW_MS = (T0 + 86_400) * 1000  # the wall clock of these runs: a day after the feeds


def run(lines: list[str], **knobs: Any) -> tuple[PlainResult, PlainPipeline]:
    pipeline = PlainPipeline(PipelineConfig(input_path=Path(__file__), **knobs), now_ms=NOW_MS)
    pipeline.feed(lines)
    watermark_at_end = pipeline.clocks.watermark
    result = pipeline.finish()
    pipeline.clocks.watermark = watermark_at_end
    return result, pipeline


def receivers(result: PlainResult, dead: list[str] | None = None) -> dict[str, dict[str, int]]:
    return outputs.by_receiver(result.tallies, [json.loads(d) for d in (dead or result.dead_letter)])


def kept_by(result: PlainResult) -> dict[str | None, int]:
    counts: dict[str | None, int] = {}
    for p in result.positions:
        rx = json.loads(p)["receiver"]
        counts[rx] = counts.get(rx, 0) + 1
    return counts


def test_a_receiver_5_h_ahead_makes_no_report_of_the_other_receivers_late():
    result, pipeline = run(receivers_feed(offsets={"r3": 5 * HOUR}))
    assert result.late == [] and result.totals["late"] == 0
    # Every transmission: r1's copy kept on time, r2's an exact duplicate; r3's copies are 5 h
    # off, so not duplicates: kept in windows 5 h ahead, which fire at the end of the input.
    assert kept_by(result) == {"r1": 720, "r3": 720}
    assert result.totals["duplicates_exact"] == 720
    assert pipeline.clocks.watermark < (T0 + 1200) * 1000  # the watermark stayed with r1 and r2
    counted = receivers(result)
    assert set(counted) == {"r3"} and counted["r3"]["clock_ahead"] >= 720 - 64 // 3 - 1


def test_a_receiver_5_h_behind_does_not_hold_the_others_back_and_its_reports_are_late():
    result, pipeline = run(receivers_feed(offsets={"r3": -5 * HOUR}))
    assert kept_by(result)["r1"] == 720 and "r2" not in kept_by(result)
    # The watermark kept up with r1 and r2 (its last value is their newest time minus the
    # out-of-orderness), so their windows fired all along.
    assert pipeline.clocks.watermark == (T0 + 1190) * 1000 - 10_000 - 1
    late = [json.loads(r) for r in result.late]
    assert {r["receiver"] for r in late} == {"r3"}
    counted = receivers(result)
    assert set(counted) == {"r3"}
    # r3's copies are late once the watermark exists (after the 64-line warm-up): once per kind.
    assert counted["r3"]["late"] == result.totals["late"] >= 720 - 64 // 3 - 1
    assert counted["r3"]["clock_behind"] >= 720 - 64 // 3 - 1


def test_a_15_minute_pause_of_the_whole_feed_loses_nothing():
    paused, _ = run(receivers_feed(seconds=2100, pause=(600, 900)))
    assert paused.late == [] and paused.totals["late"] == 0
    assert kept_by(paused) == {"r1": 6 * (2100 - 900) // 10}
    # At the first lines after the pause a jump of one clock and a pause of all look the same:
    # r1's and r2's first lines are counted ahead of the others (r3's comes when they are back).
    ahead = {"clock_ahead": 1, "clock_behind": 0, "late": 0, "future_timestamp": 0}
    assert receivers(paused) == {"r1": ahead, "r2": ahead}


def test_one_receiver_with_gaps_is_treated_as_before_the_watermark_follows_its_newest_report():
    lines = receivers_feed(seconds=3000, receivers=("solo",), pause=(600, 900))
    lines = [line for i, line in enumerate(lines) if (i // 60) % 5 != 3]  # more gaps
    result, pipeline = run(lines)
    assert result.late == []
    newest = max(json.loads(p)["timestamp"] for p in result.positions)
    assert pipeline.clocks.watermark == outputs.parse_iso_ms(newest) - 10_000 - 1
    # The first line after the 15-minute gap is more than the clock skew ahead of the last one.
    assert receivers(result) == {"solo": {"clock_ahead": 1, "clock_behind": 0, "late": 0, "future_timestamp": 0}}


def test_the_watermark_waits_for_the_warm_up_so_that_a_first_line_5_h_ahead_sets_nothing():
    lines = receivers_feed(receivers=("r1", "r2"))
    fast = receivers_feed(receivers=("fast",), offsets={"fast": 5 * HOUR})[:1]
    result, _ = run(fast + lines)
    assert result.late == [] and kept_by(result) == {"fast": 1, "r1": 720}


def test_a_real_satellite_capture_has_no_position_late_that_is_in_order_by_its_receivers_clock(fixtures):
    # exactEarth satellite reports (s:rEV02) between base-station groups without s: whose times
    # are from other days, one of them 5.5 h ahead: before this rule, 133 of the 178 positions
    # went to the late output.
    lines = list(read_lines(fixtures / "risky__exact-earth-with-tag-block.txt"))
    result, _ = run(lines)
    assert len(result.positions) == 178 and result.late == [] and result.totals["late"] == 0
    # The base stations' clocks are visible (counted from the 64-line warm-up on): 12 groups days
    # behind the consensus, one hours ahead.
    assert receivers(result) == {"(none)": {"clock_ahead": 1, "clock_behind": 12, "late": 0, "future_timestamp": 0}}
