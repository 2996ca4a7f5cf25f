"""NOAA MarineCadastre day starts in the order NOAA publishes its files, built from real positions.

A MarineCadastre day file is in about time order, not exactly: rows are up to 12 s out of order,
and a few rows of the day's last minute sit among its first minutes. The fixtures
``tests/fixtures/noaa-published-2024-06-01.csv`` (the layout up to 2024) and
``noaa-published-2025-06-01.csv`` (from 2025) have that order. Their positions are the 743 of the
Kystverket capture ``tests/fixtures/aisnet__Ais1000Lines.nm4`` (one per vessel, every fix valid;
NLOD 2.0, Norwegian Coastal Administration), re-timed onto the first ten minutes of the day:
738 vessels there, 5 in the day's last minute, their rows placed among the first 200 (the very
first row one of them). Every row is a valid report of its own vessel, so a run must keep all of
them and send none to the late output.

    python -m tests.support.noaa_day --write    # rewrite both fixtures
"""

from __future__ import annotations

import json
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ais_pipeline.config import PipelineConfig
from ais_pipeline.files import read_lines
from ais_pipeline.rules.plain import run_plain
from tests.support.archives import Row, noaa_csv

FIXTURES = Path(__file__).parents[1] / "fixtures"
SOURCE = FIXTURES / "aisnet__Ais1000Lines.nm4"
DAYS = {"2024": "2024-06-01", "2025": "2025-06-01"}
DAY_END_ROWS = 5
DAY_END_AT = (0, 17, 60, 121, 188)  # where the day's last-minute rows sit among the first rows
JITTER_S = 12


def fixture(layout: str) -> Path:
    return FIXTURES / f"noaa-published-{DAYS[layout]}.csv"


def _positions() -> list[dict[str, object]]:
    config = PipelineConfig(input_path=SOURCE)
    result = run_plain(config, list(read_lines(SOURCE)), now_ms=4_102_444_800_000)
    return [json.loads(p) for p in result.positions]


def published_rows(layout: str) -> list[Row]:
    """The day's rows in published order (see the module docstring)."""
    day = datetime.fromisoformat(DAYS[layout]).replace(tzinfo=UTC)
    rng = random.Random(20240601)
    positions = sorted(_positions(), key=lambda p: int(p["mmsi"]))  # type: ignore[call-overload]

    def row(p: dict[str, object], at: datetime) -> Row:
        heading = 511 if p["heading"] is None else p["heading"]
        cog = 360.0 if p["cog"] is None else p["cog"]
        sog = 102.3 if p["sog"] is None else p["sog"]
        kind = "B" if p["msg_type"] in (18, 19) else "A"
        return Row(
            int(p["mmsi"]),  # type: ignore[call-overload]
            at.strftime("%Y-%m-%d %H:%M:%S"),
            float(p["lat"]),  # type: ignore[arg-type]
            float(p["lon"]),  # type: ignore[arg-type]
            sog=float(sog),  # type: ignore[arg-type]
            cog=float(cog),  # type: ignore[arg-type]
            heading=int(heading),  # type: ignore[call-overload]
            name=f"VESSEL {p['mmsi']}",
            imo="",
            callsign="",
            transceiver=kind,
        )

    day_end = positions[:DAY_END_ROWS]
    start = positions[DAY_END_ROWS:]
    seconds = [i * 600 // len(start) for i in range(len(start))]  # the first ten minutes
    timed = [(at, row(p, day + timedelta(seconds=at))) for at, p in zip(seconds, start, strict=True)]
    # Published order: each row up to 12 s from its place in time order.
    ordered = [r for _, r in sorted(timed, key=lambda tr: tr[0] + rng.uniform(0, JITTER_S))]
    last_minute = day + timedelta(days=1) - timedelta(minutes=1)
    for k, (p, at) in enumerate(zip(day_end, DAY_END_AT, strict=True)):
        ordered.insert(at, row(p, last_minute + timedelta(seconds=7 + 11 * k)))
    return ordered


def text(layout: str) -> str:
    return noaa_csv(published_rows(layout), layout)


def write() -> None:
    for layout in DAYS:
        fixture(layout).write_text(text(layout))


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
