"""Encounters in the job, at parallelism 1 and 2: the generated encounter cases (a pair side by
side for three hours in the open ocean, a pair together twice within the merge gap, a pair
moored in port) give each pair's records, the same as the plain loop's; GFW's own test cases of
pipe-encounters give the batch reference's encounters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ais_pipeline.files import read_records
from ais_pipeline.rules.encounters import EncounterRules, Fix, encounter_json, merge, raw_encounters, track_mmsi
from tests.support.encounter_cases import ENCOUNTERS, SHIP_TYPES, encounter_case_lines
from tests.support.jobs import assert_same_outputs, run_job, run_oracle
from tests.support.nmea import position, tagged

pytestmark = pytest.mark.flink


@pytest.fixture(scope="module")
def encounter_cases(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The feed and the plain loop's outputs of it."""
    base = tmp_path_factory.mktemp("encounter-cases")
    feed = base / "encounters.nmea"
    feed.write_text("\n".join(encounter_case_lines()) + "\n")
    run_oracle(feed, base / "oracle")
    return feed, base / "oracle"


def records_by_pair(directory: Path) -> dict[tuple[int, int], list[dict[str, Any]]]:
    out: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for r in read_records(directory / "encounters"):
        out.setdefault(tuple(sorted((int(r["mmsi_1"]), int(r["mmsi_2"])))), []).append(r)  # type: ignore[arg-type]
    return out


@pytest.mark.parametrize("parallelism", [1, 2])
def test_the_generated_encounter_cases_give_their_records_in_the_job(
    parallelism: int, encounter_cases: tuple[Path, Path], tmp_path: Path
):
    feed, oracle = encounter_cases
    run_job(feed, tmp_path, "--parallelism", str(parallelism))
    assert_same_outputs(tmp_path, oracle)
    got = records_by_pair(tmp_path)
    want = {tuple(sorted(pair)): w for pair, w in ENCOUNTERS.items() if w is not None}
    assert sorted(got) == sorted(want)
    for pair, (hours, is_open) in want.items():
        records = got[pair]
        assert [r["open"] for r in records] == [True, is_open]  # written open at two hours, then closed
        assert len({r["id"] for r in records}) == 1
        assert records[-1]["hours"] == hours and records[-1]["published"]
        assert [(r["ship_type_1"], r["ship_type_2"]) for r in records] == [
            (SHIP_TYPES[pair[0]], SHIP_TYPES[pair[1]])
        ] * 2


# -- GFW's own test cases of pipe-encounters, through the job ---------------------------------------

GOLDEN = json.loads((Path(__file__).parents[1] / "golden" / "encounters.json").read_text())
DAY_MS = 86_400_000
CLOCK_MMSI = 999000001  # a vessel far away whose reports move the watermark two days past the cases


def golden_feed() -> tuple[list[str], list[Any]]:
    """GFW's five cases in one feed, each ten days after the one before and its tracks given
    MMSIs in the order of their names, and a far vessel reporting for two days after them; the
    fixes as the reference reads them."""
    fixes: list[Fix] = []
    for i, case in enumerate(sorted(GOLDEN["cases"], key=lambda c: c["name"])):
        names = sorted({f[0] for f in case["fixes"]})
        mmsi = {n: int(n) if len(n) == 9 else 100_000_000 + 10 * i + k for k, n in enumerate(names)}
        fixes += [Fix(f"{mmsi[t]}.0", ts + i * 10 * DAY_MS, lat, lon) for t, ts, lat, lon in case["fixes"]]
    fixes.sort(key=lambda f: f.ts)
    last = fixes[-1].ts
    clock = [Fix(f"{CLOCK_MMSI}.0", last + m * 600_000, 0.0, -30.0 + m * 1e-4) for m in range(1, 2 * 24 * 6 + 60)]
    lines = [tagged(position(int(f.track.split(".")[0]), f.lat, f.lon, sog=1.0), f.ts / 1000) for f in fixes + clock]
    return lines, fixes


def as_compared(r: dict[str, Any]) -> dict[str, Any]:
    return {k: r[k] for k in ("mmsi_1", "mmsi_2", "start_time", "end_time", "hours", "points_1", "points_2")}


def test_gfws_encounter_cases_through_the_job_give_the_references_encounters(tmp_path: Path):
    """GFW's parameters (a 4,200 s resampling gap, 30 minutes, merged within 24 hours; every
    encounter published, to compare them all), the bad-fix rule off as GFW's tracks have none;
    at parallelism 2, equal to the plain loop, and each closed encounter the batch reference's
    (itself GFW's on these cases), to NMEA's precision of a position."""
    lines, fixes = golden_feed()
    feed = tmp_path / "golden.nmea"
    feed.write_text("\n".join(lines) + "\n")
    rules = EncounterRules(**{**GOLDEN["rules"], "max_speed_kn": 1e9, "min_port_km": 0.0})
    flags = {"encounter_gap_minutes": 70.0, "encounter_hours": 0.5, "encounter_merge_hours": 24.0,
             "encounter_knots": 1e9, "encounter_port_km": 0.0, "bad_fix_knots": 0.0}  # fmt: skip
    run_oracle(feed, tmp_path / "oracle", **flags)
    argv = ["--encounter-gap-minutes", "70", "--encounter-hours", "0.5", "--encounter-merge-hours", "24",
            "--encounter-speed", "1e9", "--encounter-port-km", "0", "--bad-fix-speed", "0"]  # fmt: skip
    run_job(feed, tmp_path / "job", "--parallelism", "2", *argv)
    assert_same_outputs(tmp_path / "job", tmp_path / "oracle")
    closed = [r for r in read_records(tmp_path / "job" / "encounters") if not r["open"]]
    want = []
    for e in merge(raw_encounters(fixes, rules), rules):
        mmsis = (track_mmsi(e.track_1), track_mmsi(e.track_2))
        want.append(json.loads(encounter_json(e, mmsis, ("", ""), None, 1.0, False, 0, rules)))
    assert len(want) >= 5
    assert sorted(map(as_compared, closed), key=repr) == sorted(map(as_compared, want), key=repr)
    by_start = {(r["mmsi_1"], r["mmsi_2"], r["start_time"]): r for r in closed}
    for w in want:
        got = by_start[(w["mmsi_1"], w["mmsi_2"], w["start_time"])]
        assert abs(got["lat"] - w["lat"]) < 1e-4 and abs(got["lon"] - w["lon"]) < 1e-4
        assert abs(got["median_distance_km"] - w["median_distance_km"]) < 2e-3
        assert abs(got["median_speed_kn"] - w["median_speed_kn"]) < 0.05
