"""The benchmark behind `make bench`: the same seeded feed through every alternative, as whole
processes, several times each.

    python -m bench.files [--sizes 50000,200000] [--repeat 2] [--parallelism 1,2] [--write-docs]

Alternatives: the pyais decode-only loop (every single-sentence line decoded, nothing else: the
ceiling for this decoder), the plain single-process implementation of the spec
(`python -m ais_pipeline.tools.plain`), the lean loop written for speed (`python -m
bench.lean_loop`: the same outputs, windows added up at the end; the speed baseline), and the
Flink job in a local mini-cluster at each parallelism
and, at each parallelism N above 1, on N local TaskManager processes (`--taskmanagers N`), with
checkpointing on as flink-conf/ sets it. Feeds come from bench.gen_feed (seed 1) and are
cached in out/bench/. Prints the targets with the commands behind each figure, where the CPU of
one run at parallelism 1 on the largest feed goes (by thread group, and the Python and Java
sides per line: bench.threads), lines/s, peak RSS, and the ratios job/plain and job/decode; with
--write-docs the table replaces the one between the bench markers of docs/performance.md, with the machine it
ran on.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ais_pipeline.files import read_lines
from ais_pipeline.pipeline.ports import unused_port
from ais_pipeline.resources import CHECKOUT as ROOT

OUT = ROOT / "out" / "bench"
STARTUP_LINES = 1_000
LEAN = "lean Python loop (the speed baseline)"
PY = sys.executable


MEET = 0.01  # the fraction of the benchmark feeds' fleet in pairs side by side


def feed(size: int, vessels: int | None = None) -> Path:
    """The seeded benchmark feed of ``size`` lines (``vessels``: its fleet, by default about 480
    lines per vessel and hour), 1 % of its fleet in pairs side by side."""
    path = OUT / (f"feed-{size}-meet.nmea" if vessels is None else f"feed-{size}-{vessels}-vessels-meet.nmea")
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        fleet = [] if vessels is None else ["--vessels", str(vessels)]
        with path.open("w") as fh:
            subprocess.run(
                [PY, "-m", "bench.gen_feed", "--lines", str(size), "--seed", "1", *fleet, "--meet", str(MEET)],
                stdout=fh,
                check=True,
            )
    return path


def noaa_feed(rows: int) -> Path:
    """The vessel model as a NOAA day, zstd-compressed as the archive ships it."""
    path = OUT / f"noaa-{rows}.csv.zst"
    if not path.exists():
        import zstandard

        OUT.mkdir(parents=True, exist_ok=True)
        made = subprocess.run(
            [PY, "-m", "bench.gen_feed", "--format", "noaa", "--lines", str(rows), "--seed", "1"],
            capture_output=True, check=True,
        )  # fmt: skip
        path.write_bytes(zstandard.ZstdCompressor(level=3).compress(made.stdout))
    return path


def noaa_parquet_feed(rows: int) -> Path:
    """The same NOAA day as a GeoParquet file in NOAA's 2024 schema (int32 MMSI, millisecond
    times, float32 speeds, a WKB point per row, snappy), as NOAA publishes its 2024 days."""
    path = OUT / f"noaa-{rows}.parquet"
    if path.exists():
        return path
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    # The generator's damaged rows (text in a number or time field) become nulls here.
    frame = pd.read_csv(noaa_feed(rows), dtype=str, keep_default_na=False, compression="zstd")
    ints = ("mmsi", "heading", "vessel_type", "status", "width", "cargo")
    floats = ("longitude", "latitude", "sog", "cog", "length", "draft")
    for name in ints:
        number = pd.to_numeric(frame[name], errors="coerce")
        frame[name] = number.where(number.abs() < 2**31).astype("Int32")
    for name in floats:
        frame[name] = pd.to_numeric(frame[name], errors="coerce")
    frame["base_date_time"] = pd.to_datetime(frame["base_date_time"], format="%Y-%m-%d %H:%M:%S", errors="coerce")
    types = {
        "mmsi": pa.int32(), "base_date_time": pa.timestamp("ms"), "longitude": pa.float64(),
        "latitude": pa.float64(), "sog": pa.float32(), "cog": pa.float32(), "heading": pa.int32(),
        "vessel_name": pa.string(), "imo": pa.string(), "call_sign": pa.string(), "vessel_type": pa.int32(),
        "status": pa.int32(), "length": pa.float32(), "width": pa.int32(), "draft": pa.float32(),
        "cargo": pa.int32(), "transceiver": pa.string(),
    }  # fmt: skip
    table = pa.Table.from_pandas(frame, schema=pa.schema(list(types.items())), preserve_index=False)
    lon = table.column("longitude").to_numpy(zero_copy_only=False)
    lat = table.column("latitude").to_numpy(zero_copy_only=False)  # NaN where null: an empty point
    points = np.zeros(len(lon), dtype=[("order", "u1"), ("kind", "<u4"), ("x", "<f8"), ("y", "<f8")])
    points["order"], points["kind"], points["x"], points["y"] = 1, 1, lon, lat
    wkb = pa.FixedSizeBinaryArray.from_buffers(pa.binary(21), len(lon), [None, pa.py_buffer(points.tobytes())])
    table = table.drop_columns(["longitude", "latitude"]).append_column("geometry", wkb.cast(pa.binary()))
    geo = {"version": "1.0.0", "primary_column": "geometry",
           "columns": {"geometry": {"encoding": "WKB", "geometry_types": ["Point"]}}}  # fmt: skip
    table = table.replace_schema_metadata({b"geo": json.dumps(geo).encode()})
    pq.write_table(table, path, compression="snappy")
    return path


def parse_only(path: Path) -> int:
    """What the job's first steps cost in Python: the file decompressed and every line parsed
    into a report (the lane parser), nothing decided."""
    from ais_pipeline.files import read_lines
    from ais_pipeline.rules.lane import DictGroupStores, LaneParser

    parser, groups, n = LaneParser("auto", 300_000, 60_000), DictGroupStores(), 0
    for line in read_lines(path):
        if parser.line(line, 1 << 62, groups) is not None:
            n += 1
    return n


def decode_only(path: Path) -> int:
    """The decoder's ceiling: pyais decodes the payload of every single-sentence line."""
    from pyais import NMEAMessage

    n = 0
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            start = line.find("!")
            if start < 0 or ",1,1," not in line:
                continue
            try:
                NMEAMessage.from_string(line[start:].strip()).decode()
                n += 1
            except Exception:
                continue
    return n


