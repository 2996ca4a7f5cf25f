"""Port visits through the vessel rules and the plain loop: the generated port cases (two made
ports), a shared MMSI's transmitters each with visits of their own, a transmitter followed across
a silence, the state each vessel keeps (bounded, restored from its compact form, gone after its
TTL), and GFW's month of a shared MMSI at Taiwan's ports with the bundled list."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from ais_pipeline.anchorages import load_anchorages
from ais_pipeline.config import PipelineConfig
from ais_pipeline.files import read_lines
from ais_pipeline.resources import ANCHORAGES
from ais_pipeline.rules.loitering import LoiteringRules, Ping
from ais_pipeline.rules.plain import PlainPipeline, run_plain
from ais_pipeline.rules.ports import (
    IN_PORT,
    PORT_ENTRY,
    PORT_STOP_BEGIN,
    PortEvent,
    PortRules,
    PortVisit,
    PortVisits,
    VesselPorts,
    add_event,
)
from ais_pipeline.rules.tracks import Fix
from ais_pipeline.rules.transmitters import MAX_TRANSMITTERS, VesselTransmitters
from tests.support import port_cases
from tests.support.port_cases import SHARED, SILENT, VISITS, anchorage_csv, port_case_lines

pytestmark = pytest.mark.unit

HOUR = 3_600_000
GFW = Path(__file__).parents[1] / "fixtures" / "gpsdiosegment__416000000.json"


@pytest.fixture(scope="module")
def made_ports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ports") / "made_ports.csv"
    path.write_text(anchorage_csv())
    return path


def last_records(lines: list[str]) -> list[dict[str, Any]]:
    """Each visit's last record, in order of start."""
    last = {}
    for line in lines:
        record = json.loads(line)
        last[record["id"]] = record
    return sorted(last.values(), key=lambda v: v["start_time"])


def test_the_generated_port_cases_give_their_visits_and_confidence(made_ports: Path) -> None:
    result = run_plain(PipelineConfig(ports=str(made_ports)), port_case_lines())
    got: dict[int, list[tuple[str, int, bool]]] = {m: [] for m in VISITS}
    for v in last_records(result.port_visits):
        got[v["mmsi"]].append((v["start_label"], v["confidence"], v["open"]))
    assert got == VISITS
    (silent,) = [v for v in last_records(result.port_visits) if v["mmsi"] == SILENT]
    # Silent from 01:00 to 06:00: the gap begins four hours after its last position.
    assert [(e["type"], e["time"][11:16]) for e in silent["events"]] == [
        ("PORT_ENTRY", "00:20"),
        ("PORT_STOP_BEGIN", "00:30"),
        ("PORT_GAP_BEGIN", "05:00"),
        ("PORT_GAP_END", "06:00"),
        ("PORT_STOP_END", "07:00"),
        ("PORT_EXIT", "07:15"),
    ]
    assert (silent["start_anchorage_id"], silent["end_anchorage_id"]) == ("made_ports:2", "made_ports:2")
    assert silent["hours"] == 6.917 and silent["end_time"] == "2023-11-15T07:15:00.000Z"


def test_a_visit_is_written_at_each_event_under_one_id_open_until_its_exit(made_ports: Path) -> None:
    result = run_plain(PipelineConfig(ports=str(made_ports)), port_case_lines())
    records = [json.loads(line) for line in result.port_visits]
    silent = [r for r in records if r["mmsi"] == SILENT]
    # Entry, stop, gap begin (by the watermark), gap end, then stop end and exit.
    assert [r["open"] for r in silent] == [True] * 5 + [False]
    assert len({r["id"] for r in silent}) == 1
    assert [len(r["events"]) for r in silent] == [1, 2, 3, 4, 5, 6]
    assert silent[2]["as_of"] > silent[2]["events"][-1]["time"]  # the watermark that revealed the gap
    assert all(r["end_time"] is None and r["end_label"] is None for r in silent[:5])


