"""Input files as the job's source reads them (``ais.flink.ArchiveLines``): decompressed by their
name, split into lines, decoded as UTF-8. The plain loop, the tests and the run's summary read
files here, so both readers give the same lines and the same ``corrupt_archive`` marker for every
file, damaged ones included.

The rule both follow: a file that cannot be read to its end gives every line whose line break was
decompressed before the fault, then one marker line naming the file and a cause of a fixed wording
(:class:`ArchiveFault`). Each decompressor gives all it can before a fault, in the units its
format is decoded in: deflate (gzip, zip) to the byte, bzip2 by block (up to 900 kB), xz by LZMA2
chunk (up to 2 MiB; stored chunks to the byte), zstd by block (up to 128 KiB). xz chunks and zstd
blocks are fed to their decompressor whole and one at a time (and a zstd checksum on its own), so
a fault in one loses none before it. A zip archive is its members in name order; stored,
deflated, bzip2 and LZMA members are read, every other method is a fault naming it, and each
member's CRC-32 and size are checked at its end.
"""

from __future__ import annotations

import bz2
import lzma
import struct
import time
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from ais_pipeline import geoparquet
from ais_pipeline.rules.lane import DictGroupStores, LaneParser
from ais_pipeline.rules.parse import CORRUPT_ARCHIVE
from ais_pipeline.rules.records import TIME_UNKNOWN

CHUNK = 1 << 16

# Zip compression methods that are read, and the names of some that are not.
ZIP_READ = {0: "stored", 8: "deflated", 12: "bzip2", 14: "LZMA"}
ZIP_OTHER = {1: "shrink", 6: "implode", 9: "deflate64", 10: "PKWARE implode", 93: "zstd", 95: "xz", 98: "PPMd"}


class ArchiveFault(Exception):
    """Why a file cannot be read to its end, in the words both readers use."""


class _Source:
    """The raw bytes of a file with look-ahead, for the decoders that walk a format's framing."""

    def __init__(self, fh: IO[bytes], limit: int | None = None) -> None:
        self.fh = fh
        self.left = limit  # bytes still to read from fh (a zip member's compressed size), None: all
        self.buf = b""

    def _read(self) -> bytes:
        n = CHUNK if self.left is None else min(CHUNK, self.left)
        data = self.fh.read(n) if n else b""
        if self.left is not None:
            self.left -= len(data)
        return data

    def fill(self, n: int) -> bool:
        """At least ``n`` bytes buffered (False: the file ends before)."""
        while len(self.buf) < n:
            data = self._read()
            if not data:
                return False
            self.buf += data
        return True

    def take(self, n: int) -> bytes:
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def chunk(self) -> bytes:
        """The next bytes: the buffered ones, else a read (empty at the end)."""
        if self.buf:
            return self.take(len(self.buf))
        return self._read()

    def unread(self, data: bytes) -> None:
        self.buf = data + self.buf

    def at_end(self) -> bool:
        return not self.fill(1)


def _chunks(stream: IO[bytes]) -> Iterator[bytes]:
    while chunk := stream.read(CHUNK):
        yield chunk


# gzip, as java.util.zip.GZIPInputStream reads it: members one after another; after a member,
# bytes that do not start another one are ignored (as gzip(1) ignores trailing garbage).


def _gzip_header(src: _Source, fault: str) -> bool:
    """One member's header read (False: no header there); ``fault`` is raised for a bad first one."""

    def need(n: int) -> bytes:
        if not src.fill(n):
            raise ArchiveFault("gzip: truncated") if fault else _NoMember()
        return src.take(n)

    try:
        if src.fill(2) and src.buf[:2] != b"\x1f\x8b":
            if not fault:
                return False
            raise ArchiveFault(fault)
        head = need(10)
        if head[2] != 8:
            raise ArchiveFault("gzip: corrupt data") if fault else _NoMember()
        flags, seen = head[3], head
        if flags & 4:
            extra = need(2)
            seen += extra + need(struct.unpack("<H", extra)[0])
        for flag in (8, 16):  # file name, comment: zero-terminated
            if flags & flag:
                while (byte := need(1)) != b"\x00":
                    seen += byte
                seen += byte
        if flags & 2 and struct.unpack("<H", need(2))[0] != zlib.crc32(seen) & 0xFFFF:
            raise ArchiveFault("gzip: corrupt data") if fault else _NoMember()
    except _NoMember:
        return False
    return True


