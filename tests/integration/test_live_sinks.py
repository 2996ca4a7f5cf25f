"""A live feed into Kafka and PostgreSQL, as a user runs it: ``ais-pipeline run --input udp://...
--kafka-output --postgres URL``. The lines come without tag blocks (the job stamps them on receipt),
so the job's watermark follows them and the wall clock.

- A vessel's first fix is in PostgreSQL and in the positions topic before the vessel sends another
  line: written when it comes, not when its track is judged.
- The vessel's next fixes are 90 nautical miles away, ten seconds later: the first one was a bad
  fix. It is withdrawn: its row leaves ``ais_positions`` (its id is in ``ais_withdrawn``), the
  positions topic gets a record under the same key that withdraws it, and the bad fix is written.
- Kafka is written at least once (a live input's default): every record of an output with an id
  is keyed by it.
- Stopped with Ctrl-C: every line is counted, and the positions with their withdrawal applied are
  the plain loop's, in both sinks."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from ais_pipeline import postgres
from ais_pipeline.config import PipelineConfig
from ais_pipeline.pipeline.ports import unused_port
from ais_pipeline.rules.outputs import applied
from ais_pipeline.rules.plain import run_plain
from tests.support.kafka import read_topic
from tests.support.live import LiveJob, wait_until_bound
from tests.support.nmea import position
from tests.support.servers import Broker, PostgresServer

pytestmark = pytest.mark.integration

MMSI = 244_123_456
FIRST = position(MMSI, 52.0, 3.0)
NEXT = [position(MMSI, 53.5 + k * 0.0005, 3.0) for k in range(3)]  # 90 nm north, a track of its own
PREFIX = "udp-withdrawals."


def wait_until(check, what: str, timeout_s: float = 30):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"{what}: not within {timeout_s} s")


def test_a_live_feed_writes_a_first_fix_at_once_and_withdraws_it_in_kafka_and_postgres_once_judged_bad(
    broker: Broker, postgres_server: PostgresServer, tmp_path: Path
):
    target = postgres_server.create_database("live_withdrawals")
    port = unused_port()
    job = LiveJob(
        tmp_path,
        f"udp://127.0.0.1:{port}",
        "--kafka-output",
        "--bootstrap-servers",
        broker.bootstrap,
        "--output-topic-prefix",
        PREFIX,
        "--postgres",
        postgres_server.url("live_withdrawals"),
        env={"PGPASSWORD": postgres_server.password},
    )

    def rows(sql: str) -> list[tuple[object, ...]]:
        with postgres.connect(target) as conn:
            return list(conn.execute(sql).fetchall())

    def topic() -> list[tuple[str | None, dict[str, object]]]:
        return [(k, json.loads(v)) for k, v in read_topic(broker.bootstrap, PREFIX + "positions", timeout_s=5)]

    sent: list[tuple[str, int]] = []  # each line and when it was sent, for the plain loop
    try:
        wait_until_bound(port, "udp")
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:

            def send(line: str) -> None:
                sent.append((line, int(time.time() * 1000)))
                sender.sendto((line + "\n").encode(), ("127.0.0.1", port))

            send(FIRST)
            # Written when it came: the vessel has sent nothing else, and nothing has judged it.
            wait_until(lambda: rows("SELECT id FROM ais_positions"), "the first fix in PostgreSQL", 60)
            (key, first), *_ = wait_until(topic, "the first fix in Kafka")
            assert key == first["id"] and "withdrawn" not in first
            for line in NEXT:
                time.sleep(5)
                send(line)
        job.wait_for("lines", 1 + len(NEXT))
        time.sleep(2)
        summary = job.stop()
    finally:
        job.kill()
    assert (summary["lines"], summary["accounted_lines"], summary["positions_kept"], summary["bad_fixes"]) == (
        4,
        4,
        3,
        1,
    )
    # Kafka: the withdrawal under the first fix's key, after it; every record keyed by its id.
    records = topic()
    assert all(key == record["id"] for key, record in records)
    withdrawn = [r for _, r in records if r.get("withdrawn")]
    assert [(r["id"], r["withdrawn"]) for r in withdrawn] == [(first["id"], "bad_fixes")]
    (bad,) = [json.loads(v) for _, v in read_topic(broker.bootstrap, PREFIX + "bad_fixes")]
    assert (bad["timestamp"], bad["lat"]) == (first["timestamp"], 52.0)
    # PostgreSQL: the row is gone, its id kept as withdrawn, the bad fix in its table.
    assert rows("SELECT id::text, output, reason FROM ais_withdrawn") == [(first["id"], "positions", "bad_fixes")]
    assert sorted(r[0] for r in rows("SELECT id::text FROM ais_positions")) == sorted(
        r["id"] for r in applied([r for _, r in records])
    )
    assert rows("SELECT count(*) FROM ais_bad_fixes") == [(1,)]
    # The plain loop, on the lines as the job stamped them (each record has its line's time).
    times = sorted({_epoch_ms(r["timestamp"]) for _, r in records})
    lines = [f"\\s:x,c:{t},t:received*00\\{line}" for (line, _), t in zip(sent, times, strict=True)]
    oracle = run_plain(PipelineConfig(input_feed=f"udp://127.0.0.1:{port}"), lines, now_ms=int(time.time() * 1000))
    want = applied([json.loads(p) for p in oracle.positions])
    assert sorted(r["id"] for r in applied([r for _, r in records])) == sorted(r["id"] for r in want)


def _epoch_ms(iso: str) -> int:
    from datetime import datetime

    return round(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)
