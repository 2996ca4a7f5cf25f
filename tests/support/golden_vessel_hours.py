"""The golden vessel-hours cases (``tests/golden/vessel_hours.json``): the rule as inputs and the
hours they must give, run on the plain loop (the Python reference, one case at a time) and on the
job (every case in one feed, each two hours after the one before: the job must give each case's
hours as the reference gives them alone).

A case is a list of reports, in arrival order, each at ``t`` seconds after the case's start: a
position (``mmsi``, ``lat``, ``lon``) or a type 5 static report (``mmsi``, ``ship_type``). Its
``expect`` is the final tumbling aggregates that hold vessel time (cell, window start in seconds
after the case's start, ``vessel_hours``, ``by_type``), the case's ``late_hours``, and the ``t`` of
each report judged a bad fix.

    python -m tests.support.golden_vessel_hours --write    # rewrite the expected outputs
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ais_pipeline.config import PipelineConfig
from ais_pipeline.rules.dedup import LATE_VESSEL_MS
from ais_pipeline.rules.outputs import final_aggregates, parse_iso_ms
from ais_pipeline.rules.plain import run_plain
from ais_pipeline.rules.windows import hours
from tests.support.nmea import BASE, position, sentences, tagged

GOLDEN = Path(__file__).parents[1] / "golden" / "vessel_hours.json"
CASE_SPACING_S = 7200  # cases this far apart in event time do not touch each other's windows
START_S = BASE - BASE % 3600  # a round hour


def load() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text())


def config(golden: dict[str, Any], **more: Any) -> PipelineConfig:
    return PipelineConfig(**golden["knobs"], **more)


def case_lines(case: dict[str, Any], origin_s: int) -> list[str]:
    """The case's reports as tagged NMEA lines, its start at ``origin_s``."""
    lines: list[str] = []
    for i, r in enumerate(case["reports"]):
        t = origin_s + r["t"]
        if "ship_type" in r:
            fields = {"type": 5, "mmsi": r["mmsi"], "ship_type": r["ship_type"], "shipname": f"CASE {r['mmsi']}"}
            lines += [tagged(s, t) for s in sentences(fields, seq_id=i % 10)]
        else:
            # Speeds differ from report to report: the same payload twice is an exact duplicate.
            lines.append(tagged(position(r["mmsi"], r["lat"], r["lon"], sog=10.0 + (i % 50) / 10), t))
    return lines


# A vessel of its own far from every case (the South Pacific) that reports every few minutes
# between the cases: a feed that goes on, as real ones do, so that the watermark follows it from
# one case to the next (a jump of two hours that a few lines make is the kind of stray the
# watermark rule does not follow). Its hours are left out of the cases'.
FILLER_MMSI = 219999999
FILLER_AT = (-45.0, -120.0)
FILLER_CELL = "3248j2"
FILLER_STEP_S = 240


def feed(golden: dict[str, Any]) -> list[str]:
    """Every case in one feed, case ``k`` starting ``k * CASE_SPACING_S`` after the first, the
    filler vessel's reports between them."""
    lines: list[str] = []
    for k, case in enumerate(golden["cases"]):
        origin = START_S + k * CASE_SPACING_S
        lines += case_lines(case, origin)
        end = max(r["t"] for r in case["reports"]) + origin
        t, i = end + FILLER_STEP_S, 0
        while t <= origin + CASE_SPACING_S - 60:
            lines.append(tagged(position(FILLER_MMSI, *FILLER_AT, sog=1.0 + (i % 50) / 10), t))
            t, i = t + FILLER_STEP_S, i + 1
    return lines


def hours_by_case(
    golden: dict[str, Any],
    aggregates: list[dict[str, Any]],
    late_ms: dict[int, int] | None = None,
    bad_fixes: list[dict[str, Any]] = (),  # type: ignore[assignment]
) -> list[dict[str, Any]]:
    """Each case's expectation from the outputs of a run of :func:`feed` (or of one case: a list
    of one). ``late_ms``: the late vessel time per case index; ``bad_fixes``: the run's bad-fix
    records (each case's by their t)."""
    out: list[dict[str, Any]] = [{"tumbling": [], "late_hours": 0.0, "bad_fixes": []} for _ in golden["cases"]]
    for bad in bad_fixes:
        t = parse_iso_ms(str(bad["timestamp"])) // 1000 - START_S
        out[t // CASE_SPACING_S]["bad_fixes"].append(t % CASE_SPACING_S)
    for case in out:
        case["bad_fixes"].sort()
    for (window, _, _), a in sorted(final_aggregates(aggregates).items()):
        if window != "tumbling" or not a["vessel_hours"] or a["cell"] == FILLER_CELL:
            continue
        start_s = parse_iso_ms(str(a["window_start"])) // 1000 - START_S
        k = start_s // CASE_SPACING_S
        out[k]["tumbling"].append(
            {
                "cell": a["cell"],
                "window_start": start_s - k * CASE_SPACING_S,
                "vessel_hours": a["vessel_hours"],
                "by_type": a["by_type"],
            }
        )
    for k, ms in (late_ms or {}).items():
        out[k]["late_hours"] = hours(ms)
    return out


def run_reference(golden: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
    """One case alone on the plain loop."""
    result = run_plain(config(golden), case_lines(case, START_S), now_ms=(START_S + CASE_SPACING_S) * 1000)
    aggregates = [json.loads(line) for line in result.aggregates]
    bad = [json.loads(line) for line in result.bad_fixes]
    (got,) = hours_by_case({"cases": [case]}, aggregates, {0: result.totals[LATE_VESSEL_MS]}, bad)
    return got


def write() -> None:
    golden = load()
    for case in golden["cases"]:
        case["expect"] = run_reference(golden, case)
    GOLDEN.write_text(json.dumps(golden, indent=1) + "\n")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
