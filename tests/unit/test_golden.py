"""The golden cases of tests/golden/ on the Python reference; the Java side runs the same files
(``make test-java``), so the two implementations cannot drift apart."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.support import golden_vessel_hours, golden_watermarks, golden_windows

pytestmark = pytest.mark.unit


def _as_set(aggregates: list[dict[str, Any]]) -> Counter[str]:
    return Counter(repr(sorted(a.items())) for a in aggregates)


@pytest.mark.parametrize("case", golden_windows.load()["cases"], ids=lambda c: c["name"][:60])
def test_window_case_gives_the_golden_aggregates_and_leaves_no_state(case: dict[str, Any]):
    emitted = golden_windows.run_case(case)  # raises when state or timers are left and must not be
    for i, (step, out) in enumerate(zip(case["steps"], emitted, strict=True)):
        assert _as_set(out) == _as_set(step["emits"]), f"step {i}"


@pytest.mark.parametrize("case", golden_watermarks.load()["cases"], ids=lambda c: c["name"][:60])
def test_watermark_case_gives_the_golden_watermarks_and_flags(case: dict[str, Any]):
    assert golden_watermarks.run_case(case) == case["expect"]


_HOURS = golden_vessel_hours.load()


@pytest.mark.parametrize("case", _HOURS["cases"], ids=lambda c: c["name"][:60])
def test_vessel_hours_case_gives_the_golden_hours_on_the_plain_loop(case: dict[str, Any]):
    assert golden_vessel_hours.run_reference(_HOURS, case) == case["expect"], case["why"]
