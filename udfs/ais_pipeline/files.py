"""The job's files: input lines as Flink's file source reads them, and the output directories of
a file run as the job writes them (JSON Lines part files), read back and summed up into
summary.json. The plain loop, the report, the tests and the run's summary all read them here."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import shutil
import zipfile
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from ais_pipeline.rules.dedup import LATE_VESSEL_MS
from ais_pipeline.rules.outputs import (
    RECEIVER_TALLY,
    SUMMARY_COUNTS,
    accounted_lines,
    by_receiver,
    duplicate_ratio,
    iso_ms,
    parse_iso_ms,
    tally_totals,
)
from ais_pipeline.rules.parse import CORRUPT_ARCHIVE
from ais_pipeline.rules.plain import PlainResult
from ais_pipeline.rules.windows import hours


def input_files(path: Path) -> list[Path]:
    """The files a run reads: the file itself, or every file under the directory in name order,
    hidden ones (``.``/``_``) left out as Flink's file source leaves them out."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith((".", "_")))


CHUNK = 1 << 16


def _chunks(stream: IO[bytes]) -> Iterator[bytes]:
    while chunk := stream.read(CHUNK):
        yield chunk


def _zstd_chunks(file: Path) -> Iterator[bytes]:
    """A zstd file's bytes, frame after frame; a frame cut short is an error (``EOFError``)."""
    import zstandard

    with file.open("rb") as fh:
        pending = b""  # bytes of frames not yet decompressed
        decompressor, fed = zstandard.ZstdDecompressor().decompressobj(), False
        for chunk in _chunks(fh):
            pending += chunk
            while pending:
                data = decompressor.decompress(pending)
                fed = True
                if data:
                    yield data
                if not decompressor.eof:
                    pending = b""
                    break
                pending = decompressor.unused_data  # the next frame starts here
                decompressor, fed = zstandard.ZstdDecompressor().decompressobj(), False
        if fed and not decompressor.eof:
            raise EOFError("the zstd frame is cut short")


def _members(file: Path) -> Iterator[Iterator[bytes]]:
    """The decompressed bytes of a file, by its name, in chunks: one stream, or a zip archive's
    members in name order. An empty file is one empty stream."""
    name = file.name.lower()
    if file.stat().st_size == 0:
        yield iter(())
    elif name.endswith(".zip"):
        with zipfile.ZipFile(file) as archive:
            for member in sorted(i.filename for i in archive.infolist() if not i.is_dir()):
                with archive.open(member) as fh:
                    yield _chunks(fh)
    elif name.endswith(".zst"):
        yield _zstd_chunks(file)
    else:
        if name.endswith((".gz", ".gzip")):
            opened: IO[bytes] = gzip.open(file, "rb")  # type: ignore[assignment]
        elif name.endswith(".bz2"):
            opened = bz2.open(file, "rb")
        elif name.endswith(".xz"):
            opened = lzma.open(file, "rb")
        else:
            opened = file.open("rb")
        with opened:
            yield _chunks(opened)


def _split(chunks: Iterator[bytes]) -> Iterator[str]:
    """Lines of a byte stream as the job's source splits them (``ais.flink.ArchiveLines``): on
    \\n, \\r or \\r\\n, as the bytes come, so every whole line before a failing read is given."""
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


def read_file_lines(file: Path) -> Iterator[str]:
    """The lines of one file as the job's source reads them: decompressed by the file's name
    (``.gz``, ``.bz2``, ``.xz``, ``.zst``, ``.zip``), split on \\n, \\r or \\r\\n, bytes that
    are not UTF-8 replaced. A file that cannot be read to its end gives its whole lines before the
    fault, then one :data:`CORRUPT_ARCHIVE` line naming it."""
    try:
        for member in _members(file):
            yield from _split(member)
    except Exception as exc:  # whatever a decompressor raises for a corrupt archive
        cause = f"{type(exc).__name__}: {exc}".replace("\n", " ").replace("\x1f", " ")
        yield f"{CORRUPT_ARCHIVE}{file.name}\x1f{cause}"


def read_lines(path: Path) -> Iterable[str]:
    """The lines of a file or directory as the job's source reads them (:func:`read_file_lines`),
    the files of a directory in name order."""
    for file in input_files(path):
        yield from read_file_lines(file)


def write_outputs(result: PlainResult, output_dir: Path) -> None:
    """The outputs as the Flink job writes them: JSON Lines under one directory each."""
    output_dir.mkdir(parents=True, exist_ok=True)
    for name, records in result.named().items():
        target = output_dir / name
        if target.is_dir():
            shutil.rmtree(target)
        target.mkdir()
        (target / "part-0.jsonl").write_text("".join(r + "\n" for r in records))


