"""The formats receivers and tools log, through the plain loop: NMEA behind a logger's leading
timestamp, Gatehouse $PGHP times, and the JSON of AIS-catcher, gpsd, aisstream.io and Global
Fishing Watch's gpsdio (docs/rules.md, Input). The golden lines of every dialect are in
``tests/golden/dialects.json``; real files here are read whole."""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ais_pipeline.config import PipelineConfig
from ais_pipeline.files import read_lines, summarize, write_outputs
from ais_pipeline.rules.json_lines import dialect_of, parse_json
from ais_pipeline.rules.lane import LaneParser, parse_line
from ais_pipeline.rules.parse import DeadLetter, parse_nmea
from ais_pipeline.rules.plain import PlainResult, run_plain
from ais_pipeline.rules.prefixes import NotATime, gatehouse_time, leading_time
from ais_pipeline.rules.records import TIME_UNKNOWN, Report
from tests.support import golden_dialects

pytestmark = pytest.mark.unit

NOW_MS = golden_dialects.NOW_MS


def golden_cases() -> list[Any]:
    return [pytest.param(case, id=case["name"][:60]) for case in golden_dialects.load()["cases"]]


@pytest.mark.parametrize("case", golden_cases())
def test_golden_lines_of_every_dialect_give_their_records(case: dict[str, Any], tmp_path: Path):
    assert golden_dialects.run_case(case, tmp_path) == case["expect"]


def run(path: Path, **knobs: Any) -> tuple[dict[str, Any], PlainResult]:
    lines = list(read_lines(path))
    result = run_plain(PipelineConfig(input_path=path, **knobs), lines, now_ms=NOW_MS)
    with tempfile.TemporaryDirectory() as tmp:
        write_outputs(result, Path(tmp))
        return summarize(result.tallies, len(lines), Path(tmp)), result


def records(result: PlainResult, name: str) -> list[dict[str, Any]]:
    return [json.loads(r) for r in result.named()[name]]


def test_go_ais_capture_reads_whole_with_its_leading_nanosecond_times(fixtures: Path, tmp_path: Path):
    summary, result = run(fixtures / "goais__aistest.nmea")
    # The capture's own faults only: 3 second fragments without their first, 5 groups that never
    # complete (as its source says); no line is refused for its prefix.
    assert summary["dead_letter"] == {"incomplete_multipart": 8}
    assert summary["no_time"] == 0 and summary["accounted_lines"] == 998
    assert (summary["positions_kept"], summary["static_kept"], summary["other_types"]) == (575, 78, 228)
    days = {p["timestamp"][:10] for p in records(result, "positions")}
    assert days == {"2019-02-16"}
    # The same lines with the prefix as a \c:<ms>\ tag block give the same records.
    tagged = tmp_path / "tagged.nmea"
    with tagged.open("w") as out:
        for line in read_lines(fixtures / "goais__aistest.nmea"):
            stamp, _, sentence = line.partition(" ")
            out.write(f"\\c:{int(stamp) // 1_000_000}*00\\{sentence}\n")
    tagged_summary, tagged_result = run(tagged)
    assert {k: v for k, v in tagged_summary.items() if k != "seconds"} == summary
    for name in ("positions", "static", "aggregates", "late"):
        assert result.named()[name] == tagged_result.named()[name], name
    assert [json.loads(d)["detail"] for d in result.dead_letter] == [
        json.loads(d)["detail"] for d in tagged_result.dead_letter
    ]


def independent_counts(path: Path) -> tuple[int, int, int, int]:
    """(kept, exact, near, no fix) of a gpsdio file, counted here without the job's code: a row is
    an exact duplicate of one with the same time and position (5 decimals), a near duplicate when
    at the vessel's last kept position within 2 s, and has no fix when a coordinate is missing or
    off the globe."""
    seen: set[tuple[int, object, object]] = set()
    kept = exact = near = no_fix = 0
    last: tuple[int, tuple[int, int]] | None = None
    for line in path.read_text().splitlines():
        row = json.loads(line)
        text = row["timestamp"].replace("Z", "")
        ts = round(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)
        lat, lon = row["lat"], row["lon"]
        identity = (ts, None if lat is None else round(lat, 5), None if lon is None else round(lon, 5))
        if identity in seen:
            exact += 1
            continue
        seen.add(identity)
        if lat is None or lon is None or not (-90 <= lat <= 90 and -180 <= lon <= 180):
            no_fix += 1
            continue
        key = (round(lat * 1e5), round(lon * 1e5))
        if last is not None and key == last[1] and abs(ts - last[0]) <= 2000:
            near += 1
            continue
        kept += 1
        last = (ts, key)
    return kept, exact, near, no_fix


