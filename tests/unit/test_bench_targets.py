"""The benchmark's targets table: each target checked on a run's figures, with its commands."""

import tempfile
from pathlib import Path

import pytest

from bench.files import LEAN, P1, P2, PY, ROOT, TM2, baseline_name, shown, table, targets

pytestmark = pytest.mark.unit


def row(name: str, lines: int, walls: list[float], cpu: list[float], cmd: str) -> dict[str, object]:
    return {"name": name, "lines": lines, "walls": walls, "cpu": cpu, "rss": 100.0, "state": 0, "cmd": cmd}


def test_a_command_is_shown_as_typed_in_the_checkout() -> None:
    cmd = [
        PY,
        "-m",
        "bench.lean_loop",
        "--input",
        str(ROOT / "out" / "bench" / "feed-400000.nmea"),
        "--output",
        str(Path(tempfile.gettempdir()) / "bench-x"),  # a scratch folder of the run's temporary folder
    ]

    assert shown(cmd) == "python -m bench.lean_loop --input out/bench/feed-400000.nmea --output OUT"


def test_each_target_is_checked_on_the_runs_medians_against_the_loops_of_the_same_run() -> None:
    rows = [
        row(LEAN, 400_000, [20.0, 22.0], [21.0, 21.0], "lean"),
        row(P1, 400_000, [25.0, 27.0], [40.0, 44.0], "p1"),
        row(P2, 400_000, [13.0, 15.0], [48.0, 48.0], "p2"),
    ]
    long_rows = [
        row(LEAN, 1_200_000, [60.0], [63.0], "long lean"),
        row(P1, 1_200_000, [80.0], [120.0], "long p1"),
        row(P2, 1_200_000, [50.0], [130.0], "long p2"),
        row(TM2, 1_200_000, [90.0], [159.6], "long tm"),
    ]
    csv_rows = [
        {"rows": 1_000_000, "name": "pandas, vectorised", "walls": [17.0, 19.0], "cmd": "pandas"},
        {"rows": 1_000_000, "name": P1, "walls": [90.0, 90.0], "cmd": "noaa p1"},
        {"rows": 1_000_000, "name": P2, "walls": [72.0, 72.0], "cmd": "noaa p2"},
    ]
    # Start-up: the CPU of a 1,000-line run, taken off the long runs' for their steady state.
    starts = {P1: (5.5, 0.1, "start p1"), TM2: (30.0, 19.99, "start tm")}
    fleet_rows = [
        row(P1, 400_500, [30.0, 31.0], [44.0, 46.0], "fleet p1"),
        row(baseline_name("6c84c88"), 400_500, [25.0, 26.0], [36.0, 36.0], "fleet before"),
    ]

    assert targets(rows, starts, csv_rows, long_rows, fleet_rows, "6c84c88").splitlines() == [
        "| target | measured | holds | commands |",
        "|---|---|---|---|",
        "| parallelism 2 at least 1.2x the lean loop's speed (400,000 lines, wall time with start-up) "
        "| 1.50x (14.0 s against 21.0 s) | yes | `lean`; `p2` |",
        "| parallelism 2 at least 1.2x the lean loop's speed (1,200,000 lines, wall time with start-up) "
        "| 1.20x (50.0 s against 60.0 s) | yes | `long lean`; `long p2` |",
        "| the CPU per line at parallelism 1, every thread of the run, at most 1.1x the lean loop's "
        "(400,000 lines) | 2.00x (105.0 us against 52.5 us) | no | `p1`; `lean` |",
        "| on the feed heavier in vessels, the CPU per line at parallelism 1 at most 1.0x what 6c84c88 (before "
        "the tracks, spread and gap events) spent (400,500 lines, run in turns) | 1.25x (112.4 us against 89.9 us) "
        "| no | `fleet p1`; `fleet before` |",
        "| two one-slot TaskManagers at most 1.15x the CPU per line of parallelism 1 in their steady state "
        "(1,200,000 lines) | 1.16x (116.4 us against 100.0 us); the whole runs, start included: 1.33x "
        "(133.0 us against 100.0 us) | no | `long p1`; `long tm` |",
        "| NOAA from `.csv.zst` at 0.5x of pandas or better (1,000,000 rows) "
        f"| 0.25x ({P2}: 72.0 s against 18.0 s) | no | `pandas`; `noaa p2` |",
        "| a 1,000-line run in at most 6 s | 5.5 s (0.1 CPU s) | yes | `start p1` |",
    ]


def test_targets_without_their_runs_are_left_out() -> None:
    assert targets([], {}, [], []).splitlines() == ["| target | measured | holds | commands |", "|---|---|---|---|"]


def test_the_long_feeds_table_leaves_blank_the_ratios_to_runs_it_did_not_make() -> None:
    text = table([row(P1, 1_200_000, [80.0], [120.0], "long p1")])

    assert text.splitlines()[-1] == f"| 1,200,000 | {P1} | 80.0 | 15,000 | 100 MB |  |  |  |  | 100.0 |  |"
