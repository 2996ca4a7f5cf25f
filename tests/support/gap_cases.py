"""A generated feed of gap cases, as tagged NMEA in time order: every verdict of the gap rule.

- 244100001, far offshore in the Indian Ocean, a position every 30 minutes (24 in 12 h), silent
  13 h, then heard again: a suspected disabling, in a 1-degree cell where two other vessels
  (244100002, 244100003) stay heard every 10 minutes.
- 244100004, the same in a cell where nobody else is heard: suspected, with zero coverage.
- 244100005, offshore, silent from hour 10 to the end (the others go on to hour 30): an open gap.
- 244100006, a few nm off the Dutch coast, silent 13 h: a closed gap, not suspected (near shore).
"""

from __future__ import annotations

from tests.support.nmea import position, tagged

T0 = 1_700_006_400  # seconds, an hour's start (2023-11-15T00:00:00Z)
HOUR = 3600
COVERED, EMPTY, OPEN, COASTAL = 244100001, 244100004, 244100005, 244100006
NEIGHBOURS = (244100002, 244100003)
# Where each vessel is: (lat, lon) and a small drift per position.
PLACES = {
    COVERED: (-20.5, 75.5),
    NEIGHBOURS[0]: (-20.3, 75.2),
    NEIGHBOURS[1]: (-20.7, 75.8),
    EMPTY: (-30.5, 80.5),
    OPEN: (-25.5, 70.5),
    COASTAL: (52.05, 4.05),
}


def _heard(mmsi: int, every_s: int, spans: list[tuple[float, float]]) -> list[tuple[int, str]]:
    lat, lon = PLACES[mmsi]
    out = []
    for start_h, end_h in spans:
        t = T0 + int(start_h * HOUR)
        while t <= T0 + int(end_h * HOUR):
            k = (t - T0) // every_s
            out.append((t, position(mmsi, round(lat + k * 0.0005, 5), round(lon + k * 0.0005, 5), sog=8.0)))
            t += every_s
    return out


def gap_case_lines() -> list[str]:
    events: list[tuple[int, str]] = []
    for quiet in (COVERED, EMPTY, COASTAL):  # silent from hour 13 to hour 26
        events += _heard(quiet, 1800, [(0, 13), (26, 30)])
    events += _heard(OPEN, 1800, [(0, 10)])
    for neighbour in NEIGHBOURS:
        events += _heard(neighbour, 600, [(0, 30)])
    events.sort()
    return [tagged(sentence, t) for t, sentence in events]
