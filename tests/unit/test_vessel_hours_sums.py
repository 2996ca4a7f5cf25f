"""Vessel hours checked independently on the bundled sample: sorting each vessel's kept positions
(the positions output) and adding up its gaps under the cap gives the time the tumbling windows
hold plus the late time, to the rounding of each window's hours to 6 decimals."""

from __future__ import annotations

import json
from collections import defaultdict
from itertools import pairwise

import pytest

from ais_pipeline.config import SAMPLE_INPUT, PipelineConfig
from ais_pipeline.files import read_lines
from ais_pipeline.rules.dedup import LATE_VESSEL_MS
from ais_pipeline.rules.outputs import final_aggregates, parse_iso_ms
from ais_pipeline.rules.plain import run_plain
from ais_pipeline.rules.windows import MS_PER_HOUR

pytestmark = pytest.mark.unit


def test_the_samples_tumbling_hours_and_late_hours_add_up_to_every_vessels_gaps_under_the_cap():
    config = PipelineConfig(input_path=SAMPLE_INPUT)
    result = run_plain(config, list(read_lines(SAMPLE_INPUT)), now_ms=1_700_000_000_000)
    times: defaultdict[int, list[int]] = defaultdict(list)
    for line in result.positions:
        p = json.loads(line)
        times[p["mmsi"]].append(parse_iso_ms(p["timestamp"]))
    under_cap_ms = 0
    for ts in times.values():
        ts.sort()
        under_cap_ms += sum(b - a for a, b in pairwise(ts) if b - a <= config.max_gap_ms)
    tumbling = [
        a for (w, _, _), a in final_aggregates(json.loads(x) for x in result.aggregates).items() if w == "tumbling"
    ]
    held = sum(float(a["vessel_hours"]) for a in tumbling)
    late = result.totals[LATE_VESSEL_MS] / MS_PER_HOUR
    assert under_cap_ms / MS_PER_HOUR == pytest.approx(10.323889, abs=1e-6)  # of 7,294 positions
    assert held + late == pytest.approx(under_cap_ms / MS_PER_HOUR, abs=len(tumbling) * 5e-7)
    assert late > 0  # the sample's lateness (120 s) is under the cap: long gaps reach closed windows
