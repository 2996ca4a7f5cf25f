"""NOAA MarineCadastre CSV files of known rows, in either layout, and the compressions the job
reads, for the tests of the archive inputs."""

from __future__ import annotations

import bz2
import gzip
import lzma
import zipfile
from dataclasses import dataclass
from pathlib import Path

import zstandard

HEADER_2024 = (
    "MMSI,BaseDateTime,LAT,LON,SOG,COG,Heading,VesselName,IMO,CallSign,VesselType,Status,Length,Width,Draft,"
    "Cargo,TransceiverClass"
)
HEADER_2025 = (
    "mmsi,base_date_time,longitude,latitude,sog,cog,heading,vessel_name,imo,call_sign,vessel_type,status,"
    "length,width,draft,cargo,transceiver"
)


@dataclass(frozen=True)
class Row:
    mmsi: int
    time: str  # "2023-01-11 00:00:00" style, written in each layout's own way
    lat: float
    lon: float
    sog: float = 10.0
    cog: float = 90.0
    heading: int = 88
    name: str = "NORDIC STAR"
    imo: str = "IMO9301234"
    callsign: str = "OXYZ2"
    vessel_type: int = 70
    length: int = 180
    width: int = 28
    draft: float = 9.5
    transceiver: str = "A"


def noaa_csv(rows: list[Row], layout: str = "2024") -> str:
    """A NOAA file of these rows: the layout up to 2024 (ISO times with a T, latitude first) or
    from 2025 (a space in the times, longitude first)."""
    lines = [HEADER_2024 if layout == "2024" else HEADER_2025]
    for r in rows:
        tail = f"{r.sog},{r.cog},{r.heading},{r.name},{r.imo},{r.callsign},{r.vessel_type},0,{r.length},{r.width},"
        tail += f"{r.draft},{r.vessel_type},{r.transceiver}"
        if layout == "2024":
            lines.append(f"{r.mmsi},{r.time.replace(' ', 'T')},{r.lat},{r.lon},{tail}")
        else:
            lines.append(f"{r.mmsi},{r.time},{r.lon},{r.lat},{tail}")
    return "\n".join(lines) + "\n"


def compressed(path: Path, data: bytes, kind: str) -> Path:
    """``data`` written to ``path`` + the kind's extension, compressed that way (zip: as one
    member named after the file)."""
    target = path.with_name(path.name + kind)
    if kind == ".gz":
        target.write_bytes(gzip.compress(data))
    elif kind == ".bz2":
        target.write_bytes(bz2.compress(data))
    elif kind == ".xz":
        target.write_bytes(lzma.compress(data))
    elif kind == ".zst":
        target.write_bytes(zstandard.ZstdCompressor().compress(data))
    elif kind == ".zip":
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(path.name, data)
    else:
        raise ValueError(kind)
    return target
