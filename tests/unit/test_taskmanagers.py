"""The run's own cluster (``--taskmanagers N``) without starting it: its folders link the PyFlink
package's jars and leave the package as it is, its settings keep Flink's working folders and its
Prometheus ports its own, and the folder of a run that was killed outright is swept by the next."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ais_pipeline.pipeline import taskmanagers
from ais_pipeline.pipeline.taskmanagers import cluster_folders, cluster_settings, sweep_stale_scratch
from ais_pipeline.resources import METRICS_JAR

pytestmark = pytest.mark.unit


def fake_package(home: Path) -> None:
    """A PyFlink package's folders, as the pip package lays them out."""
    for name in ("lib/flink-dist-2.3.0.jar", "lib/log4j-core-2.25.3.jar", "opt/flink-python-2.3.0.jar",
                 "opt/flink-sql-client-2.3.0.jar", "plugins/metrics-prometheus/flink-metrics-prometheus-2.3.0.jar",
                 "plugins/metrics-jmx/flink-metrics-jmx-2.3.0.jar", "plugins/README.txt"):  # fmt: skip
        path = home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(name.encode())


def digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }


def test_the_clusters_folders_link_the_packages_jars_and_leave_a_read_only_package_as_it_is(tmp_path: Path):
    home, scratch = tmp_path / "pyflink", tmp_path / "scratch"
    fake_package(home)
    scratch.mkdir()
    before = digest(home)
    for folder in [home, *home.rglob("*")]:
        if folder.is_dir():
            folder.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP)
    try:
        lib, plugins = cluster_folders(home, scratch)
    finally:
        for folder in [home, *home.rglob("*")]:
            if folder.is_dir():
                folder.chmod(0o755)
    assert digest(home) == before
    assert sorted(p.name for p in lib.iterdir()) == [
        "flink-dist-2.3.0.jar",
        "flink-python-2.3.0.jar",
        "log4j-core-2.25.3.jar",
    ]
    assert (lib / "flink-python-2.3.0.jar").resolve() == (home / "opt" / "flink-python-2.3.0.jar").resolve()
    assert sorted(p.name for p in plugins.iterdir()) == ["metrics-jmx", "metrics-prometheus"]
    prometheus = plugins / "metrics-prometheus"
    assert sorted(p.name for p in prometheus.iterdir()) == sorted(
        ["flink-metrics-prometheus-2.3.0.jar", METRICS_JAR.name]
    )
    assert (prometheus / METRICS_JAR.name).resolve() == METRICS_JAR.resolve()


def test_the_clusters_settings_keep_its_working_folders_and_ports_its_own(tmp_path: Path):
    settings = {"rest.port": "8081", "env.java.opts.all": "--add-opens=java.base/java.lang=ALL-UNNAMED"}
    settings["metrics.reporter.prom.port"] = "9249-9259"
    own = cluster_settings(settings, 41234, tmp_path, 2)
    assert own["jobmanager.rpc.port"] == "41234" and own["taskmanager.numberOfTaskSlots"] == "1"
    assert own["io.tmp.dirs"] == own["web.tmpdir"] == str(tmp_path)
    assert own["env.java.opts.all"] == f"--add-opens=java.base/java.lang=ALL-UNNAMED -Djava.io.tmpdir={tmp_path}"
    assert own["metrics.reporter.prom.port"] == "9249-9259"  # 3 processes: the range has room
    assert cluster_settings(settings, 41234, tmp_path, 64)["metrics.reporter.prom.port"] == "9249-9313"


def test_the_folder_of_a_run_killed_outright_is_swept_and_a_live_runs_is_not(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(taskmanagers.tempfile, "gettempdir", lambda: str(tmp_path))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    killed, live, other = tmp_path / "ais-cluster-a", tmp_path / "ais-cluster-b", tmp_path / "ais-cluster-c"
    for folder, owner in ((killed, dead.stdout.strip()), (live, str(os.getppid())), (other, "not a pid")):
        folder.mkdir()
        (folder / "owner").write_text(owner + "\n")
    sweep_stale_scratch()
    assert not killed.exists() and live.exists() and other.exists()
