"""A class data sharing archive of the job's JVM classes: a local run's JVM maps the classes it
loaded in an earlier run instead of reading and verifying them from the jars again, which takes
a few CPU seconds off every start (docs/performance.md has the measurement).

``python -m ais_pipeline.pipeline.jvm_archive`` writes the archive (``make setup`` does): it runs
the job on the first 1,000 lines of the bundled sample with ``-XX:ArchiveClassesAtExit`` and
waits for that JVM to end and write it. A local run then adds ``-XX:SharedArchiveFile`` to its
JVM's options (``JVM_ARGS``, which PyFlink's gateway reads) when the archive of this Java and
this PyFlink is there. An archive the JVM finds out of date (another classpath, another JVM
build) is left unused, silently; without one a run starts as before. ``AIS_PIPELINE_CDS=off``
turns it off.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

log = logging.getLogger("ais_pipeline")

SWITCH = "AIS_PIPELINE_CDS"
SAMPLE_LINES = 1_000
QUIET = "-Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off"


def _java() -> Path | None:
    home = os.environ.get("JAVA_HOME")
    found = Path(home) / "bin" / "java" if home else None
    if found is None or not found.exists():
        which = shutil.which("java")
        found = Path(which) if which else None
    return found.resolve() if found else None


def archive_path() -> Path | None:
    """Where the archive of this Java and this PyFlink is (named after both), or None without a
    Java. In the project's cache folder (``AIS_PIPELINE_CACHE``, else ~/.cache/ais-pipeline)."""
    import pyflink

    from ais_pipeline.resources import METRICS_JAR, cache_dir

    java = _java()
    if java is None:
        return None
    # What the JVM checks an archive against: its own build and the jars of its classpath (the
    # PyFlink package's, and this package's metrics jar, which a rebuild changes).
    parts = [pyflink.__file__, str(sys.version_info[:2])]
    for file in (java, METRICS_JAR):
        stat = file.stat() if file.exists() else None
        parts.append(f"{file}:{stat.st_size}:{stat.st_mtime_ns}" if stat else str(file))
    key = "|".join(parts)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return cache_dir() / f"jvm-classes-{digest}.jsa"


def archive_options() -> str:
    """The JVM options that map the archive, or "" when there is none or it is turned off."""
    if os.environ.get(SWITCH, "").lower() in ("off", "0", "false", "no"):
        return ""
    path = archive_path()
    if path is None or not complete(path):
        return ""
    return f"-XX:SharedArchiveFile={path} {QUIET}"


def _size_file(path: Path) -> Path:
    return path.with_name(path.name + ".size")


def complete(path: Path) -> bool:
    """Whether the archive is there whole: as many bytes as its writer recorded (the JVM crashes
    on a cut archive, with SIGBUS, instead of leaving it unused)."""
    try:
        return path.stat().st_size == int(_size_file(path).read_text().strip())
    except (OSError, ValueError):
        return False


def use_archive() -> None:
    """Add the archive's options to ``JVM_ARGS`` for the JVM this process is about to start,
    unless ``JVM_ARGS`` names an archive of its own."""
    current = os.environ.get("JVM_ARGS", "")
    if "SharedArchiveFile" in current or "ArchiveClassesAtExit" in current:
        return
    options = archive_options()
    if options:
        os.environ["JVM_ARGS"] = f"{current} {options}".strip()


def without_archive(jvm_args: str) -> str:
    """``JVM_ARGS`` without what :func:`use_archive` added: the cluster daemons a run starts have
    another classpath, which the archive does not fit."""
    options = archive_options()
    return " ".join(jvm_args.replace(options, " ").split()) if options else jvm_args


def _jvm_running(marker: str) -> bool:
    """Whether a process whose command line holds ``marker`` is alive."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    return True
            except OSError:
                continue
    return False


def write_archive(path: Path, sample: Path) -> None:
    """Run the job on ``sample``'s first lines with ``-XX:ArchiveClassesAtExit`` and put the
    archive its JVM writes at its end in ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="ais-cds-"))
    try:
        lines = scratch / "sample.txt"
        with sample.open("rb") as src:
            lines.write_bytes(b"".join(line for _, line in zip(range(SAMPLE_LINES), src, strict=False)))
        partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        env = dict(os.environ, JVM_ARGS=f"-XX:ArchiveClassesAtExit={partial} -Xlog:cds=off -Xlog:cds+dynamic=off")
        env[SWITCH] = "off"
        cmd = [sys.executable, "-m", "ais_pipeline.jobs.ais_traffic", "--input", str(lines)]
        cmd += ["--output", str(scratch / "out"), "--web-ui-port", "0"]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise RuntimeError(f"the archive's run failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}")
        deadline = time.monotonic() + 120
        while _jvm_running(str(partial)) and time.monotonic() < deadline:
            time.sleep(0.2)  # the JVM writes the archive as it exits, after the run's own end
        if _jvm_running(str(partial)) or not partial.is_file():
            partial.unlink(missing_ok=True)
            raise RuntimeError(f"the JVM wrote no archive at {partial}")
        size = partial.stat().st_size
        _size_file(path).unlink(missing_ok=True)
        partial.replace(path)
        _size_file(path).write_text(f"{size}\n")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: list[str]) -> int:
    import argparse

    from ais_pipeline.resources import SAMPLE_INPUT

    parser = argparse.ArgumentParser(
        prog="python -m ais_pipeline.pipeline.jvm_archive", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--force", action="store_true", help="write the archive again when it is there")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    path = archive_path()
    if path is None:
        log.error("no Java found (JAVA_HOME or PATH): no archive")
        return 1
    if complete(path) and not args.force:
        print(f"JVM class archive: {path} (there already)")
        return 0
    started = time.monotonic()
    try:
        write_archive(path, SAMPLE_INPUT)
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as exc:
        # Runs start without it, as before: no reason to fail a set-up.
        print(f"JVM class archive: not written ({exc}); runs start without it")
        return 0
    print(f"JVM class archive: {path} ({path.stat().st_size / 1e6:.0f} MB, {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
