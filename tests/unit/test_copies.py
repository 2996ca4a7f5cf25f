"""The exact-copy rule (:mod:`ais_pipeline.rules.copies`): the golden cases its Java twin passes
too, and what the plain loop makes of copies."""

from __future__ import annotations

import heapq
import json
from pathlib import Path
from typing import Any

import pytest

from ais_pipeline.config import PipelineConfig
from ais_pipeline.rules.copies import ExactCopies, SeenIdentities
from ais_pipeline.rules.plain import run_plain
from ais_pipeline.rules.windows import WindowSpec
from tests.support.nmea import BASE, position, tagged

pytestmark = pytest.mark.unit

GOLDEN = json.loads((Path(__file__).parents[1] / "golden" / "exact_copies.json").read_text())


def rule(spec: dict[str, int]) -> ExactCopies:
    step = spec["step_ms"]
    return ExactCopies(WindowSpec(step, step, step, step), spec["ttl_ms"], spec["horizon_ms"])


def run_case(case: dict[str, Any]) -> tuple[list[str | None], SeenIdentities | None]:
    copies = rule(case["spec"])
    seen: SeenIdentities | None = None
    timers: list[int] = []
    got: list[str | None] = []
    for step in case["steps"]:
        if step[0] == "report":
            _, ts, msg_type, identity = step
            copy, seen, timer = copies.decide(seen, ts, msg_type, identity)
            if timer is not None:
                heapq.heappush(timers, timer)
            got.append("copy" if copy else "new")
        else:
            while timers and timers[0] <= step[1] and seen is not None:
                seen, timer = copies.on_timer(seen, heapq.heappop(timers))
                if timer is not None:
                    heapq.heappush(timers, timer)
            got.append(None)
    return got, seen


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=[c["name"][:60] for c in GOLDEN["cases"]])
def test_the_golden_case_gives_its_decisions_and_leaves_no_state_when_it_says_so(case: dict[str, Any]) -> None:
    got, seen = run_case(case)
    assert got == case["expect"]
    assert (seen is not None) == case["state_left_at_end"]


def test_the_step_of_the_golden_rules_is_their_watermark_step() -> None:
    assert rule({"ttl_ms": 1, "horizon_ms": 1, "step_ms": 60_000}).spec.watermark_step_ms == 60_000


T0 = BASE - BASE % 60


def test_a_second_copy_of_a_payload_that_does_not_decode_is_a_copy_not_a_second_dead_letter() -> None:
    # A type 1 sentence with too few bits to decode, heard by two receivers: a dead letter once,
    # then counted as a copy.
    short = "!AIVDM,1,1,,A,13u?etP,0*2F"
    result = run_plain(PipelineConfig(), [tagged(short, T0), tagged(short, T0 + 5, "r2")], now_ms=(T0 + 60) * 1000)
    assert len(result.dead_letter) == 1 and "payload too short" in result.dead_letter[0]
    assert result.totals["duplicates_exact"] == 1


def test_a_copy_does_not_move_its_vessels_newest_time() -> None:
    from ais_pipeline.rules.plain import PlainPipeline

    plain = PlainPipeline(PipelineConfig(), now_ms=(T0 + 600) * 1000)
    line = position(244000001, 52.0, 4.0)
    plain.feed([tagged(line, T0), tagged(line, T0 + 100, "r2")])
    meta = plain.vessels[244000001].meta()
    assert meta is not None and meta.max_ts == T0 * 1000
    assert plain.seen[244000001].newest == T0 * 1000 and plain.out.totals["duplicates_exact"] == 1