class _NoMember(Exception):
    """What follows a gzip member is no other member."""


def _gzip(src: _Source) -> Iterator[bytes]:
    _gzip_header(src, "gzip: not gzip data")
    while True:
        inflater, crc, size = zlib.decompressobj(-zlib.MAX_WBITS), 0, 0
        while not inflater.eof:
            chunk = src.chunk()
            if not chunk:
                raise ArchiveFault("gzip: truncated")
            try:
                data = inflater.decompress(chunk)
            except zlib.error:
                raise ArchiveFault("gzip: corrupt data") from None
            crc, size = zlib.crc32(data, crc), size + len(data)
            if data:
                yield data
        src.unread(inflater.unused_data)
        if not src.fill(8):
            raise ArchiveFault("gzip: truncated")
        if struct.unpack("<II", src.take(8)) != (crc, size & 0xFFFFFFFF):
            raise ArchiveFault("gzip: CRC-32 or size mismatch")
        if src.at_end() or not _gzip_header(src, ""):
            return


def _bzip2(src: _Source) -> Iterator[bytes]:
    """bzip2 streams one after another (as pbzip2 writes them)."""
    while True:
        decompressor = bz2.BZ2Decompressor()
        while not decompressor.eof:
            chunk = src.chunk()
            if not chunk:
                raise ArchiveFault("bzip2: truncated")
            try:
                data = decompressor.decompress(chunk)
            except (OSError, ValueError):
                raise ArchiveFault("bzip2: corrupt data") from None
            if data:
                yield data
        src.unread(decompressor.unused_data)
        if src.at_end():
            return


# xz: the container walked so that each LZMA2 chunk is fed whole (the unit the job's reader
# decodes); the bytes of a stored chunk are fed as they come.

_XZ_MAGIC = b"\xfd7zXZ\x00"
_XZ_CHECK = (0, 4, 4, 4, 8, 8, 8, 16, 16, 16, 32, 32, 32, 64, 64, 64)


class _Cut(Exception):
    """The file ends inside a piece."""


def _whole(src: _Source, n: int) -> bytes:
    if not src.fill(n):
        raise _Cut()
    return src.take(n)


def _xz_varint(src: _Source) -> tuple[int, bytes]:
    value, raw = 0, b""
    while True:
        byte = _whole(src, 1)
        value |= (byte[0] & 0x7F) << (7 * len(raw))
        raw += byte
        if not byte[0] & 0x80 or len(raw) == 9:
            return value, raw


def _xz_pieces(src: _Source) -> Iterator[bytes]:
    """One xz stream's bytes in the pieces to feed; :class:`_Cut` where the file ends inside one
    (the bytes of a stored chunk are given as they come)."""
    header = _whole(src, 12)
    yield header
    if header[:6] != _XZ_MAGIC:
        return  # not xz: the decompressor says so
    check = _XZ_CHECK[header[7] & 0x0F]
    while True:
        first = _whole(src, 1)
        if first == b"\x00":  # the index, then the stream footer
            count, index = _xz_varint(src)
            index = first + index
            for _ in range(2 * count):
                index += _xz_varint(src)[1]
            index += _whole(src, (4 - len(index) % 4) % 4 + 4)
            yield index + _whole(src, 12)
            return
        block = first + _whole(src, first[0] * 4 + 3)
        yield block
        size = len(block)
        while True:
            control = _whole(src, 1)
            c = control[0]
            if c == 0:  # the block's end: its padding and check
                yield control + _whole(src, (4 - (size + 1) % 4) % 4 + check)
                break
            if c in (1, 2):  # a stored chunk
                head = control + _whole(src, 2)
                left = struct.unpack(">H", head[1:])[0] + 1
                size += 3 + left
                yield head
                while left:
                    part = _whole(src, 1) + src.take(left - 1)
                    left -= len(part)
                    yield part
            elif c >= 0x80:  # an LZMA chunk
                head = control + _whole(src, 5 if c >= 0xC0 else 4)
                packed = struct.unpack(">H", head[3:5])[0] + 1
                size += len(head) + packed
                yield head + _whole(src, packed)
            else:
                yield control  # no LZMA2 chunk: the decompressor says so
                return


