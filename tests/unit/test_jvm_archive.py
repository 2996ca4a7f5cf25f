"""The class data sharing archive's options: added to JVM_ARGS only when the archive of this Java
and PyFlink is there, never over an archive the user names, and never for the cluster daemons."""

import os
from pathlib import Path

import pytest

from ais_pipeline.pipeline import jvm_archive

pytestmark = pytest.mark.unit


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AIS_PIPELINE_CACHE", str(tmp_path))
    monkeypatch.delenv("JVM_ARGS", raising=False)
    monkeypatch.delenv(jvm_archive.SWITCH, raising=False)
    return tmp_path


def whole(path: Path) -> None:
    path.write_bytes(b"archive")
    path.with_name(path.name + ".size").write_text("7\n")


def test_without_an_archive_a_run_gets_no_options(cache: Path):
    jvm_archive.use_archive()
    assert jvm_archive.archive_options() == ""
    assert "JVM_ARGS" not in os.environ


def test_an_archive_in_the_cache_is_mapped_after_the_users_own_options(cache: Path, monkeypatch: pytest.MonkeyPatch):
    path = jvm_archive.archive_path()
    assert path is not None and path.parent == cache and path.name.startswith("jvm-classes-")
    whole(path)
    monkeypatch.setenv("JVM_ARGS", "-Xmx2g")
    jvm_archive.use_archive()
    assert os.environ["JVM_ARGS"] == f"-Xmx2g -XX:SharedArchiveFile={path} {jvm_archive.QUIET}"
    # The daemons of a run's own cluster get the user's options alone.
    assert jvm_archive.without_archive(os.environ["JVM_ARGS"]) == "-Xmx2g"


@pytest.mark.parametrize("given", ["-XX:SharedArchiveFile=/mine.jsa", "-XX:ArchiveClassesAtExit=/new.jsa"])
def test_an_archive_the_user_names_is_left_alone(cache: Path, monkeypatch: pytest.MonkeyPatch, given: str):
    path = jvm_archive.archive_path()
    assert path is not None
    whole(path)
    monkeypatch.setenv("JVM_ARGS", given)
    jvm_archive.use_archive()
    assert os.environ["JVM_ARGS"] == given


def test_the_switch_turns_it_off(cache: Path, monkeypatch: pytest.MonkeyPatch):
    path = jvm_archive.archive_path()
    assert path is not None
    whole(path)
    monkeypatch.setenv(jvm_archive.SWITCH, "off")
    assert jvm_archive.archive_options() == ""


def test_an_archive_cut_short_is_left_unused(cache: Path):
    # The JVM crashes on a cut archive (SIGBUS) instead of starting without it.
    path = jvm_archive.archive_path()
    assert path is not None
    whole(path)
    path.write_bytes(b"arch")
    assert jvm_archive.archive_options() == ""
    path.with_name(path.name + ".size").unlink()
    path.write_bytes(b"archive")
    assert jvm_archive.archive_options() == ""
