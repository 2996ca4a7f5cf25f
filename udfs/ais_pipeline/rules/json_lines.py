"""JSON lines of every dialect the job reads, told apart by their keys (plain Python).

- **The job's own JSON**: ``mmsi``, ``timestamp``, ``lat``, ``lon``, optional ``sog``, ``cog``,
  ``heading``, ``msg_type``, ``rx_id``.
- **AIS-catcher** (``"class":"AIS"``, ``"device":"AIS-catcher"``): an object that carries its raw
  sentences in ``nmea`` (``JSON_NMEA``, and ``JSON_FULL`` when it lists them) is read from those
  sentences, with ``toa``, ``rxuxtime`` or ``rxtime`` as their time and ``station_id`` as their
  receiver, as a tag block would give them: its identity is the payload, as for NMEA. One without
  sentences (``JSON_FULL`` without ``nmea``) is read from its decoded fields, as gpsd's are.
- **gpsd** (``"class":"AIS"``, ``scaled`` true or false): decoded fields, no time (the ingestion
  time), ``device`` as the receiver; its other reports (``TPV``, ``SKY``, ...) are not AIS.
  Unscaled values are converted: latitude and longitude in 1/10000 minute (type 27: 1/10
  minute), speed in 1/10 knot, course in 1/10 degree, draught in decimetres.
- **aisstream.io** (``MessageType``, ``Message``, ``MetaData``): ``Message.<MessageType>`` holds
  the decoded fields (``UserID``, ``Latitude``, ``Longitude``, ``Sog``, ``Cog``, ``TrueHeading``),
  ``MetaData.time_utc`` the time.
- **Global Fishing Watch's gpsdio** (``ssvid``): ``ssvid`` (the MMSI, a number or a string),
  ``timestamp``, ``type`` (an integer, or the text GFW's pipelines write today: ``"AIS.1"``),
  ``lat``, ``lon``, ``speed``, ``course``, ``heading``, and ``receiver`` (else ``receiver_type``)
  as the receiver; ``NaN`` is no value. A static message's record (``AIS.5``, ``AIS.24``) is a
  static report of the fields it carries: ``shipname``, ``callsign``, ``destination``, ``imo``,
  ``shiptype`` (a name, as the Danish archive's: "Not available" is none), ``length`` and
  ``width`` (0 is none).

Decoded reports keep the JSON identity rule: MMSI, time and position at 5 decimals. Static and
voyage reports (types 5 and 24) carry their fields in :attr:`Report.static`, under the names the
NMEA decoder gives them (``shipname``, ``callsign``, ``imo``, ``ship_type``, ``to_bow``, ...).
"Not available" values (speed 102.3, course 360, heading 511, latitude 91, longitude 181) are
no value, as in NMEA.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import UTC, datetime

from ais_pipeline.rules.parse import (
    NOT_AIS,
    OTHER_TYPE,
    DeadLetter,
    Parsed,
    Skipped,
    parse_nmea,
    parse_timestamp,
    report_from_payload,
)
from ais_pipeline.rules.records import POSITION_TYPES, STATIC_TYPES, TIME_UNKNOWN, Fragment, Report

OWN = "json"
AISCATCHER = "aiscatcher"
GPSD = "gpsd"
AISSTREAM = "aisstream"
GPSDIO = "gpsdio"
JSON_DIALECTS = (AISCATCHER, GPSD, AISSTREAM, GPSDIO)
NAMES = {
    OWN: "JSON",
    AISCATCHER: "AIS-catcher JSON",
    GPSD: "gpsd JSON",
    AISSTREAM: "aisstream.io JSON",
    GPSDIO: "gpsdio JSON",
}
MAX_LINE_CHARS = 4096
# The classes of gpsd's JSON reports (gpsd_json(5)): AIS, and the others, which are not AIS.
GPSD_CLASSES = frozenset(
    {"AIS", "TPV", "SKY", "GST", "ATT", "IMU", "TOFF", "PPS", "OSC", "VERSION", "DEVICES", "DEVICE", "WATCH",
     "POLL", "ERROR", "RAW", "RTCM2", "RTCM3", "SUBFRAME", "GPSD"}
)  # fmt: skip


class _Bad(ValueError):
    """A field of a known dialect that cannot be read; the message says which."""


def dialect_of(obj: dict[str, object]) -> str | None:
    """The dialect whose keys ``obj`` has, or None."""
    if "MessageType" in obj and "Message" in obj:
        return AISSTREAM
    if "ssvid" in obj:
        return GPSDIO
    if "nmea" in obj or obj.get("device") == "AIS-catcher":
        return AISCATCHER
    if obj.get("class") in GPSD_CLASSES:  # gpsd's AIS, and its TPV, SKY, VERSION, ... reports
        return GPSD
    if "mmsi" in obj:
        return OWN
    return None


def parse_json(line: str, dialect: str = OWN) -> Parsed:
    """Classify one JSON line. ``dialect`` is ``json`` (every dialect, told by its keys) or one
    dialect's name (a line of another is a dead letter)."""
    text = line.strip()
    if not text or text.startswith("#"):
        return Skipped("skipped")
    raw = line.rstrip("\r\n")
    if len(text) > MAX_LINE_CHARS:
        return DeadLetter(raw[:MAX_LINE_CHARS], "bad_json", detail=f"line longer than {MAX_LINE_CHARS} characters")
    try:
        obj = json.loads(text)
    except ValueError as exc:
        return DeadLetter(raw, "bad_json", detail=str(exc))
    if not isinstance(obj, dict):
        return DeadLetter(raw, "bad_json", detail="not a JSON object")
    found = dialect_of(obj)
    if found is None:
        keys = ", ".join(sorted(str(k) for k in obj)[:8])
        return DeadLetter(raw, "bad_json", detail=f"JSON of no known dialect (keys: {keys})")
    if dialect != OWN and found != dialect:
        return DeadLetter(raw, "bad_json", detail=f"not {NAMES[dialect]} ({NAMES[found]} by its keys)")
    try:
        return _READERS[found](obj, raw)
    except _Bad as exc:
        return DeadLetter(raw, "malformed", _receiver_of(obj, found), f"{NAMES[found]}: {exc}")