def _xz(src: _Source) -> Iterator[bytes]:
    """xz streams one after another, with the stream padding between them."""
    while True:
        decompressor = lzma.LZMADecompressor(lzma.FORMAT_XZ)
        try:
            for piece in _xz_pieces(src):
                try:
                    data = decompressor.decompress(piece)
                except lzma.LZMAError:
                    raise ArchiveFault("xz: corrupt data") from None
                if data:
                    yield data
        except _Cut:
            raise ArchiveFault("xz: truncated") from None
        if not decompressor.eof:
            raise ArchiveFault("xz: truncated")
        while src.fill(4) and src.buf[:4] == bytes(4):
            src.take(4)
        if src.at_end():
            return


# zstd: frames walked so that each block is fed whole (the unit the job's reader decodes) and the
# checksum on its own; skippable frames are skipped.

_ZSTD_MAGIC = 0xFD2FB528


def _zstd_frame(src: _Source) -> Iterator[tuple[bytes, bool]]:
    """One frame's bytes in the pieces to feed, each with whether it is the checksum; :class:`_Cut`
    where the file ends inside one. A skippable frame gives none."""
    magic = struct.unpack("<I", _whole(src, 4))[0]
    if magic & 0xFFFFFFF0 == 0x184D2A50:
        _whole(src, struct.unpack("<I", _whole(src, 4))[0])
        return
    fhd = _whole(src, 1)
    if magic != _ZSTD_MAGIC:
        yield struct.pack("<I", magic) + fhd, False  # not zstd: the decompressor says so
        return
    d = fhd[0]
    single, fcs, dict_id = (d >> 5) & 1, d >> 6, d & 3
    size = (0 if single else 1) + (0, 1, 2, 4)[dict_id] + ((1 if single else 0), 2, 4, 8)[fcs]
    yield struct.pack("<I", magic) + fhd + _whole(src, size), False
    while True:
        head = _whole(src, 3)
        h = int.from_bytes(head, "little")
        kind, length = (h >> 1) & 3, h >> 3
        yield head + _whole(src, 1 if kind == 1 else length), False
        if h & 1:
            break
    if d & 4:
        yield _whole(src, 4), True


def _zstd(src: _Source) -> Iterator[bytes]:
    import zstandard

    while True:
        decompressor, fed = zstandard.ZstdDecompressor().decompressobj(), False
        try:
            for piece, checksum in _zstd_frame(src):
                fed = True
                try:
                    data = decompressor.decompress(piece)
                except zstandard.ZstdError:
                    raise ArchiveFault("zstd: checksum mismatch" if checksum else "zstd: corrupt data") from None
                if data:
                    yield data
        except _Cut:
            raise ArchiveFault("zstd: truncated") from None
        if fed and not decompressor.eof:
            raise ArchiveFault("zstd: corrupt data")
        if src.at_end():
            return


# zip: the central directory's members in name order (UTF-16 order, as the job's reader sorts),
# each decoded from its raw bytes and checked against its CRC-32 and size.


