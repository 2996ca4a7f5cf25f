"""The job's output records as JSON Lines (the fields docs/rules.md lists), record ids, and the run
summary's figures (summed from the tallies; :mod:`ais_pipeline.files` reads the output folders)."""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from ais_pipeline.rules.coverage import Coverage, GapHours
from ais_pipeline.rules.decode import Position, Static
from ais_pipeline.rules.gaps import Gap, GapRules
from ais_pipeline.rules.parse import DeadLetter
from ais_pipeline.rules.records import Report
from ais_pipeline.rules.tracks import Conflict
from ais_pipeline.rules.windows import Aggregate

OUTPUTS = (
    "positions", "static", "aggregates", "late", "dead_letter", "bad_fixes", "gaps", "port_visits", "loitering",
    "encounters",
)  # fmt: skip

# Each output's event time (a record's field): what a live run's latency of the output is measured
# from (dead letters have none).
EVENT_TIME_FIELDS = {
    "positions": "timestamp", "static": "timestamp", "aggregates": "window_end", "late": "timestamp",
    "bad_fixes": "timestamp", "gaps": "as_of", "port_visits": "as_of", "loitering": "as_of", "encounters": "as_of",
}  # fmt: skip

# Summary figures, in the order summary.json lists them. Each input line lands in exactly one of
# the line buckets; see ``accounted_lines``.
SUMMARY_COUNTS = (
    "lines",
    "positions_kept",
    "bad_fixes",
    "duplicates_exact",
    "duplicates_near",
    "static_kept",
    "static_duplicates",
    "no_position",
    "other_types",
    "not_ais",
    "skipped",
    "fragments_joined",
    "no_time",
    "stamped_on_receipt",
    "time_disagreements",
    "late",
    "static_from_rows",
)


