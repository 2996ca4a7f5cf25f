"""Where the job's files are, in a checkout and in an installed package alike.

- ``flink-conf/`` (the cluster settings local runs load too), the bundled sample capture and
  ``connectors/pom.xml`` (the pinned connector versions): the checkout's own files when the
  package runs from one, else the copies a wheel carries in ``ais_pipeline/bundled-files/``.
- The job's Java helpers (``java/``): built by Maven into ``ais_pipeline/jars/`` by the package's
  build backend (``pip install``) or ``make setup``.
- The connector jars (Kafka, JDBC and the PostgreSQL driver) and, for the tests, a Kafka broker's:
  fetched from Maven Central by Maven on first use, as ``connectors/pom.xml`` pins them, into a
  user cache: ``$AIS_PIPELINE_CACHE``, else ``$XDG_CACHE_HOME/ais-pipeline``, else
  ``~/.cache/ais-pipeline``.

``python -m ais_pipeline.resources fetch PROFILE...`` fetches profiles ahead of time and
``python -m ais_pipeline.resources jars PROFILE`` prints a profile's folder (for the scripts).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from ais_pipeline.errors import ConfigError

PACKAGE = Path(__file__).resolve().parent
# udfs/ais_pipeline -> the checkout, when the package runs from one (the development tools, the
# benchmark and the state plot among them, write into it).
CHECKOUT = PACKAGE.parent.parent
_BUNDLED = PACKAGE / "bundled-files"


def _located(relative: str) -> Path:
    """A file or folder of the checkout, else its copy in the installed package."""
    in_checkout = CHECKOUT / relative
    if (CHECKOUT / "pyproject.toml").is_file() and in_checkout.exists():
        return in_checkout
    return _BUNDLED / relative


FLINK_CONF = _located("flink-conf")
SAMPLE_INPUT = _located("data/sample/aislistener__nmea-with-tagblock.txt")
# Global Fishing Watch's published anchorage list (data/ports/SOURCES.md).
ANCHORAGES = _located("data/ports/gfw_anchorages.csv")
CONNECTORS_POM = _located("connectors/pom.xml")
SCHEMA = PACKAGE / "schema.sql"

JARS = PACKAGE / "jars"
HELPERS_JAR = JARS / "ais-flink-helpers.jar"
METRICS_JAR = JARS / "ais-flink-helpers-metrics.jar"  # the Prometheus reporter alone, for plugins/

# connectors/pom.xml's profiles: what each holds, for messages.
PROFILES = {
    "kafka-connector": "Kafka connector jar",
    "jdbc": "JDBC connector jars",
    "kafka-broker": "Kafka broker jars",
}
MAVEN_DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"


def helpers_jar() -> Path:
    """The job's Java helpers; a one-line error when they have not been built."""
    if not HELPERS_JAR.is_file():
        raise ConfigError(
            f"{HELPERS_JAR} is missing: build it with `make setup`, or install the package with pip"
            " (its build runs Maven on java/)"
        )
    return HELPERS_JAR


def cache_dir() -> Path:
    explicit = os.environ.get("AIS_PIPELINE_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ais-pipeline"


def jar_dir(profile: str) -> Path:
    return cache_dir() / "jars" / profile


def connector_jars(profile: str) -> list[Path]:
    """The jars of one profile of ``connectors/pom.xml``, fetched by Maven when they are not all
    there yet (a ``.complete`` marker is written once the copy is whole); a one-line error
    naming them when Maven cannot fetch them."""
    if profile not in PROFILES:
        raise ValueError(f"unknown jar profile {profile!r}")
    directory = jar_dir(profile)
    if not (directory / ".complete").is_file():
        _fetch(profile, directory)
    return sorted(directory.glob("*.jar"))


def _fetch(profile: str, directory: Path) -> None:
    what = PROFILES[profile]
    maven = shutil.which("mvn")
    if maven is None:
        raise ConfigError(f"the {what} are fetched with Maven on first use, and `mvn` is not on PATH: install Maven")
    partial = directory.with_name(directory.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    command = [
        maven, "-q", "-B", "-Dstyle.color=never", "-f", str(CONNECTORS_POM), f"-P{profile}",
        f"{MAVEN_DEPENDENCY_PLUGIN}:copy-dependencies", f"-DoutputDirectory={partial}", "-DincludeScope=runtime",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        output = (done.stdout + done.stderr).strip().splitlines()
        errors = [line for line in output if "[ERROR]" in line] or output
        raise ConfigError(f"could not fetch the {what} with Maven: {' '.join(errors[:2])[:400]}")
    (partial / ".complete").touch()
    shutil.rmtree(directory, ignore_errors=True)
    directory.parent.mkdir(parents=True, exist_ok=True)
    partial.rename(directory)


def main(argv: Sequence[str]) -> int:
    """``fetch PROFILE...`` or ``jars PROFILE`` (prints the folder, fetching it first)."""
    argv = list(argv)
    if len(argv) < 2 or argv[0] not in ("fetch", "jars") or any(p not in PROFILES for p in argv[1:]):
        print(f"usage: python -m ais_pipeline.resources fetch|jars {'|'.join(PROFILES)} ...", file=sys.stderr)
        return 2
    for profile in argv[1:]:
        connector_jars(profile)
        if argv[0] == "jars":
            print(jar_dir(profile))
    return 0


if __name__ == "__main__":
    from ais_pipeline.errors import guarded

    sys.exit(guarded(main, sys.argv[1:]))