def _zip_member(fh: IO[bytes], info: zipfile.ZipInfo) -> Iterator[bytes]:
    name = info.filename
    if info.flag_bits & 1:
        raise ArchiveFault(f"zip member {name}: encrypted")
    method = info.compress_type
    if method not in ZIP_READ:
        label = f" ({ZIP_OTHER[method]})" if method in ZIP_OTHER else ""
        raise ArchiveFault(f"zip member {name}: compression method {method}{label} is not read")
    fh.seek(info.header_offset + 26)
    lengths = fh.read(4)
    if len(lengths) < 4:
        raise ArchiveFault(f"zip member {name}: truncated")
    fh.seek(info.header_offset + 30 + sum(struct.unpack("<HH", lengths)))
    src, crc, size = _Source(fh, info.compress_size), 0, 0
    try:
        for data in _zip_decoded(src, method, info.file_size):
            crc, size = zlib.crc32(data, crc), size + len(data)
            yield data
    except ArchiveFault as fault:
        raise ArchiveFault(f"zip member {name}: {fault}") from None
    if size != info.file_size:
        raise ArchiveFault(f"zip member {name}: size mismatch")
    if crc != info.CRC:
        raise ArchiveFault(f"zip member {name}: CRC-32 mismatch")


def _zip_decoded(src: _Source, method: int, size: int) -> Iterator[bytes]:
    """A member's bytes decoded; ArchiveFault("truncated") when its data ends first."""
    if method == 0:
        while chunk := src.chunk():
            yield chunk
        return
    if method == 14:  # LZMA: version (2 bytes), properties' size (2), properties; the output has the member's size
        if not src.fill(4) or not src.fill(4 + struct.unpack("<H", src.buf[2:4])[0]):
            raise ArchiveFault("truncated")
        props = src.take(4 + struct.unpack("<H", src.buf[2:4])[0])[4:]
        if len(props) != 5:
            raise ArchiveFault("corrupt data")
        d = props[0]
        lzma_filter = {"id": lzma.FILTER_LZMA1, "dict_size": struct.unpack("<I", props[1:])[0]}
        lzma_filter |= {"lc": d % 9, "lp": d // 9 % 5, "pb": d // 45}
        decompressor = lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=[lzma_filter])
        left = size
        while left:
            chunk = src.chunk()
            if not chunk:
                raise ArchiveFault("truncated")
            try:
                data = decompressor.decompress(chunk)[:left]
            except lzma.LZMAError:
                raise ArchiveFault("corrupt data") from None
            left -= len(data)
            if data:
                yield data
            if decompressor.eof:
                return
        return
    inflater = zlib.decompressobj(-zlib.MAX_WBITS) if method == 8 else bz2.BZ2Decompressor()
    while not inflater.eof:
        chunk = src.chunk()
        if not chunk:
            raise ArchiveFault("truncated")
        try:
            data = inflater.decompress(chunk)
        except (zlib.error, OSError, ValueError):
            raise ArchiveFault("corrupt data") from None
        if data:
            yield data


def _zip(file: Path) -> Iterator[Iterator[bytes]]:
    try:
        archive = zipfile.ZipFile(file)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, struct.error):
        raise ArchiveFault("zip: not a zip archive") from None
    with archive, file.open("rb") as fh:
        infos = [i for i in archive.infolist() if not i.is_dir()]
        for info in sorted(infos, key=lambda i: i.filename.encode("utf-16-be", "surrogatepass")):
            yield _zip_member(fh, info)


def members(file: Path) -> Iterator[Iterator[bytes]]:
    """The decompressed bytes of a file, by its name, in chunks: one stream, or a zip archive's
    members in name order. An empty file is one empty stream, whatever its name."""
    name = file.name.lower()
    if file.stat().st_size == 0:
        yield iter(())
    elif name.endswith(".zip"):
        yield from _zip(file)
    else:
        with file.open("rb") as fh:
            if name.endswith((".gz", ".gzip")):
                yield _gzip(_Source(fh))
            elif name.endswith(".bz2"):
                yield _bzip2(_Source(fh))
            elif name.endswith(".xz"):
                yield _xz(_Source(fh))
            elif name.endswith(".zst"):
                yield _zstd(_Source(fh))
            else:
                yield _chunks(fh)


