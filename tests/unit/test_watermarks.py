"""The watermark follows the receivers (docs/watermarks.md; ais_pipeline/rules/watermarks.py):
a receiver's clock hours ahead or behind makes none of the other receivers' reports late, a pause
of the whole feed loses nothing, one line far ahead moves nothing whichever source sent it, and
a bad clock is counted for its receiver. Through the plain loop, on generated feeds (tests/feeds.py) and a real
satellite capture."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ais_pipeline.config import PipelineConfig
from ais_pipeline.files import read_lines
from ais_pipeline.rules import outputs
from ais_pipeline.rules.plain import PlainPipeline, PlainResult
from ais_pipeline.rules.records import TIME_UNKNOWN
from ais_pipeline.rules.watermarks import ReceiverWatermarks
from ais_pipeline.rules.windows import WindowSpec
from tests.support import noaa_day
from tests.support.feeds import HOUR, T0, moved_ahead, receivers_feed

pytestmark = pytest.mark.unit

NOW_MS = (T0 + 86_400) * 1000  # the wall clock of these runs: a day after the feeds


def run(lines: list[str], now_ms: int = NOW_MS, **knobs: Any) -> tuple[PlainResult, PlainPipeline]:
    pipeline = PlainPipeline(PipelineConfig(input_path=Path(__file__), **knobs), now_ms=now_ms)
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
    # After the pause, a jump of every clock and a stray line look the same until 32 lines after
    # it have followed one another: those are held, then move the clocks, and are counted ahead of
    # the current sources.
    ahead = {"clock_ahead": 11, "clock_behind": 0, "late": 0, "future_timestamp": 0}
    assert receivers(paused) == {"r1": ahead, "r2": ahead, "r3": ahead | {"clock_ahead": 10}}


def test_one_receiver_with_gaps_the_watermark_follows_its_newest_report_once_a_jump_is_confirmed():
    lines = receivers_feed(seconds=3000, receivers=("solo",), pause=(600, 900))
    lines = [line for i, line in enumerate(lines) if (i // 60) % 5 != 3]  # more gaps
    result, pipeline = run(lines)
    assert result.late == []
    newest = max(json.loads(p)["timestamp"] for p in result.positions)
    assert pipeline.clocks.watermark == outputs.parse_iso_ms(newest) - 10_000 - 1
    # The lines after the 15-minute gap move no clock until 32 of them have followed one another;
    # the 2-minute gaps move it at once. The lone receiver is judged against its own lines: the
    # first line after the gap is ahead, the 31 held after it follow it at the lane's pace.
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


def test_a_capture_without_receivers_with_one_line_6_h_ahead_keeps_every_position(fixtures: Path):
    # The Norwegian open feed writes c: and no s:: one source. Line 301 moved 6 h ahead used to
    # move the watermark with it: 524 of the 743 positions went to the late output.
    lines = moved_ahead(list(read_lines(fixtures / "aisnet__Ais1000Lines.nm4")), 300, 6 * 3600)
    assert lines[300].startswith("\\c:1565240407*")
    result, pipeline = run(lines)
    assert len(result.positions) == 743 and result.late == [] and result.totals["late"] == 0
    assert receivers(result) == {"(none)": {"clock_ahead": 1, "clock_behind": 0, "late": 0, "future_timestamp": 0}}
    assert pipeline.clocks.watermark < 1565218830_000  # it followed the capture, not the stray line


@pytest.mark.parametrize("layout", ["2024", "2025"])
def test_a_noaa_day_start_as_published_keeps_every_row_on_time(layout: str):
    # Rows up to 12 s out of order, five of the day's last minute among the first 200 rows.
    path = noaa_day.fixture(layout)
    assert path.read_text() == noaa_day.text(layout)  # the fixture is what its generator writes
    day_start = outputs.parse_iso_ms(f"{noaa_day.DAYS[layout]}T00:00:00.000Z")
    result, pipeline = run(list(read_lines(path)), now_ms=day_start + 2 * 86_400_000)
    assert len(result.positions) == 743 and result.late == [] and result.dead_letter == []
    assert result.totals["late"] == 0
    # The day-end rows after the 64-line warm-up are counted ahead (data rows 122 and 189).
    assert receivers(result) == {"(none)": {"clock_ahead": 2, "clock_behind": 0, "late": 0, "future_timestamp": 0}}
    assert day_start < pipeline.clocks.watermark < day_start + 600_000


# -- the property: stray lines change no other line's verdict ---------------------------------------

SPEC = WindowSpec(60_000, 900_000, 60_000, 120_000)
SKEW_MS = 300_000
DAY_MS = 86_400_000


def verdicts(feed: list[tuple[str, int]], consensus_lines: int, warm_up_lines: int) -> list[tuple[bool, bool]]:
    """Each line's verdict (too late for its tumbling window, for every sliding window) against
    the watermark in force before it, by the rule alone."""
    clocks = ReceiverWatermarks(10_000, 30_000, SKEW_MS, consensus_lines, warm_up_lines)
    out = []
    for source, ts in feed:
        out.append(SPEC.late_kinds(ts, clocks.watermark) if clocks.watermark != TIME_UNKNOWN else (False, False))
        clocks.observe(source, ts)
    return out


gaps = st.one_of(
    st.integers(0, 5_000), st.integers(0, 120_000), st.integers(SKEW_MS, 1_800_000)
)  # steady, slow, paused
strays = st.lists(
    st.tuples(
        st.floats(0, 1),  # where, as a share of the feed
        st.sampled_from([1, -1]),  # ahead or behind
        st.integers(SKEW_MS + 1, 2 * DAY_MS),  # by more than the clock skew
        st.sampled_from(["", "a", "stray"]),  # the only source, another, or one of its own
    ),
    max_size=3,
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["", "a", "b"]), gaps), min_size=1, max_size=300),
    strays,
    st.sampled_from([(16, 8), (256, 64)]),
    st.booleans(),
)
def test_up_to_three_stray_lines_change_no_other_lines_verdict(
    steps: list[tuple[str, int]],
    inserted: list[tuple[float, int, int, str]],
    window: tuple[int, int],
    one_source: bool,
):
    t = 1_700_000_000_000
    feed: list[tuple[str, int]] = []
    for source, gap in steps:  # a feed in time order
        t += gap
        feed.append(("" if one_source else source, t))
    # Each stray goes before base line k, more than the clock skew from the lines before it: ahead
    # of the newest of them (of the warm-up's lines, when it is among those: they are judged
    # together at the warm-up's end), or behind the line just before it.
    before: dict[int, list[tuple[str, int]]] = {}
    for share, sign, offset, source in inserted:
        k = int(share * len(feed))
        newest_before = min(max(k, window[1]), len(feed)) - 1
        reference = feed[max(newest_before, 0) if sign > 0 else max(k - 1, 0)][1]
        before.setdefault(k, []).append((source, reference + sign * offset))
    mixed: list[tuple[str, int] | None] = []  # the feed with its strays, each stray as None
    with_strays: list[tuple[str, int]] = []
    for k in range(len(feed) + 1):
        for stray in before.get(k, []):
            mixed.append(None)
            with_strays.append(stray)
        if k < len(feed):
            mixed.append(feed[k])
            with_strays.append(feed[k])
    base = verdicts(feed, *window)
    got = verdicts(with_strays, *window)
    assert [v for line, v in zip(mixed, got, strict=True) if line is not None] == base
