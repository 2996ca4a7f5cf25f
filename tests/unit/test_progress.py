"""The progress line's text, from the figures the REST API gives (no JVM here)."""

from __future__ import annotations

import urllib.parse

import pytest

from ais_pipeline.pipeline.progress import END_OF_INPUT, RecentRate, Snapshot, describe, metric_query, moved

pytestmark = pytest.mark.unit


def test_a_file_run_shows_lines_its_share_of_the_input_rate_watermark_and_counts():
    snap = Snapshot(lines=12345, bytes=987_000, kept=7000, duplicates=881, late=3, watermark_ms=1668046439999)
    assert describe(snap, 4321.6, 2_000_000) == (
        "12,345 lines (49% of the input), 4,322 lines/s, watermark 2022-11-10T02:13:59.999Z, kept 7,000 dup 881 late 3"
    )


def test_before_the_first_watermark_and_after_the_end_of_input():
    assert "watermark -," in describe(Snapshot(), 0.0, None)
    assert "watermark end of input," in describe(Snapshot(watermark_ms=END_OF_INPUT), 0.0, None)


def test_a_kafka_run_shows_the_consumer_lag_and_no_total():
    text = describe(Snapshot(lines=50, lag=1200), 10.0, None)
    assert text.startswith("50 lines, 10 lines/s") and text.endswith("lag 1,200")


def test_the_rate_is_of_the_last_ten_seconds_so_a_run_waiting_for_files_shows_none():
    rate = RecentRate(started=0.0)
    assert rate.update(1.0, 1000) == 1000.0
    assert rate.update(10.0, 10_000) == 1000.0
    assert rate.update(20.0, 30_000) == 2000.0  # the last ten seconds: 20,000 lines
    # No file arrives: the rate falls to 0 within ten seconds instead of decaying over hours.
    assert rate.update(25.0, 30_000) == 20_000 / 15
    assert rate.update(31.0, 30_000) == 0.0
    assert rate.update(3600.0, 30_000) == 0.0


def test_a_line_count_standing_still_while_the_job_moves_is_pending_never_0_lines_per_s():
    # A 10-second log interval: the count came in a burst, then stood still while the watermark
    # moved 22 minutes of feed.
    rate = RecentRate(started=0.0)
    first = Snapshot(lines=40_000, kept=30_000, watermark_ms=1_080_000)
    still = Snapshot(lines=40_000, kept=30_000, watermark_ms=2_400_000)
    assert rate.judged(10.0, first.lines, moved(None, first)) == 4000.0
    assert rate.judged(20.0, still.lines, moved(first, still)) is None
    assert "40,000 lines, lines/s pending, watermark" in describe(still, None, None)
    burst = Snapshot(lines=90_000, kept=70_000, watermark_ms=2_500_000)
    assert rate.judged(30.0, burst.lines, moved(still, burst)) == 50_000 / 20  # the burst over its interval
    # Nothing moves at all (waiting for files): 0.
    assert rate.judged(40.0, burst.lines, moved(burst, burst)) == 0.0
    assert not moved(burst, Snapshot(lines=90_000, kept=70_000, watermark_ms=2_500_000))
    assert moved(burst, Snapshot(lines=90_000, kept=70_000, duplicates=1, watermark_ms=2_500_000))


def test_a_live_run_shows_how_far_its_watermark_is_behind_the_clock_and_a_silence_is_0_lines_per_s():
    snap = Snapshot(lines=5000, kept=4000, watermark_ms=1_767_225_599_999)
    text = describe(snap, 0.0, None, now_ms=1_767_225_601_234)
    assert "watermark 2025-12-31T23:59:59.999Z (1.2 s behind the clock)," in text
    # In a silence only the watermark moves (it follows the clock): nothing was read, 0 lines/s.
    later = Snapshot(lines=5000, kept=4000, watermark_ms=1_767_225_609_999)
    assert not moved(snap, later, clock_watermark=True) and moved(snap, later)


def test_metric_ids_of_an_operator_named_after_an_mqtt_topic_filter_survive_the_query_string():
    ids = ["0.Source__read_mqtt://127.0.0.1:1883/ais/#.feed_lines", "0.parse_lines.lines"]
    query = metric_query(ids)
    assert "#" not in query and "/" not in query
    assert [urllib.parse.unquote(i) for i in query.split(",")] == ids


def test_the_progress_whole_is_the_size_of_plain_files_and_none_for_an_archive(tmp_path):
    from ais_pipeline.files import input_bytes

    (tmp_path / "a.nmea").write_text("x" * 10)
    (tmp_path / "b.nmea").write_text("y" * 5)
    (tmp_path / ".hidden").write_text("z" * 100)  # not read, as the job's source does not
    assert input_bytes(tmp_path) == 15 and input_bytes(tmp_path / "a.nmea") == 10
    (tmp_path / "c.nmea.zst").write_bytes(b"\x28\xb5\x2f\xfd")
    assert input_bytes(tmp_path) is None  # its lines are known once the job has read it, not before
