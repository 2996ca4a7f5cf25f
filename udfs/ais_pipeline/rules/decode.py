"""Decode a :class:`Report` with pyais into a position or a static/voyage report (plain Python)."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass

from pyais.messages import MSG_CLASS, bit_vector

from ais_pipeline.rules.records import POSITION_TYPES, STATIC_TYPES, Report

SOG_NOT_AVAILABLE = 102.3
_TYPE27_SOG_NOT_AVAILABLE = 63
_COG_NOT_AVAILABLE = 360.0
_TYPE27_COG_NOT_AVAILABLE = 511
_HEADING_NOT_AVAILABLE = 511


class DecodeError(ValueError):
    """The payload passed the checksum but does not decode into the message its type promises."""


@dataclass(slots=True)
class Position:
    mmsi: int
    msg_type: int
    ts: int
    lat: float | None  # None when the report has no valid fix
    lon: float | None
    sog: float | None  # None when not available
    cog: float | None
    heading: int | None
    receiver: str

    @property
    def has_fix(self) -> bool:
        return self.lat is not None and self.lon is not None


@dataclass(slots=True)
class Static:
    mmsi: int
    msg_type: int
    ts: int
    kind: str  # "5", "24A" or "24B": what a newer report of the same vessel supersedes
    fields: dict[str, object]  # every decoded field but msg_type, mmsi and repeat
    receiver: str

    @property
    def content(self) -> str:
        """A canonical text of the decoded content, to compare amendments with repeats."""
        return json.dumps(self.fields, sort_keys=True, separators=(",", ":"))


def _plain(value: object) -> object:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, bytes):
        return value.hex()
    return value


def valid_fix(lat: float | None, lon: float | None) -> bool:
    """Latitude 91 / longitude 181 mean "not available"; anything outside the globe is no fix."""
    return lat is not None and lon is not None and -90.0 <= lat <= 90.0 and -180.0 <= lon <= 180.0


def _position_from_json(report: Report) -> Position:
    ok = valid_fix(report.lat, report.lon)
    sog = report.sog
    if sog is not None and (sog < 0 or sog >= SOG_NOT_AVAILABLE):
        sog = None
    return Position(
        mmsi=report.mmsi,
        msg_type=report.msg_type,
        ts=report.ts,
        lat=report.lat if ok else None,
        lon=report.lon if ok else None,
        sog=sog,
        cog=report.cog if report.cog is not None and 0 <= report.cog < 360 else None,
        heading=report.heading if report.heading is not None and 0 <= report.heading < 360 else None,
        receiver=report.receiver,
    )


def _static_from_json(report: Report) -> Static:
    """A decoded static report (a JSON dialect's type 5 or 24): its fields ride in ``static``."""
    values: dict[str, object] = json.loads(report.static) if report.static else {}
    if report.msg_type == 24:
        part = values.get("partno")
        kind = "24A" if part == 0 else "24B" if part == 1 else "24"  # gpsd merges both parts into one
    else:
        kind = str(report.msg_type)
    return Static(report.mmsi, report.msg_type, report.ts, kind, values, report.receiver)


def decode(report: Report) -> Position | Static:
    """Decode one report; raises :class:`DecodeError` when pyais cannot."""
    if not report.payload:
        if report.msg_type in STATIC_TYPES:
            return _static_from_json(report)
        return _position_from_json(report)
    try:
        bv = bit_vector(report.payload.encode("ascii"), report.fill)
        msg = MSG_CLASS[report.msg_type].from_vector(bv)
    except Exception as exc:  # pyais raises several exception types for a bad payload
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None
    if report.msg_type in POSITION_TYPES:
        lat, lon = getattr(msg, "lat", None), getattr(msg, "lon", None)
        if lat is None or lon is None:
            raise DecodeError(f"type {report.msg_type} payload too short for a position")
        speed = getattr(msg, "speed", None)
        course = getattr(msg, "course", None)
        heading = getattr(msg, "heading", None)
        if report.msg_type == 27:
            sog = None if speed is None or speed >= _TYPE27_SOG_NOT_AVAILABLE else float(speed)
            cog = None if course is None or course >= _TYPE27_COG_NOT_AVAILABLE else float(course)
        else:
            sog = None if speed is None or speed >= SOG_NOT_AVAILABLE else float(speed)
            cog = None if course is None or course >= _COG_NOT_AVAILABLE else float(course)
        ok = valid_fix(lat, lon)
        return Position(
            mmsi=report.mmsi,
            msg_type=report.msg_type,
            ts=report.ts,
            lat=float(lat) if ok else None,
            lon=float(lon) if ok else None,
            sog=sog,
            cog=cog,
            heading=None if heading is None or heading == _HEADING_NOT_AVAILABLE else int(heading),
            receiver=report.receiver,
        )
    values = {k: _plain(v) for k, v in msg.asdict().items() if k not in ("msg_type", "mmsi", "repeat")}
    if report.msg_type == 24:
        part = values.get("partno")
        if part not in (0, 1):
            raise DecodeError(f"type 24 part number {part!r} is neither A (0) nor B (1)")
        kind = "24A" if part == 0 else "24B"
    else:
        kind = str(report.msg_type)
    if any(v is None for v in values.values()):
        raise DecodeError(f"type {report.msg_type} payload too short: fields missing")
    return Static(report.mmsi, report.msg_type, report.ts, kind, values, report.receiver)
