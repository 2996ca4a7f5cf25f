"""JVM options against the job's cost: the same feed through the job (mini-cluster, parallelism 1)
under each set of JVM options, taken in turns so that a slow minute of the machine falls on every
set alike, and the start-up (a run of 1,000 lines) under each.

    python -m bench.jvm_options [--lines 100000] [--repeat 3] [--variants default,c1,serial-gc]

A variant's options go to the job's JVM through ``JVM_ARGS`` (PyFlink's gateway, in which the
mini-cluster runs, adds them to its command line), after flink-conf's TaskManager options, which
a local run gives that JVM too: ``default`` is the project's settings, ``jdk`` the JDK's own
compile thresholds. Prints, per variant, the median wall seconds
and CPU seconds of the whole process tree (JVM and Python), the JIT compilers' part of that CPU
(per thread, from procfs), and the CPU per line of the feed with the start-up's CPU taken out.
Every variant but ``cds`` runs without the class data sharing archive that local runs map by
default (``AIS_PIPELINE_CDS=off``); ``cds`` runs with it (written first when missing:
``python -m ais_pipeline.pipeline.jvm_archive``), and so does ``cds+NAME``, with variant NAME's
options. ``--lines 0`` measures the start-up alone.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from ais_pipeline.pipeline import jvm_archive
from ais_pipeline.pipeline.ports import unused_port
from ais_pipeline.resources import SAMPLE_INPUT
from bench.files import OUT, PY, STARTUP_LINES, feed
from bench.threads import measure

VARIANTS: dict[str, str] = {
    "default": "",
    "jdk": (
        "-XX:Tier4InvocationThreshold=5000 -XX:Tier4MinInvocationThreshold=600"
        " -XX:Tier4CompileThreshold=15000 -XX:Tier4BackEdgeThreshold=40000"
    ),
    "c1": "-XX:TieredStopAtLevel=1",
    "serial-gc": "-XX:+UseSerialGC",
    "no-tiered": "-XX:-TieredCompilation",
    "c2-later": "-XX:Tier4InvocationThreshold=15000 -XX:Tier4CompileThreshold=20000",
    "c2-much-later": (
        "-XX:Tier4InvocationThreshold=50000 -XX:Tier4MinInvocationThreshold=6000"
        " -XX:Tier4CompileThreshold=150000 -XX:Tier4BackEdgeThreshold=400000"
    ),
    "c2-x30": (
        "-XX:Tier4InvocationThreshold=150000 -XX:Tier4MinInvocationThreshold=18000"
        " -XX:Tier4CompileThreshold=450000 -XX:Tier4BackEdgeThreshold=1200000"
    ),
    "thresholds-x4": "-XX:CompileThresholdScaling=4",
    "cds": "",
}
ARCHIVE = "cds"


def options(name: str) -> tuple[str, bool]:
    """A variant's JVM options, and whether it maps the class archive."""
    archive, _, rest = name.partition("+")
    if archive == ARCHIVE:
        return VARIANTS[rest] if rest else "", True
    return VARIANTS[name], False


def known(name: str) -> bool:
    archive, _, rest = name.partition("+")
    return (archive == ARCHIVE and (not rest or rest in VARIANTS)) or name in VARIANTS


def startup_feed() -> Path:
    path = OUT / "feed-startup.nmea"
    if not path.exists():
        with feed(100_000).open() as src:
            path.write_text("".join(line for _, line in zip(range(STARTUP_LINES), src, strict=False)))
    return path


def job(path: Path, variant: str) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and the JIT compilers' CPU seconds of one run of the job on
    ``path`` under a variant's options (the whole process tree, per thread from procfs)."""
    jvm_args, archive = options(variant)
    out = Path(tempfile.mkdtemp(prefix="bench-jvm-"))
    cmd = [PY, "-m", "ais_pipeline.jobs.ais_traffic", "--input", str(path), "--output", str(out)]
    saved = {k: os.environ.get(k) for k in ("JVM_ARGS", jvm_archive.SWITCH)}
    os.environ["JVM_ARGS"] = jvm_args
    os.environ[jvm_archive.SWITCH] = "on" if archive else "off"
    try:
        wall, groups = measure([*cmd, "--web-ui-port", str(unused_port())])
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    jit = sum(cpu for name, cpu in groups.items() if name.startswith("JIT"))
    return wall, sum(groups.values()), jit


def ensure_archive() -> None:
    path = jvm_archive.archive_path()
    if path is None:
        raise RuntimeError("no Java found: no archive")
    if not path.is_file():
        jvm_archive.write_archive(path, SAMPLE_INPUT)
    print(f"archive: {path} ({path.stat().st_size / 1e6:.0f} MB)", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(prog="bench.jvm_options", description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--variants", default="default,jdk,c1,cds")
    args = parser.parse_args()
    names = args.variants.split(",")
    unknown = [n for n in names if not known(n)]
    if unknown:
        parser.error(f"unknown variants {unknown}; known: {', '.join(VARIANTS)}, and cds+NAME")
    if any(options(n)[1] for n in names):
        ensure_archive()
    start = startup_feed()
    path = feed(args.lines) if args.lines else None
    lines = sum(1 for _ in path.open()) if path else 0
    runs: dict[str, list[tuple[float, float, float]]] = {n: [] for n in names}
    starts: dict[str, list[tuple[float, float, float]]] = {n: [] for n in names}
    for turn in range(args.repeat):
        for name in names:
            starts[name].append(job(start, name))
            runs[name].append(job(path, name) if path else (0.0, 0.0, 0.0))
            (w0, c0, _), (w, c, j) = starts[name][-1], runs[name][-1]
            print(f"turn {turn + 1} {name:<10} start-up {w0:5.1f} s {c0:5.1f} CPU s; "
                  f"{lines} lines {w:6.1f} s {c:6.1f} CPU s, JIT {j:5.1f}", file=sys.stderr)  # fmt: skip
    print(f"JVM options, job at parallelism 1, {lines:,} lines, medians of {args.repeat} runs taken in turns")
    print(
        "| options | start-up wall s | start-up CPU s | wall s | CPU s | of which JIT compilers | steady CPU us/line |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in names:
        sw = statistics.median(r[0] for r in starts[name])
        sc = statistics.median(r[1] for r in starts[name])
        w = statistics.median(r[0] for r in runs[name])
        c = statistics.median(r[1] for r in runs[name])
        j = statistics.median(r[2] for r in runs[name])
        steady = (c - sc) / (lines - STARTUP_LINES) * 1e6 if lines else 0.0
        jvm_args, archive = options(name)
        shown = " ".join([*(["(the archive)"] if archive else []), *([f"`{jvm_args}`"] if jvm_args else [])])
        print(f"| {name}: {shown or '(none)'} | {sw:.1f} | {sc:.1f} | {w:.1f} | {c:.1f} | {j:.1f} | {steady:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