def _tree_rss_kb(root: int) -> int:
    """Resident memory of a process and all its descendants (the job's JVM is one), in KB."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            status = (entry / "status").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
        found = re.search(r"VmRSS:\s+(\d+)", status)
        rss[int(entry.name)] = int(found.group(1)) if found else 0
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total


def _tree_cpu(root: int, seen: dict[int, float]) -> None:
    """Record the CPU seconds (user + system) so far of a process and its descendants into
    ``seen`` (pid -> seconds): summed at the end, it is the tree's CPU time, the JVM's included,
    to the last sample."""
    ticks = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    cpu: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
        cpu[int(entry.name)] = (int(fields[11]) + int(fields[12])) / ticks
    todo = [root]
    while todo:
        pid = todo.pop()
        if pid in cpu:
            seen[pid] = max(seen.get(pid, 0.0), cpu[pid])
        todo.extend(children.get(pid, []))


def _state(port: int) -> tuple[int, int] | None:
    """(bytes of the latest completed checkpoint, vessels held in any form) of the job running
    behind ``port``, or None when it cannot tell yet."""
    import json
    import urllib.request

    def get(path: str) -> Any:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as resp:
            return json.load(resp)

    try:
        (job,) = get("/jobs/overview")["jobs"]
        latest = get(f"/jobs/{job['jid']}/checkpoints")["latest"]["completed"]
        if not latest:
            return None
        held = 0
        for vertex in get(f"/jobs/{job['jid']}")["vertices"]:
            base = f"/jobs/{job['jid']}/vertices/{vertex['id']}/metrics"
            # Those held with their dedup state and those kept for their gap alone.
            ids = [m["id"] for m in get(base) if m["id"].endswith((".dedup_keys_held", ".gap_keys_held"))]
            if ids and len(ids) < 2 * int(vertex["parallelism"]):
                return None  # a TaskManager's metrics are not fetched yet
            if ids:
                held += sum(int(float(m["value"])) for m in get(f"{base}?get={','.join(ids)}"))
        return int(latest["checkpointed_size"]), held
    except (OSError, ValueError, KeyError, TypeError):
        return None


def timed(cmd: list[str], port: int | None = None) -> tuple[float, float, float | None, float]:
    """Wall seconds, peak resident memory in MB and CPU seconds of one whole process tree (JVM
    included), sampled every 0.2 s; for a job with a web UI on ``port``, the largest checkpoint's
    bytes per vessel held, sampled every second."""
    with tempfile.TemporaryFile("w+") as err:
        started = time.monotonic()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err, text=True)
        peak = 0
        per_vessel: float | None = None
        last_sample = 0.0
        cpu_seen: dict[int, float] = {}
        while proc.poll() is None:
            peak = max(peak, _tree_rss_kb(proc.pid))
            _tree_cpu(proc.pid, cpu_seen)
            if port is not None and time.monotonic() - last_sample >= 1:
                last_sample = time.monotonic()
                state = _state(port)
                if state and state[1]:
                    per_vessel = max(per_vessel or 0.0, state[0] / state[1])
            time.sleep(0.2)
        wall = time.monotonic() - started
        if proc.returncode != 0:
            err.seek(0)
            log = OUT / f"failed-{int(time.time())}.log"
            log.write_text(" ".join(cmd) + "\n" + err.read())
            raise RuntimeError(f"{' '.join(cmd)} failed (exit {proc.returncode}): its stderr is in {log}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    waited = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)  # the root, to its end
    cpu = max(waited, sum(cpu_seen.values()))  # descendants the root did not wait for: as last sampled
    return wall, peak / 1024, per_vessel, cpu


def shown(cmd: list[str]) -> str:
    """A command as a reader would type it in the checkout: ``python``, paths relative to it, a
    scratch output folder as OUT."""
    words = []
    for word in cmd:
        if word == PY:
            word = "python"
        elif word == __file__:
            word = "bench/files.py"
        elif word.startswith(f"{ROOT}/"):  # first: the checkout itself may be in the temporary folder
            word = word[len(f"{ROOT}/") :]
        elif word.startswith(tempfile.gettempdir()):
            word = "OUT"
        words.append(word)
    return " ".join(words)


def run(
    sizes: list[int],
    repeat: int,
    parallelisms: list[int],
    only: set[str] | None = None,
    vessels: int | None = None,
    baseline: str | None = None,
) -> list[dict[str, Any]]:
    """Every alternative (``only``: those of these names) on the feed of each size (``vessels``:
    its fleet), ``repeat`` times each, in turns (A B C A B C: the machine's speed drifts);
    ``baseline``: the job of that commit at parallelism 1 too (:mod:`bench.baseline`)."""
    rows: list[dict[str, Any]] = []
    for size in sizes:
        path = feed(size, vessels)
        lines = sum(1 for _ in path.open())
        plain_out = Path(tempfile.mkdtemp(prefix="bench-plain-"))
        alternatives: list[tuple[str, list[str], bool]] = [
            ("pyais decode only", [PY, __file__, "--decode-only", str(path)], False),
            (
                "plain Python loop",
                [PY, "-m", "ais_pipeline.tools.plain", "--input", str(path), "--output", str(plain_out)],
                False,
            ),
            (
                LEAN,
                [PY, "-m", "bench.lean_loop", "--input", str(path), "--output", str(plain_out)],
                False,
            ),
        ]
        variants = job_variants(parallelisms)
        if 1 in parallelisms:  # what gap events, port visits, loitering and encounters cost: each off
            variants.append((GAPS_OFF, ["--parallelism", "1", "--gap-hours", "0"]))
            variants.append((PORTS_OFF, ["--parallelism", "1", "--ports", "off"]))
            variants.append((LOITERING_OFF, ["--parallelism", "1", "--loitering-hours", "0"]))
            variants.append((ENCOUNTERS_OFF, ["--parallelism", "1", "--encounter-hours", "0"]))
        for name, flags in variants:
            out = Path(tempfile.mkdtemp(prefix="bench-"))
            job = [PY, "-m", "ais_pipeline.jobs.ais_traffic", "--input", str(path), "--output", str(out)]
            alternatives.append((name, [*job, *flags], True))
        if baseline is not None:
            from bench.baseline import job_command

            out = Path(tempfile.mkdtemp(prefix="bench-"))
            cmd = [*job_command(baseline), "--input", str(path), "--output", str(out), "--parallelism", "1"]
            alternatives.append((baseline_name(baseline), cmd, True))
        chosen = [a for a in alternatives if only is None or a[0] in only or a[0] == baseline_name(baseline)]
        measured: dict[str, dict[str, list[float]]] = {name: {} for name, _, _ in chosen}
        for _ in range(repeat):
            for name, cmd, is_job in chosen:
                port = unused_port() if is_job else None  # a new one each run: the last JVM may hold its port
                wall, peak, per_vessel, cpu = timed([*cmd, "--web-ui-port", str(port)] if port else cmd, port)
                got = measured[name]
                for key, value in (("walls", wall), ("rss", peak), ("cpu", cpu), ("state", per_vessel)):
                    if value:
                        got.setdefault(key, []).append(value)
                print(f"{lines:>8} lines  {name:<26} {wall:7.1f} s  {peak:6.0f} MB  {cpu:6.1f} CPU s", file=sys.stderr)
        for name, cmd, _ in chosen:
            got = measured[name]
            rows.append(
                {
                    "lines": lines,
                    "name": name,
                    "walls": got["walls"],
                    "rss": max(got.get("rss", [0])),
                    "state": max(got.get("state", [0])),
                    "cpu": got.get("cpu", [0.0]),
                    "cmd": shown(cmd),
                }
            )
    return rows


def baseline_name(commit: str | None) -> str:
    return f"Flink job of {commit}, parallelism 1"


def startup(parallelisms: list[int]) -> dict[str, tuple[float, float, str]]:
    """The job's start-up, apart from its steady state: wall and CPU seconds of a run on the
    first 1,000 lines of the benchmark feed (JVM, mini-cluster, Python workers, first records,
    the end), per parallelism."""
    path = OUT / "feed-startup.nmea"
    if not path.exists():
        with feed(100_000).open() as src:
            path.write_text("".join(line for _, line in zip(range(STARTUP_LINES), src, strict=False)))
    costs = {}
    for name, flags in job_variants(parallelisms):
        out = Path(tempfile.mkdtemp(prefix="bench-startup-"))
        cmd = [PY, "-m", "ais_pipeline.jobs.ais_traffic", "--input", str(path), "--output", str(out)]
        wall, _, _, cpu = timed([*cmd, *flags, "--web-ui-port", str(unused_port())])
        costs[name] = (wall, cpu, shown([*cmd, *flags]))
        print(f"start-up, {name}: {wall:.1f} s, {cpu:.1f} CPU s", file=sys.stderr)
    return costs


def job_variants(parallelisms: list[int]) -> list[tuple[str, list[str]]]:
    """The job's runs: in this process's mini-cluster (one interpreter) at each parallelism, and
    at each parallelism above 1 on that many local TaskManager processes (an interpreter each)."""
    variants = [(f"Flink job, parallelism {p}", ["--parallelism", str(p)]) for p in parallelisms]
    for p in parallelisms:
        if p > 1:
            flags = ["--taskmanagers", str(p), "--parallelism", str(p)]
            variants.append((f"Flink job, {p} TaskManagers, parallelism {p}", flags))
    return variants


def run_csv(rows_wanted: int, repeat: int, parallelisms: list[int]) -> list[dict[str, Any]]:
    path = noaa_feed(rows_wanted)
    plain_out = Path(tempfile.mkdtemp(prefix="bench-plain-"))
    alternatives: list[tuple[str, list[str], bool]] = [
        ("zstd and CSV parse only (Python)", [PY, __file__, "--parse-only", str(path)], False),
        ("pandas, vectorised", [PY, "-m", "bench.pandas_loop", str(path)], False),
    ]
    plain = [PY, "-m", "ais_pipeline.tools.plain", "--input", str(path), "--output", str(plain_out)]
    alternatives.append(("plain Python loop", plain, False))
    lean = [PY, "-m", "bench.lean_loop", "--input", str(path), "--output", str(plain_out)]
    alternatives.append((LEAN, lean, False))
    for p in parallelisms:
        out = Path(tempfile.mkdtemp(prefix="bench-"))
        job = [PY, "-m", "ais_pipeline.jobs.ais_traffic", "--input", str(path), "--output", str(out)]
        alternatives.append((f"Flink job, parallelism {p}", [*job, "--parallelism", str(p)], True))
    # The same rows as a GeoParquet day, read by the job's Parquet reader.
    day = noaa_parquet_feed(rows_wanted)
    out = Path(tempfile.mkdtemp(prefix="bench-"))
    job = [PY, "-m", "ais_pipeline.jobs.ais_traffic", "--input", str(day), "--output", str(out), "--parallelism", "1"]
    alternatives.append((GEOPARQUET_P1, job, True))
    results = []
    for name, cmd, is_job in alternatives:
        walls, rss = [], []
        for _ in range(repeat):
            port = unused_port() if is_job else None
            wall, peak, _, _ = timed([*cmd, "--web-ui-port", str(port)] if port else cmd, port)
            walls.append(wall)
            rss.append(peak)
            print(f"{rows_wanted:>8} rows   {name:<32} {wall:7.1f} s  {peak:6.0f} MB", file=sys.stderr)
        results.append({"rows": rows_wanted, "name": name, "walls": walls, "rss": max(rss), "cmd": shown(cmd)})
    return results


def csv_table(rows: list[dict[str, Any]]) -> str:
    medians = {str(r["name"]): statistics.median(r["walls"]) for r in rows}
    pandas = medians["pandas, vectorised"]
    parse = medians["zstd and CSV parse only (Python)"]
    out = [
        "| NOAA rows (.csv.zst, GeoParquet where it says) | run | seconds (each run) | rows/s (median) "
        "| peak RSS (process tree) "
        "| speed vs pandas | decompress and parse, share of this run's time |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        median = medians[str(r["name"])]
        read_csv = "GeoParquet" not in str(r["name"]) and ("job" in str(r["name"]) or "plain" in str(r["name"]))
        share = f"{parse / median:.2f}" if read_csv else ""
        out.append(
            f"| {int(r['rows']):,} | {r['name']} | {', '.join(f'{w:.1f}' for w in r['walls'])} | "
            f"{int(r['rows']) / median:,.0f} | {r['rss']:.0f} MB | {pandas / median:.2f} | {share} |"
        )
    return "\n".join(out)


def ratio(base: float | None, median: float) -> str:
    """A run's speed against another's (a blank where that other did not run)."""
    return f"{base / median:.2f}" if base else ""


def steady_cpu_us(r: dict[str, Any], starts: dict[str, tuple[float, float, str]]) -> float | None:
    """A job run's CPU per line in its steady state: its start-up (a run of the feed's first
    lines) taken off; None without one."""
    if str(r["name"]) not in starts:
        return None
    cpu = float(statistics.median(r["cpu"]))
    return (cpu - starts[str(r["name"])][1]) / (int(r["lines"]) - STARTUP_LINES) * 1e6


def table(rows: list[dict[str, Any]], starts: dict[str, tuple[float, float, str]] | None = None) -> str:
    """The NMEA table: wall time and speed, memory, and CPU per line of the whole process tree
    (every core's work, the JVM's included); for the job also its steady state, the start-up
    (a run of the first 1,000 lines) taken off."""
    starts = starts or {}
    out = [
        "| feed lines | run | seconds (each run) | lines/s (median) | peak RSS (process tree) "
        "| state per vessel held | speed vs plain | speed vs lean | share of the 2-core decode ceiling "
        "| CPU us per line (process tree) | steady state: CPU us per line, lines/s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    by_size: dict[int, dict[str, float]] = {}
    for r in rows:
        median = statistics.median(r["walls"])
        by_size.setdefault(int(r["lines"]), {})[str(r["name"])] = median
    for r in rows:
        lines = int(r["lines"])
        walls = r["walls"]
        median = statistics.median(walls)
        plain = by_size[lines].get("plain Python loop")
        lean = by_size[lines].get(LEAN)
        decode = by_size[lines].get("pyais decode only")
        state = f"{r['state']:,.0f} B" if r.get("state") else ""
        cpu = statistics.median(r["cpu"]) if r.get("cpu") else 0.0
        steady = ""
        steady_us = steady_cpu_us(r, starts)
        if steady_us is not None:
            start_wall = starts[str(r["name"])][0]
            steady = f"{steady_us:.1f} us, {(lines - STARTUP_LINES) / max(median - start_wall, 1e-3):,.0f} lines/s"
        out.append(
            f"| {lines:,} | {r['name']} | {', '.join(f'{w:.1f}' for w in walls)} | {lines / median:,.0f} | "
            f"{r['rss']:.0f} MB | {state} | {ratio(plain, median)} | {ratio(lean, median)} | "
            f"{ratio(decode and decode / 2, median)} | "
            f"{cpu / lines * 1e6:.1f} | {steady} |"
        )
    if starts:
        out.append("")
        out.append(
            "Start-up (a run of the first 1,000 lines): "
            + "; ".join(f"{name}: {wall:.1f} s, {cpu:.1f} CPU s" for name, (wall, cpu, _) in starts.items())
            + "."
        )
    return "\n".join(out)


# The targets of the job's cost, each checked on this run's figures against the loops of the same
# run (none is a timed test): the machine's speed drifts, so a target is a ratio, not a time.
CPU_TARGET = 1.1  # the job's CPU per line at parallelism 1 over the lean loop's
SPEED_TARGET = 1.2  # parallelism 2's speed over the lean loop's
FLEET_TARGET = 1.0  # on the feed heavier in vessels: the CPU per line at parallelism 1 over the baseline's
BEFORE_TRACKS = "6c84c88"  # the baseline: the job before the tracks, spread and gap events
TASKMANAGERS_TARGET = 1.15  # two one-slot TaskManagers' steady-state CPU per line over parallelism 1's
PANDAS_TARGET = 0.5
STARTUP_TARGET_S = 6.0
P1, P2, TM2 = "Flink job, parallelism 1", "Flink job, parallelism 2", "Flink job, 2 TaskManagers, parallelism 2"
GAPS_OFF = "Flink job, parallelism 1, gap events off"
PORTS_OFF = "Flink job, parallelism 1, port visits off"
LOITERING_OFF = "Flink job, parallelism 1, loitering off"
ENCOUNTERS_OFF = "Flink job, parallelism 1, encounters off"
GEOPARQUET_P1 = "Flink job, parallelism 1, the same day as GeoParquet"


def targets(
    rows: list[dict[str, Any]],
    starts: dict[str, tuple[float, float, str]],
    csv_rows: list[dict[str, Any]],
    long_rows: list[dict[str, Any]],
    fleet_rows: list[dict[str, Any]] | None = None,
    baseline: str | None = None,
) -> str:
    """Where the job stands against each target, from this run's figures, with the commands that
    made them (medians of the runs)."""

    def find(of: list[dict[str, Any]], name: str, lines: int | None = None) -> dict[str, Any] | None:
        for r in of:
            if r["name"] == name and (lines is None or int(r.get("lines", 0)) == lines):
                return r
        return None

    def wall(r: dict[str, Any]) -> float:
        return float(statistics.median(r["walls"]))

    def cpu_us(r: dict[str, Any]) -> float:
        return float(statistics.median(r["cpu"])) / int(r["lines"]) * 1e6

    out = ["| target | measured | holds | commands |", "|---|---|---|---|"]

    def add(target: str, measured: str, ok: bool, *made_by: dict[str, Any]) -> None:
        commands = "; ".join(f"`{r['cmd']}`" for r in made_by)
        out.append(f"| {target} | {measured} | {'yes' if ok else 'no'} | {commands} |")

    largest = max((int(r["lines"]) for r in rows), default=0)
    lean, p1 = find(rows, LEAN, largest), find(rows, P1, largest)
    for of in (rows, long_rows):
        size = max((int(r["lines"]) for r in of), default=0)
        loop, p2 = find(of, LEAN, size), find(of, P2, size)
        if loop and p2:
            ratio = wall(loop) / wall(p2)
            add(
                f"parallelism 2 at least {SPEED_TARGET}x the lean loop's speed "
                f"({size:,} lines, wall time with start-up)",
                f"{ratio:.2f}x ({wall(p2):.1f} s against {wall(loop):.1f} s)",
                ratio >= SPEED_TARGET,
                loop,
                p2,
            )
    if p1 and lean:
        us, loop_us = cpu_us(p1), cpu_us(lean)
        add(
            f"the CPU per line at parallelism 1, every thread of the run, at most {CPU_TARGET}x the lean loop's "
            f"({largest:,} lines)",
            f"{us / loop_us:.2f}x ({us:.1f} us against {loop_us:.1f} us)",
            us / loop_us <= CPU_TARGET,
            p1,
            lean,
        )
    fleet_p1 = find(fleet_rows or [], P1)
    before = find(fleet_rows or [], baseline_name(baseline)) if baseline else None
    if fleet_p1 and before:
        us, before_us = cpu_us(fleet_p1), cpu_us(before)
        add(
            f"on the feed heavier in vessels, the CPU per line at parallelism 1 at most {FLEET_TARGET}x what "
            f"{baseline} (before the tracks, spread and gap events) spent "
            f"({int(fleet_p1['lines']):,} lines, run in turns)",
            f"{us / before_us:.2f}x ({us:.1f} us against {before_us:.1f} us)",
            us / before_us <= FLEET_TARGET,
            fleet_p1,
            before,
        )
    # What each rule that can be turned off costs: the same run with it off.
    for off_name, rule, pronoun in (
        (GAPS_OFF, "gap events'", "them"),
        (PORTS_OFF, "port visits'", "them"),
        (LOITERING_OFF, "loitering's", "it"),
        (ENCOUNTERS_OFF, "encounters'", "them"),
    ):
        off_row = find(rows, off_name, largest)
        if p1 and off_row:
            on, off = cpu_us(p1), cpu_us(off_row)
            add(
                f"{rule} cost: the CPU per line at parallelism 1 with {pronoun} on (the default) and off "
                f"({largest:,} lines; no target)",
                f"{on:.1f} us on, {off:.1f} us off ({on / off:.2f}x)",
                True,
                p1,
                off_row,
            )
    long_p1, long_tm = find(long_rows, P1), find(long_rows, TM2)
    if long_p1 and long_tm:
        steady_p1, steady_tm = steady_cpu_us(long_p1, starts), steady_cpu_us(long_tm, starts)
        whole = cpu_us(long_tm) / cpu_us(long_p1)
        wholes = (
            f"the whole runs, start included: {whole:.2f}x ({cpu_us(long_tm):.1f} us against {cpu_us(long_p1):.1f} us)"
        )
        if steady_p1 and steady_tm:
            ratio = steady_tm / steady_p1
            measured_text = f"{ratio:.2f}x ({steady_tm:.1f} us against {steady_p1:.1f} us); {wholes}"
        else:
            ratio, measured_text = whole, f"no start-up measured, so {wholes}"
        add(
            f"two one-slot TaskManagers at most {TASKMANAGERS_TARGET}x the CPU per line of parallelism 1 in their "
            f"steady state ({int(long_p1['lines']):,} lines)",
            measured_text,
            ratio <= TASKMANAGERS_TARGET,
            long_p1,
            long_tm,
        )
    pandas = find(csv_rows, "pandas, vectorised")
    jobs = [r for r in csv_rows if str(r["name"]).startswith("Flink job") and r["name"] != GEOPARQUET_P1]
    if pandas and jobs:
        best = min(jobs, key=wall)
        ratio = wall(pandas) / wall(best)
        add(
            f"NOAA from `.csv.zst` at {PANDAS_TARGET}x of pandas or better ({int(best['rows']):,} rows)",
            f"{ratio:.2f}x ({best['name']}: {wall(best):.1f} s against {wall(pandas):.1f} s)",
            ratio >= PANDAS_TARGET,
            pandas,
            best,
        )
    csv_p1, parquet_p1 = find(csv_rows, P1), find(csv_rows, GEOPARQUET_P1)
    if csv_p1 and parquet_p1:
        rows_n = int(csv_p1["rows"])
        add(
            f"a NOAA day as GeoParquet beside its `.csv.zst`, the job at parallelism 1 ({rows_n:,} rows; no target)",
            f"{rows_n / wall(parquet_p1):,.0f} rows/s against {rows_n / wall(csv_p1):,.0f} rows/s "
            f"({wall(csv_p1) / wall(parquet_p1):.2f}x)",
            True,
            parquet_p1,
            csv_p1,
        )
    if P1 in starts:
        start_wall, start_cpu, cmd = starts[P1]
        add(
            f"a {STARTUP_LINES:,}-line run in at most {STARTUP_TARGET_S:.0f} s",
            f"{start_wall:.1f} s ({start_cpu:.1f} CPU s)",
            start_wall <= STARTUP_TARGET_S,
            {"cmd": cmd},
        )
    return "\n".join(out)


def growth(rows: list[dict[str, Any]]) -> str:
    """Time per line on the largest feed over the smallest, per run: 1.0 is linear cost."""
    sizes = sorted({int(r["lines"]) for r in rows})
    if len(sizes) < 2:
        return ""
    small, large = sizes[0], sizes[-1]
    per_line = {(int(r["lines"]), str(r["name"])): statistics.median(r["walls"]) / int(r["lines"]) for r in rows}
    out = [f"| run | us per line, {small:,} lines | us per line, {large:,} lines | ratio |", "|---|---|---|---|"]
    for name in dict.fromkeys(str(r["name"]) for r in rows):
        a, b = per_line.get((small, name)), per_line.get((large, name))
        if a and b:
            out.append(f"| {name} | {a * 1e6:.1f} | {b * 1e6:.1f} | {b / a:.2f} |")
    return "\n".join(out)


def machine() -> str:
    cpus = os.cpu_count()
    mem = ""
    try:
        kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))  # type: ignore[union-attr]
        mem = f", {kb / 1024 / 1024:.0f} GiB"
    except (OSError, AttributeError):
        pass
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    return f"{cpus} cores{mem}, {platform.python_implementation()} {platform.python_version()}, {java}"


def write_between_markers(doc: Path, marker: str, text: str) -> None:
    """Replace what stands between ``<!-- MARKER:start -->`` and ``<!-- MARKER:end -->`` in a
    docs page with ``text``."""
    content = doc.read_text()
    start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
    if start not in content or end not in content:
        raise SystemExit(f"{doc} has no {marker} markers")
    head, rest = content.split(start, 1)
    _, tail = rest.split(end, 1)
    doc.write_text(f"{head}{start}\n{text}\n{end}{tail}")


def measured(command: str = "") -> str:
    """The line that heads a benchmark's table: the day, the machine and the command."""
    text = f"Measured {time.strftime('%Y-%m-%d')} on {machine()}; `make bench`"
    return text + (f" (`{command}`):" if command else ":")


