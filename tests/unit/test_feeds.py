"""The rules of the live feeds: URLs, the tag block a line gets on its way into Kafka, and lines
split out of a TCP stream whatever its chunks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ais_pipeline.errors import ConfigError
from ais_pipeline.rules.feeds import (
    MAX_LINE_BYTES,
    FeedUrl,
    LineSplitter,
    PartitionKeys,
    Resends,
    parse_feed_url,
    raw_line,
    stamped_on_receipt,
    tag_line,
)
from ais_pipeline.rules.parse import parse_nmea
from ais_pipeline.rules.records import Report

pytestmark = pytest.mark.unit

SENTENCE = "!AIVDM,1,1,,A,14`qQb0000o?u?DK>Smo2E`v0404,0*1A"


def test_feed_urls_and_listeners_on_loopback_unless_named():
    assert parse_feed_url("udp://:10110") == FeedUrl("udp", "127.0.0.1", 10110)
    assert parse_feed_url("tcp://153.44.253.27:5631") == FeedUrl("tcp", "153.44.253.27", 5631)
    assert not parse_feed_url("tcp-listen://127.0.0.1:5010").open_to_network
    assert parse_feed_url("udp://0.0.0.0:10110").open_to_network
    assert parse_feed_url("mqtt://127.0.0.1/ais/#") == FeedUrl("mqtt", "127.0.0.1", 1883, "ais/#")
    assert str(parse_feed_url("mqtt://broker:1884/ais/+/nmea")) == "mqtt://broker:1884/ais/+/nmea"
    for bad, said in [
        ("http://h:80/t", "expected udp://, tcp:// or tcp-listen://HOST:PORT, or mqtt://"),
        ("udp://127.0.0.1", "has no port"),
        ("tcp://:5631", "names no server"),
        ("mqtt://h:1883", "names no MQTT topic"),
        ("tcp://h:1/x", "only an mqtt:// URL has a path"),
        ("mqtt://user:secret@h/ais", "no credentials in the URL"),
    ]:
        with pytest.raises(ConfigError, match=said):
            parse_feed_url(bad)


def test_a_line_without_a_tag_block_gets_its_station_and_receive_time_and_a_tagged_one_passes():
    tagged = tag_line(SENTENCE, "AIS-catcher 1", 1_700_000_000_123)
    assert tagged == "\\s:AIS-catcher 1,c:1700000000123,t:received*6A\\" + SENTENCE
    assert stamped_on_receipt(tagged) and not stamped_on_receipt(SENTENCE)
    report = parse_nmea(tagged)
    assert isinstance(report, Report) and (report.receiver, report.ts) == ("AIS-catcher 1", 1_700_000_000_123)
    norwegian = "\\s:2573555,c:1707873398*05\\!BSVDM,1,1,,A,13m<EQ0P00PAd9JP;GI`0?wb0<0s,0*4C"
    assert tag_line(norwegian, "x", 1) == norwegian  # byte for byte
    assert tag_line("", "x", 1) == ""
    assert tag_line(SENTENCE, "a,b\\c*d", 5) == tag_line(SENTENCE, "a_b_c_d", 5)  # nothing breaks the tag block


@pytest.mark.parametrize("cut", [1, 2, 7, 33, 64])
def test_lines_are_the_same_whatever_the_chunks(cut: int):
    stream = ("a\r\nb\nc\rd\r\n\ne" + "é").encode()
    splitter = LineSplitter()
    lines = []
    for i in range(0, len(stream), cut):
        lines += splitter.feed(stream[i : i + cut])
    assert [*lines, splitter.end()] == ["a", "b", "c", "d", "", "eé"]


def test_an_over_long_line_is_cut_and_counted_and_nothing_is_held_without_bound():
    splitter = LineSplitter()
    lines = splitter.feed(b"x" * (MAX_LINE_BYTES * 2 + 10))
    assert [len(line) for line in lines] == [MAX_LINE_BYTES, MAX_LINE_BYTES] and splitter.too_long == 2
    assert splitter.feed(b"\n") == ["x" * 10] and splitter.end() is None


GOLDEN = json.loads((Path(__file__).parents[1] / "golden" / "feeds.json").read_text())


@pytest.mark.parametrize("case", GOLDEN["tag_cases"], ids=lambda c: c["name"])
def test_tagging_follows_the_golden_cases_the_java_inputs_share(case: dict[str, Any]):
    assert tag_line(case["line"], case["station"], case["received_ms"]) == case["tagged"]


@pytest.mark.parametrize("case", GOLDEN["split_cases"], ids=lambda c: c["name"])
def test_splitting_follows_the_golden_cases_the_java_inputs_share(case: dict[str, Any]):
    data, chunk = case["stream"].encode(), case["chunk"]
    splitter = LineSplitter()
    lines = [line for i in range(0, len(data), chunk) for line in splitter.feed(data[i : i + chunk])]
    assert (lines, splitter.end(), splitter.too_long) == (case["lines"], case["rest"], case["too_long"])


def test_a_connections_first_lines_that_kafka_has_are_resends_and_skipped_until_the_first_new_one():
    resends = Resends(keep=4)
    first = resends.connected()
    assert all(first.fresh(line) for line in ["a", "b", "c", "d", "e"])  # nothing to skip on a first connection
    again = resends.connected()  # the server sends its last three again, then goes on
    assert [line for line in ["c", "d", "e", "f", "c", "g"] if again.fresh(line)] == ["f", "c", "g"]
    assert again.skipped == 3  # "c" after "f" is in the middle of the connection: it passes
    assert "a" not in resends and "g" in resends  # only the last `keep` lines are held


def test_the_raw_line_of_a_stamped_record_is_what_its_sender_sent():
    stamped = tag_line(SENTENCE, "10.0.0.7", 1_700_000_000_000)
    assert raw_line(stamped) == SENTENCE
    norwegian = "\\s:2573555,c:1707873398*05\\!BSVDM,1,1,,A,13m<EQ0P00PAd9JP;GI`0?wb0<0s,0*4C"
    assert raw_line(norwegian) == norwegian  # a sender's own tag block is part of its line


def test_a_whole_payload_gives_its_last_line_without_a_break_and_the_cuts():
    assert LineSplitter.whole(b"a\r\nb") == (["a", "b"], 0)
    assert LineSplitter.whole(b"x" * (MAX_LINE_BYTES + 1)) == (["x" * MAX_LINE_BYTES, "x"], 1)
    assert LineSplitter.whole(b"") == ([], 0)


def test_partition_keys_keep_a_receivers_lines_and_a_multipart_group_together():
    keys = PartitionKeys(keep=2)
    sample = [  # the bundled sample's first lines (GlobalFishingWatch/ais-listener)
        r"\s:117,c:1668046497*0A\!AIVDM,1,1,,,369KwSP000<G`Kh0iukScOv00000,0*12",
        r"\g:1-2-7218,s:117,c:1668046497*74\!AIVDM,2,1,9,,5815Njh2Bah1KL7CGG<HUHu>2222222222222216D@LB>6jm0@CSmSlS,0*62",
        r"\s:3,c:1668046497*0A\!AIVDM,1,1,,,369KwSP000<G`Kh0iukScOv00000,0*12",
        r"\g:2-2-7218*51\!AIVDM,2,2,9,,lljFDjp88888880,2*26",
        "!AIVDM,1,1,,A,15M67FC000G?ufbE`FepT@3n00Sa,0*5C",
        "1550303566167726840 !AIVDM,1,1,,B,10bb7q@P0lPGHlVMhbl0Qgw>2>`<,0*7F",
        '{"mmsi": 1}',
        r"\g:2-2-9999*51\!AIVDM,2,2,9,,lljFDjp88888880,2*26",  # its first fragment unseen
    ]
    assert [keys.key(line) for line in sample] == ["117", "117", "3", "117", "", "", "", ""]
    for i in range(3):  # only the last group ids are remembered
        keys.key(rf"\g:1-2-{i},s:r{i}*00\!AIVDM,2,1,9,,58,0*62")
    assert keys.key(r"\g:2-2-0*00\!AIVDM,2,2,9,,ll,2*26") == ""
    assert keys.key(r"\g:2-2-2*00\!AIVDM,2,2,9,,ll,2*26") == "r2"
