"""Where a run's CPU goes, per thread: the job run once on a feed, every thread of its process
tree read from procfs (``/proc/<pid>/task/<tid>/stat``) every 0.2 s, its last reading kept, and
the CPU seconds summed by thread name (the kernel keeps 15 characters of it: a Flink task
thread's name starts with its operator chain, the JVM's own threads are named for their work).

    python -m bench.threads [--lines 400000 | --input FILE] [--parallelism 1] [--by-process]
        [--python] [-- more job flags]

Prints a table of the thread groups with their CPU seconds, per line and share of the whole
tree's, the wall time and the CPU per line; with ``--python``, the Python side's seconds: the
samples in which the embedded interpreter had the operators' Python on a thread's stack
(``py-spy record`` on every JVM of the tree once it has loaded libpython; the calls into Java
that Python makes are in them; at parallelism 1, where one task thread runs all the Python), and
the rest of the run's CPU as the Java side; with ``--by-process``, each group under the process it ran in,
named by its role (a JVM by its main class: the mini-cluster's ``PythonGatewayServer``, a
cluster's ``StandaloneSessionClusterEntrypoint`` and ``TaskManagerRunner``, Flink's scripts'
``BashJavaUtils``). ``JVM_ARGS`` in the environment reaches the job's JVM.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from ais_pipeline.files import read_lines
from ais_pipeline.pipeline.ports import unused_port
from bench.files import PY, ROOT, feed

TICKS = os.sysconf("SC_CLK_TCK")

# Thread names (as procfs cuts them) to the group they are counted in, first match wins.
GROUPS = (
    ("C2 CompilerThre", "JIT: C2 compiler"),
    ("C1 CompilerThre", "JIT: C1 compiler"),
    ("GC Thread", "garbage collector"),
    ("G1 ", "garbage collector"),
    ("VM Thread", "JVM: VM thread"),
)


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _tree(root: int) -> list[int]:
    pids, todo = [], [root]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        todo.extend(_children(pid))
    return pids


def _threads(pid: int) -> dict[tuple[int, int], tuple[str, str, float]]:
    """(pid, tid) -> (process name, thread name, CPU seconds) of one process's threads."""
    out: dict[tuple[int, int], tuple[str, str, float]] = {}
    try:
        process = Path(f"/proc/{pid}/comm").read_text().strip()
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        rest = stat[stat.rindex(")") + 2 :].split()
        out[(pid, int(tid))] = (process, name, (int(rest[11]) + int(rest[12])) / TICKS)
    return out


def group_of(process: str, thread: str) -> str:
    if process != "java":
        return f"{process} (the CLI and its helpers)" if process.startswith("python") else process
    for prefix, group in GROUPS:
        if thread.startswith(prefix):
            return group
    return thread


def role_of(cmdline: list[str]) -> str:
    """What a process of the tree is: a JVM by its main class's simple name (the first word naming
    a class of ``org.apache.flink``), anything else by its program's name."""
    for word in cmdline:
        if word.startswith("org.apache.flink.") and "=" not in word:
            return word.rsplit(".", 1)[-1]
    return os.path.basename(cmdline[0]) if cmdline else "?"


def _role(pid: int) -> str:
    try:
        return role_of(Path(f"/proc/{pid}/cmdline").read_text().split("\0"))
    except OSError:
        return "?"


PY_SPY = Path(PY).parent / "py-spy"
SPY_RATE = 50  # samples a second


def _embeds_python(pid: int) -> bool:
    """Whether a JVM of the tree has loaded the embedded interpreter (thread mode's)."""
    try:
        return (
            Path(f"/proc/{pid}/comm").read_text().strip() == "java"
            and "libpython3" in Path(f"/proc/{pid}/maps").read_text()
        )
    except OSError:
        return False


def python_seconds(raw: str, rate: int = SPY_RATE) -> float:
    """Seconds with Python on a sampled thread's stack, from ``py-spy record --format raw``: one
    line per stack with its count; a line with no frames is a sample with no Python running."""
    busy = 0
    for line in raw.splitlines():
        stack, _, count = line.rstrip().rpartition(" ")
        if stack.strip() and count.isdigit():
            busy += int(count)
    return busy / rate


@dataclass
class Measured:
    wall: float
    groups: dict[str, float]  # CPU seconds by thread group
    python: float | None = None  # seconds with the operators' Python on a stack (py-spy)
    samples: str = ""  # py-spy's raw samples of the run's embedded interpreters


