"""The Python package's build backend (``pyproject.toml``): setuptools', after Maven has built the
job's Java helpers (this folder's ``pom.xml``) into the package, so that ``pip install .``,
``pip install git+...`` and ``pipx install`` give a command that runs without the checkout.

- Every build (a wheel, an editable install): ``mvn package`` writes ``ais-flink-helpers.jar``
  and ``ais-flink-helpers-metrics.jar`` into ``udfs/ais_pipeline/jars/``, unless they are newer
  than every source of this folder. Needs a JDK 17 and Maven.
- A wheel also carries copies of ``flink-conf/``, the bundled sample and ``connectors/pom.xml``
  in ``ais_pipeline/bundled-files/`` (a checkout's own files are used when the package runs from one).
"""

from __future__ import annotations

import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import get_requires_for_build_sdist  # noqa: F401  (kept as it is)

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "udfs" / "ais_pipeline"
JARS = ("ais-flink-helpers.jar", "ais-flink-helpers-metrics.jar")
BUNDLED = ("flink-conf", "data/sample", "data/ports", "connectors/pom.xml")


def _jars_folder() -> None:
    """The jars' folder is a package (of data) in pyproject.toml: setuptools wants it to exist
    from its first step (the metadata), before Maven has written into it (a clean clone has none)."""
    (PACKAGE / "jars").mkdir(exist_ok=True)


def get_requires_for_build_editable(config_settings: Any = None) -> list[str]:
    _jars_folder()
    return list(_setuptools.get_requires_for_build_editable(config_settings))


def get_requires_for_build_wheel(config_settings: Any = None) -> list[str]:
    _jars_folder()
    return list(_setuptools.get_requires_for_build_wheel(config_settings))


def prepare_metadata_for_build_editable(metadata_directory: str, config_settings: Any = None) -> str:
    _jars_folder()
    return str(_setuptools.prepare_metadata_for_build_editable(metadata_directory, config_settings))


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Any = None) -> str:
    _jars_folder()
    return str(_setuptools.prepare_metadata_for_build_wheel(metadata_directory, config_settings))


def _java_helpers() -> None:
    sources = [ROOT / "java" / "pom.xml", *(ROOT / "java" / "src" / "main").rglob("*")]
    newest = max(p.stat().st_mtime for p in sources if p.is_file())
    jars = [PACKAGE / "jars" / name for name in JARS]
    if all(j.is_file() and j.stat().st_mtime >= newest for j in jars):
        return
    maven = shutil.which("mvn")
    if maven is None:
        if all(j.is_file() for j in jars):
            return  # built elsewhere (the Docker image's Maven stage)
        raise RuntimeError("building ais-pipeline needs Maven (mvn) and a JDK 17 for its Java helpers (java/)")
    subprocess.run([maven, "-q", "-B", "-f", str(ROOT / "java" / "pom.xml"), "-DskipTests", "package"], check=True)


def _bundle() -> None:
    target = PACKAGE / "bundled-files"
    shutil.rmtree(target, ignore_errors=True)
    for relative in BUNDLED:
        source = ROOT / relative
        if source.is_dir():
            shutil.copytree(source, target / relative)
        else:
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / relative)


def build_wheel(wheel_directory: str, config_settings: Any = None, metadata_directory: str | None = None) -> str:
    _jars_folder()
    _java_helpers()
    _bundle()
    return str(_setuptools.build_wheel(wheel_directory, config_settings, metadata_directory))


def build_editable(wheel_directory: str, config_settings: Any = None, metadata_directory: str | None = None) -> str:
    _jars_folder()
    _java_helpers()
    with warnings.catch_warnings():
        # setuptools' notice on every editable install ("be careful with folders in your working
        # directory with the same name as your package"): the package is udfs/ais_pipeline itself.
        warnings.filterwarnings("ignore", message="Editable installation")
        return str(_setuptools.build_editable(wheel_directory, config_settings, metadata_directory))


def build_sdist(sdist_directory: str, config_settings: Any = None) -> str:
    _jars_folder()
    return str(_setuptools.build_sdist(sdist_directory, config_settings))
