"""One input lane's lines, up to the watermark: parse, event time, multipart reassembly.

A lane is one ordered stream of lines (a file run; one Kafka source subtask). Its lines are
decided in input order by one :class:`LaneParser`: every line is counted, dead-lettered, or gives
an :class:`Entry` for the watermark stage, which stamps the entry's report with the watermark in
force before the line and then moves the watermark with the line's time
(:mod:`ais_pipeline.rules.watermarks`). Multipart groups are reassembled here, in the lane's
order, so a vessel's reassembled reports keep their place among its single-sentence ones (a
static report amended twice reaches the dedup rules in the order it was sent, at any
parallelism).

The Flink parse operator and the plain loop both run this class; they differ only in where the
pending groups are kept (:class:`GroupStores`) and in the clock they pass for deadlines.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Protocol

from ais_pipeline.rules.csv_rows import CSV_FORMATS, Layout, layout_of_header, parse_row
from ais_pipeline.rules.json_lines import JSON_DIALECTS, parse_json
from ais_pipeline.rules.multipart import DictGroupStore, GroupStore, MultipartAssembler
from ais_pipeline.rules.parse import (
    NOT_AIS,
    SKIPPED,
    DeadLetter,
    Parsed,
    Skipped,
    event_time,
    parse_nmea,
    route_line,
    text_problem,
)
from ais_pipeline.rules.prefixes import gatehouse_time, zda_time
from ais_pipeline.rules.records import TIME_UNKNOWN, Fragment, Report

AUTO = "auto"
NMEA = "nmea"
JSON = "json"
INPUT_FORMATS = (AUTO, NMEA, JSON, *JSON_DIALECTS, *CSV_FORMATS)


def parse_line(line: str, input_format: str, notes: list[str] | None = None) -> Parsed:
    """One line of NMEA or of a JSON dialect, without a lane's state (CSV rows need the header
    before them, a Gatehouse time the sentence after it: see :class:`LaneParser`)."""
    problem = text_problem(line)
    if problem is not None:
        return problem
    if input_format == NMEA:
        return parse_nmea(line, notes)
    return parse_json(line, input_format)


@dataclass(slots=True)
class Entry:
    """What one line gives the watermark stage: the event time it moves its source's clock with
    (TIME_UNKNOWN: none), its source (the line's receiver, "" without one), and the report it
    completes, if any (a single-sentence report, or a multipart group's last fragment)."""

    assigned: int
    source: str
    report: Report | None


class GroupStores(Protocol):
    """The pending multipart groups of a lane, by group key."""

    def store(self, key: str) -> GroupStore: ...
    def pending(self) -> Iterable[str]: ...


class DictGroupStores:
    """:class:`GroupStores` in a dict, for the plain loop and tests."""

    def __init__(self) -> None:
        self.groups: dict[str, DictGroupStore] = {}

    def store(self, key: str) -> GroupStore:
        return _DictGroup(self, key)

    def pending(self) -> Iterable[str]:
        return sorted(self.groups)


class _DictGroup:
    __slots__ = ("_key", "_stores")

    def __init__(self, stores: DictGroupStores, key: str) -> None:
        self._stores, self._key = stores, key

    def get(self):  # type: ignore[no-untyped-def]
        group = self._stores.groups.get(self._key)
        return None if group is None else group.group

    def put(self, group) -> None:  # type: ignore[no-untyped-def]
        self._stores.groups.setdefault(self._key, DictGroupStore()).put(group)

    def clear(self) -> None:
        self._stores.groups.pop(self._key, None)


class LaneParser:
    """Decides one lane's lines in order. ``tallies`` and ``dead`` collect what the lines
    counted and dead-lettered since the caller last emptied them."""

    def __init__(
        self, input_format: str, max_clock_skew_ms: int, multipart_timeout_ms: int, untimed_ms: int | None = None
    ) -> None:
        self.input_format = input_format
        # A file's lane (``untimed_ms`` given): a line without a time of its own takes the time the
        # lane told last (``told``: a line's own time, or a receiver's GPS time in a $--ZDA
        # sentence), and before the lane's first, ``untimed_ms`` (the first time the input tells, or
        # its files' time: :func:`ais_pipeline.archives.input_time`). None: the ingestion time (a
        # Kafka or Kinesis record's line, read as it comes).
        self.untimed_ms = untimed_ms
        self.told = TIME_UNKNOWN
        self.tells = 0  # how many lines told a time: a caller that feeds times too knows the latest
        # The CSV layout of the rows being read (from the last header line, kept as its text so
        # that a restored operator can rebuild it: csv_state) and the line number in its file of
        # the line being read (the header is line 1).
        self.layout: Layout | None = None
        self.header = ""
        self.line_number = 0
        # A Gatehouse $PGHP sentence's time, until the AIS message after it takes it.
        self.gatehouse = TIME_UNKNOWN
        self.max_clock_skew_ms = max_clock_skew_ms
        self.assembler = MultipartAssembler(multipart_timeout_ms)
        self.tallies: list[str] = []
        self.dead: list[DeadLetter] = []

    def line(self, line: str, now_ms: int, groups: GroupStores) -> Entry | None:
        """One line, read at wall-clock ``now_ms``: its entry for the watermark stage, or None
        when it gives none (counted or dead-lettered, and no time to move a clock with)."""
        parsed = self.parse(line)
        untimed = self.untimed_ms
        if untimed is None:
            assigned = event_time(parsed, now_ms, self.max_clock_skew_ms)
        else:
            assigned = event_time(
                parsed, now_ms, self.max_clock_skew_ms, untimed if self.told == TIME_UNKNOWN else self.told
            )
            if assigned != TIME_UNKNOWN and _has_own_time(parsed):
                self.told = assigned
                self.tells += 1
        routed = route_line(parsed, assigned)
        if routed.tallies:
            self.tallies.extend(routed.tallies)
        if routed.dead is not None:
            self.dead.append(routed.dead)
            return None
        record = routed.record
        if isinstance(record, Report):
            return Entry(assigned, record.receiver, record)
        if isinstance(record, Fragment):
            report = self._fragment(record, now_ms, groups)
            if report is None and assigned == TIME_UNKNOWN:
                return None
            return Entry(assigned, record.receiver, report)
        return None

    def parse(self, line: str) -> Parsed:
        """Classify one line in the lane's format. ``auto`` tells each line's format by its look:
        NMEA (``!``, ``\\``, ``$``, a leading timestamp), JSON (``{``, its dialect by its keys), a
        CSV archive's header (NOAA, DMA), then that archive's rows until another header."""
        parsed = self._parse(line)
        if self.gatehouse != TIME_UNKNOWN and isinstance(parsed, (Report, Fragment)):
            parsed = self._gatehouse(parsed)
        return parsed

    def _parse(self, line: str) -> Parsed:
        fmt = self.input_format
        if fmt == NMEA:
            return self._nmea(line)
        if fmt == JSON or fmt in JSON_DIALECTS:
            return parse_line(line, fmt)
        problem = text_problem(line)
        if problem is not None:
            return problem
        layout = layout_of_header(line)
        if layout is not None and fmt in (AUTO, layout.format):
            self.layout, self.header, self.line_number = layout, line, 1
            return SKIPPED  # a header, counted with the comments
        if self.layout is not None:
            self.line_number += 1
        text = line.strip()
        if fmt == AUTO and (not text or text[0] in "!\\$#" or self.layout is None):
            return parse_json(line) if text.startswith("{") else self._nmea(line)
        if fmt == AUTO and text.startswith("{"):
            return parse_json(line)
        if not text:
            return SKIPPED
        if self.layout is None:
            return DeadLetter(line.rstrip("\r\n"), "malformed", detail=f"a row before any {fmt} header line")
        return parse_row(line, self.layout, self.line_number)

    def _nmea(self, line: str) -> Parsed:
        problem = text_problem(line)
        if problem is not None:
            return problem
        parsed = parse_nmea(line, self.tallies)
        if parsed is NOT_AIS:
            text = line.strip()
            if text.startswith("$PGHP,"):
                ts = gatehouse_time(text)
                if ts is not None:
                    self.gatehouse = ts  # stamps the next AIS message; a later one replaces it
            elif self.untimed_ms is not None and text[3:6] == "ZDA":
                ts = zda_time(text)
                if ts is not None:  # the receiver's GPS time: the lane's clock from here on
                    self.told = ts
                    self.tells += 1
        return parsed

    def _gatehouse(self, parsed: Report | Fragment) -> Parsed:
        """A Gatehouse time stamps the next AIS message (its first sentence) that has no time of its
        own, and is used up by it."""
        if isinstance(parsed, Fragment):
            if parsed.frag_num != 1:
                return parsed
            stamped: Parsed = parsed if parsed.has_time else replace(parsed, ts=self.gatehouse, has_time=True)
        else:
            stamped = parsed if parsed.ts != TIME_UNKNOWN else replace(parsed, ts=self.gatehouse)
        self.gatehouse = TIME_UNKNOWN
        return stamped

    def told_by(self, ts: int) -> None:
        """A line decided elsewhere (Java's plain sentences) told the lane a time."""
        self.told = ts
        self.tells += 1

    def csv_state(self) -> tuple[str, int]:
        """What a restored parser needs of the CSV file being read: its header line and the line
        number reached ("" and 0 outside a CSV file). (And ``gatehouse``: a Gatehouse time
        waiting for its AIS message, TIME_UNKNOWN for none.)"""
        return self.header, self.line_number

    def restore_csv(self, header: str, line_number: int) -> None:
        self.layout = layout_of_header(header) if header else None
        self.header = header if self.layout is not None else ""
        self.line_number = line_number if self.layout is not None else 0

    def _fragment(self, frag: Fragment, now_ms: int, groups: GroupStores) -> Report | None:
        step = self.assembler.on_fragment(groups.store(frag.group), frag, now_ms)
        if step.dead is not None:
            self.dead.append(step.dead)
        message = step.message
        if message is None:
            return None
        self.tallies.extend(["fragments_joined"] * step.joined)
        if isinstance(message, Report):
            return message
        if isinstance(message, Skipped):
            self.tallies.append(message.kind)
        else:
            self.dead.append(message)
        return None

    def expire(self, groups: GroupStores, keys: Iterable[str], end_of_input: bool) -> None:
        """Dead-letter the pending groups ``keys`` (their deadline passed, or the input ended)."""
        for key in list(keys):
            dead = self.assembler.expire(groups.store(key), end_of_input)
            if dead is not None:
                self.dead.append(dead)


def _has_own_time(parsed: Parsed) -> bool:
    """Whether a parsed report or first fragment carries a time of its own (it tells its lane one)."""
    if isinstance(parsed, Report):
        return parsed.ts != TIME_UNKNOWN
    return isinstance(parsed, Fragment) and parsed.has_time
