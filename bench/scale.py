"""Scaling out, measured: the Kafka job on the standalone cluster of ``scripts/cluster.sh`` (two
TaskManagers of one slot each) reading a topic of two partitions, at parallelism 1 and 2.

    python -m bench.scale [--lines 400000] [--write-docs]

The benchmark feed is replayed into a 2-partition topic of a local KRaft broker; the job runs
``--bounded`` from the earliest offsets at each parallelism. Its steady-state rate is read from
its own metrics (the parse operator's ``lines`` counters, summed over subtasks, sampled every
second through the REST API) between 20 % and 80 % of the feed, so that start-up and the end are
left out. The CPU of the broker, the JobManager and the TaskManagers over the same stretch is
given as a share of one core. Everything runs on this machine. With --write-docs the table
replaces the one between the bench-scale markers of docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from ais_pipeline.pipeline.progress import metric_query
from ais_pipeline.resources import CHECKOUT as ROOT
from bench.files import feed, measured, publish
from bench.live import BROKER_PIDS, kafka_broker

PY = sys.executable
CLUSTER = ROOT / "scripts" / "cluster.sh"
DOCS = ROOT / "docs" / "performance.md"
REST = "http://127.0.0.1:8081"


def _get(path: str) -> Any:
    with urllib.request.urlopen(f"{REST}{path}", timeout=10) as resp:
        return json.load(resp)


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pids(pattern: str) -> list[int]:
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()
    return [int(p) for p in found]


def lines_read(job: str) -> int:
    total = 0
    for vertex in _get(f"/jobs/{job}")["vertices"]:
        base = f"/jobs/{job}/vertices/{vertex['id']}/metrics"
        ids = [m["id"] for m in _get(base) if m["id"].endswith(".parse_lines.lines")]
        if ids:
            total += sum(int(float(m["value"])) for m in _get(f"{base}?get={metric_query(ids)}"))
    return total


def run_at(bootstrap: str, topic: str, lines: int, parallelism: int, broker_pid: int) -> dict[str, Any]:
    name = f"scale-p{parallelism}-{int(time.time())}"
    cmd = ["bash", str(CLUSTER), "submit", "--source", "kafka", "--bootstrap-servers", bootstrap, "--topic", topic]
    cmd += ["--bounded", "--starting-offsets", "earliest", "--group-id", name, "--output-topic-prefix", f"{name}."]
    cmd += ["--parallelism", str(parallelism)]
    submitted = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    found = re.search(r"submitted job ([0-9a-f]{32})", submitted.stdout)
    if not found:
        raise RuntimeError(submitted.stdout[-2000:] + submitted.stderr[-2000:])
    job = found.group(1)
    processes = {
        "broker": [broker_pid],
        "JobManager": _pids("StandaloneSessionClusterEntrypoint"),
        "TaskManagers": _pids("TaskManagerRunner"),
    }
    marks: dict[str, tuple[float, int, dict[str, float]]] = {}
    started = time.monotonic()
    while time.monotonic() - started < 900:
        state = _get(f"/jobs/{job}")["state"]
        try:
            read = lines_read(job)
        except (OSError, ValueError, KeyError):
            read = 0
        now = time.monotonic()
        cpu = {k: sum(_cpu(p) for p in pids) for k, pids in processes.items()}
        for mark, share in (("from", 0.2), ("to", 0.8)):
            if mark not in marks and read >= lines * share:
                marks[mark] = (now, read, cpu)
        if state in ("FINISHED", "FAILED", "CANCELED"):
            break
        time.sleep(1)
    wall = time.monotonic() - started
    if "from" not in marks or "to" not in marks:
        raise RuntimeError(f"job {job} ended {state} before its steady state could be measured")
    (t0, n0, c0), (t1, n1, c1) = marks["from"], marks["to"]
    return {
        "parallelism": parallelism,
        "state": state,
        "wall": round(wall, 1),
        "steady_lines_per_s": round((n1 - n0) / (t1 - t0)),
        "core_share": {k: round((c1[k] - c0[k]) / (t1 - t0), 2) for k in c0},
    }


def table(lines: int, rows: list[dict[str, Any]]) -> str:
    out = [
        f"| {lines:,} lines, topic of 2 partitions | steady state lines/s (job metrics) | whole run, s "
        "| broker, share of a core | JobManager | TaskManagers |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        share = r["core_share"]
        out.append(
            f"| parallelism {r['parallelism']} | {r['steady_lines_per_s']:,} | {r['wall']} | {share['broker']:.2f} "
            f"| {share['JobManager']:.2f} | {share['TaskManagers']:.2f} |"
        )
    if len(rows) == 2:
        out.append("")
        out.append(
            f"Parallelism 2 over 1, steady state: {rows[1]['steady_lines_per_s'] / rows[0]['steady_lines_per_s']:.2f}x"
            " (target: at least 1.6x)."
        )
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=400_000)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    path = feed(args.lines)
    lines = sum(1 for _ in path.open())
    rows = []
    with kafka_broker() as bootstrap:
        subprocess.run(
            [PY, "-m", "ais_pipeline.cli", "replay", str(path), "--topic", "scale", "--partitions", "2",
             "--bootstrap-servers", bootstrap, "--no-progress"],
            cwd=ROOT, check=True, capture_output=True, timeout=600,
        )  # fmt: skip
        subprocess.run(["bash", str(CLUSTER), "start"], check=True, capture_output=True, timeout=300)
        try:
            for parallelism in (1, 2):
                rows.append(run_at(bootstrap, "scale", lines, parallelism, BROKER_PIDS[bootstrap]))
                print(json.dumps(rows[-1]), flush=True)
        finally:
            subprocess.run(["bash", str(CLUSTER), "stop"], capture_output=True, timeout=300)
    text = measured("python -m bench.scale") + "\n\n" + table(lines, rows)
    publish(text, DOCS, "bench-scale", args.write_docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
