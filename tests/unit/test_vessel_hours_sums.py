"""Vessel hours checked independently, on the bundled sample, the benchmark's seeded feed and a
month of a real GFW track (a sparse one, with several transmitters on one MMSI): the hours the
tumbling windows hold per cell agree with a spread along each vessel's plausible segments worked
out from the kept positions by other means (tests/support/independent_hours.py), and with the
default flags no time is late."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ais_pipeline.config import SAMPLE_INPUT, PipelineConfig
from ais_pipeline.files import read_lines
from ais_pipeline.rules.dedup import LATE_VESSEL_MS
from ais_pipeline.rules.plain import run_plain
from tests.support.independent_hours import elsewhere, hours_per_cell, tumbling_hours_per_cell

pytestmark = pytest.mark.unit

GFW = Path(__file__).parents[1] / "fixtures" / "gpsdiosegment__416000000.json"


def bench_feed(tmp_path: Path) -> Path:
    feed = tmp_path / "bench.nmea"
    with feed.open("w") as fh:
        cmd = [sys.executable, "-m", "bench.gen_feed", "--lines", "20000", "--seed", "7"]
        subprocess.run(cmd, stdout=fh, check=True)
    return feed


@pytest.mark.parametrize("feed", ["sample", "bench", "gfw"])
def test_tumbling_hours_per_cell_agree_with_an_independent_spread_and_none_is_late(feed: str, tmp_path: Path):
    import json

    path = {"sample": SAMPLE_INPUT, "gfw": GFW}.get(feed) or bench_feed(tmp_path)
    result = run_plain(PipelineConfig(input_path=path), list(read_lines(path)), now_ms=1_800_000_000_000)
    want = hours_per_cell(json.loads(p) for p in result.positions)
    got = tumbling_hours_per_cell(json.loads(a) for a in result.aggregates)
    total = sum(want.values())
    assert total > 5
    assert sum(got.values()) == pytest.approx(total, rel=1e-3)
    assert elsewhere(got, want) < 0.03
    assert result.totals[LATE_VESSEL_MS] == 0
