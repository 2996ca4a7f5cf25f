"""The job and the plain loop on the same input, and their outputs compared: what a test of the
whole job asserts. The plain loop (:mod:`ais_pipeline.rules.plain`) runs the same rules with
Flink's event-time rules in one loop; the job must give the same records, and the same final
aggregates, at any parallelism."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from ais_pipeline.config import SAMPLE_INPUT, PipelineConfig, with_input_time
from ais_pipeline.files import read_lines, read_records, write_outputs
from ais_pipeline.rules.outputs import final_aggregates
from ais_pipeline.rules.plain import PlainPipeline, PlainResult, run_plain

ROOT = Path(__file__).resolve().parents[2]


def run_job(input_path: Path, output: Path, *flags: str) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "ais_pipeline.jobs.ais_traffic", "--input", str(input_path), "--output", str(output)]
    cmd += ["--web-ui-port", "0", *flags]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads((output / "summary.json").read_text())  # type: ignore[no-any-return]


def run_oracle(input_path: Path, output: Path, **knobs: Any) -> None:
    """The plain loop on a file, with the time a file run gives its lines without one (a live
    input's knobs: as a live run, whose lines take the clock's)."""
    config = with_input_time(PipelineConfig(input_path=input_path, **knobs))
    write_outputs(run_plain(config, list(read_lines(input_path))), output)


final = final_aggregates  # the highest revision of every (window, cell, window start)


def assert_same_outputs(job: Path, oracle: Path) -> None:
    # Each vessel's reports reach the dedup rules in input order at any parallelism, so even which
    # receiver's copy of a static report is kept is the plain loop's.
    for name in ("positions", "static", "late", "dead_letter", "bad_fixes", "gaps", "port_visits", "loitering",
                 "encounters"):  # fmt: skip

        def canonical(directory: Path, name: str = name) -> list[str]:
            return sorted(json.dumps(r, sort_keys=True) for r in read_records(directory / name))

        assert canonical(job) == canonical(oracle), name
    got_aggs, want_aggs = read_records(job / "aggregates"), read_records(oracle / "aggregates")
    strip = lambda m: {k: {f: v for f, v in a.items() if f != "revision"} for k, a in m.items()}  # noqa: E731
    assert strip(final(got_aggs)) == strip(final(want_aggs))
    # Every window's firings are revisions 0, 1, 2, ... without gaps.
    seen: dict[tuple[str, str, str], list[int]] = {}
    for a in got_aggs:
        seen.setdefault((a["window"], a["cell"], a["window_start"]), []).append(a["revision"])
    assert all(sorted(revs) == list(range(len(revs))) for revs in seen.values())


# The bundled sample's summary.json figures (what the Kafka tests read from the metrics, too).
SAMPLE_SUMMARY: dict[str, Any] = {
    "lines": 10000,
    "positions_kept": 7294,
    "duplicates_exact": 881,
    "duplicates_near": 3,
    "static_kept": 926,
    "static_duplicates": 3,
    "no_position": 42,
    "other_types": 231,
    "fragments_joined": 619,
    "late": 0,
    "dead_letter": {"incomplete_multipart": 1},
    "late_records": {"tumbling": 230, "sliding": 0},
    "late_hours": 0.0,
    "bad_fixes": 0,
    "accounted_lines": 10000,
}


def sample_while_running() -> PlainResult:
    """The bundled sample through the plain loop without an end of input: what a job that has
    read every line and goes on running (a --follow or live Kafka run) has decided. Positions
    are judged once the watermark passes them, and it stands where the sample leaves it."""
    pipeline = PlainPipeline(PipelineConfig(input_path=SAMPLE_INPUT), now_ms=1_800_000_000_000)
    pipeline.feed(read_lines(SAMPLE_INPUT))
    return pipeline.out


# What a running job has judged of the sample once it has read every line (sample_while_running).
RUNNING_KEPT = 107
RUNNING_LATE_TUMBLING = 44
