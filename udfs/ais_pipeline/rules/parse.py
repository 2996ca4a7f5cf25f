"""Input lines to typed records, in plain Python (no JVM): NMEA 0183 AIS sentences with optional
IEC 61162-450 tag blocks, the US Coast Guard's fields or a logger's leading timestamp.

``parse_nmea`` classifies every line exactly once: skipped (blank or comment), not AIS, another
message type, a dead letter with a reason, a single-sentence :class:`Report`, or a
:class:`Fragment` of a multipart message (JSON lines: :mod:`ais_pipeline.rules.json_lines`).
Only the sentence checksum is enforced; the tag-block checksum is not, since real feeds often
write ``*00``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from ais_pipeline.rules.prefixes import PREFIXED, NotATime, leading_time
from ais_pipeline.rules.records import POSITION_TYPES, STATIC_TYPES, TIME_UNKNOWN, Fragment, Report


@dataclass(frozen=True, slots=True)
class Skipped:
    """A line that carries no report; ``kind`` is the summary figure it counts in."""

    kind: str  # "skipped" (blank or comment), "not_ais", "other_types"


@dataclass(frozen=True, slots=True)
class DeadLetter:
    raw: str
    reason: str
    receiver: str = ""
    detail: str = ""


Parsed = Skipped | DeadLetter | Report | Fragment

SKIPPED = Skipped("skipped")
NOT_AIS = Skipped("not_ais")
OTHER_TYPE = Skipped("other_types")

TIME_DISAGREEMENTS = "time_disagreements"  # a line whose leading timestamp and c: differ
TIME_AGREEMENT_MS = 1000  # ... by a second or more
_MS_THRESHOLD = 10**12  # a tag-block time of 10^12 or more is milliseconds
MAX_LINE_CHARS = 4096  # longer lines are dead-lettered before any parsing
_MAX_PAYLOAD_CHARS = 200


def armored_value(ch: str) -> int:
    """The 6-bit value of one armored payload character, or -1 when it is not one."""
    c = ord(ch) - 48
    if 0 <= c <= 39:
        return c
    if 48 <= c <= 71:
        return c - 8
    return -1


_VALID_PAYLOAD_CHARS = frozenset(chr(i) for i in range(48, 88)) | frozenset(chr(i) for i in range(96, 120))


def payload_header(payload: str) -> tuple[int, int]:
    """Message type and MMSI from the first 7 armored characters (bits 0-5 and 8-37)."""
    value = 0
    for ch in payload[:7]:
        value = (value << 6) | armored_value(ch)
    return value >> 36, (value >> 4) & 0x3FFFFFFF


def _receiver_time(value: str) -> int | None:
    """A tag-block ``c:`` value as epoch milliseconds (seconds unless it is 10^12 or more)."""
    try:
        t = int(value)
    except ValueError:
        try:
            f = float(value)
        except ValueError:
            return None
        if not math.isfinite(f):
            return None
        t = int(f) if f >= _MS_THRESHOLD else round(f * 1000)
        return t if t >= 0 else None
    if t < 0:
        return None
    return t if t >= _MS_THRESHOLD else t * 1000


def nmea_checksum(body: str) -> int:
    """The XOR of a sentence's (or a tag block's) characters between its start mark and ``*``."""
    value = 0
    for ch in body:
        value ^= ord(ch)
    return value


def parse_nmea(line: str, notes: list[str] | None = None) -> Parsed:
    """Classify one NMEA line. Event time is not decided here: see :func:`event_time`. A line's
    figures beside its outcome (``time_disagreements``) are appended to ``notes``."""
    text = line.strip()
    if not text or text.startswith("#"):
        return SKIPPED
    if len(text) > MAX_LINE_CHARS:
        return DeadLetter(line[:MAX_LINE_CHARS], "malformed", detail=f"line longer than {MAX_LINE_CHARS} characters")
    receiver = ""
    group = ""
    ts: int | None = None
    logged: int | None = None  # a logger's leading timestamp (ais_pipeline.rules.prefixes)
    if "0" <= text[0] <= "9" or text[0] == "[":
        try:
            prefixed = leading_time(text)
        except NotATime as exc:
            return DeadLetter(line.rstrip("\r\n"), "malformed", detail=f"{PREFIXED}: {exc}")
        if prefixed is not None:
            logged, text = prefixed
    if text.startswith("\\"):
        end = text.find("\\", 1)
        if end < 0:
            return DeadLetter(line, "malformed", detail="tag block not closed")
        tag = text[1:end]
        text = text[end + 1 :]
        star = tag.rfind("*")
        if star >= 0:
            tag = tag[:star]
        for item in tag.split(","):
            key, sep, value = item.partition(":")
            if not sep:
                return DeadLetter(line, "malformed", detail=f"tag-block field without ':': {item!r}")
            if key == "c":
                ts = _receiver_time(value)
                if ts is None:
                    return DeadLetter(line, "malformed", receiver, f"tag-block time is not a number: {value!r}")
            elif key == "s":
                receiver = value
            elif key == "g":
                group = value
        if logged is None and text and "0" <= text[0] <= "9":  # a tag block before the logger's time
            try:
                prefixed = leading_time(text)
            except NotATime as exc:
                return DeadLetter(line.rstrip("\r\n"), "malformed", receiver, f"{PREFIXED}: {exc}")
            if prefixed is not None:
                logged, text = prefixed
    if not text.startswith("!"):
        if text.startswith("$") or text.startswith("\\"):
            return NOT_AIS
        return DeadLetter(line, "malformed", receiver, "not an NMEA sentence")
    star = text.find("*")
    kind = text[3:6]
    if kind not in ("VDM", "VDO"):
        return NOT_AIS
    if star < 0 or len(text) < star + 3:
        return DeadLetter(line, "malformed", receiver, "no checksum")
    try:
        expected = int(text[star + 1 : star + 3], 16)
    except ValueError:
        return DeadLetter(line, "malformed", receiver, "checksum is not hexadecimal")
    body = text[1:star]
    if nmea_checksum(body) != expected:
        return DeadLetter(line, "checksum", receiver)
    if len(text) > star + 3:  # the US Coast Guard's (NAIS) fields after the checksum
        station, received = nais_fields(text[star + 3 :])
        receiver = receiver or station
        if ts is None and received is not None:
            ts = received
    if logged is not None:  # the sentence's own time (c:, NAIS) wins; a disagreement is counted
        if ts is None:
            ts = logged
        elif abs(ts - logged) >= TIME_AGREEMENT_MS and notes is not None:
            notes.append(TIME_DISAGREEMENTS)
    parts = body.split(",")
    if len(parts) != 7:
        return DeadLetter(line, "malformed", receiver, f"{len(parts)} fields, expected 7")
    _, cnt_s, num_s, seq_id, channel, payload, fill_s = parts
    try:
        frag_cnt, frag_num, fill = int(cnt_s), int(num_s), int(fill_s)
    except ValueError:
        return DeadLetter(line, "malformed", receiver, "fragment count, number or fill bits not a number")
    if not (1 <= frag_num <= frag_cnt <= 9) or not 0 <= fill <= 5:
        return DeadLetter(line, "malformed", receiver, "fragment count, number or fill bits out of range")
    if not payload:
        return DeadLetter(line, "malformed", receiver, "empty payload")
    if len(payload) > _MAX_PAYLOAD_CHARS or not _VALID_PAYLOAD_CHARS.issuperset(payload):
        return DeadLetter(line, "malformed", receiver, "payload is not 6-bit armored text")
    if frag_cnt > 1:
        if group:
            pieces = group.split("-")
            if len(pieces) != 3:
                return DeadLetter(line, "malformed", receiver, f"tag-block group is not n-total-id: {group!r}")
            # The tag block's group id, with the sentence's own sequence id and channel: feeds
            # that reuse one id for every group (g:1-2-9999) still keep interleaved groups apart.
            key = f"g:{pieces[2]}|{seq_id}|{channel}"
        else:
            key = f"{receiver}|{seq_id}|{channel}|{frag_cnt}"
        return Fragment(
            group=key,
            frag_num=frag_num,
            frag_cnt=frag_cnt,
            payload=payload,
            fill=fill,
            receiver=receiver,
            ts=TIME_UNKNOWN if ts is None else ts,
            has_time=ts is not None,
            raw=line.rstrip("\r\n"),
        )
    return report_from_payload(payload, fill, receiver, TIME_UNKNOWN if ts is None else ts, line.rstrip("\r\n"))


def nais_fields(tail: str) -> tuple[str, int | None]:
    """The receiver and receive time of the US Coast Guard's NAIS dialect, from the fields after a
    sentence's checksum (``,d-109,S2105,t050056.00,T56.13718694,r003669946,1325394060,...``): the
    station is the ``r`` field, the time the first field after it that is an epoch (10 digits of
    seconds, or 13 of milliseconds). Without an ``r`` field there is neither; fields it does not
    know are left alone."""
    station = ""
    received: int | None = None
    for item in tail.split(","):
        if not station:
            if len(item) > 1 and item[0] == "r":
                station = item[1:]
        elif item.isascii() and item.isdigit() and len(item) in (10, 13):
            received = int(item) * 1000 if len(item) == 10 else int(item)
            break
    return station, received


def report_from_payload(payload: str, fill: int, receiver: str, ts: int, raw: str) -> Report | Skipped | DeadLetter:
    """A whole (possibly reassembled) payload as a report, or counted as another type."""
    if len(payload) < 7:
        return DeadLetter(raw, "decode", receiver, f"payload of {len(payload)} characters is too short")
    msg_type, mmsi = payload_header(payload)
    if msg_type not in POSITION_TYPES and msg_type not in STATIC_TYPES:
        return OTHER_TYPE
    return Report(
        mmsi=mmsi,
        ts=ts,
        msg_type=msg_type,
        identity=f"{payload},{fill}",
        payload=payload,
        fill=fill,
        receiver=receiver,
        raw=raw,
    )


def parse_timestamp(value: object) -> int | None:
    """ISO 8601, or epoch seconds, or epoch milliseconds (10^12 or more) as epoch ms."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        if not math.isfinite(value) or value < 0:
            return None
        return int(value) if value >= _MS_THRESHOLD else round(value * 1000)
    if isinstance(value, str):
        text = value.strip()
        try:
            return parse_timestamp(float(text))
        except ValueError:
            pass
        if text.endswith("Z") or text.endswith("z"):
            text = text[:-1] + "+00:00"
        try:
            dt = datetime.fromisoformat(text)
        except ValueError:
            return None
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)
        return round(dt.timestamp() * 1000)
    return None


