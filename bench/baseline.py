"""An earlier version of the job, to measure this one against in turns: the commit's tree from
this checkout's history (``git archive``), its Java helpers built with Maven, run with this
checkout's virtualenv (the dependencies of both are the same) and its own package first on the path.

    python -m bench.baseline [COMMIT]      prints the command that runs the job of that commit

The checkout is made once, under ``out/bench/baseline-COMMIT/``.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import tarfile
from pathlib import Path

from bench.files import BEFORE_TRACKS, OUT, PY, ROOT


def checkout(commit: str) -> Path:
    """The commit's tree with its jar built, made once."""
    where = OUT / f"baseline-{commit}"
    jar = where / "udfs" / "ais_pipeline" / "jars" / "ais-flink-helpers.jar"
    if jar.exists():
        return where
    archive = subprocess.run(["git", "archive", "--format=tar", commit], cwd=ROOT, capture_output=True, check=True)
    where.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(where, filter="data")
    subprocess.run(
        ["mvn", "-q", "-B", "-Dstyle.color=never", "-f", str(where / "java" / "pom.xml"), "-DskipTests", "package"],
        check=True,
        cwd=where,
    )
    if not jar.exists():
        raise SystemExit(f"{commit}: Maven built no {jar.relative_to(where)}")
    return where


def job_command(commit: str) -> list[str]:
    """The command that runs the job of ``commit`` (flags to be added)."""
    where = checkout(commit)
    return ["env", f"PYTHONPATH={where / 'udfs'}", PY, str(where / "jobs" / "ais_traffic.py")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commit", nargs="?", default=BEFORE_TRACKS)
    args = parser.parse_args()
    print(" ".join(job_command(args.commit)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