@pytest.mark.parametrize("name", ["gpsdiosegment__263576000.json", "gpsdiosegment__416000000.json"])
def test_gpsdio_tracks_read_as_they_are_every_row_with_a_fix_kept_or_a_duplicate_of_one(name: str, fixtures: Path):
    summary, result = run(fixtures / name)
    kept, exact, near, no_fix = independent_counts(fixtures / name)
    figures = ("duplicates_exact", "duplicates_near", "no_position")
    # Kept: the positions, and the fixes judged bad (416000000 is several transmitters' MMSI).
    assert (summary["positions_kept"] + summary["bad_fixes"], *(summary[k] for k in figures)) == (
        kept, exact, near, no_fix,
    )  # fmt: skip
    assert summary["dead_letter"] == {} and summary["no_time"] == 0 and summary["late"] == 0
    assert {p["mmsi"] for p in records(result, "positions")} == {int(name.split("__")[1].split(".")[0])}


def test_the_dialects_are_told_apart_by_their_keys():
    assert dialect_of({"MessageType": "PositionReport", "Message": {}, "MetaData": {}}) == "aisstream"
    assert dialect_of({"ssvid": 1, "timestamp": "2015-10-15T02:39:55Z"}) == "gpsdio"
    assert dialect_of({"class": "AIS", "device": "AIS-catcher", "nmea": []}) == "aiscatcher"
    assert dialect_of({"class": "AIS", "device": "AIS-catcher", "scaled": True}) == "aiscatcher"
    assert dialect_of({"class": "AIS", "scaled": False, "mmsi": 1}) == "gpsd"
    assert dialect_of({"class": "TPV"}) == "gpsd"
    # The job's own JSON with a field named class (a transceiver class) is the job's own.
    assert dialect_of({"mmsi": 1, "timestamp": 0, "class": "A"}) == "json"
    assert dialect_of({"mmsi": 1, "timestamp": 0}) == "json"
    assert dialect_of({"vessel": 1}) is None


def test_leading_times_by_size_and_form():
    sentence = "!AIVDM,1,1,,B,10bb7q@P0lPGHlVMhbl0Qgw>2>`<,0*7F"  # go-ais test data
    for prefix, ms in [
        ("1550303566 ", 1_550_303_566_000),
        ("1550303566.25\t", 1_550_303_566_250),
        ("1550303566167,", 1_550_303_566_167),
        ("1550303566167726;", 1_550_303_566_167),
        ("1550303566167726840 ", 1_550_303_566_167),
        ("2019-02-16 07:52:46 ", 1_550_303_566_000),
        ("2019-02-16T07:52:46.167Z,", 1_550_303_566_167),
        ("2019-02-16T08:52:46+01:00 ", 1_550_303_566_000),
        ("[2019-02-16 07:52:46.5] ", 1_550_303_566_500),
    ]:
        assert leading_time(prefix + sentence) == (ms, sentence), prefix
    assert leading_time(sentence) is None
    assert leading_time("367000001,2025-01-01 00:00:00,-73.9") is None  # a CSV row: no sentence after it
    for bad in ("42 ", "99999999999 ", "123456789012345678901 ", "2019-02-30 07:52:46 "):
        with pytest.raises(NotATime):
            leading_time(bad + sentence)


def test_a_prefixed_line_keeps_its_raw_text_and_its_tag_blocks_receiver():
    line = r"1550303566 \s:r1,c:1550303566*00\!AIVDM,1,1,,B,10bb7q@P0lPGHlVMhbl0Qgw>2>`<,0*7F"
    report = parse_nmea(line)
    assert isinstance(report, Report)
    assert (report.ts, report.receiver, report.raw) == (1_550_303_566_000, "r1", line)
    notes: list[str] = []
    parse_nmea(line.replace("1550303566 ", "1550303600 "), notes)
    assert notes == ["time_disagreements"]


def test_a_gatehouse_time_is_utc_and_only_type_1_carries_one():
    assert gatehouse_time("$PGHP,1,2004,12,21,23,59,58,999,219,219000001,219000002,1,6D*56") == 1_103_673_598_999
    assert gatehouse_time("$PGHP,2,2004,12,21,23,59,58,999*00") is None
    assert gatehouse_time("$PGHP,1,2004,13,21,23,59,58,999,219,,,1,6D*56") is None


def test_a_gatehouse_time_waits_for_the_first_fragment_of_the_next_message():
    parser = LaneParser("auto", 300_000, 60_000)
    first = r"!AIVDM,2,1,9,,5815Njh2Bah1KL7CGG<HUHu>2222222222222216D@LB>6jm0@CSmSlS,0*62"
    assert parser.parse("$PGHP,1,2022,11,10,2,14,57,0,,,,1,62*00").kind == "not_ais"  # type: ignore[union-attr]
    assert parser.parse("# a comment does not use it").kind == "skipped"  # type: ignore[union-attr]
    fragment = parser.parse(first)
    assert fragment.has_time and fragment.ts == 1_668_046_497_000  # type: ignore[union-attr]
    assert parser.gatehouse == TIME_UNKNOWN  # used up