def output_lines(directory: Path) -> Iterator[str]:
    """The records of one output directory as their JSON lines, part file by part file in name
    order (hidden in-progress files skipped)."""
    if not directory.is_dir():
        return
    for path in sorted(directory.rglob("*")):
        if path.is_file() and not path.name.startswith("."):
            with path.open(encoding="utf-8") as fh:
                yield from (line.rstrip("\n") for line in fh if line.strip())


def read_jsonl(directory: Path) -> list[dict[str, object]]:
    """Every record of one output directory (Flink's part files, hidden in-progress files skipped)."""
    records: list[dict[str, object]] = []
    if not directory.is_dir():
        return records
    for path in sorted(directory.rglob("*")):
        if path.is_file() and not path.name.startswith("."):
            with path.open(encoding="utf-8") as fh:
                records.extend(json.loads(line) for line in fh if line.strip())
    return records


def read_tallies(directory: Path) -> Counter[str]:
    """The tally records of a run: one figure name a line counts one, ``name\\tN`` counts N."""
    counts: Counter[str] = Counter()
    if not directory.is_dir():
        return counts
    for path in sorted(directory.rglob("*")):
        if path.is_file() and not path.name.startswith("."):
            with path.open(encoding="utf-8") as fh:
                for line in fh:
                    name, tab, n = line.strip().partition("\t")
                    if name:
                        counts[name] += int(n) if tab else 1
    return counts


def summarize(tallies: Counter[str], lines: int, output_dir: Path) -> dict[str, object]:
    """summary.json: the tallies the operators emitted for what has no output of its own, the
    outputs counted, and the input lines read."""
    totals = tally_totals(tallies)
    summary: dict[str, object] = {name: totals.get(name, 0) for name in SUMMARY_COUNTS}
    summary["lines"] = lines
    summary["positions_kept"] = count_lines(output_dir / "positions")
    # The static records of the static reports read; those made beside archive rows are apart.
    summary["static_kept"] = count_lines(output_dir / "static") - int(summary["static_from_rows"])  # type: ignore[call-overload]
    dead = read_jsonl(output_dir / "dead_letter")
    summary["dead_letter"] = dict(sorted(Counter(str(d["reason"]) for d in dead).items()))
    summary["dead_letter_lines"] = sum(str(d["raw"]).count("\n") + 1 for d in dead)
    late = Counter(str(r["window"]) for r in read_jsonl(output_dir / "late"))
    summary["late_records"] = {"tumbling": late.get("tumbling", 0), "sliding": late.get("sliding", 0)}
    # Vessel time too late for its tumbling window: dropped, and counted here.
    summary["late_hours"] = hours(int(totals.get(LATE_VESSEL_MS, 0)))
    summary["duplicate_ratio"] = duplicate_ratio(
        int(summary["positions_kept"]),  # type: ignore[call-overload]
        int(totals.get("duplicates_exact", 0)),
        int(totals.get("duplicates_near", 0)),
    )
    summary["accounted_lines"] = accounted_lines(summary)
    summary["receivers"] = by_receiver(tallies, dead)
    summary["per_minute"] = per_minute(tallies, output_dir)
    return summary


def per_minute(tallies: Counter[str], output_dir: Path) -> dict[str, dict[str, int]]:
    """Per minute of event time: positions kept (from the output), exact and near duplicates and
    late reports (from the ``figure@minute`` tallies): the duplicate ratio over time."""
    minutes: dict[int, Counter[str]] = {}
    for name, n in tallies.items():
        figure, sep, minute = name.partition("@")
        if sep and not name.startswith(RECEIVER_TALLY):
            minutes.setdefault(int(minute), Counter())[figure] += n
    for record in read_jsonl(output_dir / "positions"):
        ts = parse_iso_ms(str(record["timestamp"]))
        minutes.setdefault(ts - ts % 60_000, Counter())["positions_kept"] += 1
    figures = ("positions_kept", "duplicates_exact", "duplicates_near", "late")
    return {iso_ms(m): {f: minutes[m].get(f, 0) for f in figures} for m in sorted(minutes)}


def count_lines(directory: Path) -> int:
    """Records in one output directory (Flink's part files; hidden in-progress files skipped)."""
    total = 0
    if directory.is_dir():
        for path in directory.rglob("*"):
            if path.is_file() and not path.name.startswith("."):
                with path.open("rb") as fh:
                    total += sum(1 for line in fh if line.strip())
    return total


def count_input_lines(path: Path) -> int:
    """Input lines as Flink's text line format splits them (\\n, \\r or \\r\\n)."""
    return sum(1 for _ in read_lines(path))
