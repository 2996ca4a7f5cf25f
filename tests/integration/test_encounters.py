"""Encounters across a stop with a savepoint taken mid-encounter, on the standalone cluster, from
Kafka to Kafka: the generated encounter cases' first five hours (two pairs met and written open,
one of them to meet again), then the rest after a restore: every record once, as the plain loop
writes them from the whole feed, and each pair's verdict."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from ais_pipeline.config import PipelineConfig
from ais_pipeline.files import read_records
from ais_pipeline.rules.outputs import parse_iso_ms
from ais_pipeline.rules.plain import run_plain
from tests.support import encounter_cases
from tests.support.encounter_cases import ENCOUNTERS, encounter_case_lines
from tests.support.jobs import assert_same_outputs, run_oracle
from tests.support.kafka import (
    drain_once_read,
    read_topic,
    replay,
    stop_with_savepoint,
    submit,
    submit_bounded,
    wait_for_state,
    write_outputs,
)

pytestmark = pytest.mark.integration


def test_a_job_stopped_with_a_savepoint_mid_encounter_goes_on_from_it_to_the_plain_loops_encounters(
    cluster: str, kafka: str, tmp_path: Path
):
    lines = encounter_case_lines()
    feed = tmp_path / "encounters.nmea"
    feed.write_text("\n".join(lines) + "\n")
    hour_5 = encounter_cases.T0 + 5 * 3600
    cut = next(i for i, line in enumerate(lines) if int(line.split("c:")[1].split("*")[0]) >= hour_5)
    first, rest = tmp_path / "first.nmea", tmp_path / "rest.nmea"
    first.write_text("\n".join(lines[:cut]) + "\n")
    rest.write_text("\n".join(lines[cut:]) + "\n")
    # The records the whole feed makes by two hours before the cut (the open ones): the job has
    # written them before it is stopped; the closes come after the restore.
    records = run_plain(PipelineConfig(), lines).encounters
    before = sum(parse_iso_ms(json.loads(r)["as_of"]) < (hour_5 - 7200) * 1000 for r in records)
    assert 0 < before < len(records)
    name = "encounters-restore"
    replay(kafka, name, first, cut)
    job = submit(kafka, name, name, "--checkpoint-interval", "1", "--multipart-timeout", "600")
    deadline = time.monotonic() + 180
    while len(read_topic(kafka, f"{name}.encounters", timeout_s=5)) < before:
        assert time.monotonic() < deadline, "the encounters of the first hours were not written before the stop"
        time.sleep(1)
    location = stop_with_savepoint(cluster, job, tmp_path / "sp", drain=False)
    wait_for_state(cluster, job, {"FINISHED"}, timeout_s=60)
    replay(kafka, name, rest, len(lines) - cut)
    restored = submit_bounded(kafka, name, name, run_args=f"-s {location}")
    drain_once_read(cluster, restored, len(lines), tmp_path / "final")
    write_outputs(kafka, f"{name}.", tmp_path / "job")
    run_oracle(feed, tmp_path / "oracle")
    assert_same_outputs(tmp_path / "job", tmp_path / "oracle")
    last = {r["id"]: r for r in read_records(tmp_path / "job" / "encounters")}
    got = {tuple(sorted((r["mmsi_1"], r["mmsi_2"]))): (r["hours"], r["open"]) for r in last.values()}
    assert got == {tuple(sorted(pair)): w for pair, w in ENCOUNTERS.items() if w is not None}