@lru_cache(maxsize=4096)
def _iso_seconds(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")


def iso_ms(ts: int) -> str:
    """Epoch milliseconds as ISO 8601 UTC with milliseconds: ``2026-07-13T09:14:07.000Z``."""
    return f"{_iso_seconds(ts // 1000)}.{ts % 1000:03d}Z"


_json_string = json.encoder.encode_basestring  # type: ignore[attr-defined]  # C-accelerated, as json.dumps


def _dumps(obj: dict[str, object]) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _num(value: float | int | None) -> str:
    """A number as ``json.dumps`` writes it (floats by their repr), null for None."""
    return "null" if value is None else repr(value)


def record_id(kind: str, *parts: object) -> str:
    """A record's stable ``id``: a name-based UUID (version 3: the MD5 of the name, as Java's
    ``UUID.nameUUIDFromBytes``) of the output's kind and the parts that make the record what it
    is, joined by the unit separator (which no accepted line holds). The same input gives the
    same ids in every run, at any parallelism, after any restart: a store merges on them."""
    name = "\x1f".join((kind, *map(str, parts))).encode("utf-8", "surrogatepass")
    d = bytearray(hashlib.md5(name, usedforsecurity=False).digest())
    d[6] = (d[6] & 0x0F) | 0x30
    d[8] = (d[8] & 0x3F) | 0x80
    h = d.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def report_id(kind: str, report: Report, window: str = "") -> str:
    """The id of a kept position or static report (``kind`` the output), or of a late record
    (with its window kind): the report's dedup identity (MMSI and the reassembled payload with
    its fill bits, or the JSON identity) and its event time; for static and late records also
    the receiver. The first arrival of a transmission is the one kept, so in every run of the
    same input in the same order it is the same copy, with the same event time. With the time in
    it, a vessel that sends the same payload again later (moored, the same second of the minute)
    makes a new record, as the dedup TTL decides; with the receiver, a static report that comes
    back to an earlier content through another receiver's late copy (kept: its content differs
    from the last one kept) is a record of its own, as in the files."""
    if kind == "positions":
        return record_id(kind, report.mmsi, report.identity, report.ts)
    return record_id(kind, report.mmsi, report.identity, report.ts, report.receiver, window)


def _position_text(pos: Position, cell: str, record: str) -> str:
    """The position fields as JSON object members, the text ``json.dumps`` gives for
    them, written directly: positions are the most frequent output formatted in Python."""
    receiver = "null" if not pos.receiver else _json_string(pos.receiver)
    return (
        f'"id":"{record}","mmsi":{pos.mmsi},"msg_type":{pos.msg_type},"timestamp":"{iso_ms(pos.ts)}",'
        f'"lat":{_num(pos.lat)},"lon":{_num(pos.lon)},"sog":{_num(pos.sog)},"cog":{_num(pos.cog)},'
        f'"heading":{_num(pos.heading)},"receiver":{receiver},"cell":{_json_string(cell)}'
    )


def position_json(pos: Position, cell: str, record: str) -> str:
    return "{" + _position_text(pos, cell, record) + "}"


def late_json(pos: Position, cell: str, window: str, record: str) -> str:
    return "{" + _position_text(pos, cell, record) + f',"window":"{window}"}}'


def json_value(value: object) -> object:
    """A decoded field's value as every reader of the outputs takes it: a number that is not
    finite (``1e400`` in a JSON dialect reads as infinity), or an integer beyond 64 bits, is null;
    lists and objects the same inside."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, int) and not isinstance(value, bool):
        return value if -(2**63) <= value < 2**63 else None
    if isinstance(value, dict):
        return {k: json_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_value(v) for v in value]
    return value


def static_json(static: Static, record: str) -> str:
    obj: dict[str, object] = {"id": record, "mmsi": static.mmsi, "msg_type": static.msg_type}
    obj["timestamp"] = iso_ms(static.ts)
    obj.update((name, json_value(value)) for name, value in static.fields.items())
    obj["receiver"] = static.receiver or None
    return _dumps(obj)


def aggregate_json(agg: Aggregate, slide_ms: int) -> str:
    """One firing of a window as its JSON line: its kind, size, slide (``slide_ms``, the sliding
    windows'; a tumbling window's is its size) and geohash precision, which with the cell and the
    start are what a store merges it on, then its figures."""
    # The hottest output (every cell, every window end): formatted directly, the same text as
    # json.dumps gives for these field types (window and cell are plain ASCII identifiers).
    avg = "null" if agg.avg_sog is None else repr(agg.avg_sog)
    size = (agg.window_end - agg.window_start) // 1000
    slide = slide_ms // 1000 if agg.window == "sliding" else size
    by_type = ",".join(
        f'"{name}":{{"vessels":{v},"reports":{r},"vessel_hours":{h!r}}}'
        for name, v, r, h in zip(agg.type_names, agg.type_vessels, agg.type_reports, agg.type_hours, strict=True)
    )
    return (
        f'{{"window":"{agg.window}","window_seconds":{size},"slide_seconds":{slide},"precision":{len(agg.cell)},'
        f'"cell":"{agg.cell}","window_start":"{iso_ms(agg.window_start)}",'
        f'"window_end":"{iso_ms(agg.window_end)}","reports":{agg.reports},"vessels":{agg.vessels},'
        f'"avg_sog":{avg},"sog_sum":{agg.sog_sum!r},"sog_reports":{agg.sog_reports},'
        f'"vessel_hours":{agg.vessel_hours!r},"by_type":{{{by_type}}},"revision":{agg.revision}}}'
    )


def with_window_key(line: str, slide_s: int) -> str:
    """An aggregate's JSON line with its window's size, slide and geohash precision, which the
    files of earlier versions lack (the size from start and end, the precision from the cell, a
    sliding window's slide ``slide_s``); a line that has them is returned as it is."""
    if '"window_seconds":' in line:
        return line
    agg = json.loads(line)
    size = (parse_iso_ms(agg["window_end"]) - parse_iso_ms(agg["window_start"])) // 1000
    head = {
        "window": agg["window"],
        "window_seconds": size,
        "slide_seconds": slide_s if agg["window"] == "sliding" else size,
        "precision": len(agg["cell"]),
    }
    return _dumps(head | {k: v for k, v in agg.items() if k not in head})


def dead_letter_id(dead: DeadLetter) -> str:
    """A dead letter's id: its reason, receiver and raw line(s). The same bad line twice is one
    dead letter in a store that merges on ids (and two records in the files)."""
    return record_id("dead_letter", dead.reason, dead.receiver, dead.raw)


def dead_letter_json(dead: DeadLetter) -> str:
    obj: dict[str, object] = {"id": dead_letter_id(dead), "raw": dead.raw, "reason": dead.reason}
    if dead.receiver:
        obj["receiver"] = dead.receiver
    if dead.detail:
        obj["detail"] = dead.detail
    return _dumps(obj)


def withdrawn_json(position_line: str, reason: str) -> str:
    """The record that withdraws a position a live run wrote at once: the position's record with
    ``withdrawn``, the reason (``bad_fixes``: its track judged it a bad fix)."""
    return position_line[:-1] + f',"withdrawn":"{reason}"}}'


def applied(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Positions with their withdrawals applied: neither a withdrawn position nor the record that
    withdrew it."""
    withdrawn = {r["id"] for r in records if r.get("withdrawn")}
    if not withdrawn:
        return records
    return [r for r in records if r["id"] not in withdrawn]


def bad_fix_json(position_line: str, conflict: Conflict) -> str:
    """A bad fix's record: its position record's fields (its own ``id`` made from the position's),
    then what it conflicted with: the other track's fix, how far apart they were, and the speed
    going from one to the other would take (null for two fixes at the same time)."""
    obj = json.loads(position_line)
    obj["id"] = record_id("bad_fixes", obj["id"])
    knots = conflict.knots
    obj["implied_knots"] = None if knots is None else round(knots, 1)
    obj["conflicts_with"] = {
        "timestamp": iso_ms(conflict.ts),
        "lat": conflict.lat,
        "lon": conflict.lon,
        "distance_nm": round(conflict.distance_nm, 3),
        "seconds": conflict.seconds,
    }
    return _dumps(obj)


def gap_json(gap: Gap, rules: GapRules, watermark: int, start_shore_nm: float, end_shore_nm: float | None) -> str:
    """A gap's record, flat (a table's row, a Parquet row): the same ``id`` open and closed (a
    store that upserts on it ends with the closed gap), each end's time, place and distance from
    shore (the end's null while open), its hours (an open gap's: up to the watermark that revealed
    it), the positions in the 12 h before it, and the verdict."""
    end = gap.end
    return _dumps(
        {
            "id": record_id("gaps", gap.mmsi, gap.start.ts),
            "mmsi": gap.mmsi,
            "ship_type": gap.category,
            "start_time": iso_ms(gap.start.ts),
            "start_lat": gap.start.lat,
            "start_lon": gap.start.lon,
            "start_shore_nm": round(start_shore_nm, 1),
            "end_time": None if end is None else iso_ms(end.ts),
            "end_lat": None if end is None else end.lat,
            "end_lon": None if end is None else end.lon,
            "end_shore_nm": None if end_shore_nm is None else round(end_shore_nm, 1),
            "hours": round(gap.duration_ms(watermark) / 3_600_000, 3),
            "positions_before": gap.positions_before,
            "open": gap.is_open,
            "suspected_disabling": gap.suspected(rules, start_shore_nm, end_shore_nm),
            "as_of": iso_ms(watermark),
        }
    )


def gap_hours(gap_line: str) -> GapHours:
    """What the coverage needs of a gap's record: its id, vessel, start, end and ``as_of``."""
    record = json.loads(gap_line)
    end = record["end_time"]
    return GapHours(
        record["id"],
        record["mmsi"],
        parse_iso_ms(record["start_time"]),
        None if end is None else parse_iso_ms(end),
        parse_iso_ms(record["as_of"]),
    )


def with_coverage(gap_line: str, coverage: Coverage) -> str:
    """A gap's record with what the stream heard around it (:mod:`ais_pipeline.rules.coverage`):
    the 1-degree cell of its start, and the reports and distinct vessels heard there while it
    lasted (other vessels' only)."""
    record = json.loads(gap_line)
    record["coverage_cell"] = coverage.cell
    record["coverage_reports"] = coverage.reports
    record["coverage_vessels"] = coverage.vessels
    return _dumps(record)


def final_aggregates(aggregates: Iterable[dict[str, object]]) -> dict[tuple[str, str, str], dict[str, object]]:
    """The highest revision of every aggregate, by (window, cell, window start): what an upsert
    on that key keeps."""
    best: dict[tuple[str, str, str], dict[str, object]] = {}
    for a in aggregates:
        key = (str(a["window"]), str(a["cell"]), str(a["window_start"]))
        kept = best.get(key)
        if kept is None or int(kept["revision"]) < int(a["revision"]):  # type: ignore[call-overload]
            best[key] = a
    return best


RECEIVER_TALLY = "by_receiver#"


def counted_tally(figure: str, n: int) -> str:
    """One tally record that counts ``n`` for ``figure`` (the lines of a batch), where the others
    count one each."""
    return f"{figure}\t{n}"


def receiver_tally(figure: str, receiver: str) -> str:
    """The tally record of one line counted for its receiver (``clock_ahead``, ``clock_behind``,
    ``late``): per-receiver figures, besides the totals, so that a bad clock can be found."""
    return f"{RECEIVER_TALLY}{figure}#{receiver}"


def tally_totals(tallies: Counter[str]) -> Counter[str]:
    """Tallies per summary figure: ``figure@minute`` tallies add up into the figure's total;
    per-receiver tallies (:func:`receiver_tally`) are not figures of their own."""
    totals: Counter[str] = Counter()
    for name, n in tallies.items():
        if not name.startswith(RECEIVER_TALLY):
            totals[name.partition("@")[0]] += n
    return totals


RECEIVER_FIGURES = ("clock_ahead", "clock_behind", "late", "future_timestamp")
NO_RECEIVER = "(none)"  # how summary.json names lines without a receiver (no tag-block s:)


def by_receiver(tallies: Counter[str], dead: list[dict[str, object]]) -> dict[str, dict[str, int]]:
    """Per receiver, what its clock cost: lines more than the maximum clock skew ahead of or
    behind the consensus, reports late for every window, and reports dead-lettered for a time
    ahead of the wall clock. Only receivers with something to count; "(none)" for no ``s:``."""
    counts: dict[str, Counter[str]] = {}
    for name, n in tallies.items():
        if name.startswith(RECEIVER_TALLY):
            figure, _, receiver = name[len(RECEIVER_TALLY) :].partition("#")
            counts.setdefault(receiver or NO_RECEIVER, Counter())[figure] += n
    for record in dead:
        if record.get("reason") == "future_timestamp":
            receiver = str(record.get("receiver") or "") or NO_RECEIVER
            counts.setdefault(receiver, Counter())["future_timestamp"] += 1
    return {rx: {f: counts[rx].get(f, 0) for f in RECEIVER_FIGURES} for rx in sorted(counts)}


def parse_iso_ms(text: str) -> int:
    """The inverse of :func:`iso_ms`."""
    return round(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def duplicate_ratio(positions_kept: int, duplicates_exact: int, duplicates_near: int) -> float:
    """Share of position reports dropped as duplicates (exact or near), of all valid ones decided."""
    dropped = duplicates_exact + duplicates_near
    total = positions_kept + dropped
    return round(dropped / total, 4) if total else 0.0


# Every figure but the total, ``no_time``, ``stamped_on_receipt`` and ``time_disagreements`` (those
# lines are counted again where they end up), plus the lines of the dead letters.
# ``static_from_rows`` counts the static records made beside an archive row's position: not a line.
NOT_LINES = ("lines", "no_time", "stamped_on_receipt", "time_disagreements", "static_from_rows")
LINE_BUCKETS = (*(k for k in SUMMARY_COUNTS if k not in NOT_LINES), "dead_letter_lines")


def accounted_lines(summary: dict[str, object]) -> int:
    """The lines the summary accounts for, each exactly once; equals ``lines`` when none was lost."""
    return sum(int(summary[b]) for b in LINE_BUCKETS)  # type: ignore[call-overload]


def format_summary(summary: dict[str, object]) -> str:
    """The run summary as the CLI prints it."""
    lines = [
        f"lines read          {summary['lines']}",
        f"positions kept      {summary['positions_kept']}",
        *(
            [f"bad fixes           {summary['bad_fixes']} (positions a vessel could not have reached)"]
            if summary.get("bad_fixes")
            else []
        ),
        f"static kept         {summary['static_kept']}",
        *([f"static from rows    {summary['static_from_rows']}"] if summary.get("static_from_rows") else []),
        f"exact duplicates    {summary['duplicates_exact']}",
        f"near duplicates     {summary['duplicates_near']}",
        f"static duplicates   {summary['static_duplicates']}",
        f"duplicate ratio     {summary['duplicate_ratio']}",
        f"no position         {summary['no_position']}",
        f"other message types {summary['other_types']}",
        f"not AIS             {summary['not_ais']}",
        f"blank / comment     {summary['skipped']}",
        f"fragments joined    {summary['fragments_joined']}",
        f"no time of its own  {summary['no_time']}",
        *(
            [f"stamped on receipt  {summary['stamped_on_receipt']} (timed by ingestion: relay or live input)"]
            if summary.get("stamped_on_receipt")
            else []
        ),
        *(
            [f"time disagreements  {summary['time_disagreements']} (a leading timestamp 1 s or more from c:; c: used)"]
            if summary.get("time_disagreements")
            else []
        ),
        f"late (all windows)  {summary['late']}",
    ]
    late = summary["late_records"]
    assert isinstance(late, dict)
    lines.append(f"late records        tumbling {late['tumbling']}, sliding {late['sliding']}")
    if summary.get("late_hours"):
        lines.append(f"late vessel hours   {summary['late_hours']} (too late for their tumbling windows)")
    dead = summary["dead_letter"]
    assert isinstance(dead, dict)
    total = sum(dead.values())
    detail = ", ".join(f"{k} {v}" for k, v in dead.items())
    lines.append(f"dead-lettered       {total}" + (f" ({detail})" if detail else ""))
    lines.append(f"lines accounted for {summary['accounted_lines']} of {summary['lines']}")
    seconds = summary.get("seconds")
    if isinstance(seconds, (int, float)) and seconds > 0:
        rate = int(summary["lines"]) / seconds  # type: ignore[call-overload]
        lines.append(f"processing time     {seconds:.1f} s ({rate:,.0f} lines/s)")
    return "\n".join(lines)
