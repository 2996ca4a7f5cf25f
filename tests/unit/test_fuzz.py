"""Property-based: whatever hostile lines are mixed into a real capture (random and non-UTF-8
bytes, truncated sentences, wrong checksums, broken tag blocks, groups that never complete, very
long lines, invalid JSON, out-of-range coordinates and MMSIs, times in 1970 and 2099), the
pipeline's logic never fails and every line lands in exactly one summary figure."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ais_pipeline import files
from ais_pipeline.config import PipelineConfig
from ais_pipeline.files import read_lines, write_outputs
from ais_pipeline.rules.plain import run_plain
from tests.support.fuzz import SAMPLE_LINES, damaged_line

pytestmark = pytest.mark.unit


def summary_of(feed: bytes) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "feed.nmea"
        path.write_bytes(feed)
        lines = list(read_lines(path))  # decoded and split as Flink's text line format does
        result = run_plain(PipelineConfig(input_path=path), lines)
        write_outputs(result, Path(tmp) / "out")
        return files.summarize(result.tallies, len(lines), Path(tmp) / "out")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False), st.integers(min_value=0, max_value=len(SAMPLE_LINES) - 400))
def test_hostile_lines_mixed_into_a_real_capture_are_each_accounted_for_once(rng: random.Random, start: int):
    real = [line.encode() for line in SAMPLE_LINES[start : start + 400]]
    for _ in range(rng.randrange(1, 80)):
        real.insert(rng.randrange(len(real) + 1), damaged_line(rng))
    summary = summary_of(b"\n".join(real) + b"\n")
    assert summary["accounted_lines"] == summary["lines"]


@pytest.mark.parametrize(
    ("line", "fate"),
    [
        (b"\xff\xfe\x00garbage", ("dead_letter", "not_text")),
        (b"!AIVDM,1,1,,A," + b"1" * 5000 + b",0*00", ("dead_letter", "malformed")),
        (b'{"mmsi": 1', ("dead_letter", "bad_json")),  # a JSON line, by its look
        (
            rb"\s:r1,c:4070908800*00\!AIVDM,1,1,,A,15MgK45P3@G?fl0E`JbR0OwT0@MS,0*4E",
            ("dead_letter", "future_timestamp"),
        ),
        (rb"\s:r1,c:0*00\!AIVDM,1,1,,A,15MgK45P3@G?fl0E`JbR0OwT0@MS,0*4E", ("late", None)),
        (rb"\s:r1,c:\!AIVDM,1,1,,A,15MgK45P3@G?fl0E`JbR0OwT0@MS,0*4E", ("dead_letter", "malformed")),
        (rb"\s:r1,c:1668046497*00\!AIVDM,1,1,,A,15MgK45P3@G?fl0E`JbR0OwT0@MS,0*4F", ("dead_letter", "checksum")),
    ],
)
def test_each_kind_of_damage_gets_its_fate(line: bytes, fate: tuple[str, str | None]):
    # After a part of the capture, so that 1970 is late for every window.
    real = [x.encode() for x in SAMPLE_LINES[:1000]]
    summary = summary_of(b"\n".join([*real, line]) + b"\n")
    baseline = summary_of(b"\n".join(real) + b"\n")
    figure, reason = fate
    if figure == "dead_letter":
        assert summary["dead_letter"][reason] == baseline["dead_letter"].get(reason, 0) + 1  # type: ignore[index,union-attr]
    else:
        assert summary[figure] == baseline[figure] + 1  # type: ignore[operator]
    assert summary["accounted_lines"] == summary["lines"] == 1001
