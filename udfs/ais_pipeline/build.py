"""The package's version and build, carried by every job, and the check that a TaskManager's
Python runs the job's build.

In thread mode a TaskManager embeds one Python interpreter for its whole life, and a second job on
it finds the first job's modules in ``sys.modules``: it would run the first job's copy of this
package, whatever it shipped. So every Python operator of the job carries the build of the client
that made it (:func:`this_build`, taken when the operator is made), and checks it when it opens on
a TaskManager (:func:`check_job_build`): another build already loaded there fails the job at once
with one line that names both builds and the fix (restart the TaskManagers).

The other way out, purging this package's modules and importing the job's, is not taken: the
operator is unpickled from the modules already loaded before any code of the job's build can run,
so the old build has chosen the operator's class before anything could purge it, and objects of
the old modules (the operators of the job before, their state views) stay referenced from Java.

A build is the package's version and a hash of its source files (``*.py`` and ``*.sql`` under
the package, the jobs' subpackage left out since a checkout keeps it apart), so two copies of one
version that differ in a line are two builds.
"""

from __future__ import annotations

import hashlib
import re
from functools import cache
from pathlib import Path

from ais_pipeline import __version__

PACKAGE = Path(__file__).resolve().parent
SOURCES = ("*.py", "*.sql")
APART = ("jobs",)  # folders of the package not hashed


@cache
def build_id() -> str:
    """The hash of the package's sources as this interpreter first found them (12 hex digits)."""
    digest = hashlib.sha256()
    files = sorted({p for pattern in SOURCES for p in PACKAGE.rglob(pattern)})
    for path in files:
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] in APART:
            continue
        digest.update(relative.as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def this_build() -> str:
    """This package's version and build, as a job carries it: ``0.1.0 (build 1a2b3c4d5e6f)``."""
    return f"{__version__} (build {build_id()})"


class BuildMismatch(RuntimeError):
    """A job of one build opened on a TaskManager whose Python holds another."""


def mismatch_line(job_build: str, loaded: str) -> str:
    return (
        f"this job is ais-pipeline {job_build}, but this TaskManager's Python already runs ais-pipeline {loaded}"
        " (loaded by an earlier job; a TaskManager keeps the modules it imported for its life):"
        " restart the TaskManagers of this cluster to run the new build"
    )


# The line as it is found in a task's failure (PyFlink's "pemja.core.PythonException: <class ...>: ...").
MISMATCH_LINE = re.compile(r"(this job is ais-pipeline [^\n]*restart the TaskManagers of this cluster[^\n]*)")


def check_job_build(job_build: str) -> None:
    """In an operator's ``open``: :class:`BuildMismatch` when this interpreter's build is not the
    job's (an operator made before builds were carried has none: not checked)."""
    loaded = this_build()
    if job_build and job_build != loaded:
        raise BuildMismatch(mismatch_line(job_build, loaded))
