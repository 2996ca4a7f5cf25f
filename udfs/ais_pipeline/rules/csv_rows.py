"""Rows of the decoded archives people download, as reports (plain Python):

- NOAA MarineCadastre, up to 2024: ``MMSI,BaseDateTime,LAT,LON,SOG,COG,Heading,VesselName,IMO,
  CallSign,VesselType,Status,Length,Width,Draft,Cargo,TransceiverClass``, times ``2023-01-11T00:00:00``
  (or with a space for the T).
- NOAA MarineCadastre, from 2025: ``mmsi,base_date_time,longitude,latitude,sog,cog,heading,
  vessel_name,imo,call_sign,vessel_type,status,length,width,draft,cargo,transceiver`` (longitude
  before latitude), times ``2025-01-01 00:00:00``.
- The Danish Maritime Authority's aisdk: ``# Timestamp,Type of mobile,MMSI,Latitude,Longitude,
  Navigational status,ROT,SOG,COG,Heading,IMO,Callsign,Name,Ship type,Cargo type,Width,Length,
  Type of position fixing device,Draught,Destination,ETA,Data source type``, times day first
  (``08/02/2018 00:00:00``); latitude 91 / longitude 181 mean no position, ``Unknown value`` and
  ``Undefined`` stand for nothing.

All times are UTC. A layout is told by its header line (:func:`layout_of_header`), wherever its
columns are (an exported file may lead with an index column); the rows after a header are read
by it (:func:`parse_row`). A row is a position report whose identity is (MMSI, event time,
latitude and longitude at 5 decimals, SOG, COG, heading), with its static fields (name, IMO, call
sign, ship type, dimensions, ...) beside it; base stations and aids to navigation are another
message type (4 and 21), as their NMEA reports are.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property, lru_cache

from ais_pipeline.rules.parse import OTHER_TYPE, DeadLetter, Skipped
from ais_pipeline.rules.records import Report

NOAA = "noaa"
DMA = "dma"
CSV_FORMATS = (NOAA, DMA)

_PLACEHOLDERS = frozenset({"", "unknown", "unknown value", "undefined", "nan", "null", "none"})


@dataclass(frozen=True)
class Layout:
    """Where a layout's fields are in its rows, and how its times are written."""

    name: str  # "noaa-2024", "noaa-2025" or "dma"
    format: str  # NOAA or DMA
    time_format: str
    columns: tuple[tuple[str, int], ...]  # field -> column index
    width: int  # columns a row must have

    @cached_property
    def at(self) -> dict[str, int]:
        return dict(self.columns)

    @cached_property
    def static_at(self) -> tuple[tuple[str, int], ...]:
        return tuple((field, self.at[field]) for field in STATIC_FIELDS if field in self.at)


# The fields a row gives, by the header's names in each layout (matched without case).
_NOAA_2024 = {
    "mmsi": "mmsi", "basedatetime": "time", "lat": "lat", "lon": "lon", "sog": "sog", "cog": "cog",
    "heading": "heading", "vesselname": "shipname", "imo": "imo", "callsign": "callsign",
    "vesseltype": "ship_type", "status": "status", "length": "length", "width": "width", "draft": "draught",
    "cargo": "cargo", "transceiverclass": "class",
}  # fmt: skip
_NOAA_2025 = {
    "mmsi": "mmsi", "base_date_time": "time", "latitude": "lat", "longitude": "lon", "sog": "sog", "cog": "cog",
    "heading": "heading", "vessel_name": "shipname", "imo": "imo", "call_sign": "callsign",
    "vessel_type": "ship_type", "status": "status", "length": "length", "width": "width", "draft": "draught",
    "cargo": "cargo", "transceiver": "class",
}  # fmt: skip
# NOAA's GeoParquet days, as ais_pipeline.geoparquet (and the job's reader) writes their rows: the
# 2025 columns, the row's number in its file and why its geometry gives no position.
_NOAA_GEOPARQUET = {**_NOAA_2025, "geoparquet_row": "row", "geometry_problem": "geometry_problem"}
_DMA = {
    "# timestamp": "time", "type of mobile": "class", "mmsi": "mmsi", "latitude": "lat", "longitude": "lon",
    "navigational status": "status", "sog": "sog", "cog": "cog", "heading": "heading", "imo": "imo",
    "callsign": "callsign", "name": "shipname", "ship type": "ship_type", "cargo type": "cargo", "width": "width",
    "length": "length", "draught": "draught", "destination": "destination", "eta": "eta",
}  # fmt: skip
_LAYOUTS = (
    ("noaa-geoparquet", NOAA, "%Y-%m-%d %H:%M:%S", _NOAA_GEOPARQUET, "geoparquet_row"),
    ("noaa-2024", NOAA, "%Y-%m-%d %H:%M:%S", _NOAA_2024, "basedatetime"),
    ("noaa-2025", NOAA, "%Y-%m-%d %H:%M:%S", _NOAA_2025, "base_date_time"),
    ("dma", DMA, "%d/%m/%Y %H:%M:%S", _DMA, "# timestamp"),
)
# The row's static fields, in the order a static record lists them.
STATIC_FIELDS = (
    "shipname", "imo", "callsign", "ship_type", "cargo", "length", "width", "draught", "destination", "eta",
)  # fmt: skip
_NUMBERS = frozenset({"imo", "length", "width", "draught", "ship_type", "cargo"})  # numbers when they are
_NOT_VESSELS = {"base station": 4, "aton": 21}  # DMA's type of mobile -> the AIS message type


def _split(line: str) -> list[str]:
    return next(csv.reader([line]))