def test_each_transmitter_of_a_shared_mmsi_has_visits_of_its_own(made_ports: Path) -> None:
    result = run_plain(PipelineConfig(ports=str(made_ports)), port_case_lines())
    shared = [v for v in last_records(result.port_visits) if v["mmsi"] == SHARED]
    assert [[e["type"] for e in v["events"]] for v in shared] == [
        ["PORT_ENTRY", "PORT_STOP_BEGIN", "PORT_STOP_END", "PORT_EXIT"],
        ["PORT_STOP_END", "PORT_EXIT"],
    ]
    # One stream of positions for the MMSI would have it enter and leave each port every report.
    rule = PortVisits(load_anchorages(made_ports))
    one, flips = VesselPorts(), 0
    for t, lat in sorted(_shared_latitudes()):
        flips += sum(e.kind == PORT_ENTRY for e in rule.events.position(one, t, lat, port_cases.LON, 0.0))
    assert flips >= 10


def _shared_latitudes() -> list[tuple[int, float]]:
    out = []
    for k, legs in enumerate(port_cases.CASES[SHARED]):
        for first, last, start, end, _sog in legs:
            for minute in range(first, last + 1, port_cases.EVERY_MIN):
                f = (minute - first) / (last - first) if last > first else 0.0
                a, b = port_cases._lat(start), port_cases._lat(end)
                out.append(((port_cases.T0 + minute * 60 + k * 150) * 1000, a + f * (b - a)))
    return out


def fix(ts: int, lat: float, lon: float, lineage: int, sog: float = 0.0) -> Fix:
    return Fix(ts, lat, lon, "cell", "cargo", round(sog * 1000), 1, lineage=lineage)


def test_a_transmitter_no_lineage_follows_is_taken_over_by_a_fix_that_could_have_reached_it() -> None:
    vessel = VesselTransmitters()
    moored = vessel.take(1, 0, -40.0, -130.0, {1}, 50.0, 0.27)
    moored.heard, moored.last_ts, moored.last_lat, moored.last_lon = True, 0, -40.0, -130.0
    # While lineage 1 is followed, a new lineage is a transmitter of its own.
    assert vessel.take(2, HOUR, -40.0, -130.0, {1, 2}, 50.0, 0.27) is not moored
    del vessel.by_lineage[2]
    # Lineage 1 no longer followed (a silence past a day): a fix far beyond reach starts anew...
    assert vessel.take(3, 2 * HOUR, 10.0, 10.0, {3}, 50.0, 0.27) is not moored
    # ...and one in reach takes its state over, under the new lineage.
    assert vessel.take(4, 30 * HOUR, -40.001, -130.0, {3, 4}, 50.0, 0.27) is moored
    assert set(vessel.by_lineage) == {3, 4}


def test_a_vessel_keeps_at_most_its_transmitters_bound_and_forgets_them_after_the_ttl() -> None:
    vessel = VesselTransmitters()
    for n in range(MAX_TRANSMITTERS + 3):
        v = vessel.take(n, n * HOUR, float(n), 0.0, set(range(n + 1)), 50.0, 0.27)
        v.heard, v.last_ts = True, n * HOUR
    assert len(vessel.by_lineage) == MAX_TRANSMITTERS
    assert min(vessel.by_lineage) == 3  # the ones heard longest ago went first
    vessel.forget(20 * HOUR, alive={10}, ttl_ms=10 * HOUR)
    assert set(vessel.by_lineage) == {10}  # the others' last positions are over the TTL behind


def test_a_vessels_transmitters_come_back_from_their_compact_state() -> None:
    anchorages = load_anchorages(ANCHORAGES)
    where, _ = anchorages.nearest(22.5686, 120.3131, 4.0) or (None, 0)
    assert where is not None and where.label == "KAOHSIUNG"
    vessel = VesselTransmitters()
    t = vessel.take(7, 0, 22.5686, 120.3131, {7}, 50.0, 0.27)
    t.heard, t.last_ts, t.last_lat, t.last_lon = True, 5, 22.5686, 120.3131
    v = t.ports
    v.state, v.last_ts, v.last_lat, v.last_lon, v.anchorage, v.gap_open = IN_PORT, 5, 22.5686, 120.3131, where, True
    v.visit = PortVisit("id-1", category="tanker")
    for kind, ts in ((PORT_ENTRY, 1), (PORT_STOP_BEGIN, 2)):
        add_event(v.visit, PortEvent(kind, ts, 22.5686, 120.3131, where))
    rules, shore = LoiteringRules(), lambda lat, lon: 30.0
    for minute in range(0, 200, 10):  # slow for three hours: an event, and an hour still open
        t.loitering.add(Ping(minute * 60_000, 22.5686, 120.3131, 600_000 if minute else None, 0.0 if minute else None),
                        rules, shore)  # fmt: skip
    assert t.loitering.event is not None and t.loitering.hour is not None
    text = json.dumps(vessel.to_list())
    back = VesselTransmitters.from_list(json.loads(text))
    assert back == vessel
    assert back.by_lineage[7].ports.visit is not None and back.by_lineage[7].ports.visit.confidence == 3


