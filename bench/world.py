"""The world's fleet in one job: generated world feeds (``bench.world_feed``: every vessel new and
heard twice) at several fleet sizes, on each state backend, one run each as a whole process.

    python -m bench.world [--vessels 10000,100000,1000000] [--backends hashmap,rocksdb] [--windows tumbling]
        [--write-docs]

For each run: lines/s (the summary's processing time), the peak resident memory of the whole
process tree (the job's JVM and its embedded Python included), and from the REST API, sampled
every second: the largest full checkpoint (the state's size), the median incremental one (what a
checkpoint uploaded: the whole state on the heap backend) and the longest checkpoint. Feeds are
cached in out/bench/; the outputs go to out/bench/world-*/ and are removed after each run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from ais_pipeline.pipeline.ports import unused_port
from bench.files import OUT, ROOT, _tree_rss_kb, measured, publish, shown

DOC = ROOT / "docs" / "performance.md"
MARKER = "world"


def world_feed(vessels: int) -> Path:
    path = OUT / f"world-{vessels}.json"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        with path.open("w") as fh:
            subprocess.run([sys.executable, "-m", "bench.world_feed", "--vessels", str(vessels)], stdout=fh, check=True)
    return path


def _get(port: int, path: str) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as resp:
        return json.load(resp)


def _checkpoints(port: int, seen: dict[int, dict[str, Any]]) -> None:
    """The completed checkpoints of the job behind ``port``, by id, into ``seen``."""
    try:
        (job,) = _get(port, "/jobs/overview")["jobs"]
        for c in _get(port, f"/jobs/{job['jid']}/checkpoints")["history"]:
            if c["status"] == "COMPLETED":
                seen[int(c["id"])] = c
    except (OSError, ValueError, KeyError, TypeError):
        pass


def _lines(path: Path) -> int:
    n = 0
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            n += chunk.count(b"\n")
    return n


def run_one(vessels: int, backend: str, extra: list[str]) -> dict[str, Any]:
    feed = world_feed(vessels)
    out = OUT / f"world-{vessels}-{backend}"
    shutil.rmtree(out, ignore_errors=True)
    port = unused_port()
    cmd = [sys.executable, "-m", "ais_pipeline.cli", "run", "--input", str(feed), "--output", str(out), "--no-wait"]
    cmd += ["--web-ui-port", str(port), "--state-backend", backend, *extra]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak, last = 0, 0.0
    checkpoints: dict[int, dict[str, Any]] = {}
    while proc.poll() is None:
        peak = max(peak, _tree_rss_kb(proc.pid))
        if time.monotonic() - last >= 1:
            last = time.monotonic()
            _checkpoints(port, checkpoints)
        time.sleep(0.2)
    wall = time.monotonic() - started
    err = proc.stderr.read() if proc.stderr else ""
    if proc.returncode != 0:
        raise RuntimeError(f"{shown(cmd)} failed (exit {proc.returncode}): {err[-2000:]}")
    summary = json.loads((out / "summary.json").read_text())
    aggregates = 0
    for part in (out / "aggregates").rglob("*"):
        if part.is_file() and not part.name.startswith((".", "_")):
            aggregates += _lines(part)
    shutil.rmtree(out, ignore_errors=True)
    full = [int(c["state_size"]) for c in checkpoints.values()]
    incremental = [int(c["checkpointed_size"]) for c in checkpoints.values()]
    durations = [int(c["end_to_end_duration"]) for c in checkpoints.values()]
    return {
        "vessels": vessels,
        "backend": backend,
        "lines": summary["lines"],
        "accounted": summary["accounted_lines"],
        "seconds": summary["seconds"],
        "wall": wall,
        "rss_mb": peak / 1024,
        "aggregates": aggregates,
        "checkpoints": len(checkpoints),
        "full_mb": max(full, default=0) / 2**20,
        "incremental_mb": statistics.median(incremental) / 2**20 if incremental else 0.0,
        "longest_checkpoint_s": max(durations, default=0) / 1000,
        "cmd": shown(cmd),
    }


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| vessels (lines) | state backend | lines/s | peak RSS (process tree) | full checkpoint | "
        "median incremental checkpoint | longest checkpoint | aggregates written | every line accounted for |\n"
        "|---|---|---|---|---|---|---|---|---|\n"
    )
    body = "".join(
        f"| {r['vessels']:,} ({r['lines']:,}) | {r['backend']} | {r['lines'] / r['seconds']:,.0f} | "
        f"{r['rss_mb']:,.0f} MB | {r['full_mb']:,.1f} MB | {r['incremental_mb']:,.1f} MB | "
        f"{r['longest_checkpoint_s']:.1f} s | {r['aggregates']:,} | "
        f"{'yes' if r['accounted'] == r['lines'] else 'NO'} |\n"
        for r in rows
    )
    commands = "".join(f"- `{r['cmd']}`\n" for r in rows)
    return head + body + "\nCommands (feeds from `python -m bench.world_feed --vessels N`):\n\n" + commands


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vessels", default="10000,100000,1000000", help="fleet sizes, comma-separated")
    parser.add_argument("--backends", default="hashmap,rocksdb", help="state backends, comma-separated")
    parser.add_argument("--windows", default="tumbling", help="the job's --windows (default: tumbling)")
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/performance.md")
    parser.add_argument("extra", nargs="*", help="more flags of the job (after --)")
    args = parser.parse_args()
    rows = []
    for vessels in (int(v) for v in args.vessels.split(",")):
        for backend in args.backends.split(","):
            row = run_one(vessels, backend, ["--windows", args.windows, *args.extra])
            print(json.dumps(row), flush=True)
            rows.append(row)
    text = measured("python -m bench.world") + "\n\n" + table(rows)
    publish(text, DOC, MARKER, args.write_docs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