# The line the job's file source reads in place of a corrupt or truncated archive (a compressed
# file that cannot be read to its end): this marker, the file's name and the cause, separated by
# the unit separator, after the lines it could read.
CORRUPT_ARCHIVE = "\x1fcorrupt_archive\x1f"


def text_problem(line: str) -> DeadLetter | None:
    """A line that is no text at all: a corrupt archive's marker, or bytes that are not UTF-8."""
    if line.startswith(CORRUPT_ARCHIVE):
        name, _, cause = line[len(CORRUPT_ARCHIVE) :].partition("\x1f")
        return DeadLetter(name, "corrupt_archive", detail=f"the archive could not be read to its end: {cause}")
    # Bytes that were not UTF-8 arrive as replacement characters (the job's file source and its
    # Kafka deserializer both decode that way); NUL never occurs in text, nor the unit separator
    # (which separates packed fields on their way through the JVM: records.py).
    if "\ufffd" in line or "\x00" in line or "\x1f" in line:
        return DeadLetter(line[:MAX_LINE_CHARS], "not_text", detail="bytes that are not UTF-8 text")
    return None


def event_time(parsed: Parsed, now_ms: int, max_clock_skew_ms: int, untimed_ms: int | None = None) -> int:
    """The timestamp the watermark generator sees for a parsed line.

    A report or first fragment without a time gets ``untimed_ms`` (a file's lane clock: see
    :class:`ais_pipeline.rules.lane.LaneParser`), else ``now_ms`` (its ingestion time). Everything
    that must not move the watermark gets ``TIME_UNKNOWN``: lines without a report, later fragments
    without a time, and reports dated more than the maximum clock skew ahead of ``now_ms`` (those
    are dead-lettered by the parse operator, which recognises them by this very value).
    """
    if isinstance(parsed, Report):
        ts, has_time = parsed.ts, parsed.ts != TIME_UNKNOWN
    elif isinstance(parsed, Fragment):
        ts, has_time = parsed.ts, parsed.has_time
        if not has_time and parsed.frag_num > 1:
            return TIME_UNKNOWN
    else:
        return TIME_UNKNOWN
    if not has_time:
        return now_ms if untimed_ms is None else untimed_ms
    if ts > now_ms + max_clock_skew_ms:
        return TIME_UNKNOWN
    return ts


