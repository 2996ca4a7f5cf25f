"""A generated feed of loitering cases, as tagged NMEA in time order: every vessel reports every
ten minutes, each case an MMSI, steaming east at the speed of each leg (a position's SOG is its
leg's speed, as the movement between positions is).

- 244500001: steams an hour at 10 kn, idles ten hours at 0.5 kn 67 nm off the Dutch coast (the
  North Sea at 54.0 N, 3.5 E), steams again: one event of ten hours, published, closed by the
  first fast hour.
- 244500002: slow for ten hours in the port of Rotterdam, under a mile from shore: an event, but
  not one published (under 20 nm from shore), so no record.
- 244500003: idles three hours offshore, then steams: under the four hours, no record.
- 244500004: steams two hours, then idles offshore to the end of the input (fourteen hours): an
  event published and still open at the end.
"""

from __future__ import annotations

import math

from tests.support.nmea import position, tagged

T0 = 1_700_006_400  # seconds, an hour's start (2023-11-15T00:00:00Z)
EVERY_MIN = 10
END_MIN = 16 * 60
OFFSHORE = (54.0, 3.5)  # 67 nm from shore
IN_PORT = (51.98, 4.0)  # 0.65 nm from shore

IDLE, PORT, SHORT, STILL = range(244500001, 244500005)

# Each case: where it starts, and legs of (first minute, last minute, knots).
CASES: dict[int, tuple[tuple[float, float], list[tuple[int, int, float]]]] = {
    IDLE: (OFFSHORE, [(0, 50, 10.0), (60, 660, 0.5), (670, 780, 10.0)]),
    PORT: (IN_PORT, [(0, 600, 0.3)]),
    SHORT: ((OFFSHORE[0] + 0.5, OFFSHORE[1]), [(0, 180, 0.5), (190, 300, 10.0)]),
    STILL: ((OFFSHORE[0] - 0.5, OFFSHORE[1]), [(0, 120, 10.0), (130, END_MIN, 0.5)]),
}

# The records each case ends with: (hours, at least; open), or none.
LOITERING: dict[int, tuple[float, bool] | None] = {
    IDLE: (10.0, False),
    PORT: None,
    SHORT: None,
    STILL: (13.0, True),
}


def case_positions(mmsi: int) -> list[tuple[int, str]]:
    """One case's positions: (epoch seconds, NMEA sentence)."""
    (lat, lon), legs = CASES[mmsi]
    out = []
    previous = None
    for first, last, knots in legs:
        for minute in range(first, last + 1, EVERY_MIN):
            if previous is not None:
                nm = knots * (minute - previous) / 60
                lon += nm / 60 / math.cos(math.radians(lat))
            previous = minute
            out.append((T0 + minute * 60, position(mmsi, round(lat, 5), round(lon, 5), sog=knots)))
    return out


def loitering_case_lines() -> list[str]:
    events = sorted(e for mmsi in CASES for e in case_positions(mmsi))
    return [tagged(sentence, t) for t, sentence in events]