def publish(text: str, doc: Path, marker: str, write_docs: bool) -> None:
    """Print a benchmark's text, and with ``--write-docs`` put it between the page's markers."""
    print(text)
    if write_docs:
        write_between_markers(doc, marker, text)


def where_the_cpu_goes(size: int, fleet: tuple[int, int] | None = None) -> str:
    """One run of the job at parallelism 1 on the largest feed (and on the feed heavier in
    vessels, ``fleet``: lines and vessels): the CPU per line by thread group, the Python and Java
    sides per line, and the CPU per line by rule (``bench.threads``)."""
    from bench import threads

    out = []
    runs = [(feed(size), f"--lines {size}", "the benchmark feed")]
    if fleet is not None:
        runs.append((feed(*fleet), f"--lines {fleet[0]} --vessels {fleet[1]}", f"{fleet[1]:,} vessels"))
    for path, flags, what in runs:
        lines = sum(1 for _ in read_lines(path))
        m = threads.measure_all(threads.job_command(path, 1, []), python=True)
        out.append(threads.report(m, lines, 1, f"python -m bench.threads {flags} --python --rules"))
        if m.samples:
            out.append(f"\nBy rule, on {what}:\n\n{threads.rules_report(m, lines)}")
    return "\n\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,400000")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--parallelism", default="1,2")
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--csv-rows", type=int, default=1_000_000, help="rows of the NOAA benchmark, 0 for none")
    parser.add_argument(
        "--long-lines",
        type=int,
        default=1_200_000,
        help="lines of the feed on which two TaskManagers are set against parallelism 1, 0 for none",
    )
    parser.add_argument(
        "--fleet",
        default="400000:20000",
        help="LINES:VESSELS of a feed heavier in vessels (the loops and parallelism 1 on it), empty for none",
    )
    parser.add_argument(
        "--baseline",
        default=BEFORE_TRACKS,
        help="a commit whose job runs in turns with this one on the feed heavier in vessels, empty for none",
    )
    parser.add_argument("--decode-only", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--parse-only", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.decode_only:
        print(decode_only(args.decode_only))
        return 0
    if args.parse_only:
        print(parse_only(args.parse_only))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else []
    parallelisms = [int(p) for p in args.parallelism.split(",")]
    rows = run(sizes, args.repeat, parallelisms)
    starts = startup(parallelisms) if rows else {}
    long_rows = run([args.long_lines], args.repeat, [1, 2], only={LEAN, P1, P2, TM2}) if args.long_lines else []
    fleet_rows: list[dict[str, Any]] = []
    if args.fleet:
        fleet_lines, fleet_vessels = (int(n) for n in args.fleet.split(":"))
        fleet_only = {"plain Python loop", LEAN, P1, GAPS_OFF, PORTS_OFF, LOITERING_OFF, ENCOUNTERS_OFF}
        baseline = args.baseline or None
        fleet_rows = run([fleet_lines], args.repeat, [1], only=fleet_only, vessels=fleet_vessels, baseline=baseline)
    csv_rows = run_csv(args.csv_rows, args.repeat, parallelisms) if args.csv_rows else []
    text = measured()
    text += f"\n\n{targets(rows, starts, csv_rows, long_rows, fleet_rows, args.baseline or None)}"
    if sizes:
        fleet: tuple[int, int] | None = None
        if args.fleet:
            fleet_lines, fleet_vessels = (int(n) for n in args.fleet.split(":"))
            fleet = (fleet_lines, fleet_vessels)
        text += f"\n\n{where_the_cpu_goes(max(sizes), fleet)}"
    if rows:
        text += f"\n\n{table(rows, starts)}\n\n{growth(rows)}"
    if long_rows:
        text += f"\n\n{table(long_rows, starts)}"
    if fleet_rows:
        fleet_lines_s, fleet_vessels_s = args.fleet.split(":")
        text += f"\n\nA feed heavier in vessels ({fleet_vessels_s} vessels, `python -m bench.gen_feed --lines "
        text += f"{fleet_lines_s} --seed 1 --vessels {fleet_vessels_s} --meet {MEET}`):\n\n{table(fleet_rows, starts)}"
    if csv_rows:
        text += f"\n\n{csv_table(csv_rows)}"
    publish(text, ROOT / "docs" / "performance.md", "bench", args.write_docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
