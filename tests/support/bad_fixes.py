"""Bad fixes added to real data, as receivers and archives have them: a copy of a row or of a
transmission moved 1.5 degrees north (about 90 nautical miles), at the time of the real one."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict

import pyais

from tests.support.nmea import sentences

MOVED_DEGREES = 1.5
MOVED_SPEED = 99.0  # a speed no copy of the real row has: the moved copies are told apart by it
_TAG = re.compile(r"^\\(?P<tags>[^\\]*)\\(?P<sentence>!AIVDM,1,1,[^,]*,[^,]*,(?P<payload>[^,]+),0\*[0-9A-F]{2})$")


def moved_rows(rows: list[str], every: int = 400) -> list[str]:
    """gpsdio rows, and after every ``every``-th one a copy moved north with another speed (the
    first one's copy before it); none is an exact duplicate."""
    out = []
    for i, row in enumerate(rows):
        if i % every == 0:
            moved = json.loads(row)
            moved["lat"] += MOVED_DEGREES
            moved["speed"] = MOVED_SPEED
            text = json.dumps(moved)
            out += [text, row] if i == 0 else [row, text]
        else:
            out.append(row)
    return out


def moved_transmissions(lines: list[str], count: int = 4) -> list[str]:
    """Tagged NMEA lines, and after the first copy of ``count`` position transmissions that several
    receivers heard (of vessels heard more than once) a copy moved north, as one more receiver's bad decode
    (``s:rBAD``, the same time)."""
    receivers: defaultdict[str, set[str]] = defaultdict(set)
    first_line: dict[str, int] = {}
    reports: Counter[int] = Counter()
    decoded: dict[str, dict[str, object]] = {}
    for i, line in enumerate(lines):
        m = _TAG.match(line)
        if not m:
            continue
        payload = m["payload"]
        tags = dict(t.split(":", 1) for t in m["tags"].split("*")[0].split(","))
        receivers[payload].add(tags.get("s", ""))
        if payload not in decoded:
            msg = pyais.decode(m["sentence"]).asdict()
            if msg.get("msg_type") not in (1, 2, 3) or not -80 < float(msg.get("lat") or 91) < 80:
                continue
            decoded[payload] = msg
            first_line[payload] = i
            reports[int(msg["mmsi"])] += 1
    often = {mmsi for mmsi, n in reports.items() if n >= 2}
    chosen = sorted(
        (first_line[p] for p, rx in receivers.items() if len(rx) >= 2 and p in decoded and decoded[p]["mmsi"] in often)
    )
    picked = chosen[:: max(1, len(chosen) // count)][:count]
    out = []
    for i, line in enumerate(lines):
        out.append(line)
        if i in picked:
            msg = dict(decoded[_payload(line)])
            fields = {k: msg[k] for k in ("msg_type", "mmsi", "lon", "speed", "course", "heading", "second", "status")}
            fields["type"] = fields.pop("msg_type")
            fields["lat"] = float(msg["lat"]) + MOVED_DEGREES  # type: ignore[arg-type]
            fields["speed"] = MOVED_SPEED
            (sentence,) = sentences(fields)
            tags = _TAG.match(line)["tags"].split("*")[0]  # type: ignore[index]
            time = next(t for t in tags.split(",") if t.startswith("c:"))
            out.append(f"\\s:rBAD,{time}*00\\{sentence}")
    return out


def _payload(line: str) -> str:
    m = _TAG.match(line)
    assert m is not None
    return m["payload"]
