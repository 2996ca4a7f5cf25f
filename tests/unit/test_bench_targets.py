"""The benchmark's targets table: each target checked on a run's figures, with its commands."""

import pytest

from bench.files import LEAN, P1, P2, PY, ROOT, TM2, shown, table, targets

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
        "/tmp/bench-x",
    ]

    assert shown(cmd) == "python -m bench.lean_loop --input out/bench/feed-400000.nmea --output OUT"


def test_each_target_is_checked_on_the_runs_medians() -> None:
    rows = [
        row(LEAN, 400_000, [20.0, 22.0], [21.0, 21.0], "lean"),
        row(P1, 400_000, [25.0, 27.0], [40.0, 44.0], "p1"),
        row(P2, 400_000, [19.0, 21.0], [48.0, 48.0], "p2"),
    ]
    long_rows = [row(P1, 1_200_000, [80.0], [120.0], "long p1"), row(TM2, 1_200_000, [90.0], [126.0], "long tm")]
    csv_rows = [
        {"rows": 1_000_000, "name": "pandas, vectorised", "walls": [17.0, 19.0], "cmd": "pandas"},
        {"rows": 1_000_000, "name": P1, "walls": [90.0, 90.0], "cmd": "noaa p1"},
        {"rows": 1_000_000, "name": P2, "walls": [72.0, 72.0], "cmd": "noaa p2"},
    ]
    starts = {P1: (5.5, 6.1, "start p1")}

    assert targets(rows, starts, csv_rows, long_rows).splitlines() == [
        "| target | measured | holds | commands |",
        "|---|---|---|---|",
        "| parallelism 2 at least as fast as the lean loop (400,000 lines, wall time with start-up; the goal 1.5x) "
        "| 1.05x (20.0 s against 21.0 s) | yes | `lean`; `p2` |",
        "| the process tree's CPU per line at parallelism 1 at most 0.6x of the reference (177.3 us, then 2.08x a "
        "speed loop's; 400,000 lines) | 105.0 us: 0.59x the reference; 2.00x the lean loop's 52.5 us, so 0.96x "
        "against the loop | no | `p1`; `lean` |",
        "| two TaskManagers at most 1.1x the CPU per line of parallelism 1 (1,200,000 lines) "
        "| 1.05x (105.0 us against 100.0 us) | yes | `long p1`; `long tm` |",
        "| NOAA from `.csv.zst` at 0.5x of pandas or better (1,000,000 rows) "
        f"| 0.25x ({P2}: 72.0 s against 18.0 s) | no | `pandas`; `noaa p2` |",
        "| a 1,000-line run in at most 6 s | 5.5 s (6.1 CPU s) | yes | `start p1` |",
    ]


def test_targets_without_their_runs_are_left_out() -> None:
    assert targets([], {}, [], []).splitlines() == ["| target | measured | holds | commands |", "|---|---|---|---|"]


def test_the_long_feeds_table_leaves_blank_the_ratios_to_runs_it_did_not_make() -> None:
    text = table([row(P1, 1_200_000, [80.0], [120.0], "long p1")])

    assert text.splitlines()[-1] == f"| 1,200,000 | {P1} | 80.0 | 15,000 | 100 MB |  |  |  |  | 100.0 |  |"
