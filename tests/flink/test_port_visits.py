"""Port visits in the job, at parallelism 1 and 2: the generated port cases around two made ports
(an anchorage list of the user's own) give each case's visits and confidence, the same records as
the plain loop. (The real GFW tracks' visits, with the bundled list, are compared with the plain
loop's in tests/flink/test_tracks.py, with every other output.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ais_pipeline.files import read_records
from tests.support.jobs import assert_same_outputs, run_job, run_oracle
from tests.support.port_cases import VISITS, anchorage_csv, port_case_lines

pytestmark = pytest.mark.flink


@pytest.fixture(scope="module")
def port_cases(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The feed, the made ports' list, and the plain loop's outputs of them."""
    base = tmp_path_factory.mktemp("port-cases")
    feed, ports = base / "ports.nmea", base / "made_ports.csv"
    feed.write_text("\n".join(port_case_lines()) + "\n")
    ports.write_text(anchorage_csv())
    run_oracle(feed, base / "oracle", ports=str(ports))
    return feed, ports, base / "oracle"


def last_records(directory: Path) -> dict[str, dict[str, Any]]:
    """Each visit's last record (the one a store that upserts on the id keeps)."""
    return {v["id"]: v for v in read_records(directory / "port_visits")}


def visits_by_vessel(directory: Path) -> dict[int, list[tuple[str, int, bool]]]:
    out: dict[int, list[tuple[str, int, bool]]] = {m: [] for m in VISITS}
    for v in sorted(last_records(directory).values(), key=lambda v: v["start_time"]):
        out[v["mmsi"]].append((v["start_label"], v["confidence"], v["open"]))
    return out


@pytest.mark.parametrize("parallelism", [1, 2])
def test_the_generated_port_cases_give_their_visits_in_the_job(
    parallelism: int, port_cases: tuple[Path, Path, Path], tmp_path: Path
):
    feed, ports, oracle = port_cases
    run_job(feed, tmp_path, "--ports", str(ports), "--parallelism", str(parallelism))
    assert_same_outputs(tmp_path, oracle)
    assert visits_by_vessel(tmp_path) == VISITS


REAL = Path(__file__).parents[1] / "fixtures" / "gpsdiosegment__regr_416239500.json"


def test_a_real_vessel_moored_at_kaohsiung_has_the_visits_the_rule_gives_its_kept_positions(tmp_path: Path):
    from ais_pipeline.resources import ANCHORAGES
    from tests.support.independent_ports import Anchorages, compare, port_events, visits

    run_job(REAL, tmp_path, "--parallelism", "2")
    positions = read_records(tmp_path / "positions")
    assert {p["mmsi"] for p in positions} == {416239500} and len(positions) == 71
    want = visits(port_events(positions, Anchorages(ANCHORAGES)))
    # Heard first stopped 80 m from a Kaohsiung anchorage, every 16 minutes, and stopped to the
    # end: no entry, no stop, no gap, so no visit, as GFW's rule has it.
    assert compare(list(last_records(tmp_path).values()), want) == ([], [])
