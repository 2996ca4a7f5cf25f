"""The golden dialect cases (``tests/golden/dialects.json``): real lines of every input dialect
and what the rules make of them, run on the plain loop here and through the job by
``tests/flink/test_dialects.py``.

A case is a few lines of one dialect (with where they come from); ``expect`` holds the run's
figures, its positions as ``[mmsi, msg_type, timestamp, lat, lon, sog, cog, heading, receiver]``
(timestamp ``"ingestion"``: the line carried no time), its static records (without ``id``) and
its dead letters as ``[reason, detail]``. Each case is run on its own, at the wall clock
:data:`NOW_MS`.

    python -m tests.support.golden_dialects --write    # rewrite ``expect`` from the plain loop
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ais_pipeline.config import PipelineConfig
from ais_pipeline.files import summarize, write_outputs
from ais_pipeline.rules import outputs
from ais_pipeline.rules.plain import run_plain

GOLDEN = Path(__file__).parents[1] / "golden" / "dialects.json"
NOW_MS = 1_798_761_600_000  # 2027-01-01T00:00:00Z: the wall clock of these runs
INGESTION = "ingestion"
FIGURES = (
    "positions_kept", "duplicates_exact", "duplicates_near", "static_kept", "static_duplicates", "no_position",
    "other_types", "not_ais", "skipped", "fragments_joined", "no_time", "time_disagreements", "late",
)  # fmt: skip


def load() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text())  # type: ignore[no-any-return]


def position_row(p: dict[str, Any], now_ms: int | None = NOW_MS) -> list[Any]:
    """A position as a golden row; a timestamp at ``now_ms`` (None: any run's, at or after the
    input's own times) is the ingestion time."""
    ts = outputs.parse_iso_ms(p["timestamp"])
    ingested = ts == now_ms if now_ms is not None else ts >= NOW_MS - 366 * 86_400_000
    stamp = INGESTION if ingested else p["timestamp"]
    return [p["mmsi"], p["msg_type"], stamp, p["lat"], p["lon"], p["sog"], p["cog"], p["heading"], p["receiver"]]


def static_row(s: dict[str, Any], now_ms: int | None = NOW_MS) -> dict[str, Any]:
    row = {k: v for k, v in s.items() if k != "id"}
    ts = outputs.parse_iso_ms(s["timestamp"])
    if (ts == now_ms) if now_ms is not None else ts >= NOW_MS - 366 * 86_400_000:
        row["timestamp"] = INGESTION
    return row


def expected_of(
    records: dict[str, list[dict[str, Any]]], summary: dict[str, Any], now_ms: int | None
) -> dict[str, Any]:
    """What a run's outputs say, in the golden form."""
    dead = summary.get("dead_letter", {})
    return {
        "summary": {k: summary[k] for k in FIGURES if summary.get(k)} | ({"dead_letter": dead} if dead else {}),
        "positions": sorted((position_row(p, now_ms) for p in records["positions"]), key=json.dumps),
        "static": sorted((static_row(s, now_ms) for s in records["static"]), key=json.dumps),
        "dead_letter": sorted([d["reason"], d.get("detail", "")] for d in records["dead_letter"]),
    }


def run_case(case: dict[str, Any], tmp: Path) -> dict[str, Any]:
    """One case through the plain loop, in its golden form."""
    path = tmp / "case.txt"
    path.write_text("".join(line + "\n" for line in case["lines"]))
    config = PipelineConfig(input_path=path, input_format=case.get("input_format", "auto"))
    result = run_plain(config, list(case["lines"]), now_ms=NOW_MS)
    out = tmp / "out"
    write_outputs(result, out)
    summary = summarize(result.tallies, len(case["lines"]), out)
    records = {name: [json.loads(r) for r in result.named()[name]] for name in ("positions", "static", "dead_letter")}
    return expected_of(records, summary, NOW_MS)


def dumps(golden: dict[str, Any]) -> str:
    """The golden file's text: one line per input line and per expected record."""

    def block(items: list[Any], indent: str) -> str:
        if not items:
            return "[]"
        return (
            "[\n" + ",\n".join(indent + "  " + json.dumps(i, ensure_ascii=False) for i in items) + "\n" + indent + "]"
        )

    out = ["{", f' "about": {json.dumps(golden["about"])},', ' "cases": [']
    for i, case in enumerate(golden["cases"]):
        head = {k: v for k, v in case.items() if k not in ("lines", "expect")}
        out.append("  {")
        for key, value in head.items():
            out.append(f"   {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},")
        out.append(f'   "lines": {block(case["lines"], "   ")},')
        expect = case.get("expect", {})
        out.append('   "expect": {')
        out.append(f'    "summary": {json.dumps(expect.get("summary", {}))},')
        for j, key in enumerate(("positions", "static", "dead_letter")):
            comma = "," if j < 2 else ""
            out.append(f'    "{key}": {block(expect.get(key, []), "    ")}{comma}')
        out.append("   }")
        out.append("  }" + ("," if i < len(golden["cases"]) - 1 else ""))
    out += [" ]", "}"]
    return "\n".join(out) + "\n"


def write() -> None:
    import tempfile

    golden = load()
    for case in golden["cases"]:
        with tempfile.TemporaryDirectory() as tmp:
            case["expect"] = run_case(case, Path(tmp))
    GOLDEN.write_text(dumps(golden))


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
