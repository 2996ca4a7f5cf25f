"""The golden watermark cases (``tests/golden/watermarks.json``), run on the Python reference.

A case is the rule's settings and a lane's lines as ``[source, event time]`` (time null: a line
without one; ``[source, time, "received"]``: a line stamped on receipt; ``["@clock", now]``: the
wall clock of a live lane, ``received_lag_ms`` in its settings, after a quiet of that lag);
``expect`` is, per line, the watermark in force before it (null: none yet) and the clock flag it
gets. The same file is run against the Java implementation
(``java/src/test/java/ais/flink/ReceiverClocksTest.java``).

    python -m tests.support.golden_watermarks --write    # rewrite ``expect`` from the reference
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ais_pipeline.rules.records import TIME_UNKNOWN
from ais_pipeline.rules.watermarks import ReceiverWatermarks

GOLDEN = Path(__file__).parents[1] / "golden" / "watermarks.json"
CLOCK = "@clock"  # a line ["@clock", now ms]: a live lane's wall clock after a quiet of the lag
RECEIVED = "received"  # a line [source, time, "received"]: stamped on receipt


def run_case(case: dict[str, Any]) -> list[list[Any]]:
    s = case["spec"]
    clocks = ReceiverWatermarks(
        s["out_of_orderness_ms"],
        s["idle_timeout_ms"],
        s["max_clock_skew_ms"],
        s["consensus_lines"],
        s["warm_up_lines"],
        s["jump_lines"],
        s.get("received_lag_ms"),
    )
    out: list[list[Any]] = []
    for source, ts, *kind in case["lines"]:
        before = None if clocks.watermark == TIME_UNKNOWN else clocks.watermark
        if source == CLOCK:
            clocks.tick(ts)
            flag = None
        else:
            flag = clocks.observe(source, TIME_UNKNOWN if ts is None else ts, kind == [RECEIVED])
        out.append([before, flag])
    return out


def load() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text())


def write() -> None:
    golden = load()
    for case in golden["cases"]:
        case["expect"] = run_case(case)
    GOLDEN.write_text(dumps(golden))


def dumps(golden: dict[str, Any]) -> str:
    """The golden file's text: a case's settings on one line, each line and expectation on one."""
    out = ["{", f' "about": {json.dumps(golden["about"])},', ' "cases": [']
    for i, case in enumerate(golden["cases"]):
        out.append("  {")
        out.append(f'   "name": {json.dumps(case["name"])},')
        out.append(f'   "spec": {json.dumps(case["spec"])},')
        for key in ("lines", "expect"):
            rows = ",\n".join("    " + json.dumps(row) for row in case[key])
            out.append(f'   "{key}": [\n{rows}\n   ]' + ("," if key == "lines" else ""))
        out.append("  }" + ("," if i < len(golden["cases"]) - 1 else ""))
    out += [" ]", "}"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
