"""The golden archives (``tests/golden/archives/``) through the plain loop's reader: exactly the
lines of ``tests/golden/archives.json``, which the job's reader gives too (``GoldenArchivesTest``
in the Java module)."""

from __future__ import annotations

import pytest

from ais_pipeline import archives
from tests.support.golden_archives import FILES, cases, lines_of, load

pytestmark = pytest.mark.unit

GOLDEN = load()["cases"]


def test_every_archive_the_generator_makes_has_its_golden_lines():
    assert sorted(GOLDEN) == sorted(cases()) == sorted(p.name for p in FILES.iterdir())


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_a_golden_archive_gives_its_lines(name: str):
    assert list(archives.read_file_lines(FILES / name)) == lines_of(GOLDEN[name], name)


def test_the_golden_lines_say_what_the_four_reader_rules_say():
    # A zstd file cut inside a block: the whole blocks' lines (1 KiB blocks), then the marker.
    assert GOLDEN["cut.zst"]["lines"] == {"numbered": [0, 955]}
    assert GOLDEN["cut.zst"]["corrupt_archive"] == "zstd: truncated"
    # Zip members of every method read; one of another method is a marker naming it.
    assert GOLDEN["methods.zip"] == {
        "note": "stored, deflated, bzip2 and LZMA members, in name order",
        "lines": {"numbered": [0, 400]},
    }
    refused = "zip member b.txt: compression method 9 (deflate64) is not read"
    assert GOLDEN["deflate64.zip"]["corrupt_archive"] == refused
    # A CRC-32 that does not match: the member's whole lines, then the marker.
    assert GOLDEN["bad-crc.zip"]["lines"] == ["a1", "A2"]
    assert GOLDEN["bad-crc.zip"]["corrupt_archive"] == "zip member a.txt: CRC-32 mismatch"
    # One U+FFFD per maximal invalid subpart: an encoded surrogate is three.
    assert GOLDEN["invalid-utf8.txt"]["lines"][2:4] == [
        "surrogate: \ufffd\ufffd\ufffd end",
        "surrogate pair: " + "\ufffd" * 6 + " end",
    ]
