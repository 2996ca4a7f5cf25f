"""Parsing real lines: tag blocks, checksums, multipart fragments, other sentences, JSON."""

from __future__ import annotations

import json

import pytest

from ais_pipeline.rules.json_lines import parse_json
from ais_pipeline.rules.multipart import DictGroupStore, MultipartAssembler
from ais_pipeline.rules.parse import (
    DeadLetter,
    Skipped,
    event_time,
    is_future,
    parse_nmea,
)
from ais_pipeline.rules.records import TIME_UNKNOWN, Fragment, Report
from tests.support.nmea import BASE, position, tagged

pytestmark = pytest.mark.unit

# From the bundled sample (GlobalFishingWatch/ais-listener).
SAMPLE_SINGLE = r"\s:117,c:1668046497*0A\!AIVDM,1,1,,,369KwSP000<G`Kh0iukScOv00000,0*12"
SAMPLE_FIRST = (
    r"\g:1-2-7218,s:117,c:1668046497*74\!AIVDM,2,1,9,,5815Njh2Bah1KL7CGG<HUHu>2222222222222216D@LB>6jm0@CSmSlS,0*62"
)
SAMPLE_SECOND = r"\g:2-2-7218*51\!AIVDM,2,2,9,,lljFDjp88888880,2*26"
NOW = 1_900_000_000_000


def test_tag_block_gives_receiver_time_and_identity():
    report = parse_nmea(SAMPLE_SINGLE)
    assert isinstance(report, Report)
    assert (report.mmsi, report.msg_type, report.receiver, report.ts) == (412549006, 3, "117", 1668046497000)
    assert report.identity == "369KwSP000<G`Kh0iukScOv00000,0"


def _with_checksum(body: str) -> str:
    checksum = 0
    for ch in body:
        checksum ^= ord(ch)
    return f"!{body}*{checksum:02X}"


def test_identity_ignores_receiver_talker_and_tag_block():
    copy = "\\s:999,c:1668046499*00\\" + _with_checksum("BSVDM,1,1,,B,369KwSP000<G`Kh0iukScOv00000,0")
    a, b = parse_nmea(SAMPLE_SINGLE), parse_nmea(copy)
    assert isinstance(a, Report) and isinstance(b, Report)
    assert a.identity == b.identity and (a.receiver, b.receiver) == ("117", "999")


def test_tag_block_time_in_milliseconds_when_at_least_ten_to_the_twelfth():
    line = r"\s:a,c:1668046497123*00\!AIVDM,1,1,,,369KwSP000<G`Kh0iukScOv00000,0*12"
    report = parse_nmea(line)
    assert isinstance(report, Report) and report.ts == 1668046497123


def test_tag_block_checksum_is_not_enforced_real_star_00(fixtures):
    lines = (fixtures / "risky__nmea-timestamped.txt").read_text().splitlines()
    parsed = [parse_nmea(line) for line in lines]
    assert all(isinstance(p, Report) for p in parsed)
    assert parsed[0].ts == 1420030798000  # type: ignore[union-attr]


def test_first_fragment_and_second_fragment_with_only_g_share_a_group():
    first, second = parse_nmea(SAMPLE_FIRST), parse_nmea(SAMPLE_SECOND)
    assert isinstance(first, Fragment) and isinstance(second, Fragment)
    assert first.group == second.group == "g:7218|9|"
    assert (first.frag_num, second.frag_num, first.frag_cnt) == (1, 2, 2)
    assert first.has_time and not second.has_time and second.receiver == ""


def test_fragments_without_tag_block_group_by_sequence_channel_and_count(fixtures):
    lines = (fixtures / "aistools__multi-part.nmea").read_text().splitlines()
    first, second = parse_nmea(lines[0]), parse_nmea(lines[1])
    assert isinstance(first, Fragment) and isinstance(second, Fragment)
    assert first.group == second.group == "|7|A|2"


def test_real_bad_checksums_are_dead_lettered_with_reason(fixtures):
    lines = (fixtures / "aistools__errors.nmea").read_text().splitlines()
    results = [parse_nmea(line) for line in lines]
    reasons = [r.reason if isinstance(r, DeadLetter) else type(r).__name__ for r in results]
    assert reasons == ["Report", "checksum", "Report", "checksum", "Report"]
    assert results[1].receiver == "rMT6214"  # type: ignore[union-attr]


def test_truncated_sentence_is_malformed():
    dead = parse_nmea(SAMPLE_SINGLE[:-10])
    assert isinstance(dead, DeadLetter) and dead.reason == "malformed" and dead.detail == "no checksum"


def test_empty_payload_is_malformed():
    dead = parse_nmea("!AIVDM,1,1,,B,,0*25")
    assert isinstance(dead, DeadLetter) and (dead.reason, dead.detail) == ("malformed", "empty payload")