def split_lines(chunks: Iterator[bytes]) -> Iterator[str]:
    """Lines of a byte stream as the job's source splits them: on \\n, \\r or \\r\\n, as the bytes
    come, so every whole line before a failing read is given; a last line without a line break is
    given only when the stream ends well. Each line is decoded as UTF-8, every maximal invalid
    subpart one U+FFFD (the Unicode recommendation, which both readers follow)."""
    partial = b""
    after_cr = False
    for chunk in chunks:
        if after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        after_cr = chunk.endswith(b"\r")
        pieces = (partial + chunk).replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        partial = pieces.pop()
        for piece in pieces:
            yield piece.decode("utf-8", errors="replace")
    if partial:
        yield partial.decode("utf-8", errors="replace")


COMPRESSED = (".gz", ".gzip", ".bz2", ".xz", ".zst", ".zip")


def parquet_file(file: Path) -> bool:
    """A Parquet file: named ``.parquet``, or not named as a compressed file and starting with
    Parquet's magic; an empty file is no file of any kind."""
    if file.stat().st_size == 0 or file.name.lower().endswith(COMPRESSED):
        return False
    return geoparquet.is_parquet(file)


def read_file_lines(file: Path) -> Iterator[str]:
    """The lines of one file as the job's source reads them: a NOAA GeoParquet file's rows as CSV
    lines (:mod:`ais_pipeline.geoparquet`); any other file decompressed by its name (``.gz``,
    ``.bz2``, ``.xz``, ``.zst``, ``.zip``), split on \\n, \\r or \\r\\n, bytes that are not
    UTF-8 replaced. A file that cannot be read to its end gives its whole lines before the
    fault, then one :data:`CORRUPT_ARCHIVE` line naming it and the fault."""
    try:
        if parquet_file(file):
            yield from geoparquet.noaa_lines(file)
        else:
            for member in members(file):
                yield from split_lines(member)
    except (ArchiveFault, geoparquet.ArchiveFault) as fault:
        yield f"{CORRUPT_ARCHIVE}{file.name}\x1f{fault}"
    except OSError as exc:  # the file itself could not be read
        cause = f"{type(exc).__name__}: {exc}".replace("\n", " ").replace("\x1f", " ")
        yield f"{CORRUPT_ARCHIVE}{file.name}\x1f{cause}"


def input_files(path: Path) -> list[Path]:
    """The files a run reads: the file itself, or every file under the directory in name order,
    hidden ones (``.``/``_``) left out as Flink's file source leaves them out."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith((".", "_")))


def read_lines(path: Path) -> Iterable[str]:
    """The lines of a file or directory as the job's source reads them (:func:`read_file_lines`),
    the files of a directory in name order."""
    for file in input_files(path):
        yield from read_file_lines(file)


INPUT_TIME_LINES = 100_000  # how far into a file run's input its first time is looked for


def input_time(path: Path, input_format: str, max_clock_skew_ms: int) -> int:
    """The time a file run gives its lines without a time of their own that come before any line
    of their lane told one (:class:`ais_pipeline.rules.lane.LaneParser`): the first time the input
    tells (a line's own time, or a receiver's GPS time in a ``$--ZDA`` sentence) in its first
    :data:`INPUT_TIME_LINES` lines; for an input that tells none there, the modification time of
    its first file (of the folder, for a watched folder that is empty). Epoch ms; the same for the
    job at every parallelism and for the plain loop, whatever the clock says."""
    parser = LaneParser(input_format, max_clock_skew_ms, 60_000, untimed_ms=0)
    groups = DictGroupStores()
    now = int(time.time() * 1000)  # only to tell a time far ahead of the clock (never a time)
    for number, line in enumerate(read_lines(path)):
        if number >= INPUT_TIME_LINES:
            break
        parser.line(line, now, groups)
        if parser.told != TIME_UNKNOWN:
            return parser.told
    files = input_files(path)
    return int((files[0] if files else path).stat().st_mtime * 1000)
