"""docker-compose.yml and docker/Dockerfile agree with flink-conf/ and the job (no Docker engine
here: what can be checked without one)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from udfs.config import parse_config

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_services_and_web_ui_port_match_flink_conf(compose):
    conf = yaml.safe_load((ROOT / "flink-conf" / "config.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"jobmanager", "taskmanager", "submit"}
    assert services["jobmanager"]["ports"] == [f"{conf['rest']['port']}:{conf['rest']['port']}"]
    assert services["jobmanager"]["command"] == "jobmanager" and services["taskmanager"]["command"] == "taskmanager"
    props = yaml.safe_load(services["jobmanager"]["environment"]["FLINK_PROPERTIES"])
    assert props["jobmanager.rpc.address"] == "jobmanager"
    assert conf["python"]["execution-mode"] == "thread"


def test_submitter_runs_the_job_file_with_flags_the_job_accepts(compose):
    command = " ".join(compose["services"]["submit"]["command"].split())
    assert f"-m jobmanager:{8081}" in command and "-py /opt/ais/jobs/ais_pipeline.py" in command
    job_args = command.split("--pyFiles /opt/ais/udfs", 1)[1].strip().rstrip('"').split()
    config = parse_config(job_args, environ={})
    assert str(config.output_dir) == "/data/out"
    assert (ROOT / "jobs" / "ais_pipeline.py").exists() and (ROOT / "udfs").is_dir()


def test_dockerfile_installs_the_pinned_flink_python_and_the_job():
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert "FROM flink:2.3.0-" in dockerfile and '"apache-flink==2.3.0"' in pyproject
    for path in ("jobs", "udfs", "java", "scripts", "data", "flink-conf/config.yaml"):
        assert f"COPY {path} " in dockerfile and (ROOT / path).exists()
    assert "flink-python-" in dockerfile  # thread mode on a cluster needs it in lib/ (pemja, Java 17)
