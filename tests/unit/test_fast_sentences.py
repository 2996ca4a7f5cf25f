"""The plain sentences that Java parses before the Python parse operator
(``ais.flink.FastSentences``): the golden cases' entries are the Python reference's own, and the
parse operator puts Java's entries and its own back in the lane's order."""

import json
from pathlib import Path
from typing import Any

import pytest

from ais_pipeline.functions.rows import in_lane_order, parsed_entry
from ais_pipeline.rules.feeds import stamped_on_receipt
from ais_pipeline.rules.lane import AUTO, NMEA, DictGroupStores, LaneParser
from ais_pipeline.rules.records import LaneBatch

pytestmark = pytest.mark.unit

GOLDEN = json.loads((Path(__file__).parents[1] / "golden" / "fast_sentences.json").read_text())
FAST = [case for case in GOLDEN["cases"] if case["entry"] is not None]


def test_the_golden_cases_hold_sentences_java_parses_and_lines_it_leaves_to_python():
    assert len(FAST) >= 10
    assert len(GOLDEN["cases"]) - len(FAST) >= 25


@pytest.mark.parametrize("input_format", [NMEA, AUTO])
@pytest.mark.parametrize("case", FAST, ids=[case["name"] for case in FAST])
def test_a_plain_sentence_gives_the_python_reference_exactly_the_golden_entry(case: dict[str, Any], input_format: str):
    parser = LaneParser(input_format, max_clock_skew_ms=300_000, multipart_timeout_ms=60_000)
    entry = parser.line(case["line"], GOLDEN["now_ms"], DictGroupStores())
    assert entry is not None and entry.report is not None
    assert parser.tallies == [] and parser.dead == []
    want = case["entry"]
    received = stamped_on_receipt(case["line"])
    assert parsed_entry(entry.assigned, entry.source, entry.report, received) == (
        want["assigned"], want["source"], want.get("received", False), want["mmsi"], want["packed"],
    )  # fmt: skip


def batch(fast_at: list[int], total: int) -> LaneBatch:
    return LaneBatch(
        lines=[f"line {i}" for i in range(total) if i not in fast_at],
        line_at=[i for i in range(total) if i not in fast_at],
        fast_at=fast_at,
        assigned=[100 + i for i in fast_at],
        source=[f"s{i}" for i in fast_at],
        received=[i % 3 == 0 for i in fast_at],
        mmsi=[1000 + i for i in fast_at],
        packed=[f"p{i}" for i in fast_at],
        total=total,
    )


def python_entry(i: int) -> tuple[int, str, bool, int | None, str | None]:
    return (100 + i, f"s{i}", i % 2 == 1, None, None)  # odd lines stamped on receipt


def test_javas_entries_pass_through_untouched_when_python_adds_none():
    b = batch([0, 1, 3], 5)
    merged = in_lane_order(b, [])
    assert merged == [[100, 101, 103], ["s0", "s1", "s3"], [True, False, True], [1000, 1001, 1003], ["p0", "p1", "p3"]]


@pytest.mark.parametrize(
    ("fast_at", "python_at"),
    [([1, 2, 4], [0, 3, 5]), ([], [0, 2]), ([0, 1], [2]), ([3, 4], [0, 1, 2]), ([0, 2, 4, 6], [1, 5])],
)
def test_the_entries_of_both_come_out_in_the_order_of_their_lines(fast_at: list[int], python_at: list[int]):
    total = max(fast_at + python_at) + 1
    merged = in_lane_order(batch(fast_at, total), [(i, python_entry(i)) for i in python_at])
    order = sorted(fast_at + python_at)
    assert merged[0] == [100 + i for i in order]
    assert merged[1] == [f"s{i}" for i in order]
    assert merged[2] == [i % 3 == 0 if i in fast_at else i % 2 == 1 for i in order]
    assert merged[3] == [1000 + i if i in fast_at else None for i in order]
    assert merged[4] == [f"p{i}" if i in fast_at else None for i in order]