def test_a_vessels_transmitters_written_when_only_port_visits_followed_them_are_read_back() -> None:
    row = [7, "IN_PORT", 5, 22.5, 120.3, -1, False, [], None]  # lineage, then the port state alone
    back = VesselTransmitters.from_list([row])
    t = back.by_lineage[7]
    assert (t.heard, t.last_ts, t.last_lat, t.last_lon, t.ports.state) == (True, 5, 22.5, 120.3, "IN_PORT")
    assert t.loitering.hour is None and t.loitering.event is None


def test_the_anchorage_list_travels_pickled_to_the_taskmanagers_whole() -> None:
    anchorages = load_anchorages(ANCHORAGES)
    packed = pickle.dumps(anchorages)
    assert len(packed) < 1_500_000
    back = pickle.loads(packed)
    assert back.points == anchorages.points and back.skipped == anchorages.skipped
    assert back.nearest(22.5686, 120.3131, 4.0) == anchorages.nearest(22.5686, 120.3131, 4.0)


def test_no_vessel_state_is_left_past_the_ttl_of_its_transmitters(made_ports: Path) -> None:
    plain = PlainPipeline(PipelineConfig(ports=str(made_ports), gap_ttl_days=1.0))
    plain.feed(port_case_lines())
    held = [m for m, store in plain.vessels.items() if store.transmitters() is not None]
    assert sorted(held) == sorted(VISITS)
    plain.finish()  # the end of input fires every timer: a day past the last position, all gone
    assert not plain.vessels


def test_the_month_of_a_shared_mmsi_calls_at_taiwans_ports_with_the_bundled_list() -> None:
    result = run_plain(PipelineConfig(input_path=GFW), list(read_lines(GFW)))
    visits = last_records(result.port_visits)
    # Its transmitters are handed on across silences: a visit whose next event is at a port 60 nm
    # away ends there (GFW's split), so more visits than calls at first sight.
    assert len(visits) == 43
    assert sum(not v["open"] and v["events"][-1]["type"] != "PORT_EXIT" for v in visits) == 12
    ports = {v["start_label"] for v in visits}
    assert {"KAOHSIUNG", "KEELUNG", "TAICHUNG", "TOUCHENG"} <= ports
    assert sum(v["open"] for v in visits) == 3  # its transmitters' visits still open at the end
    assert {v["confidence"] for v in visits} <= {1, 2, 3, 4}
    for v in visits:
        times = [e["time"] for e in v["events"]]
        assert times == sorted(times) and v["start_time"] == times[0]


def test_port_rules_are_gfws_by_default() -> None:
    rules = PipelineConfig().port_visits
    assert rules is not None and rules.anchorages == ANCHORAGES
    assert rules.rules == PortRules(3.0, 4.0, 0.2, 0.5, 4 * HOUR, 14 * 24 * HOUR)
    assert PipelineConfig(ports="off").port_visits is None


def test_the_docs_query_of_calls_and_dwell_time_gives_the_generated_cases_figures(
    made_ports: Path, tmp_path: Path
) -> None:
    import re

    import duckdb

    from ais_pipeline.files import write_outputs

    write_outputs(run_plain(PipelineConfig(ports=str(made_ports)), port_case_lines()), tmp_path)
    doc = (Path(__file__).parents[2] / "docs" / "ports.md").read_text()
    (query,) = re.findall(r"```sql\n(.*?)```", doc, re.S)
    rows = duckdb.sql(query.replace("out/port_visits", str(tmp_path / "port_visits"))).fetchall()
    assert [(port, day.isoformat(), calls) for port, _, day, calls, _, _ in rows] == [
        ("PORT A", "2023-11-15", 5),  # not the visit of an entry and an exit alone (confidence 1)
        ("PORT B", "2023-11-15", 2),
    ]
    # Port A's ended calls: 0.25, 1.92, 3.25 and 6.92 hours (and one still open).
    assert rows[0][4] == pytest.approx((1.917 + 3.25) / 2) and rows[0][5] == pytest.approx(6.917)


