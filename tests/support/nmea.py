"""Build NMEA lines for tests that need a timing or a value the real captures do not have."""

from __future__ import annotations

from typing import Any

import pyais

BASE = 1_700_000_000  # 2023-11-14T22:13:20Z, a round epoch second for generated feeds


def sentences(fields: dict[str, Any], seq_id: int = 0) -> list[str]:
    return list(pyais.encode_dict(fields, talker_id="AI", sentence_type="VDM", radio_channel="A", seq_id=seq_id))


def position(mmsi: int, lat: float, lon: float, sog: float = 10.0, msg_type: int = 1, **extra: Any) -> str:
    fields = {"type": msg_type, "mmsi": mmsi, "lat": lat, "lon": lon, "speed": sog, "course": 90.0, "heading": 90}
    fields.update(extra)
    (sentence,) = sentences(fields)
    return sentence


def tagged(sentence: str, t: float, receiver: str = "r1", group: str | None = None) -> str:
    """Prefix a tag block; ``t`` is epoch seconds (the tag-block checksum is not enforced)."""
    items = [f"g:{group}"] if group else []
    items += [f"s:{receiver}", f"c:{int(t)}"]
    return "\\" + ",".join(items) + "*00\\" + sentence
