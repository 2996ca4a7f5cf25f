"""Latency of a live run: from a line to the row it makes, per output, measured as a user runs the
job: ``ais-pipeline run --input udp://127.0.0.1:PORT`` with one sink's flag and no other.

    python -m bench.latency [--rates 1000,10000] [--sinks postgres,kafka-alo,kafka-eo,files] [--feed 60 --silence 75
                             --after 30] [--checkout DIR] [--write-docs]

The feed is a generated live fleet (``bench.live_fleet``): vessels steaming in the North Sea, each
reporting every 5 s without a tag block (the job stamps each line with the time it arrives), a
fifth of the reports twice, sent over UDP in real time at ``rate`` lines/s: ``--feed`` seconds,
then ``--silence`` seconds of nothing, then ``--after`` seconds more; the run is stopped (Ctrl-C)
5 s after the last line. A row's latency is the time it became visible less its line's time (the
position's timestamp, which is when the job stamped its line; the sender is on this machine):

- PostgreSQL: a trigger of the benchmark's own database records ``clock_timestamp()`` as each
  position row is inserted, and as each window's first figures (revision 0) are.
- Kafka (``kafka-alo``: ``--kafka-output``, at least once, a live input's default; ``kafka-eo``:
  ``--kafka-delivery exactly-once``): a consumer of the positions and aggregates topics
  (``read_committed``, as a reader of transactions reads) notes when it receives each record.
- Files: the output folders are listed every 100 ms; a record is visible when its part file is
  (the file sink commits at checkpoints).

Windows: a tumbling window's first figures, less its end, for the windows with a report (a window
whose only figure is vessel time, from a segment between two positions of a track that crosses
it, gets it when the track's next position comes: after a silence, when the feed resumes);
those ending while the feed was silent are counted apart. Windows that end in the last 2 s before
the stop, and their positions, are left out (the drain decides them). Lines dropped: sent less
read (the summary's lines). With --write-docs the table replaces the one between the bench-latency markers of
docs/live-feeds.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from ais_pipeline.pipeline.ports import unused_port
from bench import live_fleet
from bench.files import ROOT, _tree_cpu, measured, publish
from bench.live import LiveJob, kafka_broker

PY = sys.executable
KAFKA_SINKS = {"kafka-alo": "at-least-once", "kafka-eo": "exactly-once"}
DOCS = ROOT / "docs" / "live-feeds.md"
POSTGRES = ROOT / "scripts" / "postgres.sh"
TAIL_MS = 2_000  # rows of the last 2 s before the stop: decided by the drain, not counted

SEEN_TRIGGERS = """
CREATE TABLE IF NOT EXISTS bench_seen (
    output text NOT NULL, event_time timestamptz NOT NULL, seen timestamptz NOT NULL);
CREATE OR REPLACE FUNCTION bench_seen_position() RETURNS trigger AS $$
BEGIN INSERT INTO bench_seen VALUES ('positions', NEW.event_time, clock_timestamp()); RETURN NEW; END
$$ LANGUAGE plpgsql;
CREATE OR REPLACE FUNCTION bench_seen_window() RETURNS trigger AS $$
BEGIN
  IF NEW.revision = 0 AND NEW.window_kind = 'tumbling' AND NEW.reports > 0 THEN
    INSERT INTO bench_seen VALUES ('tumbling', NEW.window_end, clock_timestamp());
  END IF;
  RETURN NEW;
END
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS bench_seen_position ON ais_positions;
CREATE TRIGGER bench_seen_position AFTER INSERT ON ais_positions FOR EACH ROW EXECUTE FUNCTION bench_seen_position();
DROP TRIGGER IF EXISTS bench_seen_window ON ais_aggregates;
CREATE TRIGGER bench_seen_window AFTER INSERT ON ais_aggregates FOR EACH ROW EXECUTE FUNCTION bench_seen_window();
"""


@contextlib.contextmanager
def postgres() -> Iterator[tuple[str, str]]:
    """The project's PostgreSQL server on a scratch folder and a free port: (URL, password)."""
    directory = ROOT / "build" / f"bench-postgres-{os.getpid()}"
    shutil.rmtree(directory, ignore_errors=True)
    env = dict(os.environ, PG_DIR=str(directory), PG_PORT=str(unused_port()))
    subprocess.run(["bash", str(POSTGRES), "start"], env=env, check=True, capture_output=True, timeout=600)
    try:
        yield f"postgresql://ais@127.0.0.1:{env['PG_PORT']}/ais", (directory / "password").read_text()
    finally:
        subprocess.run(["bash", str(POSTGRES), "stop"], env=env, capture_output=True, timeout=120)
        shutil.rmtree(directory, ignore_errors=True)


def _target(url: str, password: str) -> Any:
    from ais_pipeline.postgres import parse_url

    return parse_url(url, environ={"PGPASSWORD": password})


