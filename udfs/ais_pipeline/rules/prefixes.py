"""Times that loggers write beside NMEA sentences rather than in a tag block (plain Python).

- **A leading timestamp**: a receiver's time, a separator (space, tab, comma or semicolon), then
  the sentence, as loggers write lines when they pipe a receiver through ``ts``, ``socat`` or
  their own code (``1550303566167726840 !AIVDM,...``), or in brackets (``[2024-07-19
  08:45:27.141] !AIVDM,...``). The time is epoch seconds, milliseconds,
  microseconds or nanoseconds, told by the size of its whole part (up to 11 digits, 12-14,
  15-17, 18-20), with a fraction or not; or ISO 8601 / ``YYYY-MM-DD HH:MM:SS[.fff]``, UTC unless
  it names its offset. A number that gives no time between 1990 and 2100 is not a time: such a
  line is a dead letter naming the dialect.
- **Gatehouse** ``$PGHP,1,<year>,<month>,<day>,<hour>,<minute>,<second>,<ms>,...*hh``: a time
  sentence that stamps the AIS sentence after it.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

PREFIXED = "timestamp-prefixed NMEA"
GATEHOUSE = "Gatehouse $PGHP"

_EARLIEST_MS = 631_152_000_000  # 1990-01-01
_LATEST_MS = 4_102_444_800_000  # 2100-01-01
# The leading time, its separator, and where the sentence (or its tag block) starts.
_TIME = r"(?P<time>\d+(?:\.\d+)?|\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)"
_LEADING = re.compile(_TIME + r"[ \t]*[ \t,;][ \t]*(?=[!\\$])")
_BRACKETED = re.compile(r"\[" + _TIME + r"\][ \t,;]*(?=[!\\$])")


class NotATime(ValueError):
    """A leading field that looks like a time and is not one."""


def _epoch_ms(text: str) -> int:
    whole, _, fraction = text.partition(".")
    digits = len(whole.lstrip("0")) or 1
    scale = 1 if digits <= 11 else 1_000 if digits <= 14 else 1_000_000 if digits <= 17 else 1_000_000_000
    if digits > 20:
        raise NotATime(f"leading number {text[:24]!r} is not an epoch time")
    value = int(whole) * 1000 // scale
    if fraction:
        value += int(fraction[:9].ljust(9, "0")) * 1000 // 1_000_000_000 // scale
    if not _EARLIEST_MS <= value < _LATEST_MS:
        raise NotATime(f"leading number {text[:24]!r} is no time between 1990 and 2100 in s, ms, us or ns")
    return value


def _iso_ms(text: str) -> int:
    normal = text.replace(",", ".")
    if normal.endswith("Z"):
        normal = normal[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(normal)
    except ValueError:
        raise NotATime(f"leading time {text!r} is not a date and time") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return round(dt.timestamp() * 1000)


def leading_time(text: str) -> tuple[int, str] | None:
    """``text``'s leading timestamp as epoch ms and the rest of the line after its separator, or
    None when the line does not start with a time and a separator before a sentence. Raises
    :class:`NotATime` for a leading field that is shaped like a time but is not one."""
    match = (_BRACKETED if text.startswith("[") else _LEADING).match(text)
    if match is None:
        return None
    when = match.group("time")
    ts = _iso_ms(when) if "-" in when else _epoch_ms(when)
    return ts, text[match.end() :]


def zda_time(text: str) -> int | None:
    """The time of an NMEA ``$--ZDA`` sentence (a receiver's GPS: UTC time, day, month, year),
    epoch ms, or None when the line is not one, its checksum is wrong or its fields are not a time."""
    if len(text) < 7 or text[0] != "$" or text[3:6] != "ZDA":
        return None
    star = text.find("*")
    if star < 0:
        return None
    body = text[1:star]
    value = 0
    for ch in body:
        value ^= ord(ch)
    try:
        if int(text[star + 1 : star + 3], 16) != value:
            return None
        fields = body.split(",")
        clock, day, month, year = fields[1], int(fields[2]), int(fields[3]), int(fields[4])
        hour, minute, seconds = int(clock[0:2]), int(clock[2:4]), float(clock[4:])
        start = datetime(year, month, day, hour, minute, tzinfo=UTC).timestamp()
    except (ValueError, IndexError):
        return None
    return round((start + seconds) * 1000)


def gatehouse_time(text: str) -> int | None:
    """The time of a ``$PGHP,1,...`` sentence (type 1 carries the date and time), epoch ms, or
    None when it is another PGHP sentence or its fields are not a time."""
    star = text.find("*")
    fields = (text[:star] if star >= 0 else text).split(",")
    if len(fields) < 9 or fields[1] != "1":
        return None
    try:
        year, month, day, hour, minute, second, ms = (int(f) for f in fields[2:9])
        return round(datetime(year, month, day, hour, minute, second, ms * 1000, tzinfo=UTC).timestamp() * 1000)
    except ValueError:
        return None