def test_explicit_formats_name_each_dialect_and_refuse_the_others():
    gpsd = '{"class":"AIS","type":1,"mmsi":244660274,"scaled":true,"lat":52.0,"lon":5.0}'
    assert isinstance(parse_line(gpsd, "gpsd"), Report)
    refused = parse_line(gpsd, "gpsdio")
    assert isinstance(refused, DeadLetter) and refused.reason == "bad_json"
    assert refused.detail == "not gpsdio JSON (gpsd JSON by its keys)"
    assert isinstance(parse_json(gpsd), Report)  # "json": every dialect, by its keys


def test_gfw_messages_as_its_pipelines_write_them_today_are_read_as_their_type_says(fixtures: Path):
    path = fixtures / "gpsdiosegment__regr_416239500.json"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    positions = [r for r in rows if r["type"] in ("AIS.1", "AIS.3")]
    statics = [r for r in rows if r["type"] == "AIS.5"]
    unavailable = [r for r in positions if r["lat"] == 91.0 or r["lon"] == 181.0]
    assert (len(positions), len(statics), len(unavailable)) == (74, 67, 2)
    summary, result = run(path)
    assert summary["dead_letter"] == {} and summary["accounted_lines"] == summary["lines"] == 141
    # Every position message is kept, a near duplicate or (latitude 91) without a position; every
    # static message is a static report, kept when it changed or its last one is older than a day.
    assert summary["positions_kept"] + summary["duplicates_near"] + summary["no_position"] == 74
    assert summary["no_position"] == 2 and summary["duplicates_near"] == 1
    assert (summary["static_kept"], summary["static_duplicates"]) == (2, 65)
    (first, *_) = records(result, "static")
    assert {k: first[k] for k in ("mmsi", "msg_type", "shipname", "callsign", "imo", "receiver")} == {
        "mmsi": 416239500, "msg_type": 5, "shipname": "CHUN I NO.1", "callsign": "BL2110", "imo": 80110,
        "receiver": "rORBCOMM000",
    }  # fmt: skip
    assert "ship_type" not in first  # "Not available"
    assert {p["receiver"] for p in records(result, "positions")} == {"rORBCOMM000"}


def test_a_gfw_record_with_a_text_speed_or_a_numeric_imo_is_read():
    from ais_pipeline.rules.json_lines import parse_json

    position = parse_json('{"ssvid":"416000000","timestamp":"2021-01-01T00:00:00Z","type":"AIS.1","lat":54,'
                          '"lon":10,"speed":"n/a","heading":"","course":NaN}')  # fmt: skip
    assert isinstance(position, Report) and (position.lat, position.sog, position.heading) == (54.0, None, None)
    static = parse_json('{"ssvid":416000000,"timestamp":"2021-01-01T00:00:00Z","type":"AIS.5","imo":9123456,'
                        '"shipname":"X","lat":NaN,"lon":NaN}')  # fmt: skip
    assert isinstance(static, Report) and json.loads(static.static) == {"imo": 9123456, "shipname": "X"}


def test_a_static_number_no_reader_can_take_is_null_and_the_record_valid_json(tmp_path: Path):
    # aisstream.io's own line (tests/golden/dialects.json) with an IMO of 1e400 (read as infinity)
    # and a width beyond 64 bits: the static record says null for them, and is JSON that every
    # reader of the outputs (Java's Jackson among them) takes.
    line = (
        '{"Message":{"ShipStaticData":{"AisVersion":1,"CallSign":"PD2026","Destination":"MAASVLAKTE ",'
        '"Dimension":{"A":12,"B":10,"C":2,"D":' + "9" * 1500 + '},"Dte":false,"Eta":{"Day":0,"Hour":24,'
        '"Minute":60,"Month":0},"FixType":15,"ImoNumber":1e400,"MaximumStaticDraught":0,"MessageID":5,'
        '"Name":"RVE 56 ","RepeatIndicator":0,"Spare":false,"Type":99,"UserID":244660640,"Valid":true}},'
        '"MessageType":"ShipStaticData","MetaData":{"MMSI":244660640,"MMSI_String":244660640,'
        '"ShipName":"RVE 56 ","latitude":51.89933333333333,"longitude":4.4305666666666665,'
        '"time_utc":"2023-10-15 09:51:08.150552564 +0000 UTC"}}'
    )
    result = run_plain(PipelineConfig(), [line])
    (record,) = result.static

    def refuse(constant: str) -> None:
        raise ValueError(constant)

    static = json.loads(record, parse_constant=refuse)
    assert (static["imo"], static["to_starboard"], static["to_bow"], static["shipname"]) == (None, None, 12, "RVE 56")