def wait_until_bound(port: int, timeout_s: float = 120) -> None:
    """Wait until the job's source listens on the UDP port (lines sent before are lost)."""
    import psutil

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if any(c.laddr and c.laddr.port == port for c in psutil.net_connections(kind="udp")):
            return
        time.sleep(0.2)
    raise RuntimeError(f"nothing listens on udp port {port}")


def _epoch_ms(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


class FileWatch:
    """Lists the output folders every 100 ms: when each record of a committed part file was seen."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.seen: dict[str, list[tuple[int, int]]] = {"positions": [], "tumbling": []}  # (event ms, seen ms)
        self._files: set[Path] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.look()
            time.sleep(0.1)

    def look(self) -> None:
        now = int(time.time() * 1000)
        for name in ("positions", "aggregates"):
            folder = self.out / name
            if not folder.is_dir():
                continue
            for path in folder.iterdir():
                if path in self._files or path.name.startswith("."):
                    continue
                self._files.add(path)
                for line in path.read_text().splitlines():
                    record = json.loads(line)
                    if name == "positions":
                        if not record.get("withdrawn"):
                            self.seen["positions"].append((_epoch_ms(record["timestamp"]), now))
                    elif record["window"] == "tumbling" and record["revision"] == 0 and record["reports"] > 0:
                        self.seen["tumbling"].append((_epoch_ms(record["window_end"]), now))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


class TopicWatch:
    """Consumes the positions and aggregates topics as a reader would (``read_committed``): when
    each record was received."""

    def __init__(self, bootstrap: str, prefix: str) -> None:
        from confluent_kafka import Consumer

        self.seen: dict[str, list[tuple[int, int]]] = {"positions": [], "tumbling": []}
        self._consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"bench-latency-{time.monotonic_ns()}",
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "fetch.wait.max.ms": 50,
                "log_level": 0,
            }
        )
        # Assigned, not subscribed: a group's join takes seconds, which would count as latency.
        from confluent_kafka import TopicPartition

        parts = []
        for topic in (prefix + "positions", prefix + "aggregates"):
            metadata = self._consumer.list_topics(topic, timeout=30)
            parts += [TopicPartition(topic, p, 0) for p in metadata.topics[topic].partitions]
        self._consumer.assign(parts)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            msg = self._consumer.poll(0.1)
            if msg is None or msg.error():
                continue
            now = int(time.time() * 1000)
            value, topic = msg.value(), msg.topic()
            if value is None or topic is None:
                continue
            record = json.loads(value)
            if topic.endswith("positions"):
                if not record.get("withdrawn"):
                    self.seen["positions"].append((_epoch_ms(record["timestamp"]), now))
            elif record["window"] == "tumbling" and record["revision"] == 0 and record["reports"] > 0:
                self.seen["tumbling"].append((_epoch_ms(record["window_end"]), now))

    def stop(self) -> None:
        time.sleep(2)  # what the drain committed
        self._stop.set()
        self._thread.join()
        self._consumer.close()


def percentiles(values: list[int]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    ordered = sorted(values)

    def at(q: float) -> int:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {"n": len(ordered), "p50": at(0.5), "p99": at(0.99), "max": ordered[-1]}


def summarize(
    seen: dict[str, list[tuple[int, int]]], silence: tuple[int, int], stop_ms: int
) -> dict[str, dict[str, Any]]:
    """Per output, the latencies' p50, p99 and max (ms); windows ending in ``silence`` apart."""
    cut = stop_ms - TAIL_MS
    positions = [s - t for t, s in seen["positions"] if t < cut]
    windows = [(t, s - t) for t, s in seen["tumbling"] if t < cut]
    in_silence = [d for t, d in windows if silence[0] < t <= silence[1]]
    return {
        "positions": percentiles(positions),
        "tumbling": percentiles([d for t, d in windows if not silence[0] < t <= silence[1]]),
        "tumbling_in_silence": percentiles(in_silence),
    }


def run(
    rate: int,
    sink: str,
    phases: list[tuple[float, float]],
    pg: tuple[str, str] | None,
    bootstrap: str | None = None,
    checkout: Path = ROOT,
    more: list[str] | None = None,
) -> dict[str, Any]:
    """One live run into ``sink``; the latencies and the lines sent, read and lost."""
    ships = live_fleet.fleet(live_fleet.vessels_for(rate))
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as scratch:
        out = Path(scratch) / "out"
        env = dict(os.environ)
        flags: list[str]
        if sink == "postgres":
            assert pg is not None
            url, password = pg
            from ais_pipeline import postgres as pgmod

            database = f"latency_{rate}"
            with pgmod.connect(_target(url, password)) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
                conn.execute(f'CREATE DATABASE "{database}"')
            target = _target(url.rsplit("/", 1)[0] + "/" + database, password)
            pgmod.prepare(target)
            with pgmod.connect(target) as conn:
                conn.execute(SEEN_TRIGGERS)
            flags, env["PGPASSWORD"] = ["--postgres", url.rsplit("/", 1)[0] + "/" + database], password
            job = LiveJob(None, *flags, *(more or []), env=env, checkout=checkout)
        elif sink in KAFKA_SINKS:
            assert bootstrap is not None
            prefix = f"latency{rate}{sink[-2:]}."
            flags = ["--kafka-output", "--bootstrap-servers", bootstrap, "--output-topic-prefix", prefix]
            flags += ["--kafka-delivery", KAFKA_SINKS[sink]]
            job = LiveJob(out, *flags, *(more or []), checkout=checkout)
        else:
            job = LiveJob(out, *(more or []), checkout=checkout)
        watch: FileWatch | TopicWatch | None = FileWatch(out) if sink == "files" else None
        try:
            job.wait_running()
            wait_until_bound(job.udp)
            if sink in KAFKA_SINKS:
                watch = TopicWatch(str(bootstrap), prefix)
            cpu_before: dict[int, float] = {}
            _tree_cpu(job.proc.pid, cpu_before)
            start = time.time()
            sent = live_fleet.send(job.udp, ships, phases)
            last_line = time.time()
            time.sleep(5)
            cpu_after: dict[int, float] = {}
            _tree_cpu(job.proc.pid, cpu_after)
            stop_ms = int(time.time() * 1000)
            _, dropped, kernel, summary = job.drain()
        finally:
            if watch is not None:
                watch.stop()
            if job.proc.poll() is None:
                job.proc.kill()
        feed_s, silence_s = phases[0]
        silence = (int((start + feed_s) * 1000), int((start + feed_s + silence_s) * 1000))
        if sink == "postgres":
            with pgmod.connect(target) as conn:
                rows = conn.execute(
                    "SELECT output, (extract(epoch FROM event_time) * 1000)::bigint,"
                    " (extract(epoch FROM seen) * 1000)::bigint FROM bench_seen"
                ).fetchall()
            seen: dict[str, list[tuple[int, int]]] = {"positions": [], "tumbling": []}
            for output, t, s in rows:
                seen[output].append((t, s))
        else:
            assert watch is not None
            if isinstance(watch, FileWatch):
                watch.look()
            seen = watch.seen
    result = summarize(seen, silence, stop_ms)
    return {
        "rate": rate,
        "sink": sink,
        "sent": sent.lines,
        "distinct": sent.distinct,
        "read": summary.get("lines"),
        "lost": sent.lines - int(summary.get("lines", 0)),
        "positions_written": len(seen["positions"]),
        "feed_dropped": dropped,
        "dropped_by_kernel": kernel,
        "seconds_to_stop": round(stop_ms / 1000 - last_line, 1),
        # The job's CPU (its process and JVM) from the first line to 5 s after the last, per line.
        "cpu_us_per_line": round((sum(cpu_after.values()) - sum(cpu_before.values())) / max(sent.lines, 1) * 1e6, 1),
        **result,
    }


def _cell(p: dict[str, Any]) -> str:
    if not p.get("n"):
        return "-"
    return f"{p['p50'] / 1000:.1f} / {p['p99'] / 1000:.1f} / {p['max'] / 1000:.1f}"


def table(results: list[dict[str, Any]]) -> str:
    rows = [
        "| lines/s | sink | positions p50 / p99 / max (s) | a window's first figures (s) "
        "| windows ending in the silence (s) | lines sent / lost | positions written / distinct reports "
        "| job CPU per line |",
        "|---:|---|---|---|---|---|---|---:|",
    ]
    for r in results:
        rows.append(
            f"| {r['rate']:,} | {r['sink']} | {_cell(r['positions'])} | {_cell(r['tumbling'])} "
            f"| {_cell(r['tumbling_in_silence'])} | {r['sent']:,} / {r['lost']:,} "
            f"| {r['positions_written']:,} / {r['distinct']:,} | {r['cpu_us_per_line']} us |"
        )
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rates", default="1000,10000")
    parser.add_argument("--sinks", default="postgres,kafka-alo,kafka-eo,files")
    parser.add_argument("--feed", type=float, default=60)
    parser.add_argument("--silence", type=float, default=75)
    parser.add_argument("--after", type=float, default=30)
    parser.add_argument("--checkout", type=Path, default=ROOT, help="the job of another checkout (set up)")
    parser.add_argument("--job-flags", default="", help="more flags for every run, e.g. --checkpoint-interval 10")
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    phases = [(args.feed, args.silence), (args.after, 0.0)]
    sinks = args.sinks.split(",")
    results = []
    with contextlib.ExitStack() as servers:
        pg = servers.enter_context(postgres()) if "postgres" in sinks else None
        bootstrap = servers.enter_context(kafka_broker()) if set(sinks) & set(KAFKA_SINKS) else None
        for rate in (int(r) for r in args.rates.split(",")):
            for sink in sinks:
                result = run(rate, sink, phases, pg, bootstrap, args.checkout, args.job_flags.split())
                print(json.dumps(result), flush=True)
                results.append(result)
    command = "python -m bench.latency"
    text = measured(command) + "\n\n" + table(results)
    publish(text, DOCS, "bench-latency", args.write_docs)
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main())
