"""The benchmark behind `make bench`: the same seeded feed through every alternative, as whole
processes, several times each.

    python scripts/bench.py [--sizes 50000,200000] [--repeat 2] [--parallelism 1,2] [--readme]

Alternatives: the pyais decode-only loop (every single-sentence line decoded, nothing else: the
ceiling for this decoder), the plain single-process implementation of the spec
(`python -m ais_pipeline.rules.plain`), and the Flink job in a local mini-cluster at each parallelism, with
checkpointing on as flink-conf/ sets it. Feeds come from scripts/gen_feed.py (seed 1) and are
cached in out/bench/. Prints lines/s, peak RSS, and the ratios job/plain and job/decode; with
--readme the table replaces the one between the bench markers of README.md, with the machine it
ran on.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out" / "bench"
PY = sys.executable


def feed(size: int) -> Path:
    path = OUT / f"feed-{size}.nmea"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        with path.open("w") as fh:
            subprocess.run(
                [PY, str(ROOT / "scripts" / "gen_feed.py"), "--lines", str(size), "--seed", "1"], stdout=fh, check=True
            )
    return path


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


def timed(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and peak resident memory in MB of one whole process tree (JVM included),
    sampled every 0.2 s."""
    with tempfile.TemporaryFile("w+") as err:
        started = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err, text=True)
        peak = 0
        while proc.poll() is None:
            peak = max(peak, _tree_rss_kb(proc.pid))
            time.sleep(0.2)
        wall = time.monotonic() - started
        if proc.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"{' '.join(cmd)} failed: {err.read()[-2000:]}")
    return wall, peak / 1024


def run(sizes: list[int], repeat: int, parallelisms: list[int]) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for size in sizes:
        path = feed(size)
        lines = sum(1 for _ in path.open())
        alternatives: list[tuple[str, list[str]]] = [
            ("pyais decode only", [PY, __file__, "--decode-only", str(path)]),
            ("plain Python loop", [PY, "-m", "ais_pipeline.rules.plain", "--input", str(path)]),
        ]
        for p in parallelisms:
            out = Path(tempfile.mkdtemp(prefix="bench-"))
            job = [PY, "-m", "ais_pipeline.flink.job", "--input", str(path), "--output", str(out), "--web-ui-port", "0"]
            alternatives.append((f"Flink job, parallelism {p}", [*job, "--parallelism", str(p)]))
        for name, cmd in alternatives:
            walls, rss = [], []
            for _ in range(repeat):
                wall, peak = timed(cmd)
                walls.append(wall)
                rss.append(peak)
                print(f"{lines:>8} lines  {name:<26} {wall:7.1f} s  {peak:6.0f} MB", file=sys.stderr)
            rows.append({"lines": lines, "name": name, "walls": walls, "rss": max(rss)})
    return rows


def table(rows: list[dict[str, object]]) -> str:
    out = [
        "| feed lines | run | seconds (each run) | lines/s (median) | peak RSS (process tree) "
        "| speed vs plain | vs decode |",
        "|---|---|---|---|---|---|---|",
    ]
    by_size: dict[int, dict[str, float]] = {}
    for r in rows:
        median = statistics.median(r["walls"])  # type: ignore[arg-type]
        by_size.setdefault(int(r["lines"]), {})[str(r["name"])] = median  # type: ignore[call-overload]
    for r in rows:
        lines = int(r["lines"])  # type: ignore[call-overload]
        walls = r["walls"]
        median = statistics.median(walls)  # type: ignore[arg-type]
        plain = by_size[lines]["plain Python loop"]
        decode = by_size[lines]["pyais decode only"]
        out.append(
            f"| {lines:,} | {r['name']} | {', '.join(f'{w:.1f}' for w in walls)} | {lines / median:,.0f} | "  # type: ignore[attr-defined]
            f"{r['rss']:.0f} MB | {plain / median:.2f} | {decode / median:.2f} |"
        )
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


def update_readme(text: str) -> None:
    readme = ROOT / "README.md"
    content = readme.read_text()
    start, end = "<!-- bench:start -->", "<!-- bench:end -->"
    if start not in content:
        raise SystemExit("README.md has no bench markers")
    head, rest = content.split(start, 1)
    _, tail = rest.split(end, 1)
    readme.write_text(f"{head}{start}\n{text}\n{end}{tail}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="50000,200000")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--parallelism", default="1,2")
    parser.add_argument("--readme", action="store_true")
    parser.add_argument("--decode-only", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.decode_only:
        print(decode_only(args.decode_only))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = run(sizes, args.repeat, [int(p) for p in args.parallelism.split(",")])
    text = f"Measured {time.strftime('%Y-%m-%d')} on {machine()}; `make bench`:\n\n{table(rows)}"
    print(text)
    if args.readme:
        update_readme(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