@dataclass(slots=True)
class Routed:
    """Where one parsed line goes: a report or fragment with its event time, or a dead letter,
    plus the tally records it makes."""

    record: Report | Fragment | None = None
    dead: DeadLetter | None = None
    tallies: tuple[str, ...] = ()


def route_line(parsed: Parsed, assigned: int) -> Routed:
    """Decide a parsed line, given the timestamp the watermark generator got for it (see
    :func:`event_time`)."""
    if isinstance(parsed, Skipped):
        return Routed(tallies=(parsed.kind,))
    if isinstance(parsed, DeadLetter):
        return Routed(dead=parsed)
    if is_future(parsed, assigned):
        return Routed(dead=future_timestamp(parsed))
    if isinstance(parsed, Report):
        no_time = parsed.ts == TIME_UNKNOWN
        ts = assigned if no_time else parsed.ts
        return Routed(replace(parsed, ts=ts) if no_time else parsed, tallies=("no_time",) if no_time else ())
    first = parsed.frag_num == 1
    tallies = ("no_time",) if first and not parsed.has_time else ()
    if first and not parsed.has_time:
        return Routed(replace(parsed, ts=assigned), tallies=tallies)
    return Routed(parsed, tallies=tallies)


def future_timestamp(parsed: Report | Fragment) -> DeadLetter:
    return DeadLetter(parsed.raw, "future_timestamp", parsed.receiver, "event time ahead of the wall clock")


def is_future(parsed: Report | Fragment, assigned_ts: int) -> bool:
    """True when :func:`event_time` rejected the line's own time as too far ahead."""
    has_time = parsed.has_time if isinstance(parsed, Fragment) else parsed.ts != TIME_UNKNOWN
    return has_time and assigned_ts == TIME_UNKNOWN