# What a Python frame is part of, by its file (and, in the dedup rules' file, by its function):
# a sample counts for the first frame from its innermost outwards that is part of a rule.
RULE_FILES = {
    "spread.py": "spread (vessel hours along segments)",
    "vessel_hours.py": "spread (vessel hours along segments)",
    "gaps.py": "gaps",
    "ports.py": "port visits",
    "loitering.py": "loitering",
    "transmitters.py": "port visits and loitering (their transmitters)",
    "tracks.py": "tracks",
    "decode.py": "decoding (pyais)",
    "outputs.py": "output records (JSON, ids)",
    "state.py": "vessel state (cache, write-behind, timers)",
    "parse.py": "parsing lines",
    "lane.py": "parsing lines",
    "multipart.py": "parsing lines",
    "csv_rows.py": "parsing lines",
    "json_lines.py": "parsing lines",
}
RULE_FUNCTIONS = {  # of rules/dedup.py
    "_gap_position": "gaps",
    "_arm_gap": "gaps",
    "_open_gap": "gaps",
    "_gap": "gaps",
    "_transmitter_position": "port visits and loitering (their transmitters)",
    "_arm_transmitters": "port visits and loitering (their transmitters)",
    "_transmitters_step": "port visits and loitering (their transmitters)",
    "_transmitter_records": "port visits and loitering (their transmitters)",
    "_step": "tracks",
    "_release": "tracks",
    "_decided": "tracks",
    "_accept": "tracks",
    "_segment": "tracks",
    "_keep_track": "tracks",
    "_held_lines": "output records (JSON, ids)",
}
DEDUP = "dedup rules (near duplicates, static, lateness)"
PYFLINK = "PyFlink and the records' conversions"


def rule_of(frames: list[str]) -> str:
    """The rule a py-spy stack (its frames, outermost first: ``function (path:line)``) counts for
    (the json module counts for its caller's; importing modules, for the start)."""
    if any(frame.startswith("_find_and_load ") for frame in frames):
        return "Python's start (importing modules)"
    for frame in reversed(frames):
        function, _, where = frame.partition(" (")
        path = where.rsplit(":", 1)[0]
        name = path.rsplit("/", 1)[-1]
        if "pyais/" in path:
            return "decoding (pyais)"
        if name == "dedup.py":
            return RULE_FUNCTIONS.get(function.rsplit(".", 1)[-1], DEDUP)
        if name in RULE_FILES:
            return RULE_FILES[name]
    for frame in frames:
        if "ParseLines." in frame:
            return "parsing lines"
    return PYFLINK


def rule_seconds(raw: str, rate: int = SPY_RATE) -> dict[str, float]:
    """The Python side's seconds by rule (:func:`rule_of`), from ``py-spy record --format raw``."""
    out: dict[str, float] = defaultdict(float)
    for line in raw.splitlines():
        stack, _, count = line.rstrip().rpartition(" ")
        if stack.strip() and count.isdigit():
            out[rule_of(stack.split(";"))] += int(count) / rate
    return dict(out)


