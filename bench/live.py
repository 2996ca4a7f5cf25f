"""The live-feed part of `make bench`: the relay from TCP into a local Kafka broker, the job's own
UDP input at a set rate, and the job's memory over a long stream.

    python -m bench.live [--relay-lines 400000] [--udp-rate 10000 --udp-seconds 60]
                                            [--memory-rate 2000 --memory-minutes 16] [--write-docs]

- **Relay, TCP -> Kafka.** A TCP server sends the benchmark feed as fast as the relay reads it;
  the relay produces into a KRaft broker of ``scripts/kafka.sh`` (on free ports). Lines/s from
  the connection to the last delivery report, read from the relay's Prometheus counters; the
  relay's CPU seconds per line.
- **The job's UDP input.** ``ais-pipeline run --input udp://...`` while a sender sends the feed's
  lines at ``--udp-rate`` lines/s, one datagram each, for ``--udp-seconds``; lost = sent - read
  (the summary's lines), and the source's own ``feed_dropped`` count.
- **Memory over a long stream.** The same input for ``--memory-minutes`` (16) at
  ``--memory-rate`` (2,000), the feed's sentences without their tag blocks (so the source stamps
  them with the time they arrive, and event time moves as the wall clock does), a sliding window
  of ``--memory-slide-size`` (300 s: the state fills for the window plus the allowed lateness
  before it can be flat); the resident memory of the whole process tree (the JVM included) and
  the last checkpoint's size, sampled every 30 s, compared over the second half.

Everything runs on this machine, the senders too. With --write-docs the table replaces the one
between the bench-live markers of docs/live-feeds.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ais_pipeline.pipeline.ports import unused_port
from ais_pipeline.pipeline.progress import metric_query
from ais_pipeline.resources import CHECKOUT as ROOT
from bench.files import _tree_rss_kb, feed, measured, publish

PY = sys.executable
DOCS = ROOT / "docs" / "live-feeds.md"
BROKER_PIDS: dict[str, int] = {}


@contextlib.contextmanager
def kafka_broker() -> Iterator[str]:
    """A broker of scripts/kafka.sh on free ports and a scratch directory; its bootstrap address
    (its pid is in :data:`BROKER_PIDS` while it runs)."""
    directory = tempfile.mkdtemp(prefix="bench-kafka-")
    env = dict(os.environ, KAFKA_PORT=str(unused_port()), KAFKA_CONTROLLER_PORT=str(unused_port()), KAFKA_DIR=directory)
    script = str(ROOT / "scripts" / "kafka.sh")
    subprocess.run(["bash", script, "start"], env=env, check=True, capture_output=True, timeout=300)
    bootstrap = f"127.0.0.1:{env['KAFKA_PORT']}"
    BROKER_PIDS[bootstrap] = int((Path(directory) / "broker.pid").read_text())
    try:
        yield bootstrap
    finally:
        BROKER_PIDS.pop(bootstrap, None)
        subprocess.run(["bash", script, "clean"], env=env, capture_output=True, timeout=300)


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as resp:
        return resp.read().decode()


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its children that have ended, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return sum(int(f) for f in fields[11:15]) / ticks


def relay_tcp(lines: list[str], bootstrap: str) -> dict[str, Any]:
    payload = "".join(line + "\r\n" for line in lines).encode()
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    connected: list[float] = []

    def serve() -> None:
        conn, _ = server.accept()
        connected.append(time.monotonic())
        with conn:
            conn.sendall(payload)
            time.sleep(600)

    threading.Thread(target=serve, daemon=True).start()
    metrics = unused_port()
    cmd = [PY, "-m", "ais_pipeline.cli", "relay", "--from", f"tcp://127.0.0.1:{port}", "--topic", "bench-relay"]
    cmd += ["--bootstrap-servers", bootstrap, "--metrics-port", str(metrics), "--resend-window", "0"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        produced, deadline = 0, time.monotonic() + 600
        while produced < len(lines) and time.monotonic() < deadline:
            time.sleep(0.2)
            with contextlib.suppress(OSError):
                text = _get(f"http://127.0.0.1:{metrics}/metrics")
                produced = int(
                    next(ln for ln in text.splitlines() if ln.startswith("ais_relay_produced_total ")).split()[1]
                )
        done = time.monotonic()
        cpu = _cpu_seconds(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=120)
        server.close()
    seconds = done - connected[0]
    return {
        "lines": len(lines),
        "produced": produced,
        "seconds": round(seconds, 2),
        "lines_per_s": round(len(lines) / seconds),
        "cpu_us_per_line": round(cpu / len(lines) * 1e6, 1),
        "summary": json.loads(out.strip().splitlines()[-1]),
    }


class LiveJob:
    """``ais-pipeline run --input udp://127.0.0.1:PORT`` in the background."""

    def __init__(self, out: Path | None, *flags: str, env: dict[str, str] | None = None, checkout: Path = ROOT) -> None:
        self.udp, self.web = unused_port(), unused_port()
        self.out = out
        python = PY if checkout == ROOT else str(checkout / ".venv" / "bin" / "python")
        cmd = [python, "-m", "ais_pipeline.jobs.ais_traffic", "--input", f"udp://127.0.0.1:{self.udp}"]
        cmd += [*(["--output", str(out)] if out is not None else []), "--web-ui-port", str(self.web), *flags]
        # Without --output the summary is printed: kept to be read at the end.
        self._printed = tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen(cmd, cwd=checkout, stdout=self._printed, stderr=subprocess.DEVNULL, env=env)

    def metric(self, name: str) -> int | None:
        base = f"http://127.0.0.1:{self.web}"
        try:
            (job,) = json.loads(_get(f"{base}/jobs/overview"))["jobs"]
            total, found = 0, False
            for vertex in json.loads(_get(f"{base}/jobs/{job['jid']}"))["vertices"]:
                path = f"{base}/jobs/{job['jid']}/vertices/{vertex['id']}/metrics"
                ids = [m["id"] for m in json.loads(_get(path)) if m["id"].rsplit(".", 1)[-1] == name]
                if ids:
                    found = True
                    total += sum(int(float(m["value"])) for m in json.loads(_get(f"{path}?get={metric_query(ids)}")))
            return total if found else None
        except (OSError, ValueError, KeyError):
            return None

    def checkpoint_bytes(self) -> int | None:
        base = f"http://127.0.0.1:{self.web}"
        try:
            (job,) = json.loads(_get(f"{base}/jobs/overview"))["jobs"]
            latest = json.loads(_get(f"{base}/jobs/{job['jid']}/checkpoints"))["latest"]["completed"]
            return int(latest["checkpointed_size"]) if latest else None
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def wait_running(self) -> None:
        deadline = time.monotonic() + 180
        while self.metric("feed_lines") is None:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("the job did not start")
            time.sleep(1)
        time.sleep(2)

    def settle(self) -> int:
        """Wait until the lines read stop growing; their number."""
        last, same_since = -1, time.monotonic()
        while time.monotonic() - same_since < 5:
            time.sleep(1)
            now = self.metric("lines") or 0
            if now != last:
                last, same_since = now, time.monotonic()
        return last

    def stop(self) -> dict[str, Any]:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=300)
        if self.out is not None:
            return json.loads((self.out / "summary.json").read_text())  # type: ignore[no-any-return]
        self._printed.seek(0)
        return printed_summary(self._printed.read())

    def drain(self) -> tuple[int, Any, Any, dict[str, Any]]:
        """Once the sender is done: the lines read, the source's and the kernel's drops, and the
        summary of the stopped job."""
        read = self.settle()
        dropped, kernel = self.metric("feed_dropped"), self.metric("feed_dropped_by_kernel")
        return read, dropped, kernel, self.stop()


