"""Encounters across a stop with a savepoint taken mid-encounter, on the standalone cluster, from
Kafka to Kafka at parallelism 2 (the cluster's two TaskManagers): the generated encounter cases'
first five hours (two pairs met and written open, one of them to meet again), then the rest after
a restore: every record once, as the plain loop writes them from the whole feed, and each pair's
verdict with both ship types."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ais_pipeline.config import PipelineConfig
from ais_pipeline.files import read_records
from ais_pipeline.rules.outputs import parse_iso_ms
from ais_pipeline.rules.plain import run_plain
from tests.support import encounter_cases
from tests.support.encounter_cases import ENCOUNTERS, SHIP_TYPES, encounter_case_lines
from tests.support.jobs import assert_same_outputs, run_oracle
from tests.support.kafka import restored_mid_feed

pytestmark = pytest.mark.integration


def test_a_job_stopped_with_a_savepoint_mid_encounter_goes_on_from_it_to_the_plain_loops_encounters(
    cluster: str, kafka: str, tmp_path: Path
):
    lines = encounter_case_lines()
    feed = tmp_path / "encounters.nmea"
    feed.write_text("\n".join(lines) + "\n")
    hour_5 = encounter_cases.T0 + 5 * 3600
    # The records the whole feed makes by two hours before the cut (the open ones): the job has
    # written them before it is stopped; the closes come after the restore.
    records = run_plain(PipelineConfig(), lines).encounters
    before = sum(parse_iso_ms(json.loads(r)["as_of"]) < (hour_5 - 7200) * 1000 for r in records)
    assert 0 < before < len(records)
    job = restored_mid_feed(
        cluster, kafka, "encounters-restore", lines, hour_5, ("encounters", before), tmp_path, "--parallelism", "2"
    )
    run_oracle(feed, tmp_path / "oracle")
    assert_same_outputs(job, tmp_path / "oracle")
    last = {r["id"]: r for r in read_records(job / "encounters")}
    got = {tuple(sorted((r["mmsi_1"], r["mmsi_2"]))): (r["hours"], r["open"]) for r in last.values()}
    assert got == {tuple(sorted(pair)): w for pair, w in ENCOUNTERS.items() if w is not None}
    for r in last.values():  # a carrier and a fishing vessel, from their static reports
        assert (r["ship_type_1"], r["ship_type_2"]) == (SHIP_TYPES[r["mmsi_1"]], SHIP_TYPES[r["mmsi_2"]])
