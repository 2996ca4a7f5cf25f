"""Dedup state stays bounded while vessels come and go: the job watches a directory (unbounded, so
nothing is flushed at the end) holding 80,000 lines in which every 330 s of event time brings
other vessels (bench/make_feed.py --new-vessels), with a static TTL of 300 s. Vessels silent for
longer than the retention (the dedup TTL plus the sliding window, lateness and out-of-orderness:
21 min here) lose their dedup state to event-time timers, so the keys held, read from the
`dedup_keys_held` gauge through the REST API, are those the plain pipeline holds at the same
watermark, far fewer than the vessels seen. What such a vessel keeps for the gap its return would
close (its last position, for the gap TTL) is counted apart, by the `gap_keys_held` gauge, and
equals the plain pipeline's too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ais_pipeline.config import PipelineConfig
from ais_pipeline.files import read_lines
from ais_pipeline.rules.plain import PlainPipeline
from bench import state_over_time

pytestmark = pytest.mark.flink


def test_dedup_state_levels_off_while_vessels_come_and_go(tmp_path: Path):
    rows = state_over_time.run(copies=8, static_ttl=300, out=tmp_path / "state")
    assert (tmp_path / "state.png").stat().st_size > 10_000 and (tmp_path / "state.csv").exists()
    held, gap_held = rows[-1]["keys_held"], rows[-1]["gap_keys_held"]

    feed = tmp_path / "feed.nmea"
    with feed.open("w") as fh:
        cmd = [sys.executable, "-m", "bench.make_feed", "--copies", "8", "--new-vessels"]
        subprocess.run(cmd, stdout=fh, check=True)
    plain = PlainPipeline(PipelineConfig(input_path=feed, static_ttl_s=300))
    plain.feed(read_lines(feed))  # no end of input: the watermark stops where the job's does
    # Seen: the vessels with a position written, and those whose positions still wait for the
    # watermark (held in their state).
    seen = {json.loads(p)["mmsi"] for p in plain.out.positions} | set(plain.vessels)
    watching = sum(1 for store in plain.vessels.values() if store.gap_watch())
    assert (held, gap_held) == (len(plain.vessels) - watching, watching)
    assert watching > 0
    assert held < 0.6 * len(seen), f"{held} keys held of {len(seen)} vessels seen"
    assert rows[-1]["lines"] == 80_000
