"""Closed by default: a local run and the standalone cluster, inspected while they run. Every
listening socket of their processes is on loopback, the web UI takes no jar uploads, and the
secrets of a run (the Kafka SASL password) appear on no page of the web UI and in no log. The
opt-in flag opens the web UI and the metrics, and nothing else."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from ais_pipeline.config import SAMPLE_INPUT
from ais_pipeline.pipeline.ports import unused_port
from tests.support.kafka import rest, submit, wait_for_state
from tests.support.servers import ROOT, SASL_PASSWORD, sasl_client_properties
from tests.support.web import assert_on_no_page, get_text

pytestmark = pytest.mark.integration

LOOPBACK = {"127.0.0.1", "::1", "::ffff:127.0.0.1"}
WILDCARD = {"0.0.0.0", "::"}


def listening(pids: list[int]) -> set[tuple[str, int]]:
    """(address, port) of every TCP socket these processes listen on."""
    wanted = set(pids)
    return {
        (c.laddr.ip, c.laddr.port)
        for c in psutil.net_connections(kind="tcp")
        if c.status == psutil.CONN_LISTEN and c.pid in wanted
    }


def process_tree(pid: int) -> list[int]:
    root = psutil.Process(pid)
    return [root.pid, *(p.pid for p in root.children(recursive=True))]


def cluster_pids() -> list[int]:
    """The JobManager and TaskManager processes of scripts/cluster.sh's cluster."""
    daemons = ("StandaloneSessionClusterEntrypoint", "TaskManagerRunner")
    return [
        p.pid for p in psutil.process_iter(["cmdline"]) if any(d in " ".join(p.info["cmdline"] or []) for d in daemons)
    ]


