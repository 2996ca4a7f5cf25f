"""Where a run's CPU goes, per thread: the job run once on a feed, every thread of its process
tree read from procfs (``/proc/<pid>/task/<tid>/stat``) every 0.2 s, its last reading kept, and
the CPU seconds summed by thread name (the kernel keeps 15 characters of it: a Flink task
thread's name starts with its operator chain, the JVM's own threads are named for their work).

    python -m bench.threads [--lines 400000 | --input FILE] [--parallelism 1] [--by-process] [-- more job flags]

Prints a table of the thread groups with their CPU seconds and share of the whole tree's, the
wall time and the CPU per line; with ``--by-process``, each group under the process it ran in,
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


def measure(cmd: list[str], by_process: bool = False) -> tuple[float, dict[str, float]]:
    """Wall seconds of ``cmd`` and the CPU seconds of its process tree's threads, by group (with
    ``by_process``, by the role of their process and group)."""
    seen: dict[tuple[int, int], tuple[str, str, float]] = {}
    roles: dict[int, str] = {}
    started = time.monotonic()
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err, text=True)
        while proc.poll() is None:
            for pid in _tree(proc.pid):
                if roles.get(pid) in (None, "bash", "?"):  # a daemon's script exec's its JVM
                    roles[pid] = _role(pid)
                seen.update(_threads(pid))
            time.sleep(0.2)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed (exit {proc.returncode}):\n{err.read()[-3000:]}")
    wall = time.monotonic() - started
    groups: dict[str, float] = defaultdict(float)
    for (pid, _), (process, thread, cpu) in seen.items():
        group = group_of(process, thread)
        groups[f"{roles.get(pid, process)}: {group}" if by_process else group] += cpu
    return wall, dict(groups)


def main() -> int:
    parser = argparse.ArgumentParser(prog="bench.threads", description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=400_000, help="the seeded benchmark feed's size")
    parser.add_argument("--input", type=Path, help="a file to run on instead (a NOAA day's .csv.zst, a capture)")
    parser.add_argument("--parallelism", type=int, default=1)
    parser.add_argument("--by-process", action="store_true", help="each thread group under its process's role")
    parser.add_argument("job_flags", nargs="*", help="more flags for the job (after --)")
    args = parser.parse_args()
    path = args.input or feed(args.lines)
    lines = sum(1 for _ in read_lines(path))
    out = Path(tempfile.mkdtemp(prefix="bench-threads-"))
    cmd = [PY, "-m", "ais_pipeline.jobs.ais_traffic", "--input", str(path), "--output", str(out)]
    cmd += ["--parallelism", str(args.parallelism), "--web-ui-port", str(unused_port()), *args.job_flags]
    wall, groups = measure(cmd, args.by_process)
    total = sum(groups.values())
    print(f"{lines:,} lines, parallelism {args.parallelism}: {wall:.1f} s wall, {total:.1f} CPU s, "
          f"{total / lines * 1e6:.0f} us of CPU per line (`{' '.join(sys.argv)}`)")  # fmt: skip
    print("| threads | CPU s | share |")
    print("|---|---:|---:|")
    for name, cpu in sorted(groups.items(), key=lambda kv: -kv[1]):
        if cpu >= 0.01:
            print(f"| {name} | {cpu:.1f} | {cpu / total:.0%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