# -- values ----------------------------------------------------------------------------------------


def _number(value: object) -> float | None:
    """A JSON number (or a number in a string) as a float; None for null, text and non-finite."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            f = float(value)
        except ValueError:
            return None
        return f if math.isfinite(f) else None
    return None


def _coordinate(obj: dict[str, object], key: str) -> float | None:
    """A latitude or longitude: null or missing is no fix; anything else must be a number."""
    value = obj.get(key)
    if value is None:
        return None
    number = _number(value)
    if number is None:
        raise _Bad(f"{key} is not a number: {value!r}"[:120])
    return number


def _mmsi(value: object, key: str = "mmsi") -> int:
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 999_999_999:
        raise _Bad(f"{key} missing or not a 9-digit number")
    return value


def _type(value: object, default: int, key: str) -> int:
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Bad(f"{key} is not an integer")
    return value


def _text(value: object) -> str | None:
    """A text field as AIS pads it: '@' and spaces trimmed; None when nothing is left."""
    if not isinstance(value, str):
        return None
    text = value.replace("@", " ").strip()
    return text or None


def _identity(mmsi: int, ts: int, lat: float | None, lon: float | None) -> str:
    rounded = ("-" if v is None else str(round(v, 5)) for v in (lat, lon))
    return f"{mmsi}|{ts}|{'|'.join(rounded)}"


def _position(
    raw: str,
    mmsi: int,
    ts: int,
    msg_type: int,
    receiver: str,
    lat: float | None,
    lon: float | None,
    sog: float | None,
    cog: float | None,
    heading: float | None,
) -> Report:
    if msg_type == 27:  # long-range: speed in whole knots (63 is none), course in degrees (511)
        sog = None if sog is not None and sog >= 63 else sog
    return Report(
        mmsi=mmsi,
        ts=ts,
        msg_type=msg_type,
        identity=_identity(mmsi, ts, lat, lon),
        payload="",
        fill=0,
        receiver=receiver,
        raw=raw,
        lat=lat,
        lon=lon,
        sog=sog,
        cog=cog,
        heading=None if heading is None else int(heading),
    )


def _static(raw: str, mmsi: int, ts: int, msg_type: int, receiver: str, fields: dict[str, object]) -> Report:
    kept = {k: v for k, v in fields.items() if v is not None}
    return Report(
        mmsi=mmsi,
        ts=ts,
        msg_type=msg_type,
        identity=f"{mmsi}|{ts}|static",
        payload="",
        fill=0,
        receiver=receiver,
        raw=raw,
        static=json.dumps(kept, sort_keys=True, separators=(",", ":")),
    )


def _receiver_of(obj: dict[str, object], dialect: str) -> str:
    """AIS-catcher's ``station_id`` (0 is none); gpsd's ``device`` (its input: a serial port, a
    network feed)."""
    station = obj.get("station_id")
    if isinstance(station, (int, str)) and not isinstance(station, bool) and str(station) not in ("", "0"):
        return str(station)
    device = obj.get("device")
    return device if dialect == GPSD and isinstance(device, str) else ""


# -- the job's own JSON and gpsdio --------------------------------------------------------------


def _own(obj: dict[str, object], raw: str) -> Parsed:
    receiver = str(obj.get("rx_id") or "")
    if "\x1f" in receiver or "\x00" in receiver:
        raise _Bad("rx_id holds control characters")
    mmsi = _mmsi(obj.get("mmsi"))
    ts = parse_timestamp(obj.get("timestamp"))
    if ts is None:
        raise _Bad("timestamp missing or not ISO 8601 / epoch")
    lat, lon = _coordinate(obj, "lat"), _coordinate(obj, "lon")
    msg_type = _type(obj.get("msg_type", 1), 1, "msg_type")
    if msg_type not in POSITION_TYPES:
        return OTHER_TYPE
    sog, cog, heading = _number(obj.get("sog")), _number(obj.get("cog")), _number(obj.get("heading"))
    return _position(raw, mmsi, ts, msg_type, receiver, lat, lon, sog, cog, heading)


def _gfw_type(value: object) -> int:
    """gpsdio's message type: an integer, or the text GFW's pipelines write (``"AIS.1"``)."""
    if isinstance(value, str):
        kind, dot, number = value.partition(".")
        if dot and kind == "AIS" and number.isascii() and number.isdigit():
            return int(number)
        raise _Bad(f"type is neither an integer nor AIS.<n>: {value!r}"[:120])
    return _type(value, 1, "type")


def _gfw_number(obj: dict[str, object], key: str) -> float | None:
    """A number of a gpsdio record: null, missing or NaN (GFW's absent value) is none."""
    value = obj.get(key)
    if isinstance(value, float) and math.isnan(value):
        return None
    return _coordinate(obj, key)


def _gfw_receiver(obj: dict[str, object]) -> str:
    """The receiver GFW names (``receiver``, else ``receiver_type``: terrestrial, satellite)."""
    for key in ("receiver", "receiver_type"):
        value = obj.get(key)
        if isinstance(value, str) and value.strip():
            if "\x1f" in value or "\x00" in value:
                raise _Bad(f"{key} holds control characters")
            return value.strip()
    return ""


def _gfw_dimension(value: float | None) -> int | float | None:
    """A length or width: 0 is not available, as in AIS."""
    if value is None or value <= 0:
        return None
    return int(value) if value.is_integer() else value


def _gpsdio(obj: dict[str, object], raw: str) -> Parsed:
    mmsi = _mmsi(obj.get("ssvid"), "ssvid")
    ts = parse_timestamp(obj.get("timestamp"))
    if ts is None:
        raise _Bad("timestamp missing or not ISO 8601 / epoch")
    msg_type = _gfw_type(obj.get("type"))
    receiver = _gfw_receiver(obj)
    if msg_type in STATIC_TYPES:  # GFW's records carry a static message's fields beside it
        ship_type = _text(obj.get("shiptype"))
        imo = _text(str(obj["imo"]) if isinstance(obj.get("imo"), int) else obj.get("imo"))
        fields: dict[str, object] = {
            "shipname": _text(obj.get("shipname")),
            "callsign": _text(obj.get("callsign")),
            "destination": _text(obj.get("destination")),
            "imo": int(imo) if imo and imo.isascii() and imo.isdigit() and int(imo) else None,
            "ship_type": None if ship_type is None or ship_type.lower() == "not available" else ship_type,
            "length": _gfw_dimension(_gfw_number(obj, "length")),
            "width": _gfw_dimension(_gfw_number(obj, "width")),
        }
        if msg_type == 24:
            fields["partno"] = 0 if fields["shipname"] is not None else 1
        return _static(raw, mmsi, ts, msg_type, receiver, fields)
    if msg_type not in POSITION_TYPES:
        return OTHER_TYPE
    lat, lon = _gfw_number(obj, "lat"), _gfw_number(obj, "lon")
    sog, cog, heading = _number(obj.get("speed")), _number(obj.get("course")), _number(obj.get("heading"))
    return _position(raw, mmsi, ts, msg_type, receiver, lat, lon, sog, cog, heading)


# -- AIS-catcher and gpsd ("class": "AIS") ----------------------------------------------------


def _catcher_time(obj: dict[str, object]) -> int:
    """``toa`` (the upstream time), else ``rxuxtime`` (the host's, epoch s), else ``rxtime``
    (``YYYYMMDDHHMMSS`` UTC); TIME_UNKNOWN without any."""
    for key in ("toa", "rxuxtime"):
        if key in obj:
            value = _number(obj[key])
            if value is None or value < 0:
                raise _Bad(f"{key} is not an epoch time: {obj[key]!r}"[:120])
            return round(value * 1000) if value < 10**11 else round(value)
    rxtime = obj.get("rxtime")
    if rxtime is not None:
        try:
            return round(datetime.strptime(str(rxtime), "%Y%m%d%H%M%S").replace(tzinfo=UTC).timestamp() * 1000)
        except ValueError:
            raise _Bad(f"rxtime is not YYYYMMDDHHMMSS: {rxtime!r}"[:120]) from None
    return TIME_UNKNOWN


def _aiscatcher(obj: dict[str, object], raw: str) -> Parsed:
    sentences = obj.get("nmea")
    if sentences is None:
        return _class_ais(obj, raw, AISCATCHER)
    if isinstance(sentences, str):
        sentences = [sentences]
    if not isinstance(sentences, list) or not sentences or not all(isinstance(s, str) for s in sentences):
        raise _Bad("nmea is not a list of sentences")
    ts = _catcher_time(obj)
    receiver = _receiver_of(obj, AISCATCHER)
    total = len(sentences)
    parts: list[Fragment] = []
    for i, sentence in enumerate(sentences, 1):
        parsed = parse_nmea(sentence)
        where = f"sentence {i} of {total}"
        if isinstance(parsed, DeadLetter):
            detail = f"{NAMES[AISCATCHER]}: {where}: {parsed.detail or parsed.reason}"
            return DeadLetter(raw, parsed.reason, receiver, detail)
        if isinstance(parsed, Skipped):
            if total == 1:
                return parsed
            raise _Bad(f"{where} is not an AIS sentence")
        if isinstance(parsed, Report):
            if total != 1:
                raise _Bad(f"{where} is a whole message among {total} sentences")
            own_time = parsed.ts != TIME_UNKNOWN
            parsed.ts = parsed.ts if own_time else ts
            parsed.receiver = parsed.receiver or receiver
            parsed.raw = raw
            return parsed
        parts.append(parsed)
    first = parts[0]
    if [p.frag_num for p in parts] != list(range(1, total + 1)) or any(p.frag_cnt != total for p in parts):
        raise _Bad(f"its {total} sentences are not the fragments 1-{total} of one message")
    payload = "".join(p.payload for p in parts)
    when = first.ts if first.has_time else ts
    return report_from_payload(payload, parts[-1].fill, first.receiver or receiver, when, raw)


def _class_ais(obj: dict[str, object], raw: str, dialect: str) -> Parsed:
    """A decoded ``"class":"AIS"`` object: gpsd's, scaled or not, or AIS-catcher's JSON_FULL."""
    mmsi = _mmsi(obj.get("mmsi"))
    msg_type = _type(obj.get("type"), -1, "type")
    if msg_type < 0:
        raise _Bad("type missing")
    ts = _catcher_time(obj) if dialect == AISCATCHER else TIME_UNKNOWN
    receiver = _receiver_of(obj, dialect)
    scaled = obj.get("scaled", True) is not False
    if msg_type in POSITION_TYPES:
        lat, lon = _coordinate(obj, "lat"), _coordinate(obj, "lon")
        sog, cog, heading = _number(obj.get("speed")), _number(obj.get("course")), _number(obj.get("heading"))
        if not scaled:
            per_degree = 600.0 if msg_type == 27 else 600_000.0  # rounded as the NMEA decoder rounds
            lat = None if lat is None else round(lat / per_degree, 6)
            lon = None if lon is None else round(lon / per_degree, 6)
            if msg_type != 27:
                sog = None if sog is None else sog / 10
                cog = None if cog is None else cog / 10
        return _position(raw, mmsi, ts, msg_type, receiver, lat, lon, sog, cog, heading)
    if msg_type not in STATIC_TYPES:
        return OTHER_TYPE
    draught = _number(obj.get("draught"))
    if draught is not None and not scaled:
        draught /= 10
    fields: dict[str, object] = {
        "shipname": _text(obj.get("shipname")),
        "callsign": _text(obj.get("callsign")),
        "imo": obj.get("imo") or None,
        "ship_type": obj.get("shiptype"),
        "to_bow": obj.get("to_bow"),
        "to_stern": obj.get("to_stern"),
        "to_port": obj.get("to_port"),
        "to_starboard": obj.get("to_starboard"),
        "draught": draught or None,
        "destination": _text(obj.get("destination")),
        "eta": _gpsd_eta(obj.get("eta")),
    }
    if msg_type == 24:
        part = obj.get("partno", obj.get("part"))
        fields["partno"] = {0: 0, 1: 1, "A": 0, "B": 1}.get(part) if isinstance(part, (int, str)) else None
    return _static(raw, mmsi, ts, msg_type, receiver, fields)


def _gpsd_eta(value: object) -> str | None:
    """``MM-DDTHH:MMZ``; None for "not available" (month or day 0)."""
    text = _text(value)
    if text is None or text.startswith("00-") or text[3:5] == "00":
        return None
    return text


def _gpsd(obj: dict[str, object], raw: str) -> Parsed:
    if obj.get("class") != "AIS":
        return NOT_AIS  # a fix, the sky view, the daemon's version: not AIS, as $GPRMC is
    return _class_ais(obj, raw, GPSD)


# -- aisstream.io -----------------------------------------------------------------------------------

_AISSTREAM_POSITIONS = {
    "PositionReport": 1,
    "StandardClassBPositionReport": 18,
    "ExtendedClassBPositionReport": 19,
    "LongRangeAisBroadcastMessage": 27,
}


def _aisstream_time(meta: dict[str, object]) -> int:
    """``time_utc`` as Go writes it: ``2023-10-15 09:51:08.143077274 +0000 UTC``."""
    value = meta.get("time_utc")
    if not isinstance(value, str):
        raise _Bad("MetaData.time_utc missing")
    text = value.strip().removesuffix(" UTC").strip()
    when, _, offset = text.rpartition(" ") if text.count(" ") >= 2 else (text, "", "")
    whole, dot, fraction = when.partition(".")
    normal = whole + (dot + fraction[:6] if dot else "") + (offset or "+0000")
    try:
        dt = datetime.strptime(normal, "%Y-%m-%d %H:%M:%S.%f%z" if dot else "%Y-%m-%d %H:%M:%S%z")
    except ValueError:
        raise _Bad(f"MetaData.time_utc is not a time: {value!r}"[:120]) from None
    return round(dt.timestamp() * 1000)


def _aisstream(obj: dict[str, object], raw: str) -> Parsed:
    kind = obj.get("MessageType")
    message, meta = obj.get("Message"), obj.get("MetaData")
    if not isinstance(kind, str) or not isinstance(message, dict) or not isinstance(meta, dict):
        raise _Bad("MessageType, Message or MetaData is not what aisstream.io sends")
    body = message.get(kind)
    if not isinstance(body, dict):
        raise _Bad(f"Message has no {kind}")
    mmsi = _mmsi(body.get("UserID", meta.get("MMSI")), "UserID")
    ts = _aisstream_time(meta)
    if kind in _AISSTREAM_POSITIONS:
        msg_type = _type(body.get("MessageID"), _AISSTREAM_POSITIONS[kind], "MessageID")
        lat, lon = _coordinate(body, "Latitude"), _coordinate(body, "Longitude")
        # Rounded as the NMEA decoder rounds (aisstream.io sends raw / 600000 in full).
        lat, lon = (None if v is None else round(v, 6) for v in (lat, lon))
        sog, cog = _number(body.get("Sog")), _number(body.get("Cog"))
        return _position(raw, mmsi, ts, msg_type, "", lat, lon, sog, cog, _number(body.get("TrueHeading")))
    if kind == "ShipStaticData":
        dimension = body.get("Dimension") if isinstance(body.get("Dimension"), dict) else {}
        assert isinstance(dimension, dict)
        eta = body.get("Eta") if isinstance(body.get("Eta"), dict) else {}
        assert isinstance(eta, dict)
        fields: dict[str, object] = {
            "shipname": _text(body.get("Name")),
            "callsign": _text(body.get("CallSign")),
            "imo": body.get("ImoNumber") or None,
            "ship_type": body.get("Type"),
            "to_bow": dimension.get("A"),
            "to_stern": dimension.get("B"),
            "to_port": dimension.get("C"),
            "to_starboard": dimension.get("D"),
            "draught": body.get("MaximumStaticDraught") or None,
            "destination": _text(body.get("Destination")),
            "eta": _eta(eta),
        }
        return _static(raw, mmsi, ts, 5, "", fields)
    if kind == "StaticDataReport":
        part_b = body.get("PartNumber") is True
        report = body.get("ReportB" if part_b else "ReportA")
        if not isinstance(report, dict):
            raise _Bad(f"StaticDataReport has no Report{'B' if part_b else 'A'}")
        if part_b:
            dimension = report.get("Dimension") if isinstance(report.get("Dimension"), dict) else {}
            assert isinstance(dimension, dict)
            fields = {
                "partno": 1,
                "ship_type": report.get("ShipType"),
                "callsign": _text(report.get("CallSign")),
                "vendorid": _text(report.get("VendorIDName")),
                "to_bow": dimension.get("A"),
                "to_stern": dimension.get("B"),
                "to_port": dimension.get("C"),
                "to_starboard": dimension.get("D"),
            }
        else:
            fields = {"partno": 0, "shipname": _text(report.get("Name"))}
        return _static(raw, mmsi, ts, 24, "", fields)
    return OTHER_TYPE


def _eta(eta: dict[str, object]) -> str | None:
    """``MM-DDTHH:MMZ`` as gpsd writes it; None for the "not available" 0/0/24/60."""
    month, day, hour, minute = (eta.get(k) for k in ("Month", "Day", "Hour", "Minute"))
    if not all(isinstance(v, int) for v in (month, day, hour, minute)) or month == 0 or day == 0:
        return None
    return f"{month:02d}-{day:02d}T{hour:02d}:{minute:02d}Z"


_READERS: dict[str, Callable[[dict[str, object], str], Parsed]] = {
    OWN: _own,
    AISCATCHER: _aiscatcher,
    GPSD: _gpsd,
    AISSTREAM: _aisstream,
    GPSDIO: _gpsdio,
}