def test_gps_and_other_nmea_sentences_count_as_not_ais(fixtures):
    lines = (fixtures / "gpsd__ait250.log").read_text().splitlines()
    kinds = {
        type(parse_nmea(line)).__name__ + (":" + parse_nmea(line).kind if isinstance(parse_nmea(line), Skipped) else "")
        for line in lines
    }  # type: ignore[union-attr]
    assert "Skipped:not_ais" in kinds and "Report" in kinds
    assert parse_nmea("$GPRMC,123519,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W*6A") == Skipped("not_ais")


def test_blank_and_comment_lines_are_skipped():
    assert parse_nmea("") == Skipped("skipped")
    assert parse_nmea("   \r\n") == Skipped("skipped")
    assert parse_nmea("# header of a capture") == Skipped("skipped")


def test_base_station_report_counts_as_other_type():
    # Type 4 from the bundled sample.
    line = r"\s:117,c:1668046500*05\!AIVDM,1,1,,,402E34QvJm2?0PL;=>NVG5O0280I,0*6C"
    assert parse_nmea(line) == Skipped("other_types")


def test_garbage_line_is_malformed_not_a_crash():
    for junk in ["\x00\xff\xfe", "hello world", "!AIVDM", "\\s:1,c:1", "\\s:1,c:abc*00\\!AIVDM,1,1,,A,1,0*00"]:
        assert isinstance(parse_nmea(junk), (DeadLetter, Skipped))


def test_broken_tag_block_time_is_malformed():
    dead = parse_nmea(r"\s:117,c:notatime*0A\!AIVDM,1,1,,,369KwSP000<G`Kh0iukScOv00000,0*12")
    assert isinstance(dead, DeadLetter) and dead.reason == "malformed"


def test_event_time_rules():
    report = parse_nmea(SAMPLE_SINGLE)
    assert isinstance(report, Report)
    assert event_time(report, NOW, 300_000) == 1668046497000
    # A sentence with no time gets its ingestion time.
    untimed = parse_nmea("!AIVDM,1,1,,,369KwSP000<G`Kh0iukScOv00000,0*12")
    assert isinstance(untimed, Report) and event_time(untimed, NOW, 300_000) == NOW
    # A later fragment without time never moves the watermark.
    assert event_time(parse_nmea(SAMPLE_SECOND), NOW, 300_000) == TIME_UNKNOWN
    assert event_time(Skipped("not_ais"), NOW, 300_000) == TIME_UNKNOWN


def test_clock_seventy_years_fast_is_future_and_never_moves_the_watermark():
    line = tagged(position(244000001, 52.0, 4.0), BASE + 70 * 365.25 * 86400)
    report = parse_nmea(line)
    assert isinstance(report, Report)
    assigned = event_time(report, BASE * 1000, 300_000)
    assert assigned == TIME_UNKNOWN and is_future(report, assigned)
    # Within the skew it is accepted.
    near = parse_nmea(tagged(position(244000001, 52.0, 4.0), BASE + 299))
    assert event_time(near, BASE * 1000, 300_000) == (BASE + 299) * 1000


def test_json_position_with_iso_epoch_seconds_and_milliseconds():
    base = {"mmsi": 263576000, "lat": -23.2656002045, "lon": 97.1636123657, "sog": 2.3, "rx_id": "x"}
    for ts in ("2015-10-15T02:39:55.000000Z", 1444876795, 1444876795000, "1444876795"):
        report = parse_json(json.dumps({**base, "timestamp": ts}))
        assert isinstance(report, Report)
        assert report.ts == 1444876795000
        assert report.identity == "263576000|1444876795000|-23.2656|97.16361"
        assert (report.sog, report.receiver, report.msg_type) == (2.3, "x", 1)


def test_junk_json_is_dead_lettered_with_reason():
    assert parse_json("{not json").reason == "bad_json"  # type: ignore[union-attr]
    assert parse_json("[1, 2]").reason == "bad_json"  # type: ignore[union-attr]
    missing = parse_json('{"mmsi": 1, "lat": 1, "lon": 2}')
    assert isinstance(missing, DeadLetter) and missing.reason == "malformed" and "timestamp" in missing.detail
    assert parse_json('{"mmsi": "x", "timestamp": 1, "lat": 1, "lon": 2}').reason == "malformed"  # type: ignore[union-attr]
    assert parse_json('{"mmsi": 1, "timestamp": 1, "lat": "north", "lon": 2}').reason == "malformed"  # type: ignore[union-attr]
    assert parse_json('{"mmsi": 1, "timestamp": 1, "lat": 1, "lon": 2, "msg_type": 5}') == Skipped("other_types")


def test_json_without_lat_lon_is_a_report_without_a_fix():
    # A real gpsdio-segment record with null coordinates.
    report = parse_json('{"mmsi": 263576000, "lat": null, "lon": null, "timestamp": "2015-10-15T09:15:55.000000Z"}')
    assert isinstance(report, Report) and (report.lat, report.lon) == (None, None)
    assert report.identity == "263576000|1444900555000|-|-"