def test_the_readmes_query_of_calls_and_dwell_time_gives_the_generated_cases_figures(
    made_ports: Path, tmp_path: Path
) -> None:
    import re

    import duckdb

    from ais_pipeline.files import write_outputs

    write_outputs(run_plain(PipelineConfig(ports=str(made_ports)), port_case_lines()), tmp_path)
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    (query,) = [q for q in re.findall(r"```sql\n(.*?)```", readme, re.S) if "port_visits" in q]
    rows = duckdb.sql(query.replace("out/mine/port_visits", str(tmp_path / "port_visits"))).fetchall()
    assert [(port, day.isoformat(), calls) for port, day, calls, _, _ in rows] == [
        ("PORT A", "2023-11-15", 5),
        ("PORT B", "2023-11-15", 2),
    ]
    assert rows[0][3] == pytest.approx((1.917 + 3.25) / 2) and rows[0][4] == pytest.approx(6.917)


def _far_ports(tmp_path: Path) -> Path:
    path = tmp_path / "far_ports.csv"
    # Port A, port C 120 nm south of it (a day's steaming), and port F across an ocean.
    path.write_text("latitude,longitude,label\n-40.0,-130.0,PORT A\n-42.0,-130.0,PORT C\n10.0,10.0,PORT F\n")
    return path


def _moored(mmsi: int, lat: float, lon: float, t0_s: int, minutes: range) -> list[str]:
    from tests.support.nmea import position, tagged

    return [tagged(position(mmsi, lat, lon, sog=0.0), t0_s + m * 60) for m in minutes]


def _filler(t0_s: int, hours: int) -> list[str]:
    """Another vessel heard every ten minutes at sea: event time moves on while ours is silent."""
    from tests.support.nmea import position, tagged

    return [tagged(position(244399999, -30.0, -120.0 + k * 0.01, sog=8.0), t0_s + k * 600) for k in range(hours * 6)]


def _in_time_order(lines: list[str]) -> list[str]:
    return sorted(lines, key=lambda line: int(line.split("c:")[1].split("*")[0]))


def test_a_transmitter_heard_again_past_reach_after_its_tracks_were_dropped_starts_afresh(tmp_path: Path) -> None:
    """Silent past the retention, the vessel's tracks are dropped and its port state is kept: the
    new tracks' lineages do not reuse the ids of the port states kept, so a fix out of reach
    takes none of them over."""
    t0 = port_cases.T0
    lines = _moored(244300001, -39.9, -130.0, t0 - 1800, range(0, 30, 10))  # at sea, then moored at A
    lines += _moored(244300001, -40.0, -130.0, t0, range(0, 60, 5))
    lines += _moored(244300001, 10.0, 10.0, t0 + 3 * 86_400, range(0, 60, 5))  # three days on, far away
    lines = _in_time_order([*lines, *_filler(t0 - 3600, 3 * 24 + 2)])
    config = PipelineConfig(ports=str(_far_ports(tmp_path)), watermark_warm_up=1, static_ttl_s=600)
    plain = PlainPipeline(config)
    plain.feed(lines)
    visits = [v for v in last_records(plain.finish().port_visits) if v["mmsi"] == 244300001]
    assert [(v["start_label"], v["open"], [e["type"] for e in v["events"]]) for v in visits] == [
        ("PORT A", True, ["PORT_ENTRY", "PORT_STOP_BEGIN", "PORT_GAP_BEGIN"]),
    ]  # and nothing at port F: its first report there sets where it is


def test_a_transmitter_followed_into_another_port_60_nm_away_ends_its_visit_there(tmp_path: Path) -> None:
    t0 = port_cases.T0
    lines = _moored(244300002, -39.9, -130.0, t0 - 1800, range(0, 30, 10))  # at sea, then moored at A
    lines += _moored(244300002, -40.0, -130.0, t0, range(0, 60, 5))
    lines += _moored(244300002, -42.0, -130.0, t0 + 2 * 86_400, range(0, 60, 5))  # two days on, at C
    lines = _in_time_order([*lines, *_filler(t0 - 3600, 2 * 24 + 2)])
    config = PipelineConfig(ports=str(_far_ports(tmp_path)), watermark_warm_up=1, static_ttl_s=600)
    visits = [v for v in last_records(run_plain(config, lines).port_visits) if v["mmsi"] == 244300002]
    assert [(v["start_label"], v["open"], v["confidence"], [e["type"] for e in v["events"]]) for v in visits] == [
        ("PORT A", False, 3, ["PORT_ENTRY", "PORT_STOP_BEGIN", "PORT_GAP_BEGIN"]),
        ("PORT C", True, 2, ["PORT_GAP_END"]),
    ]
    assert visits[0]["end_label"] == "PORT A" and visits[0]["end_time"] == visits[0]["events"][-1]["time"]


