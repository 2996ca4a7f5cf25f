"""Vessel hours checked independently, on the bundled sample and on the benchmark's seeded feed:
sorting each vessel's kept positions (the positions output) and adding up its gaps under the cap
gives the time the tumbling windows hold plus the late time, to the rounding of each window's
hours to 6 decimals."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from itertools import pairwise
from pathlib import Path

import pytest

from ais_pipeline.config import SAMPLE_INPUT, PipelineConfig
from ais_pipeline.files import read_lines
from ais_pipeline.rules.dedup import LATE_VESSEL_MS
from ais_pipeline.rules.outputs import final_aggregates, parse_iso_ms
from ais_pipeline.rules.plain import run_plain
from ais_pipeline.rules.windows import MS_PER_HOUR

pytestmark = pytest.mark.unit


def bench_feed(tmp_path: Path) -> Path:
    feed = tmp_path / "bench.nmea"
    with feed.open("w") as fh:
        cmd = [sys.executable, "-m", "bench.gen_feed", "--lines", "20000", "--seed", "7"]
        subprocess.run(cmd, stdout=fh, check=True)
    return feed


@pytest.mark.parametrize(("feed", "under_cap_hours"), [("sample", 10.323889), ("bench", 39.302778)])
def test_tumbling_hours_and_late_hours_add_up_to_every_vessels_gaps_under_the_cap(
    feed: str, under_cap_hours: float, tmp_path: Path
):
    path = SAMPLE_INPUT if feed == "sample" else bench_feed(tmp_path)
    config = PipelineConfig(input_path=path)
    result = run_plain(config, list(read_lines(path)), now_ms=1_800_000_000_000)
    times: defaultdict[int, list[int]] = defaultdict(list)
    for line in result.positions:
        p = json.loads(line)
        times[p["mmsi"]].append(parse_iso_ms(p["timestamp"]))
    under_cap_ms = sum(
        b - a for ts in times.values() for a, b in pairwise(sorted(ts)) if b - a <= config.max_gap_ms
    )  # fmt: skip
    finals = final_aggregates(json.loads(x) for x in result.aggregates)
    tumbling = [a for (window, _, _), a in finals.items() if window == "tumbling"]
    held = sum(float(a["vessel_hours"]) for a in tumbling)
    late = result.totals[LATE_VESSEL_MS] / MS_PER_HOUR
    assert under_cap_ms / MS_PER_HOUR == pytest.approx(under_cap_hours, abs=1e-6)
    assert held + late == pytest.approx(under_cap_ms / MS_PER_HOUR, abs=len(tumbling) * 5e-7)
    assert late > 0  # the default lateness (120 s) is under the cap: long gaps reach closed windows