def test_bytes_that_are_not_text_are_dead_lettered_as_not_text_in_either_format():
    from ais_pipeline.rules.lane import parse_line

    # b"\xff\xfe\x00..." as Flink's text line format and the Kafka deserializer decode it.
    binary = b"\xff\xfe\x00\x01binary".decode("utf-8", errors="replace")
    for fmt in ("nmea", "json"):
        dead = parse_line(binary, fmt)
        assert isinstance(dead, DeadLetter) and (dead.reason, dead.raw) == ("not_text", binary)
    assert parse_line(SAMPLE_SINGLE, "nmea") == parse_nmea(SAMPLE_SINGLE)


# The US Coast Guard's NAIS dialect: fields after the checksum.
NAIS_SHORT = "!AIVDM,1,1,,A,14`qQb0000o?u?DK>Smo2E`v0404,0*1A,r003669987,1152921693"  # noaadata__test.ais
# The long form, built from its documented fields around the same sentence.
NAIS_LONG = (
    "!AIVDM,1,1,,A,14`qQb0000o?u?DK>Smo2E`v0404,0*1A,d-109,S2105,t050056.00,T56.13718694,r003669946,"
    "1325394060,1325394001"
)


def test_nais_trailing_fields_give_the_receiver_and_the_event_time():
    short, long = parse_nmea(NAIS_SHORT), parse_nmea(NAIS_LONG)
    assert isinstance(short, Report) and isinstance(long, Report)
    assert (short.receiver, short.ts) == ("003669987", 1152921693000)
    assert (long.receiver, long.ts) == ("003669946", 1325394060000)
    # A tag block says it first.
    tagged_line = parse_nmea("\\s:shore7,c:1700000000*00\\" + NAIS_SHORT)
    assert isinstance(tagged_line, Report) and (tagged_line.receiver, tagged_line.ts) == ("shore7", 1700000000000)


def test_the_real_nais_capture_has_a_receiver_and_a_time_on_every_sentence(fixtures):
    lines = (fixtures / "noaadata__test.ais").read_text().splitlines()
    parsed = [(line, parse_nmea(line)) for line in lines]
    sentences = [(line, p) for line, p in parsed if isinstance(p, (Report, Fragment))]
    assert len(sentences) > 900
    for line, p in sentences:  # the station is the field after the checksum that starts with r
        assert f",r{p.receiver}," in line
    assert all(p.ts != TIME_UNKNOWN for _, p in sentences)
    assert {p.ts // 86_400_000 for _, p in sentences} == {1152921693000 // 86_400_000}  # 2006-07-15


def test_a_group_id_reused_by_interleaved_groups_keeps_them_apart(fixtures):
    # The Norwegian capture tags every group g:1-2-9999 / g:2-2-9999; here two of its groups
    # interleave, as a merged feed would deliver them.
    lines = (fixtures / "aisnet__Ais1000Lines.nm4").read_text().splitlines()
    a1, a2, b1, b2 = lines[12], lines[13], lines[15], lines[16]
    assert "g:1-2-9999" in a1 and "g:2-2-9999" in a2 and "g:1-2-9999" in b1
    assembler, stores = MultipartAssembler(60_000), {}
    messages = []
    for line in (a1, b1, a2, b2):
        frag = parse_nmea(line)
        assert isinstance(frag, Fragment)
        step = assembler.on_fragment(stores.setdefault(frag.group, DictGroupStore()), frag, 0)
        assert step.dead is None
        if step.message is not None:
            messages.append(step.message)
    assert [m.msg_type for m in messages] == [5, 5]  # type: ignore[union-attr]
    assert len({m.mmsi for m in messages}) == 2  # type: ignore[union-attr]


@pytest.mark.parametrize("talker", ["AI", "AB", "BS", "B2"])
def test_every_talker_is_accepted(talker: str):
    body = f"{talker}VDM,1,1,,A,14`qQb0000o?u?DK>Smo2E`v0404,0"
    checksum = 0
    for ch in body:
        checksum ^= ord(ch)
    assert isinstance(parse_nmea(f"!{body}*{checksum:02X}"), Report)


def test_nais_fields_take_only_an_epoch_after_the_station():
    from ais_pipeline.rules.parse import nais_fields

    assert nais_fields(",r003669987,1152921693") == ("003669987", 1152921693000)
    assert nais_fields(",d-109,1152921693,r003669946,7,1325394060123") == ("003669946", 1325394060123)
    assert nais_fields(",366999999") == ("", None)  # no station: nothing taken
    assert nais_fields(",rABC,²²²²²²²²²²") == ("ABC", None)
    assert nais_fields("") == ("", None)
