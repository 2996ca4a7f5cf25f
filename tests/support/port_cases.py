"""A generated feed of port visit cases, as tagged NMEA in time order, around two made ports in
the South Pacific (an anchorage list of the user's own, :func:`anchorage_csv`): every vessel
reports every five minutes while heard, each case an MMSI.

- 244200001: in, stopped, out: a visit of confidence 4.
- 244200002: turns back 3.5 km from the port, inside the 3-4 km band: no visit.
- 244200003: stopped, then its speed hovers at 0.3 kn (between the thresholds) for hours: one stop.
- 244200004: stopped in port, silent five hours, then out: a port gap in its visit (confidence 4).
- 244200005: in and stopped until the end of the input: an open visit of confidence 3.
- 244200006: in and out of port A without stopping (confidence 1), then into port B, stopped and
  out (confidence 4): two visits.
- 244200007: two transmitters on one MMSI at once, 55 km apart: one moored at port A from its
  first report that leaves after five hours (a visit without an entry, confidence 3), one that
  comes into port B, stops and leaves (confidence 4).
"""

from __future__ import annotations

import math

from tests.support.nmea import position, tagged

T0 = 1_700_006_400  # seconds, an hour's start (2023-11-15T00:00:00Z)
MINUTE = 60
EVERY_MIN = 5
END_MIN = 600
LON = -130.0
PORT_A, PORT_B = -40.0, -40.5  # the ports' latitudes, on one meridian (55.6 km apart)
# The anchorage list: port A is two anchorages 2 km apart on a parallel, port B one.
ANCHORAGES = (("PORT A", PORT_A, LON), ("PORT A", PORT_A, -129.9765), ("PORT B", PORT_B, LON))
KM_DEG = math.degrees(1 / 6371.0)  # a kilometre of latitude, in degrees

IN_STOP_OUT, TURN_BACK, HOVER, SILENT, STILL_IN, TWO_PORTS, SHARED = range(244200001, 244200008)

# Each case: legs of (first minute, last minute, (port, km north of it) at the first, at the
# last, SOG): a position every five minutes from the first minute to the last, moving evenly.
Leg = tuple[int, int, tuple[float, float], tuple[float, float], float]
CASES: dict[int, list[list[Leg]]] = {
    IN_STOP_OUT: [[(0, 25, (PORT_A, 8), (PORT_A, 1), 8.0), (30, 115, (PORT_A, 0.5), (PORT_A, 0.5), 0.0),
                   (120, 150, (PORT_A, 0.5), (PORT_A, 8), 9.0)]],
    TURN_BACK: [[(0, 60, (PORT_A, 8), (PORT_A, 3.5), 8.0), (65, 120, (PORT_A, 3.5), (PORT_A, 8), 8.0)]],
    HOVER: [[(0, 25, (PORT_A, 8), (PORT_A, 1), 8.0), (30, 35, (PORT_A, 1), (PORT_A, 1), 0.1),
             (40, 195, (PORT_A, 1), (PORT_A, 1), 0.3), (200, 230, (PORT_A, 1), (PORT_A, 8), 9.0)]],
    SILENT: [[(0, 25, (PORT_A, 8), (PORT_A, 1), 8.0), (30, 60, (PORT_A, 1), (PORT_A, 1), 0.0),
              (360, 415, (PORT_A, 1), (PORT_A, 1), 0.0), (420, 450, (PORT_A, 1), (PORT_A, 8), 9.0)]],
    STILL_IN: [[(0, 25, (PORT_A, 8), (PORT_A, 1), 8.0), (30, END_MIN, (PORT_A, 1), (PORT_A, 1), 0.0)]],
    TWO_PORTS: [[(0, 25, (PORT_A, -8), (PORT_A, -1), 8.0), (30, 55, (PORT_A, -1), (PORT_A, -8), 8.0),
                 (60, 135, (PORT_A, -8), (PORT_B, 1), 20.0), (140, 200, (PORT_B, 1), (PORT_B, 1), 0.0),
                 (205, 235, (PORT_B, 1), (PORT_B, -8), 9.0)]],
    SHARED: [[(0, 295, (PORT_A, 1), (PORT_A, 1), 0.0), (300, 330, (PORT_A, 1), (PORT_A, 8), 9.0)],
             [(0, 55, (PORT_B, -10), (PORT_B, -1), 6.0), (60, 120, (PORT_B, -1), (PORT_B, -1), 0.0),
              (125, 155, (PORT_B, -1), (PORT_B, -10), 9.0)]],
}  # fmt: skip

# The visits each case makes, in time order: (port, confidence, open).
VISITS: dict[int, list[tuple[str, int, bool]]] = {
    IN_STOP_OUT: [("PORT A", 4, False)],
    TURN_BACK: [],
    HOVER: [("PORT A", 4, False)],
    SILENT: [("PORT A", 4, False)],
    STILL_IN: [("PORT A", 3, True)],
    TWO_PORTS: [("PORT A", 1, False), ("PORT B", 4, False)],
    SHARED: [("PORT B", 4, False), ("PORT A", 3, False)],
}


def _lat(where: tuple[float, float]) -> float:
    port, km = where
    return port + km * KM_DEG


def case_positions(mmsi: int) -> list[tuple[int, str]]:
    """One case's positions: (epoch seconds, NMEA sentence); a second transmitter's come two and
    a half minutes after the first one's."""
    out = []
    for k, legs in enumerate(CASES[mmsi]):
        for first, last, start, end, sog in legs:
            for minute in range(first, last + 1, EVERY_MIN):
                f = (minute - first) / (last - first) if last > first else 0.0
                lat = _lat(start) + f * (_lat(end) - _lat(start))
                t = T0 + minute * MINUTE + k * 150
                out.append((t, position(mmsi, round(lat, 5), LON, sog=sog)))
    return out


def port_case_lines() -> list[str]:
    events = [e for mmsi in CASES for e in case_positions(mmsi)]
    events.sort()
    return [tagged(sentence, t) for t, sentence in events]


def anchorage_csv() -> str:
    """The made ports as a user's own list: just latitude, longitude and label."""
    return "latitude,longitude,label\n" + "".join(f"{lat},{lon},{label}\n" for label, lat, lon in ANCHORAGES)
