"""The Flink web UI in a real browser: the job runs locally (watching a directory, so it stays up)
and headless Chromium (Debian's package, installed by `make test`'s set-up) opens the job's page.
The page shows the job, its named operators and their metrics, and the state gauges (vessels held,
vessels in the Python cache, cells with panes) added on the operators' Metrics tabs as a person
adds them, driven over the DevTools protocol; and a live run's gauges of its outputs' latency and
its watermark's lag behind the clock. The screenshots are kept in build/test-artifacts/
(web-ui-job.png, web-ui-state-gauges.png, web-ui-latency-gauges.png)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ais_pipeline.config import SAMPLE_INPUT
from tests.support.jobs import ROOT, RUNNING_KEPT
from tests.support.kafka import operator_metrics, rest
from tests.support.live import fleet_seconds, send_seconds, wait_until_bound
from tests.support.servers import free_port
from tests.support.web import DevTools, gauges_in_web_ui, shown_ms

pytestmark = pytest.mark.integration
# The gauges of the job's state, as the web UI names them (subtask 0 of a run at parallelism 1).
DEDUP_GAUGES = ["0.dedup_by_MMSI.vessels_held", "0.dedup_by_MMSI.vessels_cached", "0.dedup_by_MMSI.dedup_keys_held"]
CELL_GAUGES = ["0.cell_windows_(keyed_by_cell).cells_held"]
ARTIFACTS = ROOT / "build" / "test-artifacts"
# Offline: no update checks, no background requests; --no-sandbox because tests run as root.
CHROMIUM_FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--virtual-time-budget=8000",
    "--window-size=1400,1000",
]


def chromium(*args: str) -> str:
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        pytest.fail("chromium is not installed: `make browser` (part of `make test`) installs Debian's package")
    # Headless Chromium now and then never returns from a page that keeps polling (seen once in a
    # clean-clone CI run): a run that hangs is killed and started again, up to three times.
    for attempt in range(3):
        try:
            done = subprocess.run([binary, *CHROMIUM_FLAGS, *args], capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            if attempt == 2:
                raise
            continue
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout
    raise AssertionError("unreachable")


def test_job_page_shows_the_job_its_named_operators_and_their_metrics(tmp_path: Path):
    watched = tmp_path / "in"
    watched.mkdir()
    shutil.copy(SAMPLE_INPUT, watched / SAMPLE_INPUT.name)
    port = free_port()
    cmd = [sys.executable, "-m", "ais_pipeline.jobs.ais_traffic", "--input", str(watched), "--follow"]
    cmd += ["--output", str(tmp_path / "out"), "--web-ui-port", str(port)]
    log = (tmp_path / "job.log").open("w")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://localhost:{port}"
    try:
        job = ""
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                jobs = rest(base, "/jobs")["jobs"]
                job = jobs[0]["id"] if jobs else ""
                if job and operator_metrics(base, job, {"positions_kept"}).get("positions_kept") == RUNNING_KEPT:
                    break
            except OSError:
                pass
            time.sleep(1)
        else:
            raise AssertionError("the job did not process the sample")
        time.sleep(6)  # the web UI's metrics are fetched from the TaskManager every few seconds
        page = f"{base}/#/job/running/{job}/overview"
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / "web-ui-job.png"
        shot.unlink(missing_ok=True)
        chromium(f"--screenshot={shot}", page)
        dom = chromium("--dump-dom", page)
        # The state gauges, added on the operators' Metrics tabs as a person adds them.
        vertices = {v["name"]: v["id"] for v in rest(base, f"/jobs/{job}")["vertices"]}
        dedup = next(v for name, v in vertices.items() if "dedup by MMSI" in name)
        windows = next(v for name, v in vertices.items() if name.startswith("cell windows"))
        binary = shutil.which("chromium") or shutil.which("chromium-browser")
        assert binary is not None
        with DevTools(binary) as browser:
            shown = gauges_in_web_ui(browser, f"{base}/#/job/running/{job}/overview/{dedup}/metrics", DEDUP_GAUGES)
            browser.screenshot(str(ARTIFACTS / "web-ui-state-gauges.png"))
            shown |= gauges_in_web_ui(browser, f"{base}/#/job/running/{job}/overview/{windows}/metrics", CELL_GAUGES)
        by_rest = operator_metrics(base, job, {m.rsplit(".", 1)[-1] for m in DEDUP_GAUGES + CELL_GAUGES})
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
        log.close()

    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    assert "ais-pipeline" in dom and "RUNNING" in dom and job in dom
    for operator in (
        "read lines",
        "parse lines",
        "watermarks",
        "dedup by MMSI",
        "cell windows (keyed by cell)",
    ):
        assert operator in dom, operator
    # The vertex table's metrics: the source read the sample's 10,000 lines.
    assert "Records Received" in dom and "10,000" in dom
    # Every state gauge shows what the REST API says; the sample's vessels all fit the vessel cache.
    values = {name.rsplit(".", 1)[-1]: int(float(value)) for name, value in shown.items()}
    assert values == {name: int(value) for name, value in by_rest.items()}
    assert values["vessels_held"] == values["vessels_cached"] == values["dedup_keys_held"] > 0
    assert values["cells_held"] > 0


def test_a_live_runs_latency_and_watermark_lag_gauges_show_in_the_web_ui(tmp_path: Path):
    # A fleet heard once a second without tag blocks (stamped on receipt): the positions' latency
    # over the last minute and the watermark's lag behind the clock, added on the Metrics tabs.
    port, udp = free_port(), free_port()
    cmd = [sys.executable, "-m", "ais_pipeline.jobs.ais_traffic", "--input", f"udp://127.0.0.1:{udp}"]
    cmd += ["--output", str(tmp_path / "out"), "--web-ui-port", str(port)]
    log = (tmp_path / "job.log").open("w")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://localhost:{port}"
    try:
        wait_until_bound(udp, "udp")
        send_seconds(udp, fleet_seconds(50, 6))
        (job,) = [j["id"] for j in rest(base, "/jobs")["jobs"]]
        time.sleep(6)  # the web UI's metrics are fetched from the TaskManager every few seconds

        def metric_of(vertex: str, suffix: str) -> str:
            ids = [m["id"] for m in rest(base, f"/jobs/{job}/vertices/{vertex}/metrics")]
            (found,) = [i for i in ids if i.endswith(suffix)]
            return found

        vertices = {v["name"]: v["id"] for v in rest(base, f"/jobs/{job}")["vertices"]}
        positions = next(v for name, v in vertices.items() if "latency of positions" in name)
        marks = next(v for name, v in vertices.items() if "watermarks" in name)
        p99 = metric_of(positions, "output.positions.latency_p99_ms")
        lag = metric_of(marks, ".watermark_lag_ms")
        binary = shutil.which("chromium") or shutil.which("chromium-browser")
        assert binary is not None
        with DevTools(binary) as browser:
            shown = gauges_in_web_ui(browser, f"{base}/#/job/running/{job}/overview/{positions}/metrics", [p99])
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            browser.screenshot(str(ARTIFACTS / "web-ui-latency-gauges.png"))
            shown |= gauges_in_web_ui(browser, f"{base}/#/job/running/{job}/overview/{marks}/metrics", [lag])
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
        log.close()
    # A position reaches its sinks within seconds of its line; the watermark trails the clock by
    # about a second (its lag, a step of a second, and the metrics' fetch interval).
    assert 0 < shown_ms(shown[p99]) < 5_000, shown
    assert 0 < shown_ms(shown[lag]) < 10_000, shown
