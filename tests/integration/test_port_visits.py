"""Port visits across a stop with a savepoint taken mid-visit, on the standalone cluster, from
Kafka to Kafka: the generated port cases' first three hours (vessels stopped in port, one silent
there, a shared MMSI's transmitter moored), then the rest after a restore: every record once, as
the plain loop writes them from the whole feed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ais_pipeline.config import PipelineConfig
from ais_pipeline.files import read_records
from ais_pipeline.rules.outputs import parse_iso_ms
from ais_pipeline.rules.plain import run_plain
from tests.support import port_cases
from tests.support.jobs import assert_same_outputs, run_oracle
from tests.support.kafka import restored_mid_feed
from tests.support.port_cases import VISITS, anchorage_csv, port_case_lines

pytestmark = pytest.mark.integration


def test_a_job_stopped_with_a_savepoint_mid_visit_goes_on_from_it_to_the_plain_loops_visits(
    cluster: str, kafka: str, tmp_path: Path
):
    lines = port_case_lines()
    feed, ports = tmp_path / "ports.nmea", tmp_path / "made_ports.csv"
    feed.write_text("\n".join(lines) + "\n")
    ports.write_text(anchorage_csv())
    hour_3 = port_cases.T0 + 3 * 3600
    # The records the whole feed makes by half an hour before the cut: the job has written them
    # (and committed them) before it is stopped.
    records = run_plain(PipelineConfig(ports=str(ports)), lines).port_visits
    before = sum(parse_iso_ms(json.loads(r)["as_of"]) < (hour_3 - 1800) * 1000 for r in records)
    assert 0 < before < len(records)
    job = restored_mid_feed(
        cluster, kafka, "ports-restore", lines, hour_3, ("port_visits", before), tmp_path, "--ports", str(ports)
    )
    run_oracle(feed, tmp_path / "oracle", ports=str(ports))
    assert_same_outputs(job, tmp_path / "oracle")
    last = {v["id"]: v for v in read_records(job / "port_visits")}
    got: dict[int, list[tuple[str, int, bool]]] = {m: [] for m in VISITS}
    for v in sorted(last.values(), key=lambda v: v["start_time"]):
        got[v["mmsi"]].append((v["start_label"], v["confidence"], v["open"]))
    assert got == VISITS