def layout_of_header(line: str) -> Layout | None:
    """The layout whose header this line is, or None: its marker column (the time's) anywhere in
    the line, quoted or not, after a byte-order mark or not."""
    text = line.strip().lstrip("\ufeff").lower()
    if "mmsi" not in text or not ("basedatetime" in text or "base_date_time" in text or "# timestamp" in text):
        return None
    names = [name.strip().strip('"') for name in _split(text)]
    for name, fmt, time_format, fields, marker in _LAYOUTS:
        if marker in names:
            columns = tuple((fields[n], i) for i, n in enumerate(names) if n in fields)
            if {"mmsi", "time", "lat", "lon"} <= {field for field, _ in columns}:
                return Layout(name, fmt, time_format, columns, len(names))
    return None


def _cell(cells: list[str], i: int | None) -> str:
    """A cell's text, "" for a placeholder."""
    if i is None:
        return ""
    text = cells[i].strip()
    if not text or (text[0] in "UuNn" and text.lower() in _PLACEHOLDERS):
        return ""
    return text


def _value(cells: list[str], layout: Layout, field: str) -> str:
    return _cell(cells, layout.at.get(field))


def _number(cells: list[str], layout: Layout, field: str) -> float | None:
    text = _value(cells, layout, field)
    if not text:
        return None
    value = float(text)  # ValueError: text in a number field
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{text!r} is not a number")
    return value


def _message_type(cells: list[str], layout: Layout) -> int:
    """1 for a Class A position (and every row that does not say), 18 for Class B; 4 or 21 for a
    base station or an aid to navigation."""
    kind = _value(cells, layout, "class").lower()
    if kind in _NOT_VESSELS:
        return _NOT_VESSELS[kind]
    return 18 if kind in ("b", "class b") else 1


def _static(cells: list[str], layout: Layout) -> str:
    """The row's static fields as canonical JSON ("" when it has none)."""
    return _static_json(tuple((field, _cell(cells, i)) for field, i in layout.static_at))


@lru_cache(maxsize=65536)  # a vessel's rows repeat its static fields
def _static_json(cells: tuple[tuple[str, str], ...]) -> str:
    fields: dict[str, object] = {}
    for field, text in cells:
        if not text:
            continue
        if field in _NUMBERS:
            try:
                number = float(text)
            except ValueError:
                fields[field] = text
                continue
            fields[field] = int(number) if number.is_integer() else number
        else:
            fields[field] = text
    return json.dumps(fields, sort_keys=True, separators=(",", ":")) if fields else ""


@lru_cache(maxsize=8192)  # many rows share a second
def _epoch_ms(text: str, time_format: str) -> int:
    whole, dot, fraction = text.partition(".")
    if dot and not (len(fraction) == 3 and fraction.isdigit() and fraction.isascii()):
        raise ValueError(text)
    ms = int(fraction) if dot else 0  # milliseconds: written by the GeoParquet reader
    when = datetime.strptime(whole, time_format).replace(tzinfo=UTC) - _EPOCH
    return (when.days * 86_400 + when.seconds) * 1000 + ms


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _rounded(value: float | None) -> str:
    return "-" if value is None else repr(round(value, 5))


def parse_row(line: str, layout: Layout, line_number: int) -> Report | Skipped | DeadLetter:
    """One data row of ``layout``: a position report with its static fields, another message type
    (a base station, an aid to navigation), or a dead letter naming the line and the reason."""
    raw = line.rstrip("\r\n")

    def bad(why: str) -> DeadLetter:
        return DeadLetter(raw, "malformed", detail=f"{where}: {why}")

    where = f"line {line_number}"

    try:
        cells = raw.split(",") if '"' not in raw else _split(raw)
    except csv.Error as exc:
        return bad(f"not a CSV row ({exc})")
    if len(cells) != layout.width:  # a comma in an unquoted name would shift every field after it
        return bad(f"{len(cells)} columns, the {layout.name} header has {layout.width}")
    if "row" in layout.at:  # a GeoParquet row: named by its row
        where = f"row {_value(cells, layout, 'row')}"
        problem = _value(cells, layout, "geometry_problem")
        if problem:
            return bad(f"geometry: {problem}")
    mmsi_text = _value(cells, layout, "mmsi")
    if not (mmsi_text.isascii() and mmsi_text.isdigit()) or not 0 <= int(mmsi_text) <= 999_999_999:
        return bad(f"MMSI {mmsi_text!r} is not a 9-digit number")
    mmsi = int(mmsi_text)
    when = _value(cells, layout, "time")
    try:
        # NOAA writes ISO 8601 with a T (its data dictionary with a space): either is read.
        ts = _epoch_ms(when.replace("T", " ", 1) if layout.format == NOAA else when, layout.time_format)
    except ValueError:
        return bad(f"time {when!r} is not {layout.time_format} ({layout.name})")
    msg_type = _message_type(cells, layout)
    if msg_type in _NOT_VESSELS.values():
        return OTHER_TYPE
    try:
        lat, lon = _number(cells, layout, "lat"), _number(cells, layout, "lon")
        sog, cog = _number(cells, layout, "sog"), _number(cells, layout, "cog")
        heading_value = _number(cells, layout, "heading")
    except ValueError as exc:
        return bad(f"a number field holds text ({exc})")
    heading = None if heading_value is None else int(heading_value)
    identity = "|".join((str(mmsi), str(ts), _rounded(lat), _rounded(lon), _rounded(sog), _rounded(cog), str(heading)))
    return Report(
        mmsi=mmsi,
        ts=ts,
        msg_type=msg_type,
        identity=identity,
        payload="",
        fill=0,
        receiver="",
        raw=raw,
        lat=lat,
        lon=lon,
        sog=sog,
        cog=cog,
        heading=heading,
        static=_static(cells, layout),
    )
