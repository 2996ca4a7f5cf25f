"""Every rule of the job (docs/rules.md) on small feeds, through the plain-Python pipeline (the very logic the
Flink operators run, with Flink's event-time rules at parallelism 1). Timings the real captures
do not have are built with pyais's encoder (tests/nmea.py).

These feeds are a few lines long, so the watermark starts with their first line
(``--watermark-warm-up 1``); the warm-up and the receivers' rule have tests of their own
(``tests/unit/test_watermarks.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ais_pipeline import files
from ais_pipeline.config import PipelineConfig
from ais_pipeline.rules import outputs
from ais_pipeline.rules.multipart import Step
from ais_pipeline.rules.plain import PlainResult, run_plain
from tests.support.nmea import BASE, position, sentences, tagged

pytestmark = pytest.mark.unit

T0 = BASE - BASE % 60  # a window boundary, epoch seconds


def run(lines: list[str], **knobs: Any) -> PlainResult:
    knobs.setdefault("watermark_warm_up", 1)
    config = PipelineConfig(input_path=Path(__file__), **knobs)
    return run_plain(config, lines, now_ms=(T0 + 86_400) * 1000)


def records(result: PlainResult, name: str) -> list[dict[str, Any]]:
    return [json.loads(r) for r in result.named()[name]]


def final_aggregates(result: PlainResult, window: str) -> dict[tuple[str, str], dict[str, Any]]:
    """The final revision of each aggregate of one window kind, by (cell, window start)."""
    finals = outputs.final_aggregates(records(result, "aggregates"))
    return {(cell, start): a for (kind, cell, start), a in finals.items() if kind == window}


def ms_tagged(sentence: str, t_ms: int, receiver: str = "r1") -> str:
    return f"\\s:{receiver},c:{t_ms}*00\\{sentence}"


A = 244000001
B = 244000002


def test_satellite_copy_90_s_later_is_an_exact_duplicate():
    shore = position(A, 52.0, 4.0)
    filler = [tagged(position(B, 53.0 + i / 100, 5.0), T0 + i) for i in range(1, 90)]
    result = run([tagged(shore, T0, "shore"), *filler, tagged(shore, T0 + 90, "sat")])
    assert result.totals["duplicates_exact"] == 1
    kept = [p for p in records(result, "positions") if p["mmsi"] == A]
    assert [(p["receiver"], p["timestamp"]) for p in kept] == [("shore", "2023-11-14T22:13:00.000Z")]


def test_replayed_block_is_removed_exactly():
    block = [tagged(position(A, 52.0 + i / 100, 4.0), T0 + i * 10) for i in range(5)]
    result = run(block + block)
    assert result.totals["duplicates_exact"] == 5
    assert len(result.positions) == 5


def test_exact_duplicate_ttl_boundary_120_s_is_a_duplicate_121_s_is_not():
    s = position(A, 52.0, 4.0)
    assert run([tagged(s, T0), tagged(s, T0 + 120, "r2")]).totals["duplicates_exact"] == 1
    later = run([tagged(s, T0), tagged(s, T0 + 121, "r2")])
    assert later.totals["duplicates_exact"] == 0 and len(later.positions) == 2


def test_near_duplicate_at_1_9_s_dropped_at_2_1_s_kept():
    t = T0 * 1000
    first = position(A, 52.0, 4.0, sog=10.0)
    same_place = position(A, 52.0, 4.0, sog=10.1)  # another payload, same position
    near = run([ms_tagged(first, t), ms_tagged(same_place, t + 1900)])
    assert near.totals["duplicates_near"] == 1 and len(near.positions) == 1
    apart = run([ms_tagged(first, t), ms_tagged(same_place, t + 2100)])
    assert apart.totals["duplicates_near"] == 0 and len(apart.positions) == 2


def test_sog_102_3_means_not_available_and_avg_sog_is_null():
    result = run([tagged(position(A, 52.0, 4.0, sog=102.3), T0 + 5), tagged(position(B, 60.0, 10.0), T0 + 200)])
    (pos_a,) = [p for p in records(result, "positions") if p["mmsi"] == A]
    assert pos_a["sog"] is None
    tumbling = final_aggregates(result, "tumbling")
    agg = tumbling[(pos_a["cell"], "2023-11-14T22:13:00.000Z")]
    assert (agg["reports"], agg["vessels"], agg["avg_sog"]) == (1, 1, None)


def test_latitude_91_is_no_position_and_stays_out_of_aggregates():
    result = run([tagged(position(A, 91.0, 4.0), T0 + 1), tagged(position(A, 52.0, 181.0), T0 + 2)])
    assert result.totals["no_position"] == 2
    assert result.positions == [] and result.aggregates == []


def test_amended_type_5_is_kept_and_an_identical_repeat_is_a_duplicate():
    voyage = {"type": 5, "mmsi": A, "shipname": "NORTHERN LIGHT", "callsign": "PD1234", "destination": "ROTTERDAM"}
    amended = {**voyage, "destination": "HAMBURG"}
    lines: list[str] = []
    for i, fields in enumerate([voyage, voyage, amended, amended]):
        first, second = sentences(fields, seq_id=i % 10)
        lines += [tagged(first, T0 + i * 60, group=f"1-2-{i}"), f"\\g:2-2-{i}*00\\{second}"]
    result = run(lines)
    static = records(result, "static")
    assert [s["destination"] for s in static] == ["ROTTERDAM", "HAMBURG"]
    assert result.totals["static_duplicates"] == 2 and result.tallies["fragments_joined"] == 4


def test_two_receivers_interleaved_multipart_groups_reassemble():
    v1 = {"type": 5, "mmsi": A, "shipname": "ALPHA", "destination": "OSLO"}
    v2 = {"type": 5, "mmsi": B, "shipname": "BRAVO", "destination": "BERGEN"}
    a1, a2 = sentences(v1, seq_id=1)
    b1, b2 = sentences(v2, seq_id=1)
    lines = [
        tagged(a1, T0, "shore", group="1-2-100"),
        tagged(b1, T0, "sat", group="1-2-200"),
        f"\\g:2-2-100*00\\{a2}",
        f"\\g:2-2-200*00\\{b2}",
    ]
    result = run(lines)
    static = sorted((s["mmsi"], s["shipname"], s["receiver"]) for s in records(result, "static"))
    assert static == [(A, "ALPHA", "shore"), (B, "BRAVO", "sat")]
    assert result.dead_letter == []


def test_incomplete_and_out_of_order_groups_are_dead_lettered():
    first, second = sentences({"type": 5, "mmsi": A, "shipname": "ALPHA"}, seq_id=2)
    orphan = run([f"\\g:2-2-7*00\\{second}"])
    assert [json.loads(d)["reason"] for d in orphan.dead_letter] == ["incomplete_multipart"]
    restarted = run([tagged(first, T0, group="1-2-8"), tagged(first, T0 + 1, group="1-2-8"), f"\\g:2-2-8*00\\{second}"])
    dead = [json.loads(d) for d in restarted.dead_letter]
    assert [d["reason"] for d in dead] == ["incomplete_multipart"]
    assert len(restarted.static) == 1
    never = run([tagged(first, T0, group="1-2-9")])
    assert [json.loads(d)["detail"] for d in never.dead_letter] == ["the input ended before the rest of the group"]


def test_a_group_split_by_a_report_41_minutes_later_still_reassembles(fixtures):
    # Real ORBCOMM satellite lines: g:1-2 and g:2-2 are separated by a report whose time is 41
    # minutes later. The timeout is wall-clock, so the event-time leap does not break the group.
    result = run((fixtures / "libais__tagblock.nmea").read_text().splitlines())
    assert result.dead_letter == []
    assert [(s["mmsi"], s["receiver"]) for s in records(result, "static")] == [(219005012, "rORBCOMM008")]


def test_multipart_deadline_passing_dead_letters_the_pending_group():
    from ais_pipeline.rules.multipart import DictGroupStore, MultipartAssembler
    from ais_pipeline.rules.parse import parse_nmea

    first, _ = sentences({"type": 5, "mmsi": A, "shipname": "ALPHA"}, seq_id=2)
    frag = parse_nmea(tagged(first, T0, "shore", group="1-2-5"))
    store, assembler = DictGroupStore(), MultipartAssembler(timeout_ms=60_000)
    assert assembler.on_fragment(store, frag, now_ms=1_000) == Step()  # type: ignore[arg-type]
    assert store.group is not None and store.group.deadline == 61_000
    dead = assembler.expire(store, end_of_input=False)
    assert dead is not None and (dead.reason, dead.receiver, dead.detail) == (
        "incomplete_multipart",
        "shore",
        "the rest of the group never came",
    )
    assert store.group is None and assembler.expire(store, end_of_input=True) is None


def test_late_for_the_tumbling_window_but_not_for_every_sliding_window():
    lines = [
        tagged(position(A, 52.0, 4.0), T0 + 5),
        tagged(position(A, 52.5, 4.5), T0 + 300),  # watermark now T0 + 290 s
        tagged(position(B, 60.0, 10.0), T0 + 10),  # tumbling [T0, T0+60) closed at T0+180
    ]
    result = run(lines)
    late = records(result, "late")
    assert [(r["mmsi"], r["window"]) for r in late] == [(B, "tumbling")]
    assert result.totals["late"] == 0 and len(result.positions) == 3
    cell_b = late[0]["cell"]
    assert (cell_b, "2023-11-14T22:13:00.000Z") not in final_aggregates(result, "tumbling")
    sliding_b = [a for (cell, _), a in final_aggregates(result, "sliding").items() if cell == cell_b]
    # Closed windows (ending by T0+120 s) skip it; the 13 later ones count it.
    assert len(sliding_b) == 13 and all(a["reports"] == 1 for a in sliding_b)


def test_late_for_every_window_goes_to_the_late_output_once_per_kind():
    # A's reports move the watermark to T0+1290 s in steps within the clock skew (one line far
    # ahead alone moves nothing); B's report at T0+10 s is then too late for its tumbling window
    # and for every sliding window that holds it (the last ends at T0+900 s).
    lines = [tagged(position(A, 52.0 + k / 100, 4.0), T0 + 5 + k * 259) for k in range(6)]  # about 8 kn
    result = run([*lines, tagged(position(B, 60.0, 10.0), T0 + 10)])
    assert sorted((r["mmsi"], r["window"]) for r in records(result, "late")) == [(B, "sliding"), (B, "tumbling")]
    assert result.totals["late"] == 1
    assert [p["mmsi"] for p in records(result, "positions")] == [A] * 6


def test_report_within_allowed_lateness_fires_the_window_again_with_the_next_revision():
    lines = [
        tagged(position(A, 52.0, 4.0, sog=10.0), T0 + 5),
        tagged(position(B, 60.0, 10.0), T0 + 90),  # watermark T0+80: tumbling [T0, T0+60) fires
        tagged(position(244000003, 52.0, 4.0, sog=20.0), T0 + 30),  # same cell as A, within lateness
    ]
    result = run(lines)
    cell = records(result, "positions")[0]["cell"]
    firings = [a for a in records(result, "aggregates") if a["window"] == "tumbling" and a["cell"] == cell]
    assert [(a["revision"], a["reports"], a["vessels"], a["avg_sog"]) for a in firings] == [
        (0, 1, 1, 10.0),
        (1, 2, 2, 15.0),
    ]
    assert result.late == []


def test_aggregates_per_cell_count_reports_distinct_vessels_and_mean_sog():
    lines = [
        tagged(position(A, 52.0, 4.0, sog=10.0), T0 + 1),
        tagged(position(A, 52.00001, 4.00001, sog=11.0), T0 + 11),
        tagged(position(B, 52.00002, 4.0, sog=13.0), T0 + 21),
    ]
    result = run(lines)
    (agg,) = final_aggregates(result, "tumbling").values()
    assert (agg["cell"], agg["reports"], agg["vessels"], agg["avg_sog"]) == ("u14zg4", 3, 2, 11.333)
    sliding = final_aggregates(result, "sliding")
    assert len(sliding) == 15 and {a["reports"] for a in sliding.values()} == {3}
    assert min(a["window_start"] for a in sliding.values()) == "2023-11-14T21:59:00.000Z"


def test_clock_70_years_fast_is_dead_lettered_and_does_not_make_others_late():
    future = tagged(position(A, 52.0, 4.0), T0 + 70 * 365 * 86400)
    result = run([tagged(position(B, 60.0, 10.0), T0), future, tagged(position(A, 52.1, 4.1), T0 + 1)])
    assert [json.loads(d)["reason"] for d in result.dead_letter] == ["future_timestamp"]
    assert result.late == [] and len(result.positions) == 2


def test_every_line_of_a_real_capture_is_accounted_for_exactly_once():
    from ais_pipeline.config import SAMPLE_INPUT
    from ais_pipeline.files import read_lines, write_outputs

    lines = list(read_lines(SAMPLE_INPUT))
    result = run_plain(PipelineConfig(), lines)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        write_outputs(result, Path(tmp))
        summary = files.summarize(result.tallies, len(lines), Path(tmp))
    assert summary["lines"] == summary["accounted_lines"] == 10000
    assert (summary["positions_kept"], summary["duplicates_exact"], summary["static_kept"]) == (7294, 881, 926)


def test_the_lean_loop_gives_the_plain_loops_records_and_final_aggregates(fixtures: Path):
    # The benchmark's speed baseline (bench/lean_loop.py) must do the same work.
    from ais_pipeline.files import read_lines
    from bench.lean_loop import LeanPipeline

    path = fixtures / "aisnet__Ais1000Lines.nm4"
    config = PipelineConfig(input_path=path)
    plain = run_plain(config, list(read_lines(path)), now_ms=(T0 + 86_400 * 3000) * 1000)
    lean = LeanPipeline(config, now_ms=(T0 + 86_400 * 3000) * 1000)
    lean.feed(read_lines(path))
    result = lean.finish()
    for name in ("positions", "static", "late", "dead_letter"):
        assert sorted(result.named()[name]) == sorted(plain.named()[name]), name

    def finals(records: list[str]) -> dict[Any, Any]:
        aggregates = [json.loads(r) for r in records]
        return {
            k: {f: v for f, v in a.items() if f != "revision"} for k, a in outputs.final_aggregates(aggregates).items()
        }

    assert finals(result.aggregates) == finals(plain.aggregates) and len(result.aggregates) > 1000
