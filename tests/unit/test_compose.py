"""docker-compose.yml and docker/Dockerfile agree with flink-conf/, connectors/pom.xml and the job's
flags (no Docker engine here: what can be checked without one)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from ais_pipeline.config import parse_config
from ais_pipeline.tools.replay import parse_args as replay_args

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


@pytest.fixture(scope="module")
def conf() -> dict:
    return yaml.safe_load((ROOT / "flink-conf" / "config.yaml").read_text())


def job_args(compose: dict) -> list[str]:
    command = " ".join(compose["services"]["submit"]["command"].split())
    return shlex.split(command.split("--pyFiles /opt/ais/udfs", 1)[1].strip().rstrip('"'))


def test_services_and_web_ui_port_match_flink_conf(compose, conf):
    services = compose["services"]
    assert set(services) == {"kafka", "replay", "jobmanager", "taskmanager", "taskmanager-2", "postgres", "submit"}
    assert services["jobmanager"]["ports"][0] == f"127.0.0.1:{conf['rest']['port']}:{conf['rest']['port']}"
    assert services["jobmanager"]["command"] == "jobmanager"
    assert services["taskmanager"]["command"] == services["taskmanager-2"]["command"] == "taskmanager"
    props = yaml.safe_load(services["jobmanager"]["environment"]["FLINK_PROPERTIES"])
    assert props["jobmanager.rpc.address"] == "jobmanager"
    assert props["python.executable"] == "/opt/venv/bin/python"
    assert conf["python"]["execution-mode"] == "thread"


def test_prometheus_reporter_is_the_one_flink_conf_configures_and_the_image_installs(compose, conf):
    prom = conf["metrics"]["reporter"]["prom"]
    factory = prom["factory"]["class"]
    assert factory == "ais.flink.metrics.BoundPrometheusReporterFactory"
    source = ROOT / "java" / "src" / "main" / "java" / Path(*factory.split(".")).with_suffix(".java")
    assert source.is_file()
    services = ROOT / "java" / "src" / "main" / "resources" / "META-INF" / "services"
    assert factory in (services / "org.apache.flink.metrics.reporter.MetricReporterFactory").read_text()
    assert prom["host"] == "127.0.0.1" and str(prom["port"]).startswith("9249")
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    plugin = (
        "cp /opt/ais/udfs/ais_pipeline/jars/ais-flink-helpers-metrics.jar /opt/flink/opt/flink-metrics-prometheus-*.jar"
    )
    assert plugin in dockerfile and "/opt/flink/plugins/metrics-prometheus/\n" in dockerfile
    props = yaml.safe_load(compose["services"]["jobmanager"]["environment"]["FLINK_PROPERTIES"])
    assert props["metrics.reporter.prom.host"] == "0.0.0.0"  # inside the containers' network


def test_closed_by_default_the_host_publishes_ports_on_loopback_only(compose, conf):
    for service in compose["services"].values():
        for mapping in service.get("ports", []):
            assert mapping.startswith("127.0.0.1:"), mapping
    assert compose["services"]["jobmanager"]["ports"] == ["127.0.0.1:8081:8081", "127.0.0.1:9249:9249"]
    assert compose["services"]["taskmanager"]["ports"] == ["127.0.0.1:9250:9249"]
    assert compose["services"]["taskmanager-2"]["ports"] == ["127.0.0.1:9251:9249"]
    assert conf["web"]["submit"]["enable"] is False and conf["web"]["cancel"]["enable"] is True
    assert conf["rest"]["bind-address"] == "127.0.0.1"
    assert conf["jobmanager"]["bind-host"] == "127.0.0.1" and conf["taskmanager"]["bind-host"] == "127.0.0.1"


def test_submitter_runs_the_kafka_job_with_flags_the_job_accepts(compose):
    command = " ".join(compose["services"]["submit"]["command"].split())
    assert "flink run -d -m jobmanager:8081 -py /opt/ais/jobs/ais_traffic.py" in command
    config = parse_config(job_args(compose), environ={})
    assert config.source == "kafka" and config.bootstrap_servers == "kafka:9092" and config.topic == "ais-raw"
    assert config.output_topics()["aggregates"] == "ais.aggregates"
    depends = compose["services"]["submit"]["depends_on"]
    assert depends["replay"]["condition"] == "service_completed_successfully"


def test_replay_feeds_the_topic_the_job_reads_on_the_broker_kafka_advertises(compose):
    services = compose["services"]
    replay = services["replay"]
    argv = shlex.split(" ".join(replay["command"].split()))
    assert replay["entrypoint"] == ["/opt/venv/bin/ais-pipeline"] and argv[0] == "replay"
    sample = argv[1].replace("/opt/ais/", "")
    args = replay_args([str(ROOT / sample), *argv[2:]])
    job = parse_config(job_args(compose), environ={})
    assert (args.topic, args.bootstrap_servers) == (job.topic, job.bootstrap_servers)
    kafka = services["kafka"]["environment"]
    assert kafka["KAFKA_ADVERTISED_LISTENERS"] == f"PLAINTEXT://{job.bootstrap_servers}"
    assert kafka["KAFKA_AUTO_CREATE_TOPICS_ENABLE"] == "false"  # the replay tool and the job create theirs
    assert int(kafka["KAFKA_TRANSACTION_MAX_TIMEOUT_MS"]) >= 900000  # above the sinks' transaction timeout
    assert services["replay"]["depends_on"]["kafka"]["condition"] == "service_healthy"


def test_images_and_versions_are_pinned_and_agree_with_the_project(compose):
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    pyproject = (ROOT / "pyproject.toml").read_text()
    pom = (ROOT / "connectors" / "pom.xml").read_text()
    assert "FROM flink:2.3.0-" in dockerfile and '"apache-flink==2.3.0"' in pyproject
    connector = re.search(r"<flink.kafka.connector.version>(.+)</", pom).group(1)  # type: ignore[union-attr]
    assert f"ARG KAFKA_CONNECTOR={connector}" in dockerfile
    kafka_version = re.search(r"<kafka.version>(.+)</", pom).group(1)  # type: ignore[union-attr]
    assert compose["services"]["kafka"]["image"] == f"apache/kafka:{kafka_version}"
    for path in ("udfs", "jobs", "java", "data", "connectors", "flink-conf"):
        assert f"COPY {path} " in dockerfile and (ROOT / path).exists()
    assert "COPY java /src/java" in dockerfile and "pip install --no-cache-dir /opt/ais" in dockerfile
    # The jobs and the package the submitter names exist, and the jar cache is where the job looks.
    submit = " ".join(compose["services"]["submit"]["command"].split())
    assert "-py /opt/ais/jobs/ais_traffic.py --pyFiles /opt/ais/udfs" in submit
    assert (ROOT / "jobs" / "ais_traffic.py").is_file()
    assert "ENV AIS_PIPELINE_CACHE=/opt/ais/cache" in dockerfile and "-DoutputDirectory=/cache/jars/" in dockerfile
    assert "flink-python-" in dockerfile  # thread mode on a cluster needs it in lib/ (pemja, Java 17)
    assert "mvn -q -B -f /src/java/pom.xml -DskipTests package" in dockerfile  # the job's Java classes


def test_the_java_module_builds_against_the_flink_and_connector_the_job_runs_on():
    java_pom = (ROOT / "java" / "pom.xml").read_text()
    connectors_pom = (ROOT / "connectors" / "pom.xml").read_text()
    pyproject = (ROOT / "pyproject.toml").read_text()
    flink = re.search(r"<flink.version>(.+)</", java_pom).group(1)  # type: ignore[union-attr]
    assert f'"apache-flink=={flink}"' in pyproject
    connector = re.search(r"<flink.kafka.connector.version>(.+)</", java_pom).group(1)  # type: ignore[union-attr]
    assert f"<flink.kafka.connector.version>{connector}</" in connectors_pom
    jdbc = re.search(r"<flink.jdbc.connector.version>(.+)</", java_pom).group(1)  # type: ignore[union-attr]
    assert f"<flink.jdbc.connector.version>{jdbc}</" in connectors_pom
    # Flink, its local executor, its file connector, its Prometheus reporter, Kafka and JDBC come
    # from the runtime; Hadoop's client API only compiles parquet-java's calls (never at run time)
    assert java_pom.count("<scope>provided</scope>") == 8


def test_checkpoints_go_to_a_volume_every_flink_container_shares(compose, conf):
    assert conf["execution"]["checkpointing"]["storage"] == "filesystem"
    for name in ("jobmanager", "taskmanager", "taskmanager-2", "submit"):
        service = compose["services"][name]
        props = yaml.safe_load(service["environment"]["FLINK_PROPERTIES"])
        assert props["execution.checkpointing.dir"].startswith("file:///data/")
        assert "flink-data:/data" in service["volumes"]
    assert "flink-data" in compose["volumes"]


def test_the_job_writes_to_the_postgres_service_with_the_password_from_the_environment_only(compose):
    services = compose["services"]
    pg = services["postgres"]
    assert pg["image"] == "postgres:17.6" and pg["ports"] == ["127.0.0.1:5432:5432"]
    assert (pg["environment"]["POSTGRES_USER"], pg["environment"]["POSTGRES_DB"]) == ("ais", "ais")
    # No password in the file: the database takes it from the environment of `docker compose up`
    # (the image does not start without one), the job's client too.
    assert pg["environment"]["POSTGRES_PASSWORD"] == "${POSTGRES_PASSWORD:-}"
    assert "-h" in pg["healthcheck"]["test"]  # over TCP, not the first-start server's socket
    submit = services["submit"]
    assert submit["environment"]["PGPASSWORD"] == "${POSTGRES_PASSWORD:-}"
    assert "FLINK_PROPERTIES" in submit["environment"]  # merged from the Flink services' own
    assert submit["depends_on"]["postgres"]["condition"] == "service_healthy"
    config = parse_config(job_args(compose), environ={"PGPASSWORD": "from-env"})
    assert config.postgres is not None and config.postgres.shown() == "postgresql://ais@postgres:5432/ais"
    assert config.postgres.password == "from-env"
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    pom = (ROOT / "connectors" / "pom.xml").read_text()
    jdbc = re.search(r"<flink.jdbc.connector.version>(.+)</", pom).group(1)  # type: ignore[union-attr]
    driver = re.search(r"<postgresql.driver.version>(.+)</", pom).group(1)  # type: ignore[union-attr]
    assert f"ARG JDBC_CONNECTOR={jdbc}" in dockerfile and f"ARG POSTGRESQL_DRIVER={driver}" in dockerfile
    assert (
        'touch /cache/jars/"$profile"/.complete' in dockerfile and "for profile in kafka-connector jdbc" in dockerfile
    )
    assert "postgres-data" in compose["volumes"]


def test_every_taskmanager_has_one_slot_as_thread_mode_wants(compose, conf):
    """In thread mode a TaskManager is one Python interpreter: its slots would share one GIL."""
    assert conf["taskmanager"]["numberOfTaskSlots"] == 1
    props = yaml.safe_load(compose["services"]["taskmanager"]["environment"]["FLINK_PROPERTIES"])
    assert props["taskmanager.numberOfTaskSlots"] == 1
    assert (ROOT / "flink-conf" / "workers").read_text().split() == ["localhost", "localhost"]
