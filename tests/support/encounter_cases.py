"""A generated feed of encounter cases, as tagged NMEA in time order: every vessel reports every
five minutes, all drifting east at 1 kn; each case a pair of MMSIs. The pairs at sea are a carrier
(a reefer: AIS ship type 79, "cargo") and a fishing vessel (type 30), each with its static report
(type 5) a minute before its first position. They drift at 1 kn, not 2: GFW publishes an
encounter whose median speed is under 2 knots, and a pair drifting at exactly 2 knots sits on
that threshold, published or not by the rounding of its positions.

- 538000001 and 412000001, in the open Atlantic (47 N, 20 W): side by side 200 m apart for three
  hours, then the second steams north at 10 kn: one encounter of three hours, published, closed
  once they have been apart four hours.
- 538000002 and 412000002 (47 N, 15 W): side by side for two and a half hours, apart (the second
  9 km north) for three, side by side again for two and a half, then apart: under the four hours'
  merge gap, so one encounter of eight hours.
- 244600001 and 244600002, moored 200 m apart in the port of Rotterdam for six hours: an
  encounter under GFW's rule, but not one published (1.3 km from an anchorage, at the shore), so
  no record.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from tests.support.nmea import position, sentences, tagged

T0 = 1_700_006_400  # seconds, an hour's start (2023-11-15T00:00:00Z)
EVERY_MIN = 5
END_MIN = 16 * 60
APART_DEG = 0.0018  # 200 m of latitude
NORTH_DEG_PER_MIN = 10 / 60 / 60  # 10 kn northward

MEET = (538000001, 412000001)
TWICE = (538000002, 412000002)
MOORED = (244600001, 244600002)

# Each vessel's category in the records (its type 5 report); the moored pair has none.
SHIP_TYPES: dict[int, str] = {538000001: "cargo", 412000001: "fishing", 538000002: "cargo", 412000002: "fishing"}
AIS_TYPE = {"cargo": 79, "fishing": 30}

# The records each pair ends with: (hours, open), or none.
ENCOUNTERS: dict[tuple[int, int], tuple[float, bool] | None] = {
    MEET: (3.0, False),
    TWICE: (8.0, False),
    MOORED: None,
}


def meet_offset(minute: int) -> float:
    return max(0, minute - 180) * NORTH_DEG_PER_MIN


def twice_offset(minute: int) -> float:
    """North of its partner, in degrees beyond the 200 m: away from 150 to 330 minutes (steaming
    30 minutes each way, 9 km apart between), and away for good from 480."""
    away = 30 * NORTH_DEG_PER_MIN
    if 150 <= minute < 180:
        return (minute - 150) * NORTH_DEG_PER_MIN
    if 180 <= minute < 300:
        return away
    if 300 <= minute < 330:
        return away - (minute - 300) * NORTH_DEG_PER_MIN
    return max(0, minute - 480) * NORTH_DEG_PER_MIN


def _pair(
    mmsis: tuple[int, int], lat: float, lon: float, offset: Callable[[int], float], knots: float, minutes: int
) -> list[tuple[int, str]]:
    out = []
    for minute in range(0, minutes + 1, EVERY_MIN):
        here_lon = lon + knots * minute / 60 / 60 / math.cos(math.radians(lat))
        north = offset(minute)
        moving = offset(minute + EVERY_MIN) != north
        t = T0 + minute * 60
        out.append((t, position(mmsis[0], round(lat, 5), round(here_lon, 5), sog=knots)))
        sog = 10.0 if moving else knots
        out.append((t, position(mmsis[1], round(lat + APART_DEG + north, 5), round(here_lon, 5), sog=sog)))
    return out


def static_lines() -> list[str]:
    """Each vessel of the pairs at sea: its type 5 report in two sentences, a minute before T0."""
    lines = []
    for i, (mmsi, category) in enumerate(sorted(SHIP_TYPES.items())):
        fields = {
            "type": 5,
            "mmsi": mmsi,
            "shipname": f"VESSEL {i}",
            "callsign": f"CALL{i}",
            "ship_type": AIS_TYPE[category],
        }
        first, second = sentences(fields, seq_id=i + 1)
        group = f"{i + 1}"
        lines += [tagged(first, T0 - 60, group=f"1-2-{group}"), f"\\g:2-2-{group}*00\\{second}"]
    return lines


def encounter_case_lines() -> list[str]:
    events = (
        _pair(MEET, 47.0, -20.0, meet_offset, 1.0, END_MIN)
        + _pair(TWICE, 47.0, -15.0, twice_offset, 1.0, END_MIN)
        + _pair(MOORED, 51.95, 4.05, lambda minute: 0.0, 0.0, 6 * 60)
    )
    return static_lines() + [tagged(sentence, t) for t, sentence in sorted(events)]
