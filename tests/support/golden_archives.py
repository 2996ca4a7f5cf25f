"""The golden archives (``tests/golden/archives/``, ``tests/golden/archives.json``): small files,
whole and damaged, of every kind the job reads (NOAA GeoParquet days too, from
``tests/support/noaa_parquet.py``), and the lines both readers must give for each: the
plain loop's (``ais_pipeline.archives.read_file_lines``, ``tests/unit/test_golden_archives.py``) and the job's
(``ais.flink.ArchiveLines``, ``GoldenArchivesTest``).

A case's ``lines`` are its lines in order; ``{"numbered": [a, b]}`` stands for the lines
``numbered(i)`` for i from a to b - 1. ``corrupt_archive`` is the cause of the marker line that
ends a file that cannot be read to its end (the line is ``\\x1fcorrupt_archive\\x1f`` + the file's
name + ``\\x1f`` + the cause); a file read to its end has none.

    python -m tests.support.golden_archives --write    # rewrite the files and their lines
    python -m tests.support.golden_archives            # check that they are as written
"""

from __future__ import annotations

import bz2
import json
import lzma
import struct
import sys
import zipfile
import zlib
from collections.abc import Callable
from io import BytesIO
from pathlib import Path
from typing import Any

import zstandard

from ais_pipeline.archives import read_file_lines
from ais_pipeline.rules.parse import CORRUPT_ARCHIVE
from tests.support import noaa_parquet

GOLDEN = Path(__file__).parents[1] / "golden"
FILES = GOLDEN / "archives"
EXPECTED = GOLDEN / "archives.json"


def numbered(i: int) -> str:
    return f"{i:07d},golden"


def text(a: int, b: int) -> bytes:
    return "".join(numbered(i) + "\n" for i in range(a, b)).encode()


def gzip_member(data: bytes, name: bytes = b"", comment: bytes = b"", header_crc: bool = False) -> bytes:
    """One gzip member of a fixed time, with the optional header fields."""
    flags = (8 if name else 0) | (16 if comment else 0) | (2 if header_crc else 0)
    header = b"\x1f\x8b\x08" + bytes([flags]) + b"\x00\x00\x00\x00\x00\xff"
    header += (name + b"\x00" if name else b"") + (comment + b"\x00" if comment else b"")
    if header_crc:
        header += struct.pack("<H", zlib.crc32(header) & 0xFFFF)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = deflate.compress(data) + deflate.flush()
    return header + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def zstd(data: bytes, checksum: bool = True) -> bytes:
    """A zstd frame of 1 KiB blocks (a 1 KiB window), with its content size."""
    params = zstandard.ZstdCompressionParameters.from_level(
        3, window_log=10, write_checksum=int(checksum), write_content_size=1
    )
    return zstandard.ZstdCompressor(compression_params=params).compress(data)


def zip_archive(members: list[tuple[str, bytes, int]]) -> bytes:
    out = BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data, method in members:
            info = zipfile.ZipInfo(name, date_time=(2025, 1, 1, 0, 0, 0))
            info.compress_type = method
            archive.writestr(info, data)
    return out.getvalue()


def patched(data: bytes, *edits: tuple[int, bytes]) -> bytes:
    out = bytearray(data)
    for at, value in edits:
        out[at : at + len(value)] = value
    return bytes(out)


def zip_method(archive: bytes, name: str, method: int, flags: int = 0) -> bytes:
    """A member's compression method (and general purpose flags, or-ed) set in both its headers."""
    out = bytearray(archive)
    raw = name.encode()
    for signature, method_at, flags_at, name_at in ((b"PK\x03\x04", 8, 6, 30), (b"PK\x01\x02", 10, 8, 46)):
        at = out.find(signature)
        while at >= 0:
            if out[at + name_at : at + name_at + len(raw)] == raw:
                out[at + method_at : at + method_at + 2] = struct.pack("<H", method)
                old = struct.unpack("<H", out[at + flags_at : at + flags_at + 2])[0]
                out[at + flags_at : at + flags_at + 2] = struct.pack("<H", old | flags)
            at = out.find(signature, at + 4)
    return bytes(out)


