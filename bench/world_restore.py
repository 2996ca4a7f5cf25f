"""A restore of the world's fleet, measured on the standalone cluster of ``scripts/cluster.sh``:
the job reads a watched folder on RocksDB; once a generated world feed (``bench.world_feed``) is
in its state, a tenth of its vessels report again; the job is stopped with a savepoint and
submitted again from it, and one more file arrives.

    python -m bench.world_restore [--vessels 1000000] [--write-docs]

Reported: the full state (the largest completed checkpoint), what the incremental checkpoints
uploaded from the tenth of the vessels reporting again to the first checkpoint after they are all
in (against the full state), the
savepoint's size and the time to take it, and the restore: from the new submission to the first
line of the new file decided by the dedup operator (its ``positions_arrived`` counter), that is
the restored state loaded, the timers registered again, and the job going on.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench.files import OUT, ROOT, measured, publish
from bench.world_feed import APART_S, START, mmsi_of
from bench.world_feed import lines as world_lines

CLUSTER = ROOT / "scripts" / "cluster.sh"
REST = "http://127.0.0.1:8081"
DOC = ROOT / "docs" / "performance.md"
MARKER = "world-restore"
FLAGS = ["--state-backend", "rocksdb", "--windows", "tumbling", "--checkpoint-interval", "10"]


def _get(path: str) -> Any:
    with urllib.request.urlopen(f"{REST}{path}", timeout=10) as resp:
        return json.load(resp)


def _post(path: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        f"{REST}{path}", json.dumps(body).encode(), {"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as resp:
        return json.load(resp)


def arrived(job: str) -> int:
    """The dedup operator's ``positions_arrived``, summed over its subtasks (0 while unknown)."""
    try:
        for vertex in _get(f"/jobs/{job}")["vertices"]:
            if "dedup by MMSI" not in vertex["name"]:
                continue
            base = f"/jobs/{job}/vertices/{vertex['id']}/metrics"
            ids = [m["id"] for m in _get(base) if m["id"].endswith("dedup_by_MMSI.positions_arrived")]
            if ids:
                return sum(int(float(m["value"])) for m in _get(f"{base}?get={','.join(ids)}"))
    except (OSError, ValueError, KeyError):
        pass
    return 0


def completed(job: str) -> list[dict[str, Any]]:
    try:
        return [c for c in _get(f"/jobs/{job}/checkpoints")["history"] if c["status"] == "COMPLETED"]
    except (OSError, ValueError, KeyError):
        return []


def running_jobs() -> set[str]:
    try:
        return {j["jid"] for j in _get("/jobs/overview")["jobs"] if j["state"] == "RUNNING"}
    except (OSError, ValueError, KeyError):
        return set()


def submit(folder: Path, out: Path, savepoint: str = "") -> tuple[str, float, subprocess.Popen[bytes]]:
    """The job on the cluster (``flink run``, left running in the background: a file run waits for
    its job), its id from the REST API, and when it was submitted."""
    env = dict(os.environ, FLINK_RUN_ARGS=f"-s {savepoint}" if savepoint else "")
    cmd = ["bash", str(CLUSTER), "submit", "--input", str(folder), "--follow", "--output", str(out), *FLAGS]
    before = running_jobs()
    started = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    found: list[str] = []

    def new_job() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"{' '.join(cmd)} ended (exit {proc.returncode}) before its job ran")
        found[:] = sorted(running_jobs() - before)
        return bool(found)

    wait_for("the job", new_job, 600)
    return found[0], started, proc


def checkpoint_after(job: str, mark: float) -> dict[str, Any]:
    """The first checkpoint of the job triggered after ``mark`` (epoch seconds), once completed."""
    found: list[dict[str, Any]] = []

    def done() -> bool:
        found[:] = sorted(
            (c for c in completed(job) if c["trigger_timestamp"] / 1000 > mark), key=lambda c: int(c["id"])
        )
        return bool(found)

    wait_for("a checkpoint", done, 900)
    return found[0]


