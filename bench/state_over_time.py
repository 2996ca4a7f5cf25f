"""State over a long replay: does the dedup state level off while vessels come and go?

    python -m bench.state_over_time --copies 40 --out docs/state-over-time

Generates a feed of COPIES x 10,000 lines (the bundled capture, every copy 330 s later and other
vessels: bench.make_feed --new-vessels), runs the job on it in a local mini-cluster watching
a directory (unbounded, so nothing is flushed at the end), and samples through the REST API every
second: the dedup operator's `dedup_keys_held` gauge (vessels held with their dedup state) and
`gap_keys_held` gauge (vessels silent past the retention, kept only for the gap their return would
close), its watermark, and the size of the latest completed checkpoint. Writes OUT.csv and
OUT.png (keys held and checkpoint size against event time, next to the vessels seen so far).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from ais_pipeline.pipeline.ports import unused_port as free_port
from ais_pipeline.pipeline.progress import metric_query
from ais_pipeline.resources import CHECKOUT as ROOT


def get(base: str, path: str) -> Any:
    with urllib.request.urlopen(base + path, timeout=10) as resp:
        return json.load(resp)


def sample(base: str) -> dict[str, float] | None:
    """One sample of the running job: lines read, keys held, watermark, checkpoint bytes."""
    jobs = get(base, "/jobs")["jobs"]
    if not jobs:
        return None
    job = jobs[0]["id"]
    detail = get(base, f"/jobs/{job}")
    row: dict[str, float] = {"wall": time.time(), "lines": 0.0, "keys_held": 0.0, "gap_keys_held": 0.0}
    for vertex in detail["vertices"]:
        path = f"/jobs/{job}/vertices/{vertex['id']}"
        names = {".lines": "lines", ".dedup_keys_held": "keys_held", ".gap_keys_held": "gap_keys_held"}
        ids = [m["id"] for m in get(base, path + "/metrics") if m["id"].endswith(tuple(names))]
        if ids:
            for metric in get(base, f"{path}/metrics?get={metric_query(ids)}"):
                name = next(v for k, v in names.items() if metric["id"].endswith(k))
                row[name] += float(metric["value"])
        if "cell windows" in vertex["name"]:  # right after the dedup operator, with its watermark
            marks = get(base, path + "/watermarks")
            row["watermark"] = float(min(int(m["value"]) for m in marks))
    latest = get(base, f"/jobs/{job}/checkpoints")["latest"]["completed"]
    row["checkpoint_bytes"] = float(latest["checkpointed_size"]) if latest else 0.0
    return row


def vessels_seen(feed: Path) -> list[tuple[int, int]]:
    """(event time, vessels seen up to then), from the plain pipeline's kept positions."""
    from ais_pipeline.config import PipelineConfig
    from ais_pipeline.files import read_lines
    from ais_pipeline.rules.outputs import parse_iso_ms
    from ais_pipeline.rules.plain import run_plain

    result = run_plain(PipelineConfig(input_path=feed), list(read_lines(feed)))
    points = sorted((parse_iso_ms(p["timestamp"]), p["mmsi"]) for p in map(json.loads, result.positions))
    seen: set[int] = set()
    curve = []
    for ts, mmsi in points:
        seen.add(mmsi)
        curve.append((ts, len(seen)))
    return curve


def run(copies: int, static_ttl: int, out: Path) -> list[dict[str, float]]:
    work = Path(tempfile.mkdtemp(prefix="ais-state-"))
    watched = work / "in"
    watched.mkdir()
    feed = work / "turnover.nmea"
    with feed.open("w") as fh:
        subprocess.run(
            [sys.executable, "-m", "bench.make_feed", "--copies", str(copies), "--new-vessels"],
            stdout=fh,
            check=True,
        )
    total = sum(1 for _ in feed.open())
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "ais_pipeline.jobs.ais_traffic",
        "--input",
        str(watched),
        "--follow",
        "--output",
        str(work / "o"),
    ]
    cmd += ["--web-ui-port", str(port), "--static-ttl", str(static_ttl), "--checkpoint-interval", "2"]
    log = (work / "job.log").open("w")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    rows: list[dict[str, float]] = []
    try:
        time.sleep(8)
        os.replace(feed, watched / feed.name)  # the job picks the file up at once
        stable = 0
        deadline = time.monotonic() + 60 + total / 500
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                row = sample(base)
            except (OSError, KeyError, ValueError):
                row = None
            if row is not None and row.get("watermark", -1) > 0:
                rows.append(row)
                done = row["lines"] >= total
                same = len(rows) > 1 and all(rows[-2][k] == row[k] for k in ("keys_held", "gap_keys_held"))
                stable = stable + 1 if done and same else 0
                if stable >= 3:
                    break
            time.sleep(1)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
        log.close()
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.with_suffix(".csv").open("w", newline="") as fh:
        names = ["wall", "lines", "keys_held", "gap_keys_held", "watermark", "checkpoint_bytes"]
        writer = csv.DictWriter(fh, fieldnames=names)
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, vessels_seen(watched / feed.name), out.with_suffix(".png"), static_ttl)
    return rows


def plot(rows: list[dict[str, float]], seen: list[tuple[int, int]], png: Path, static_ttl: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t0 = min(r["watermark"] for r in rows)
    hours = [(r["watermark"] - t0) / 3_600_000 for r in rows]
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    ax.plot(
        [(t - t0) / 3_600_000 for t, _ in seen], [n for _, n in seen], color="0.6", ls="--", label="vessels seen so far"
    )
    ax.plot(hours, [r["keys_held"] for r in rows], color="tab:blue", lw=2, label="dedup keys held (gauge)")
    gap_only = [r["gap_keys_held"] for r in rows]
    ax.plot(hours, gap_only, color="tab:green", lw=1.5, label="kept for their gap only (gauge)")
    ax.set_xlabel("event time (watermark), hours since the first window")
    ax.set_ylabel("vessels")
    ax.set_xlim(left=0)
    ax2 = ax.twinx()
    ax2.plot(hours, [r["checkpoint_bytes"] / 1e6 for r in rows], color="tab:orange", lw=1.5, label="checkpoint size")
    ax2.set_ylabel("checkpoint size, MB")
    lines = ax.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], loc="upper left")
    ax.set_title(f"State over a replay with vessel turnover (static TTL {static_ttl} s)")
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=40)
    parser.add_argument("--static-ttl", type=int, default=1800)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "state-over-time")
    args = parser.parse_args()
    rows = run(args.copies, args.static_ttl, args.out)
    peak = max(r["keys_held"] for r in rows)
    last = rows[-1]
    print(
        f"{len(rows)} samples; keys held peak {peak:.0f}, last {last['keys_held']:.0f}"
        f" (and {last['gap_keys_held']:.0f} kept for their gap only); wrote {args.out}.png"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