def upload_jar(base: str) -> tuple[int, str]:
    """The HTTP status and body of a jar upload, as the web UI's "Submit New Job" page sends it."""
    boundary = "ais-boundary"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="jarfile"; filename="x.jar"\r\n'
        f"Content-Type: application/x-java-archive\r\n\r\nPK\x03\x04\r\n--{boundary}--\r\n"
    ).encode()
    request = urllib.request.Request(
        base + "/jars/upload",
        data=body,
        method="POST",
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def assert_no_jar_handlers(base: str) -> None:
    """No jar upload and no jar list: the web submission handlers are not there at all (with
    web.submit.enable the upload answers 200 with the stored file's name)."""
    assert upload_jar(base) == (400, '{"errors":["POST request not allowed"]}')
    try:
        get_text(base + "/jars")
        raise AssertionError("/jars answered")
    except urllib.error.HTTPError as err:
        assert err.code == 404


def external_address() -> str | None:
    """An IPv4 address of this machine that is not loopback, if it has one."""
    for addresses in psutil.net_if_addrs().values():
        for a in addresses:
            if a.family.name == "AF_INET" and not a.address.startswith("127."):
                return a.address  # type: ignore[no-any-return]
    return None


def reachable(host: str, port: int) -> bool:
    import socket

    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def prometheus_ports(sockets: set[tuple[str, int]]) -> set[int]:
    return {port for _, port in sockets if 9249 <= port <= 9259}


class LocalRun:
    """``ais-pipeline run --follow`` on a directory, running until stopped."""

    def __init__(self, tmp_path: Path, *flags: str) -> None:
        self.port = unused_port()
        inputs = tmp_path / "in"
        inputs.mkdir()
        (inputs / "a.nmea").write_bytes(SAMPLE_INPUT.read_bytes())
        cmd = [sys.executable, "-m", "ais_pipeline.cli", "run", "--input", str(inputs), "--follow"]
        cmd += ["--output", str(tmp_path / "out"), "--web-ui-port", str(self.port), *flags]
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.base = f"http://127.0.0.1:{self.port}"

    def wait_running(self) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.proc.communicate()[1][-3000:]
            try:
                jobs = rest(self.base, "/jobs/overview")["jobs"]
                if jobs and jobs[0]["state"] == "RUNNING":
                    return
            except OSError:
                pass
            time.sleep(1)
        raise AssertionError("the local run did not get going")

    def stop(self) -> tuple[str, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.communicate()


@pytest.fixture
def local_run(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[LocalRun]:
    run = LocalRun(tmp_path, *getattr(request, "param", ()))
    try:
        run.wait_running()
        yield run
    finally:
        run.stop()


def test_a_local_run_listens_on_loopback_only_and_takes_no_jars(local_run: LocalRun):
    sockets = listening(process_tree(local_run.proc.pid))
    assert local_run.port in {port for _, port in sockets}
    assert {address for address, _ in sockets} <= LOOPBACK, sockets
    assert len(prometheus_ports(sockets)) == 1  # Prometheus is served, on loopback
    port = prometheus_ports(sockets).pop()
    assert "flink_jobmanager_numRegisteredTaskManagers" in get_text(f"http://127.0.0.1:{port}/metrics")
    features = rest(local_run.base, "/config")["features"]
    assert features["web-submit"] is False and features["web-cancel"] is True
    assert_no_jar_handlers(local_run.base)


@pytest.mark.parametrize("local_run", [("--bind-address", "0.0.0.0")], indirect=True)
def test_bind_address_opens_the_web_ui_and_metrics_and_nothing_else(local_run: LocalRun):
    sockets = listening(process_tree(local_run.proc.pid))
    opened = {(address, port) for address, port in sockets if address not in LOOPBACK}
    prometheus = prometheus_ports(sockets)
    assert len(prometheus) == 1
    assert {port for _, port in opened} == {local_run.port, *prometheus}
    assert {address for address, _ in opened} <= WILDCARD
    external = external_address()
    if external is not None:
        assert reachable(external, local_run.port) and reachable(external, prometheus.pop())
    assert rest(local_run.base, "/config")["features"]["web-submit"] is False  # opened, still no uploads
    _, stderr = local_run.stop()
    assert (
        "ais-pipeline: warning: --bind-address 0.0.0.0: the web UI, its REST API (which takes job submissions)"
        " and the Prometheus metrics are open to the network"
    ) in stderr.splitlines()


def test_the_standalone_cluster_listens_on_loopback_only_and_takes_no_jars(cluster: str):
    pids = cluster_pids()
    assert len(pids) >= 2  # a JobManager and a TaskManager
    sockets = listening(pids)
    assert {address for address, _ in sockets} <= LOOPBACK, sockets
    assert len(prometheus_ports(sockets)) >= 2  # one endpoint per process, on loopback
    features = rest(cluster, "/config")["features"]
    assert features["web-submit"] is False and features["web-cancel"] is True
    assert_no_jar_handlers(cluster)


def test_the_sasl_password_is_on_no_page_of_the_web_ui_and_in_no_log(cluster: str, sasl_kafka: str, tmp_path: Path):
    props = sasl_client_properties(tmp_path / "client.properties")
    conf = ["--kafka-properties", str(props)]
    replay_secured(sasl_kafka, props)
    job = submit(sasl_kafka, "secured-ui", "secured-ui", *conf)
    try:
        wait_for_state(cluster, job, {"RUNNING"}, timeout_s=120)
        time.sleep(5)  # the sources have connected (and logged their client settings)
        assert_on_no_page(cluster, job, SASL_PASSWORD)
    finally:
        rest(cluster, f"/jobs/{job}", method="PATCH")
    for log in (ROOT / "log" / "flink").glob("*"):
        assert SASL_PASSWORD not in log.read_text(errors="replace"), log


def replay_secured(sasl_kafka: str, props: Path) -> None:
    cmd = [sys.executable, "-m", "ais_pipeline.cli", "replay", str(SAMPLE_INPUT), "--topic", "secured-ui"]
    cmd += ["--bootstrap-servers", sasl_kafka, "--kafka-properties", str(props)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