def wait_for(what: str, test: Any, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if test():
            return
        time.sleep(1)
    raise RuntimeError(f"timed out waiting for {what}")


def again(vessels: int, share: float, after_s: int, seed: int = 2, spread_s: int = 300) -> list[str]:
    """A share of the vessels, each reporting once more, over ``spread_s`` seconds from ``after_s``
    seconds after the feed began (a short spread: the watermark moves little, so the checkpoints
    after them hold what these reports changed, not what time passing does to every vessel)."""
    rng = random.Random(seed)
    chosen = sorted(rng.sample(range(vessels), max(1, int(vessels * share))))
    out = []
    for k, n in enumerate(chosen):
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(START + after_s + k * spread_s // len(chosen)))
        out.append(
            f'{{"ssvid":"{mmsi_of(n)}","type":"AIS.1","timestamp":"{ts}.000Z","lat":{rng.uniform(-60, 70):.5f},'
            f'"lon":{rng.uniform(-180, 180):.5f},"speed":0.0,"course":0.0,"heading":511,"receiver_type":"terrestrial"}}'
        )
    return out


def run(vessels: int) -> dict[str, Any]:
    base = OUT / f"world-restore-{vessels}"
    shutil.rmtree(base, ignore_errors=True)
    folder, out = base / "in", base / "out"
    folder.mkdir(parents=True)
    with (folder / "01-world.json").open("w") as fh:
        for line in world_lines(vessels):
            fh.write(line + "\n")
    job, _, first = submit(folder, out)
    wait_for("the feed", lambda: arrived(job) >= 2 * vessels, 7200)
    full = checkpoint_after(job, time.time())
    # A tenth of the vessels report again, within five minutes after the feed: the checkpoints from
    # then until the first one after they are all in upload what they changed (and what the
    # watermark's advance did).
    mark = time.time()
    (folder / "02-again.json").write_text("\n".join(again(vessels, 0.1, 2 * 3600 + APART_S)) + "\n")
    total = 2 * vessels + max(1, int(vessels * 0.1))
    wait_for("the tenth", lambda: arrived(job) >= total, 3600)
    after = checkpoint_after(job, time.time())
    uploads = [c for c in completed(job) if c["trigger_timestamp"] / 1000 > mark and int(c["id"]) <= int(after["id"])]
    incremental, state = sum(int(c["checkpointed_size"]) for c in uploads), int(after["state_size"])
    started = time.monotonic()
    trigger = _post(f"/jobs/{job}/stop", {"targetDirectory": (base / "savepoints").as_uri(), "drain": False})
    location = ""

    def stopped() -> bool:
        nonlocal location
        status = _get(f"/jobs/{job}/savepoints/{trigger['request-id']}")
        if status["status"]["id"] != "COMPLETED":
            return False
        if "failure-cause" in status["operation"]:
            raise RuntimeError(str(status["operation"]["failure-cause"])[:2000])
        location = status["operation"]["location"]
        return True

    wait_for("the savepoint", stopped, 1800)
    savepoint_s = time.monotonic() - started
    savepoint_bytes = sum(f.stat().st_size for f in Path(location.removeprefix("file:")).rglob("*") if f.is_file())
    first.wait(timeout=300)  # the stopped job's `flink run` ends with it
    restored, submitted, second = submit(folder, out, location)
    (folder / "03-later.json").write_text("\n".join(again(vessels, 0.0001, 4 * 3600, seed=3)) + "\n")
    wait_for("the first new line decided", lambda: arrived(restored) > 0, 1800)
    restore_s = time.monotonic() - submitted
    _post(f"/jobs/{restored}/stop", {"targetDirectory": (base / "savepoints").as_uri(), "drain": False})
    try:
        second.wait(timeout=300)
    except subprocess.TimeoutExpired:
        second.kill()
    shutil.rmtree(base, ignore_errors=True)
    return {
        "vessels": vessels,
        "full_mb": int(full["state_size"]) / 2**20,
        "state_mb": state / 2**20,
        "incremental_mb": incremental / 2**20,
        "incremental_checkpoints": len(uploads),
        "savepoint_mb": savepoint_bytes / 2**20,
        "savepoint_s": savepoint_s,
        "restore_s": restore_s,
    }


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| vessels | full state | uploaded by the incremental checkpoints while a tenth reports again | "
        "savepoint | taken in | restore, to the first new line decided |\n|---|---|---|---|---|---|\n"
    )
    body = "".join(
        f"| {r['vessels']:,} | {r['state_mb']:,.1f} MB | {r['incremental_mb']:,.1f} MB "
        f"({r['incremental_mb'] / r['state_mb']:.0%}, {r['incremental_checkpoints']} checkpoints) | "
        f"{r['savepoint_mb']:,.1f} MB | {r['savepoint_s']:.1f} s | "
        f"{r['restore_s']:.1f} s |\n"
        for r in rows
    )
    return head + body + f"\nThe job's flags: `{' '.join(FLAGS)}`, on two one-slot TaskManagers at parallelism 1.\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vessels", default="1000000", help="fleet sizes, comma-separated")
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    rows = []
    subprocess.run(["bash", str(CLUSTER), "start"], check=True, capture_output=True, timeout=300)
    try:
        for vessels in (int(v) for v in args.vessels.split(",")):
            rows.append(run(vessels))
            print(json.dumps(rows[-1]), flush=True)
    finally:
        subprocess.run(["bash", str(CLUSTER), "stop"], capture_output=True, timeout=300)
    publish(measured("python -m bench.world_restore") + "\n\n" + table(rows), DOC, MARKER, args.write_docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
