"""The whole job in a Flink mini-cluster (thread mode), at parallelism 1 and 2, on real captures
and on a generated feed of edge cases: exact outputs, and the same outputs as the plain-Python
pipeline (which runs the same logic with Flink's event-time rules in one loop).

One thing depends on timing, as Flink defines it, and is compared loosely: how many times a
window fires (a late report re-fires a window if it reaches the window operator after the
watermark did, and is in the first firing if it comes before); the final aggregate (the highest
revision, which a sink keeps) is the same either way. Everything else is exact: a lane is parsed
and reassembled by one subtask, in its order, so even which receiver's copy of a static report is
kept is the plain loop's.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ais_pipeline.config import SAMPLE_INPUT
from ais_pipeline.files import read_records
from tests.support.jobs import SAMPLE_SUMMARY, assert_same_outputs, final, run_job, run_oracle
from tests.support.nmea import BASE, position, tagged

pytestmark = pytest.mark.flink


@pytest.fixture(scope="module")
def sample_oracle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("oracle")
    run_oracle(SAMPLE_INPUT, out)
    return out


@pytest.mark.parametrize("parallelism", [1, 2])
def test_bundled_sample_matches_the_plain_pipeline_exactly(parallelism: int, sample_oracle: Path, tmp_path: Path):
    summary = run_job(SAMPLE_INPUT, tmp_path, "--parallelism", str(parallelism))
    assert_same_outputs(tmp_path, sample_oracle)
    assert {k: summary[k] for k in SAMPLE_SUMMARY} == SAMPLE_SUMMARY
    # Per minute of event time (the run report's chart): the tallies the job emitted add up.
    minutes = summary["per_minute"].values()
    assert sum(m["duplicates_exact"] for m in minutes) == 881 and sum(m["positions_kept"] for m in minutes) == 7294
    assert sum(m["duplicates_near"] for m in minutes) == 3


EDGE_T0 = BASE - BASE % 60


def edge_case_feed(fixtures: Path) -> list[str]:
    """Real error, multipart and GPS lines, plus generated timings: duplicates, late reports,
    a clock 70 years fast, junk."""
    a, b, c, d = 244000001, 244000002, 244000003, 244000004
    shore = position(a, 52.0, 4.0, sog=10.0)
    # Real captures first, oldest first (2014 satellite, 2023-11-07 shore), so none is late.
    lines = (fixtures / "libais__tagblock.nmea").read_text().splitlines()
    lines += (fixtures / "aistools__errors.nmea").read_text().splitlines()
    lines += [tagged(shore, EDGE_T0 + 5, "shore")]
    lines += [tagged(position(b, 53.0 + i / 1000, 5.0, sog=12.0), EDGE_T0 + 10 + i) for i in range(80)]
    lines += [tagged(shore, EDGE_T0 + 95, "sat")]  # satellite copy 90 s late: exact duplicate
    lines += [tagged(position(c, 52.0, 4.0, sog=20.0), EDGE_T0 + 30)]  # late within lateness: revision 1
    lines += [tagged(position(c, 52.0001, 4.0001, sog=102.3), EDGE_T0 + 31)]  # same cell, no SOG
    lines += [tagged(position(a, 91.0, 4.0), EDGE_T0 + 40)]  # latitude 91: no position
    lines += [tagged(position(a, 52.0, 4.0), EDGE_T0 + 70 * 365 * 86400)]  # clock 70 years fast
    lines += [tagged(position(b, 54.0, 6.0), EDGE_T0 + 400)]  # watermark jumps
    # ... with most lines: the satellite receiver falls behind the consensus and stops holding it
    lines += [tagged(position(d, 55.0 + i / 1000, 6.0), EDGE_T0 + 401 + i) for i in range(100)]
    lines += [tagged(position(c, 52.0003, 4.0003), EDGE_T0 + 20)]  # late for tumbling, not sliding
    lines += [tagged(position(c, 52.2, 4.2), EDGE_T0 - 900)]  # late for every window
    # GPS sentences of a combined receiver (its AIS lines carry no time: they would get ingestion
    # time, which no test can predict).
    lines += [line for line in (fixtures / "gpsd__ait250.log").read_text().splitlines() if line.startswith("$")][:20]
    lines += ["", "# a comment", "garbage \x01 line", "!AIVDM,1,1,,B,,0*25"]
    return lines


@pytest.mark.parametrize("parallelism", [1, 2])
def test_edge_cases_give_exact_outputs(parallelism: int, fixtures: Path, tmp_path: Path):
    feed = tmp_path / "feed.nmea"
    feed.write_text("\n".join(edge_case_feed(fixtures)) + "\n")
    out, oracle = tmp_path / "out", tmp_path / "oracle"
    summary = run_job(feed, out, "--parallelism", str(parallelism))
    run_oracle(feed, oracle)
    assert_same_outputs(out, oracle)

    assert summary["lines"] == summary["accounted_lines"]
    assert summary["duplicates_exact"] == 1 and summary["no_position"] == 1 and summary["late"] == 1
    assert summary["not_ais"] == 20 and summary["skipped"] == 2 and summary["fragments_joined"] == 1
    assert summary["dead_letter"] == {"checksum": 2, "future_timestamp": 1, "malformed": 2}
    late = sorted((r["mmsi"], r["window"], r["timestamp"]) for r in read_records(out / "late"))
    # (The real ORBCOMM reports 6 and 9 minutes older than the one before them come in the
    # watermark's warm-up: not late.)
    assert late == [
        (244000003, "sliding", "2023-11-14T21:58:00.000Z"),
        (244000003, "tumbling", "2023-11-14T21:58:00.000Z"),
        (244000003, "tumbling", "2023-11-14T22:13:20.000Z"),
    ]
    first_cell = "u14zg4"
    tumbling = final(read_records(out / "aggregates"))[("tumbling", first_cell, "2023-11-14T22:13:00.000Z")]
    assert (tumbling["reports"], tumbling["vessels"], tumbling["avg_sog"]) == (3, 2, 15.0)


def test_json_input_of_a_real_track(fixtures: Path, tmp_path: Path):
    src = fixtures / "gpsdiosegment__263576000.json"
    feed = tmp_path / "track.jsonl"
    with src.open() as fh, feed.open("w") as out:
        for line in fh:
            r = json.loads(line)
            out.write(
                json.dumps(
                    {
                        "mmsi": r["ssvid"],
                        "timestamp": r["timestamp"],
                        "lat": r["lat"],
                        "lon": r["lon"],
                        "sog": r["speed"],
                        "cog": r["course"],
                    }
                )
                + "\n"
            )
        out.write("{not json\n")
    job, oracle = tmp_path / "out", tmp_path / "oracle"
    summary = run_job(feed, job, "--input-format", "json")
    run_oracle(feed, oracle, input_format="json")
    assert_same_outputs(job, oracle)
    assert summary["lines"] == summary["accounted_lines"] == 949
    assert summary["dead_letter"] == {"bad_json": 1}
    # 14 points with null coordinates (5 more repeat one of their times: exact duplicates) and
    # one with the "not available" 91/181.
    assert summary["no_position"] == 15
    kinds = ("positions_kept", "duplicates_exact", "duplicates_near", "no_position", "late")
    assert sum(summary[k] for k in kinds) == 948


@pytest.mark.parametrize("parallelism", [pytest.param(1, marks=pytest.mark.slow), 2])
def test_benchmark_feed_matches_the_plain_pipeline(parallelism: int, tmp_path: Path):
    """The seeded feed of `make bench` (fan-in, satellite copies and satellite-only late reports,
    a redelivered block, damaged lines): the job's outputs equal the plain loop's, so the
    benchmark compares implementations of the same thing."""
    feed = tmp_path / "bench.nmea"
    with feed.open("w") as fh:
        cmd = [sys.executable, "-m", "bench.gen_feed", "--lines", "20000", "--seed", "7"]
        subprocess.run(cmd, stdout=fh, check=True)
    out, oracle = tmp_path / "out", tmp_path / "oracle"
    summary = run_job(feed, out, "--parallelism", str(parallelism))
    run_oracle(feed, oracle)
    assert_same_outputs(out, oracle)
    assert summary["lines"] == summary["accounted_lines"]
    assert summary["duplicates_exact"] > 5000 and summary["dead_letter"]["checksum"] > 0


def test_with_sliding_windows_off_only_they_are_gone(sample_oracle: Path, tmp_path: Path):
    """``--windows tumbling``: the job equals the plain loop with the same choice, and against the
    default run only the sliding windows and their late records are gone: the tumbling figures,
    positions, static reports, bad fixes, gaps and dead letters are the same."""
    job, oracle = tmp_path / "job", tmp_path / "oracle"
    summary = run_job(SAMPLE_INPUT, job, "--parallelism", "2", "--windows", "tumbling")
    run_oracle(SAMPLE_INPUT, oracle, windows="tumbling")
    assert_same_outputs(job, oracle)
    aggregates = read_records(job / "aggregates")
    assert aggregates and {a["window"] for a in aggregates} == {"tumbling"}
    strip = lambda m: {k: {f: v for f, v in a.items() if f != "revision"} for k, a in m.items()}  # noqa: E731
    tumbling = [a for a in read_records(sample_oracle / "aggregates") if a["window"] == "tumbling"]
    assert strip(final(aggregates)) == strip(final(tumbling))
    for name in ("positions", "static", "bad_fixes", "gaps", "dead_letter"):
        assert sorted(map(str, read_records(job / name))) == sorted(map(str, read_records(sample_oracle / name))), name
    late = [r for r in read_records(sample_oracle / "late") if r["window"] == "tumbling"]
    assert sorted(map(str, read_records(job / "late"))) == sorted(map(str, late))
    assert summary["late_records"]["tumbling"] == 230 and summary["positions_kept"] == 7294
