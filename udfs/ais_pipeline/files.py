"""The job's files: input lines as Flink's file source reads them, and the output directories of
a file run as the job writes them (JSON Lines or GeoParquet part files), read back and summed up into
summary.json. The plain loop, the report, the tests and the run's summary all read them here."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from ais_pipeline.anchorages import load_anchorages
from ais_pipeline.archives import COMPRESSED, input_files, parquet_file, read_lines
from ais_pipeline.geoparquet_outputs import PART_SUFFIX, count_rows, read_part
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
from ais_pipeline.rules.plain import PlainResult
from ais_pipeline.rules.ports import Anchorages
from ais_pipeline.rules.windows import hours


def read_anchorages(path: Path) -> Anchorages:
    """An anchorage list (:func:`ais_pipeline.rules.ports.load_anchorages`)."""
    return load_anchorages(path)


def input_bytes(path: Path) -> int | None:
    """The size of a run's input, when it is plain text (the progress line's whole; the job counts
    the bytes of the lines it reads against it); None when a file is compressed or Parquet: its
    lines are not known until the job has read it, and the run does not read it twice."""
    files = input_files(path)
    if any(f.name.lower().endswith(COMPRESSED) or parquet_file(f) for f in files):
        return None
    return sum(f.stat().st_size for f in files)


def write_outputs(result: PlainResult, output_dir: Path) -> None:
    """The outputs as the Flink job writes them: JSON Lines under one directory each."""
    output_dir.mkdir(parents=True, exist_ok=True)
    for name, records in result.named().items():
        target = output_dir / name
        if target.is_dir():
            shutil.rmtree(target)
        target.mkdir()
        (target / "part-0.jsonl").write_text("".join(r + "\n" for r in records))


def output_parts(directory: Path) -> list[Path]:
    """The part files of one output directory, in name order, hidden in-progress files skipped:
    its JSON Lines files, and its GeoParquet files unless the run wrote JSON Lines too (then both
    hold the same records, and the JSON Lines are read)."""
    if not directory.is_dir():
        return []
    parts = sorted(p for p in directory.rglob("*") if p.is_file() and not p.name.startswith("."))
    if any(p.name.startswith("part-") and p.suffix != PART_SUFFIX for p in parts):
        return [p for p in parts if p.suffix != PART_SUFFIX]
    return parts


def _part_records(path: Path) -> Iterator[dict[str, object]]:
    if path.suffix == PART_SUFFIX:
        yield from read_part(path, path.parent.name)
        return
    with path.open(encoding="utf-8") as fh:
        yield from (json.loads(line) for line in fh if line.strip())


def output_lines(directory: Path) -> Iterator[str]:
    """The records of one output directory as JSON lines, part file by part file in name order
    (:func:`output_parts`; a GeoParquet row as its record's JSON)."""
    for path in output_parts(directory):
        if path.suffix == PART_SUFFIX:
            yield from (json.dumps(r) for r in read_part(path, directory.name))
        else:
            with path.open(encoding="utf-8") as fh:
                yield from (line.rstrip("\n") for line in fh if line.strip())


def read_records(directory: Path) -> list[dict[str, object]]:
    """Every record of one output directory (:func:`output_parts`), JSON Lines or GeoParquet."""
    return list(iter_records(directory))


def iter_records(directory: Path) -> Iterator[dict[str, object]]:
    """The records of one output directory one at a time: what a figure over a large output
    (a million vessels' positions) reads without holding them all."""
    for path in output_parts(directory):
        yield from _part_records(path)


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


# Dead letters of the outputs' stores: the record refused, not lines of the input.
STORE_REASONS = ("dynamodb_rejected",)


def summarize(tallies: Counter[str], lines: int, output_dir: Path) -> dict[str, object]:
    """summary.json: the tallies the operators emitted for what has no output of its own, the
    outputs counted, and the input lines read."""
    totals = tally_totals(tallies)
    summary: dict[str, object] = {name: totals.get(name, 0) for name in SUMMARY_COUNTS}
    summary["lines"] = lines
    minutes = per_minute(tallies, output_dir)
    # The positions written, less those a live run withdrew (each a record, and its withdrawal).
    summary["positions_kept"] = sum(m["positions_kept"] for m in minutes.values())
    summary["bad_fixes"] = count_records(output_dir / "bad_fixes")
    # The static records of the static reports read; those made beside archive rows are apart.
    summary["static_kept"] = count_records(output_dir / "static") - int(summary["static_from_rows"])  # type: ignore[call-overload]
    reasons: Counter[str] = Counter()
    dead_lines = 0
    future: list[dict[str, object]] = []  # the dead letters the receivers' figures count
    for dead in iter_records(output_dir / "dead_letter"):
        reasons[str(dead["reason"])] += 1
        if dead["reason"] == "future_timestamp":
            future.append(dead)
        # A dead letter of the input counts its lines; one of a store (an aggregate DynamoDB refused) none.
        if dead["reason"] not in STORE_REASONS:
            dead_lines += str(dead["raw"]).count("\n") + 1
    summary["dead_letter"] = dict(sorted(reasons.items()))
    summary["dead_letter_lines"] = dead_lines
    late = Counter(str(r["window"]) for r in iter_records(output_dir / "late"))
    summary["late_records"] = {"tumbling": late.get("tumbling", 0), "sliding": late.get("sliding", 0)}
    # Vessel time too late for its tumbling window: dropped, and counted here.
    summary["late_hours"] = hours(int(totals.get(LATE_VESSEL_MS, 0)))
    summary["duplicate_ratio"] = duplicate_ratio(
        int(summary["positions_kept"]) + int(summary["bad_fixes"]),  # type: ignore[call-overload]
        int(totals.get("duplicates_exact", 0)),
        int(totals.get("duplicates_near", 0)),
    )
    summary["accounted_lines"] = accounted_lines(summary)
    summary["receivers"] = by_receiver(tallies, future)
    summary["per_minute"] = minutes
    return summary


def per_minute(tallies: Counter[str], output_dir: Path) -> dict[str, dict[str, int]]:
    """Per minute of event time: positions kept (from the output), exact and near duplicates and
    late reports (from the ``figure@minute`` tallies): the duplicate ratio over time."""
    minutes: dict[int, Counter[str]] = {}
    for name, n in tallies.items():
        figure, sep, minute = name.partition("@")
        if sep and not name.startswith(RECEIVER_TALLY):
            minutes.setdefault(int(minute), Counter())[figure] += n
    for record in iter_records(output_dir / "positions"):
        ts = parse_iso_ms(str(record["timestamp"]))
        # A live run's withdrawal of a position it wrote at once takes that position back.
        minutes.setdefault(ts - ts % 60_000, Counter())["positions_kept"] += -1 if record.get("withdrawn") else 1
    figures = ("positions_kept", "duplicates_exact", "duplicates_near", "late")
    return {iso_ms(m): {f: minutes[m].get(f, 0) for f in figures} for m in sorted(minutes)}


def count_records(directory: Path) -> int:
    """Records in one output directory (:func:`output_parts`; GeoParquet rows from the footers)."""
    total = 0
    for path in output_parts(directory):
        if path.suffix == PART_SUFFIX:
            total += count_rows(path)
        else:
            with path.open("rb") as fh:
                total += sum(1 for line in fh if line.strip())
    return total


def count_input_lines(path: Path) -> int:
    """Input lines as Flink's text line format splits them (\\n, \\r or \\r\\n)."""
    return sum(1 for _ in read_lines(path))