UTF8_LINES = [
    b"plain ascii",
    b"valid: \xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\xa2",  # e acute, euro sign, a ship
    b"surrogate: \xed\xa0\x80 end",  # an encoded surrogate: three subparts
    b"surrogate pair: \xed\xa0\xbd\xed\xb8\x80 end",  # CESU-8: six
    b"last surrogate: \xed\xbf\xbf end",
    b"overlong: \xc0\x80 \xc1\xbf \xe0\x80\x9f \xf0\x8f\xbf\xbf end",
    b"too big: \xf4\x90\x80\x80 \xf5\x80 \xf8\x88\x80\x80\x80 end",
    b"cut short: \xe2\x82 \xf0\x9f\x9a end",
    b"lone: \x80 \xbf \xfe \xff end",
    b"at the end: \xe2\x82",
]


def cases() -> dict[str, tuple[str, Callable[[], bytes]]]:
    """File name -> (what it shows, its bytes)."""
    lines_text = b"first\r\nsecond\rthird\n\nfifth\r\r\nlast without a line break"
    big = text(0, 20_000)
    small = text(0, 300)
    members = gzip_member(text(0, 100), name=b"a.txt") + gzip_member(text(100, 200), comment=b"c", header_crc=True)
    one_gz = gzip_member(small)
    bad_crc_gz = one_gz[:-8] + struct.pack("<I", zlib.crc32(small) ^ 1) + one_gz[-4:]
    bz = bz2.compress(big, 1)  # three blocks of 100 kB
    xz_two = lzma.compress(text(0, 1000)) + lzma.compress(text(1000, 2000))
    xz_one = lzma.compress(small)
    zst_two = zstd(text(0, 2000)) + zstd(text(2000, 3000), checksum=False)
    zst = zstd(text(0, 2000))
    stored = zip_archive([("a.txt", b"a1\na2\na3", zipfile.ZIP_STORED), ("b.txt", b"b1\n", zipfile.ZIP_STORED)])
    methods = zip_archive(
        [
            ("d-lzma.txt", text(300, 400), zipfile.ZIP_LZMA),
            ("c-bzip2.txt", text(200, 300), zipfile.ZIP_BZIP2),
            ("b-deflated.txt", text(100, 200), zipfile.ZIP_DEFLATED),
            ("a-stored.txt", text(0, 100), zipfile.ZIP_STORED),
            ("e/", b"", zipfile.ZIP_STORED),
        ]
    )
    two = zip_archive([("a.txt", small, zipfile.ZIP_DEFLATED), ("b.txt", b"b1\n", zipfile.ZIP_DEFLATED)])
    return {
        "lines.txt": ("lines end at \\n, \\r or \\r\\n", lambda: lines_text),
        "invalid-utf8.txt": ("one U+FFFD per maximal invalid subpart", lambda: b"\n".join(UTF8_LINES)),
        "empty.gz": ("an empty file is no line, whatever its name", lambda: b""),
        "members.gz": ("gzip members one after another, header fields too", lambda: members),
        "trailing-junk.gz": ("bytes after the last member that start no member are ignored", lambda: one_gz + b"junk"),
        "cut.gz": ("a gzip file cut short: the lines inflated before the cut", lambda: one_gz[: len(one_gz) // 2]),
        "cut-trailer.gz": ("cut inside the trailer: every line", lambda: one_gz[:-3]),
        "bad-crc.gz": ("a CRC-32 that does not match: every line, then the fault", lambda: bad_crc_gz),
        "not-gzip.gz": ("no gzip at all", lambda: b"just text\n"),
        "cut.bz2": ("bzip2 cut in its third block: the first two blocks' lines", lambda: bz[: len(bz) * 5 // 6]),
        "not-bzip2.bz2": ("no bzip2 at all", lambda: b"just text\n"),
        "cut.xz": ("xz cut in its second stream: the first stream's lines", lambda: xz_two[: len(xz_two) * 3 // 4]),
        "cut-index.xz": ("cut inside the index: every line", lambda: xz_one[:-14]),
        "not-xz.xz": ("no xz at all", lambda: b"just some text, no xz\n"),
        "cut.zst": ("zstd cut inside a block: the lines of the blocks before it", lambda: zst[: len(zst) // 2]),
        "cut-checksum.zst": ("cut inside the checksum: every line", lambda: zst[:-2]),
        "frames.zst": ("zstd frames, with and without a checksum, and a skippable one", lambda: zst_two),
        "bad-checksum.zst": ("a checksum that does not match", lambda: zst[:-4] + bytes(b ^ 1 for b in zst[-4:])),
        "not-zstd.zst": ("no zstd at all", lambda: b"just text\n"),
        "methods.zip": ("stored, deflated, bzip2 and LZMA members, in name order", lambda: methods),
        "deflate64.zip": (
            "a member of a method that is not read",
            lambda: zip_method(stored, "b.txt", 9),
        ),
        "encrypted.zip": ("an encrypted member", lambda: zip_method(stored, "a.txt", 0, flags=1)),
        "bad-crc.zip": (
            "a stored member whose bytes no longer match its CRC-32: its whole lines, then the fault",
            lambda: patched(stored, (stored.find(b"a2"), b"A2")),
        ),
        "cut.zip": ("a zip archive cut short has no central directory", lambda: two[: len(two) // 2]),
        **noaa_parquet.golden_cases(),
    }


def skippable(data: bytes) -> bytes:
    return struct.pack("<II", 0x184D2A50, len(data)) + data


def write_files() -> None:
    FILES.mkdir(parents=True, exist_ok=True)
    for old in FILES.iterdir():
        old.unlink()
    for name, (_, make) in cases().items():
        data = make()
        if name == "frames.zst":
            data = skippable(b"skip me") + data
        (FILES / name).write_bytes(data)


def expected(name: str, note: str) -> dict[str, Any]:
    """A file's lines through the plain loop's reader, in the golden form."""
    lines = list(read_file_lines(FILES / name))
    case: dict[str, Any] = {"note": note}
    if lines and lines[-1].startswith(CORRUPT_ARCHIVE):
        marker = lines.pop()
        file, _, cause = marker[len(CORRUPT_ARCHIVE) :].partition("\x1f")
        assert file == name, marker
        case["corrupt_archive"] = cause
    count = 0
    while count < len(lines) and lines[count] == numbered(count):
        count += 1
    case["lines"] = {"numbered": [0, count]} if count == len(lines) and count > 20 else lines
    return case


def lines_of(case: dict[str, Any], name: str) -> list[str]:
    """The lines a case stands for, its marker line included."""
    spec = case["lines"]
    lines = [numbered(i) for i in range(*spec["numbered"])] if isinstance(spec, dict) else list(spec)
    if "corrupt_archive" in case:
        lines.append(f"{CORRUPT_ARCHIVE}{name}\x1f{case['corrupt_archive']}")
    return lines


def load() -> dict[str, Any]:
    return json.loads(EXPECTED.read_text())  # type: ignore[no-any-return]


def main(argv: list[str]) -> int:
    if "--write" in argv:
        write_files()
        notes = {name: note for name, (note, _) in cases().items()}
        golden = {
            "about": "tests/support/golden_archives.py: the lines both readers give for each file of archives/",
            "cases": {name: expected(name, notes[name]) for name in notes},
        }
        EXPECTED.write_text(json.dumps(golden, indent=1, ensure_ascii=True) + "\n")
        return 0
    golden = load()["cases"]
    wrong = [n for n, case in golden.items() if list(read_file_lines(FILES / n)) != lines_of(case, n)]
    print("wrong:", wrong if wrong else "none")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