def measure_all(cmd: list[str], by_process: bool = False, python: bool = False) -> Measured:
    """Wall seconds of ``cmd`` and the CPU seconds of its process tree's threads, by group (with
    ``by_process``, by the role of their process and group); with ``python``, the seconds every
    JVM's embedded interpreter had Python on a stack, sampled by py-spy once it is loaded."""
    seen: dict[tuple[int, int], tuple[str, str, float]] = {}
    roles: dict[int, str] = {}
    spies: dict[int, tuple[subprocess.Popen[bytes], Path]] = {}
    spy_dir = Path(tempfile.mkdtemp(prefix="bench-spy-"))
    python = python and PY_SPY.exists()
    started = time.monotonic()
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err, text=True)
        while proc.poll() is None:
            for pid in _tree(proc.pid):
                if roles.get(pid) in (None, "bash", "?"):  # a daemon's script exec's its JVM
                    roles[pid] = _role(pid)
                seen.update(_threads(pid))
                if python and (pid not in spies or spies[pid][0].poll() not in (None, 0)) and _embeds_python(pid):
                    out = spy_dir / f"{pid}-{len(spies)}.txt"
                    spy_cmd = [str(PY_SPY), "record", "--pid", str(pid), "--nonblocking", "--format", "raw"]
                    spy_cmd += ["--rate", str(SPY_RATE), "--output", str(out)]
                    sampler = subprocess.Popen(spy_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    spies[pid] = (sampler, out)
            time.sleep(0.2)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed (exit {proc.returncode}):\n{err.read()[-3000:]}")
    wall = time.monotonic() - started
    groups: dict[str, float] = defaultdict(float)
    for (pid, _), (process, thread, cpu) in seen.items():
        group = group_of(process, thread)
        groups[f"{roles.get(pid, process)}: {group}" if by_process else group] += cpu
    seconds = None
    samples = []
    if python:
        seconds = 0.0
        for sampler, out in spies.values():
            try:
                sampler.wait(30)  # it writes its samples when the JVM it sampled is gone
            except subprocess.TimeoutExpired:
                sampler.terminate()
                sampler.wait(10)
            if out.exists():
                raw = out.read_text()
                samples.append(raw)
                seconds += python_seconds(raw)
    return Measured(wall, dict(groups), seconds, "\n".join(samples))


def measure(cmd: list[str], by_process: bool = False) -> tuple[float, dict[str, float]]:
    """Wall seconds of ``cmd`` and the CPU seconds of its process tree's threads, by group."""
    m = measure_all(cmd, by_process)
    return m.wall, m.groups


def job_command(path: Path, parallelism: int, job_flags: list[str]) -> list[str]:
    out = Path(tempfile.mkdtemp(prefix="bench-threads-"))
    cmd = [PY, "-m", "ais_pipeline.jobs.ais_traffic", "--input", str(path), "--output", str(out)]
    return [*cmd, "--parallelism", str(parallelism), "--web-ui-port", str(unused_port()), *job_flags]


def report(m: Measured, lines: int, parallelism: int, command: str) -> str:
    """The table ``make bench`` prints of one run: CPU per line by thread group, and the Python
    and Java sides per line."""
    total = sum(m.groups.values())
    out = [
        f"{lines:,} lines, parallelism {parallelism}: {m.wall:.1f} s wall, {total:.1f} CPU s, "
        f"{total / lines * 1e6:.0f} us of CPU per line (`{command}`)"
    ]
    if m.python is not None:
        java = total - m.python
        out.append(
            f"The Python side (the operators' Python on the task thread's stack, its calls into Java included; "
            f"py-spy samples of the embedded interpreter): {m.python:.1f} s, {m.python / lines * 1e6:.1f} us a "
            f"line; the Java side (every other CPU second of the run: the JVM's threads, the CLI): {java:.1f} s, "
            f"{java / lines * 1e6:.1f} us a line."
        )
    out += ["", "| threads | CPU s | CPU us per line | share |", "|---|---:|---:|---:|"]
    for name, cpu in sorted(m.groups.items(), key=lambda kv: -kv[1]):
        if cpu >= 0.05:
            out.append(f"| {name} | {cpu:.1f} | {cpu / lines * 1e6:.1f} | {cpu / total:.0%} |")
    return "\n".join(out)


# Thread groups of the Java side, by what they do (first match of the group's start; at
# parallelism 1 the lane's task, "Source: read li...", runs the operators' Python too).
JAVA_PARTS = (
    ("cell windows (k", "windows (Java)"),
    ("gap coverage (k", "gaps (Java: the coverage around each gap)"),
    ("JIT", "the JIT compilers"),
    ("garbage", "garbage collection"),
    ("python", "the CLI and the mini-cluster's start"),
    ("mini-cluster st", "the CLI and the mini-cluster's start"),
    ("Source: read li", "the lane's task in Java: reading, parsing, watermarks, exact copies, batching"),
)
OTHER_JAVA = "the rest of the JVM: checkpoints, sinks, metrics, the web UI"
LANE_TASK = JAVA_PARTS[-1][1]


def rules_report(m: Measured, lines: int) -> str:
    """The CPU per line by rule: the Python side's samples by :func:`rule_of` (taken off the lane
    task's thread, which runs them at parallelism 1), and the Java side's threads by what they do."""
    total = sum(m.groups.values())
    rows: dict[str, float] = defaultdict(float)
    python = rule_seconds(m.samples) if m.samples else {}
    for name, seconds in python.items():
        rows[name] += seconds
    for group, cpu in m.groups.items():
        part = next((name for prefix, name in JAVA_PARTS if group.startswith(prefix)), OTHER_JAVA)
        rows[part] += cpu
    rows[LANE_TASK] -= sum(python.values())
    out = ["| part of the work | CPU s | CPU us per line | share |", "|---|---:|---:|---:|"]
    for name, cpu in sorted(rows.items(), key=lambda kv: -kv[1]):
        out.append(f"| {name} | {cpu:.1f} | {cpu / lines * 1e6:.1f} | {cpu / total:.0%} |")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(prog="bench.threads", description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=400_000, help="the seeded benchmark feed's size")
    parser.add_argument("--vessels", type=int, help="the seeded feed's fleet (by default as its size gives)")
    parser.add_argument("--input", type=Path, help="a file to run on instead (a NOAA day's .csv.zst, a capture)")
    parser.add_argument("--parallelism", type=int, default=1)
    parser.add_argument("--by-process", action="store_true", help="each thread group under its process's role")
    parser.add_argument("--python", action="store_true", help="the Python side's time too, sampled by py-spy")
    parser.add_argument("--rules", action="store_true", help="with --python: the CPU per line by rule too")
    parser.add_argument("job_flags", nargs="*", help="more flags for the job (after --)")
    args = parser.parse_args()
    path = args.input or feed(args.lines, args.vessels)
    lines = sum(1 for _ in read_lines(path))
    cmd = job_command(path, args.parallelism, args.job_flags)
    m = measure_all(cmd, args.by_process, args.python)
    print(report(m, lines, args.parallelism, " ".join(["python -m bench.threads", *sys.argv[1:]])))
    if args.rules and m.samples:
        print()
        print(rules_report(m, lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