def printed_summary(text: str) -> dict[str, Any]:
    """The figures a run without --output prints at its end: ``lines`` (lines read) and
    ``accounted_lines``."""
    summary: dict[str, Any] = {}
    for line in text.splitlines():
        if line.startswith("lines read "):
            summary["lines"] = int(line.split()[-1])
        elif line.startswith("lines accounted for "):
            summary["accounted_lines"] = int(line.split()[3])
    return summary


@contextlib.contextmanager
def live_job(prefix: str, *flags: str) -> Iterator[LiveJob]:
    """A UDP job running in a scratch folder, killed on the way out if it still runs."""
    with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
        job = LiveJob(Path(scratch) / "out", *flags)
        try:
            job.wait_running()
            yield job
        finally:
            if job.proc.poll() is None:
                job.proc.kill()


def send_udp(port: int, lines: list[str], rate: int, seconds: float, on_tick: Any = None) -> int:
    """``rate`` datagrams a second of one line each, the lines cycled, for ``seconds``; how many were sent."""
    sent, per_tick = 0, max(rate // 100, 1)
    start = time.monotonic()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        encoded = [line.encode() for line in lines]
        while time.monotonic() - start < seconds:
            for _ in range(per_tick):
                sender.sendto(encoded[sent % len(encoded)], ("127.0.0.1", port))
                sent += 1
            if on_tick is not None:
                on_tick()
            pause = start + (sent / rate) - time.monotonic()
            if pause > 0:
                time.sleep(pause)
    return sent


def udp_direct(lines: list[str], rate: int, seconds: float) -> dict[str, Any]:
    with live_job("bench-udp-") as job:
        started = time.monotonic()
        sent = send_udp(job.udp, lines, rate, seconds)
        took = time.monotonic() - started
        read, dropped, kernel, summary = job.drain()
    return {
        "rate": rate,
        "sent_rate": round(sent / took),
        "seconds": seconds,
        "sent": sent,
        "read": summary["lines"],
        "read_before_stop": read,
        "lost": sent - int(summary["lines"]),
        "feed_dropped": dropped,
        "dropped_by_kernel": kernel,
    }


def memory_over_time(lines: list[str], rate: int, minutes: float, slide_size_s: int) -> dict[str, Any]:
    """State and memory over a long stream. The job's state fills for the longest time it holds
    a report (the sliding window's size plus the allowed lateness, 120 s) before it can be flat:
    ``slide_size_s`` shortens that warm-up, and the figures compare the stream's second half."""
    # A line cut inside its tag block stays as it is; one cut right after it would be an empty
    # datagram, which holds no line (the source reads none from it): left out.
    bare = [b for b in (line.split("\\", 2)[-1] for line in lines) if b]
    samples: list[tuple[float, int, int | None]] = []
    with live_job("bench-memory-", "--slide-size", str(slide_size_s)) as job:
        started = time.monotonic()
        state = {"next": started + 30}

        def sample() -> None:
            now = time.monotonic()
            if now >= state["next"]:
                state["next"] = now + 30
                samples.append((now - started, _tree_rss_kb(job.proc.pid) // 1024, job.checkpoint_bytes()))

        sent = send_udp(job.udp, bare, rate, minutes * 60, sample)
        _, dropped, kernel, summary = job.drain()
    return {
        "rate": rate,
        "minutes": minutes,
        "slide_size_s": slide_size_s,
        "sent": sent,
        "read": summary["lines"],
        "feed_dropped": dropped,
        "dropped_by_kernel": kernel,
        "samples": samples,
    }


def table(relay: dict[str, Any] | None, udp: dict[str, Any] | None, memory: dict[str, Any] | None) -> str:
    rows = ["| what | measured | target |", "|---|---|---|"]
    if relay:
        rows.append(
            f"| relay, TCP -> Kafka, {relay['lines']:,} lines | {relay['lines_per_s']:,} lines/s "
            f"({relay['seconds']} s), relay CPU {relay['cpu_us_per_line']} us/line | at least 50,000 lines/s |"
        )
    if udp:
        rows.append(
            f"| the job's UDP input at {udp['rate']:,} lines/s (sent {udp['sent_rate']:,}/s) for {udp['seconds']:.0f} s"
            f" | {udp['sent']:,} sent, {udp['read']:,} read, {udp['lost']:,} lost: {udp['feed_dropped']} dropped by"
            f" the source (its buffer full), {udp['dropped_by_kernel']} by the kernel (the socket's) | no loss |"
        )
    if memory:
        samples = memory["samples"]
        half = [x for x in samples if x[0] >= memory["minutes"] * 30]
        first, last = half[0], half[-1]
        ckpt = [x[2] for x in half if x[2] is not None]
        ckpt_text = f"; last checkpoint {ckpt[0] / 1e6:.1f} MB, then {ckpt[-1] / 1e6:.1f} MB" if ckpt else ""
        rows.append(
            f"| the job's memory, UDP at {memory['rate']:,} lines/s for {memory['minutes']:.0f} min, sliding window "
            f"{memory['slide_size_s']} s ({memory['read']:,} of {memory['sent']:,} lines read, "
            f"{memory['feed_dropped']} dropped by the source, {memory['dropped_by_kernel']} by the kernel) "
            f"| second half: RSS {first[1]:,} MB at {first[0] / 60:.1f} min, {last[1]:,} MB at {last[0] / 60:.1f} min"
            f"{ckpt_text} | flat |"
        )
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--relay-lines", type=int, default=400_000, help="0 for none")
    parser.add_argument("--udp-rate", type=int, default=10_000)
    parser.add_argument("--udp-seconds", type=float, default=60, help="0 for none")
    parser.add_argument("--memory-rate", type=int, default=2_000)
    parser.add_argument("--memory-minutes", type=float, default=16, help="0 for none")
    parser.add_argument("--memory-slide-size", type=int, default=300, help="the memory run's sliding window, s")
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    lines = feed(400_000).read_text().splitlines()
    relay = udp = memory = None
    if args.relay_lines:
        with kafka_broker() as bootstrap:
            relay = relay_tcp((lines * (args.relay_lines // len(lines) + 1))[: args.relay_lines], bootstrap)
        print(json.dumps(relay), flush=True)
    if args.udp_seconds:
        udp = udp_direct(lines, args.udp_rate, args.udp_seconds)
        print(json.dumps(udp), flush=True)
    if args.memory_minutes:
        memory = memory_over_time(lines, args.memory_rate, args.memory_minutes, args.memory_slide_size)
        print(json.dumps(memory), flush=True)
    text = measured("python -m bench.live") + "\n\n" + table(relay, udp, memory)
    publish(text, DOCS, "bench-live", args.write_docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
