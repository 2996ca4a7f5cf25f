"""Live feeds for the tests of the network inputs and the relay: the job started on a URL and
stopped as Ctrl-C stops it, and senders that replay lines over UDP and TCP at a set rate."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import psutil

from ais_pipeline.pipeline.ports import unused_port
from ais_pipeline.pipeline.progress import metric_query
from tests.support.jobs import ROOT
from tests.support.nmea import position

RATE = 5_000  # lines/s, about what a busy shore receiver or an aggregator sends


class LiveJob:
    """``ais-pipeline run --input URL --output DIR`` in the background, with its web UI on a
    free port; :meth:`stop` is Ctrl-C (SIGTERM, its twin): the job drains and sums itself up."""

    def __init__(self, tmp: Path, url: str, *flags: str, env: dict[str, str] | None = None) -> None:
        self.out = tmp / "out"
        self.port = unused_port()
        self.log_path = tmp / "job.log"
        cmd = [sys.executable, "-m", "ais_pipeline.jobs.ais_traffic", "--input", url, "--output", str(self.out)]
        with self.log_path.open("w") as log:
            self.proc = subprocess.Popen(
                [*cmd, "--web-ui-port", str(self.port), *flags],
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=dict(os.environ, **(env or {})),
            )

    def log(self) -> str:
        return self.log_path.read_text()

    def _get(self, path: str) -> Any:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=10) as resp:
            return json.load(resp)

    def metric(self, name: str) -> int | None:
        """The sum of an operator metric over the job's vertices (None before it is listed)."""
        try:
            (job,) = self._get("/jobs/overview")["jobs"]
            total, found = 0, False
            for vertex in self._get(f"/jobs/{job['jid']}")["vertices"]:
                base = f"/jobs/{job['jid']}/vertices/{vertex['id']}/metrics"
                ids = [m["id"] for m in self._get(base) if m["id"].rsplit(".", 1)[-1] == name]
                if ids:
                    found = True
                    total += sum(int(float(m["value"])) for m in self._get(f"{base}?get={metric_query(ids)}"))
            return total if found else None
        except (OSError, ValueError, KeyError):
            return None

    def wait_for(self, name: str, at_least: int, timeout_s: float = 120) -> int:
        """Wait until the metric ``name`` reaches ``at_least``; its value."""
        deadline = time.monotonic() + timeout_s
        value = None
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log()[-3000:]
            value = self.metric(name)
            if value is not None and value >= at_least:
                return value
            time.sleep(1)
        raise AssertionError(f"{name} is {value}, not {at_least}, after {timeout_s} s\n{self.log()[-3000:]}")

    def stop(self) -> dict[str, Any]:
        """Ctrl-C: the run drains, writes summary.json and exits 0 (a live input ends so)."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=180)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
        assert self.proc.returncode == 0, self.log()[-3000:]
        assert "Traceback" not in self.log(), self.log()[-3000:]
        return json.loads((self.out / "summary.json").read_text())  # type: ignore[no-any-return]

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)


def wait_until_bound(port: int, kind: str, timeout_s: float = 120) -> None:
    """Wait until something on this machine listens on ``port`` (``kind`` udp or tcp)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for conn in psutil.net_connections(kind=kind):
            if conn.laddr and conn.laddr.port == port and (kind == "udp" or conn.status == psutil.CONN_LISTEN):
                return
        time.sleep(0.5)
    raise AssertionError(f"nothing listens on {kind} port {port} after {timeout_s} s")


def send_tcp(conn: socket.socket, lines: list[str], rate: int = RATE, end: str = "\r\n") -> None:
    """The lines at ``rate`` lines/s, in chunks of a tenth of a second."""
    step = max(rate // 10, 1)
    for start in range(0, len(lines), step):
        conn.sendall("".join(line + end for line in lines[start : start + step]).encode())
        time.sleep(0.1)


def send_udp(port: int, lines: list[str], rate: int = RATE, per_datagram: int = 1) -> None:
    """The lines as datagrams of ``per_datagram`` lines to 127.0.0.1:port at ``rate`` lines/s."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        step = max(rate // 100, per_datagram)
        for start in range(0, len(lines), step):
            chunk = lines[start : start + step]
            for i in range(0, len(chunk), per_datagram):
                sender.sendto(("\n".join(chunk[i : i + per_datagram]) + "\n").encode(), ("127.0.0.1", port))
            time.sleep(0.01)


def fleet_seconds(vessels: int, seconds: int, first: int = 0, copies_every: int = 5) -> list[list[str]]:
    """A fleet heard once a second, without tag blocks (the job stamps each line when it comes):
    for each second from ``first``, one position report of every vessel, steaming east at about
    14 knots, and every ``copies_every``-th line sent twice (a second receiver's copy)."""
    out = []
    for second in range(first, first + seconds):
        lines = []
        for i in range(vessels):
            line = position(235_000_000 + i, round(51.0 + i * 0.01, 5), round(1.5 + second * 0.0001, 5), sog=14.0)
            lines.append(line)
            if (second * vessels + i) % copies_every == 0:
                lines.append(line)
        out.append(lines)
    return out


def send_seconds(port: int, seconds: list[list[str]], receiver: str | None = None) -> None:
    """Each second's lines over UDP, one datagram a line, a second apart; with ``receiver``, each
    line in a tag block of that receiver and the time it is sent (a receiver's own time)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        start = time.monotonic()
        for k, lines in enumerate(seconds):
            for line in lines:
                if receiver is not None:
                    line = f"\\s:{receiver},c:{int(time.time() * 1000)}*00\\{line}"
                sender.sendto((line + "\n").encode(), ("127.0.0.1", port))
            time.sleep(max(0.0, start + k + 1 - time.monotonic()))