def test_the_index_reaches_anchorages_at_any_radius_the_flags_allow() -> None:
    anchorages = load_anchorages(ANCHORAGES)
    kaohsiung = next(p for p in anchorages.points if p.label == "KAOHSIUNG")
    north = kaohsiung.lat + 22.5 / 111.2  # 22.5 km north of it
    found = anchorages.nearest(north, kaohsiung.lon, 25.0)
    assert found is not None and found[1] <= 22.6


def test_a_shared_mmsis_month_of_visits_is_the_rule_applied_independently_to_each_transmitters_positions(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The plain loop's visits of the month (the job's, tests/flink/test_tracks.py) against GFW's
    rule computed apart (tests/support/independent_ports.py: brute-force distances, the events
    and visits in one pass) on the kept positions, split into transmitters as the tracks split
    them: the one thing taken from the job's code."""
    from ais_pipeline.files import read_records, write_outputs
    from ais_pipeline.rules import ports as port_rule
    from tests.support.independent_ports import Anchorages, compare, millis, port_events, visits

    transmitters: list[Any] = []  # each transmitter's state, kept so that no id is reused
    fed: dict[tuple[int, float, float], int] = {}
    position = port_rule.PortEvents.position

    def spy(self: Any, v: Any, ts: int, lat: float, lon: float, sog: float | None) -> Any:
        if not any(t is v for t in transmitters):
            transmitters.append(v)
        assert (ts, lat, lon) not in fed
        fed[(ts, lat, lon)] = next(i for i, t in enumerate(transmitters) if t is v)
        return position(self, v, ts, lat, lon, sog)

    monkeypatch.setattr(port_rule.PortEvents, "position", spy)
    write_outputs(run_plain(PipelineConfig(input_path=GFW), list(read_lines(GFW))), tmp_path)
    kept = read_records(tmp_path / "positions")
    assert sorted(fed) == sorted((millis(p["timestamp"]), p["lat"], p["lon"]) for p in kept)
    by_transmitter: dict[int, list[dict[str, Any]]] = {}
    for p in kept:
        by_transmitter.setdefault(fed[(millis(p["timestamp"]), p["lat"], p["lon"])], []).append(p)
    assert len(by_transmitter) > 2
    anchorages = Anchorages(ANCHORAGES)
    want = [visit for positions in by_transmitter.values() for visit in visits(port_events(positions, anchorages))]
    records = list({r["id"]: r for r in read_records(tmp_path / "port_visits")}.values())
    assert compare(records, want) == ([], [])
    # One more in the job's: the port gap of a transmitter silent in port to the end, which the
    # watermark began (the independent rule sees a gap only when the transmitter comes back).
    assert len(records) == len(want) + 1 == 43


def test_a_transmitters_resampling_comes_back_from_its_compact_state() -> None:
    from ais_pipeline.rules.encounters import Fix as MarkFix
    from ais_pipeline.rules.encounters import Resampler

    vessel = VesselTransmitters()
    t = vessel.take(7, 0, 1.0, 2.0, {7}, 50.0, 0.27)
    t.marks = Resampler(name="123456789.7")
    assert VesselTransmitters.from_list(json.loads(json.dumps(vessel.to_list()))) == vessel  # no position yet
    t.marks.add(MarkFix("123456789.7", 600_000, 1.0, 2.0, 0.0, "cargo"))
    assert t.marks.add(MarkFix("123456789.7", 1_500_000, 1.0, 2.1, 0.0, "cargo"))  # marks made, the first kept
    back = VesselTransmitters.from_list(json.loads(json.dumps(vessel.to_list())))
    assert back == vessel
    later = MarkFix("123456789.7", 2_400_000, 1.0, 2.2, 0.0, "cargo")
    assert back.by_lineage[7].marks.add(later) == t.marks.add(later)  # type: ignore[union-attr]
