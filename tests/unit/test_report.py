"""`ais-pipeline report`: real PNGs of the right size with content, and an HTML page that links
them and shows the summary; made from the outputs of the bundled sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ais_pipeline.cli import main as cli
from ais_pipeline.files import read_records
from ais_pipeline.tools.plain import main as plain_main
from ais_pipeline.tools.report import busiest, final_aggregates, main

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run")
    assert plain_main(["--output", str(out)]) == 0
    return out


def image(path: Path):  # type: ignore[no-untyped-def]
    import matplotlib.image

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return matplotlib.image.imread(path)


def test_report_writes_a_density_map_a_ship_type_chart_a_duplicates_chart_and_a_page(run_dir: Path, capsys):
    assert main([str(run_dir)]) == 0
    report = run_dir / "report"
    density, types = image(report / "density.png"), image(report / "types.png")
    chart = image(report / "duplicates.png")
    assert density.shape[:2] == (600, 1000) and chart.shape[:2] == types.shape[:2] == (450, 1000)
    for picture in (density, types, chart):
        pixels = picture[:, :, :3].reshape(-1, 3)
        assert len({tuple(p) for p in pixels[::7]}) > 50  # drawn, not blank
    page = (report / "index.html").read_text()
    assert all(f'src="{name}.png"' in page for name in ("density", "types", "duplicates"))
    assert "<th>positions_kept</th><td>7294</td>" in page and "<th>duplicates_exact</th><td>881</td>" in page
    # By default the map shows the vessel hours of the whole run: every final tumbling window's.
    assert "vessel hours 2022-11-10T02:09:00.000Z to 2022-11-10T02:16:00.000Z: 675 cells, 10.26926 h" in page
    assert capsys.readouterr().out.strip() == f"report in {report}/index.html"


def test_a_vessels_map_shows_the_busiest_window(run_dir: Path, tmp_path: Path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(run_dir, run, ignore=shutil.ignore_patterns("report"))
    assert main([str(run), "--color", "vessels"]) == 0
    page = (run / "report" / "index.html").read_text()
    # The busiest tumbling window of the sample: 02:14, in the title of the map and the page.
    assert "tumbling window 2022-11-10T02:14:00.000Z to 2022-11-10T02:15:00.000Z" in page


def test_hours_of_a_sliding_window_are_that_windows(run_dir: Path, tmp_path: Path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(run_dir, run, ignore=shutil.ignore_patterns("report"))
    assert main([str(run), "--window", "sliding"]) == 0  # --color hours, the default
    page = (run / "report" / "index.html").read_text()
    windows = final_aggregates(read_records(run / "aggregates"), "sliding")
    start = busiest(windows)
    hours = round(sum(a["vessel_hours"] for a in windows[start]), 6)
    assert f"sliding window {start} to " in page and f"reports, {hours} vessel hours" in page


def test_hours_per_ship_type_add_up_to_the_runs_tumbling_hours(run_dir: Path, tmp_path: Path):
    from ais_pipeline.tools.report import draw_types, hours_by_type

    tumbling = [a for aggs in final_aggregates(read_records(run_dir / "aggregates"), "tumbling").values() for a in aggs]
    hours = hours_by_type(tumbling)
    assert list(hours)[-2:] == ["other", "unknown"] and len(hours) == 10
    assert round(sum(hours.values()), 6) == round(sum(a["vessel_hours"] for a in tumbling), 6) == 10.26926
    assert (hours["cargo"], hours["tanker"], hours["service"]) == (0.008889, 0.011111, 0.06889)
    ax = draw_types(hours, 0.0, tmp_path / "types.png")
    assert ax.get_title() == "vessel hours by ship type: 10.26926 h"
    late = draw_types(hours, 0.5, tmp_path / "late.png")
    assert late.get_title() == "vessel hours by ship type: 10.26926 h; 0.5 h too late for their windows, not counted"


def test_busiest_window_is_the_one_with_most_reports(run_dir: Path):
    windows = final_aggregates(read_records(run_dir / "aggregates"), "tumbling")
    totals = {start: sum(a["reports"] for a in aggs) for start, aggs in windows.items()}
    assert busiest(windows) == max(totals, key=totals.__getitem__) == "2022-11-10T02:14:00.000Z"


def test_per_minute_figures_add_up_to_the_summary(run_dir: Path):
    summary = json.loads((run_dir / "summary.json").read_text())
    minutes = summary["per_minute"].values()
    for figure in ("positions_kept", "duplicates_exact", "duplicates_near", "late"):
        assert sum(m[figure] for m in minutes) == summary[figure]


def test_a_window_that_does_not_exist_is_a_one_line_error(run_dir: Path, capsys):
    assert cli(["report", str(run_dir), "--start", "1999-01-01T00:00:00.000Z"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ais-pipeline: error: --start: no tumbling window starts at")


def test_the_chart_labels_minutes_on_minute_boundaries_with_each_bar_from_its_minute(run_dir: Path, tmp_path: Path):
    import matplotlib.dates as mdates

    from ais_pipeline.tools.report import draw_duplicates, late_per_minute

    summary = json.loads((run_dir / "summary.json").read_text())
    late = late_per_minute(read_records(run_dir / "late"))
    assert sum(late.values()) == 230 == summary["late_records"]["tumbling"]
    ax = draw_duplicates(summary["per_minute"], late, tmp_path / "chart.png")
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["02:09", "02:10", "02:11", "02:12", "02:13", "02:14", "02:15", "02:16"]
    ticks = [mdates.num2date(t).strftime("%H:%M:%S") for t in ax.get_xticks()]
    assert ticks == [f"02:{m:02d}:00" for m in range(9, 17)]
    # Each kept bar starts at its minute's tick; the tallest, 4,607 reports, at 02:14.
    starts = sorted({mdates.num2date(p.get_x()).strftime("%H:%M:%S") for p in ax.patches})
    assert starts == [f"02:{m:02d}:00" for m in range(9, 16)]
    tallest = max(ax.patches, key=lambda p: p.get_height())
    assert mdates.num2date(tallest.get_x()).strftime("%H:%M") == "02:14" and tallest.get_height() == 4607
    # Only what has reports is in the legend: nothing was late for dedup; 230 were late for the window.
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [
        "kept",
        "exact duplicates",
        "near duplicates",
        "kept, late for the tumbling window",
        "duplicate ratio",
    ]


def test_the_map_merges_cells_too_small_to_see_and_colours_on_a_log_scale(run_dir: Path, tmp_path: Path):
    from ais_pipeline.tools.report import cell_boxes, colour_scale, draw_density, picture_precision

    windows = final_aggregates(read_records(run_dir / "aggregates"), "tumbling")
    aggs = windows["2022-11-10T02:14:00.000Z"]
    # A world-wide window: 1 km cells are under a pixel; precision 3 (about 1.4 degrees) is not.
    assert picture_precision(aggs) == 3
    boxes = cell_boxes(aggs, 3)
    assert sum(b.reports for b in boxes) == sum(a["reports"] for a in aggs) == 4607
    assert all(len(b.cell) == 3 for b in boxes) and len(boxes) < len(aggs)
    values = [b.vessels for b in boxes]
    assert colour_scale(values) == ("log", 1, max(values))
    bar = draw_density(boxes, "t", "vessels", tmp_path / "map.png")
    assert [t.get_text() for t in bar.ax.get_yticklabels()] == ["1", "2", "5", "10", "20", "50"]
    # A harbour-sized window keeps the data's own cells and a linear scale for few vessels.
    harbour = [a for a in aggs if a["cell"].startswith("u10")]  # the Thames estuary, about 1.4 degrees
    assert picture_precision(harbour) == 6
    assert colour_scale([1, 2, 3]) == ("linear", 1, 3)


def test_land_and_sea_come_from_the_packaged_land_mask():
    from ais_pipeline.tools.report import land_mask

    _, _, land = land_mask(-1.0, 1.0, 51.0, 52.0, nx=3, ny=3)  # around London
    assert land[1][1]
    _, _, sea = land_mask(-31.0, -29.0, 39.0, 41.0, nx=3, ny=3)  # mid-Atlantic
    assert not sea.any()


def test_minute_steps_keep_at_most_fifteen_labels():
    from ais_pipeline.tools.report import minute_step

    assert [minute_step(n) for n in (7, 15, 16, 60, 200, 1440)] == [1, 1, 2, 5, 15, 120]


def test_a_store_of_runs_with_other_windows_is_drawn_from_one_configuration():
    from ais_pipeline.tools.report import one_configuration

    def agg(kind: str, size: int, start: str) -> dict[str, object]:
        return {"window": kind, "window_seconds": size, "slide_seconds": 60 if kind == "sliding" else size,
                "precision": 6, "cell": "u4pruy", "window_start": start}  # fmt: skip

    one_run = [agg("tumbling", 60, "a"), agg("tumbling", 60, "b"), agg("sliding", 900, "a")]
    assert one_configuration(one_run) == (one_run, "")
    mixed = [*one_run, agg("tumbling", 300, "a")]
    assert one_configuration(mixed) == (
        one_run,
        "sliding 900 s (slide 60 s), geohash precision 6; tumbling 60 s (slide 60 s), geohash precision 6",
    )


def test_the_map_marks_the_bad_fixes_that_fall_inside_it(run_dir: Path, tmp_path: Path):
    from ais_pipeline.tools.report import cell_boxes, draw_density

    tumbling = [a for aggs in final_aggregates(read_records(run_dir / "aggregates"), "tumbling").values() for a in aggs]
    boxes = cell_boxes([a for a in tumbling if a["vessel_hours"]], 4)
    inside, outside = (boxes[0].lat_min, boxes[0].lon_min), (89.9, 179.9)
    bar = draw_density(boxes, "hours", "hours", tmp_path / "map.png", [inside, inside, outside])
    legend = bar.mappable.axes.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["bad fixes (2): in no cell's figures"]


def test_the_page_lists_the_longest_gaps_with_their_verdicts_and_the_map_marks_their_starts(tmp_path: Path):
    import re

    from ais_pipeline.config import PipelineConfig
    from ais_pipeline.files import write_outputs
    from ais_pipeline.rules.plain import run_plain
    from tests.support.gap_cases import COASTAL, COVERED, EMPTY, OPEN, gap_case_lines

    result = run_plain(PipelineConfig(), gap_case_lines())
    write_outputs(result, tmp_path)
    (tmp_path / "summary.json").write_text(json.dumps(dict(result.totals)))
    assert main([str(tmp_path)]) == 0
    page = (tmp_path / "report" / "index.html").read_text()
    table = page[page.index('<table id="gaps">') :].split("</table>")[0]
    rows = re.findall(r"<tr><td>(\d+)</td><td>[^<]*</td><td>[^<]*</td><td>([\d.]+)</td><td>([^<]+)</td>", table)
    # One row per gap (its last word), longest first (then by start and MMSI).
    assert rows == [
        (str(COVERED), "13.0", "suspected disabling"),
        (str(EMPTY), "13.0", "suspected disabling"),
        (str(COASTAL), "13.0", "closed"),
        (str(OPEN), "6.2", "open"),
    ]
    assert "168, 2 in S21E075" in table and "0, 0 in S31E080" in table


def test_the_page_lists_the_busiest_ports_with_their_calls_and_dwell_and_the_map_marks_them(tmp_path: Path):
    import re

    from ais_pipeline.config import PipelineConfig
    from ais_pipeline.files import write_outputs
    from ais_pipeline.rules.plain import run_plain
    from tests.support.port_cases import anchorage_csv, port_case_lines

    ports = tmp_path / "made_ports.csv"
    ports.write_text(anchorage_csv())
    out = tmp_path / "run"
    result = run_plain(PipelineConfig(ports=str(ports)), port_case_lines())
    write_outputs(result, out)
    (out / "summary.json").write_text(json.dumps(dict(result.totals)))
    assert main([str(out)]) == 0
    page = (out / "report" / "index.html").read_text()
    table = page[page.index('<table id="ports">') :].split("</table>")[0]
    rows = re.findall(r"<tr><td>(PORT .)</td>" + r"<td>([^<]*)</td>" * 8, table)
    # Port A: five calls (its sixth visit, an entry and an exit alone, is no call), one still in
    # port; its ended calls 0.25, 1.92, 3.25 and 6.92 hours.
    assert rows == [
        ("PORT A", "", "5", "4", "4", "1", "2.58", "6.92", "unknown 5"),
        ("PORT B", "", "2", "2", "2", "0", "1.54", "1.58", "unknown 2"),
    ]


def test_a_months_chart_has_a_bar_a_day_labelled_with_dates_and_no_warning(tmp_path: Path):
    import warnings

    import matplotlib.dates as mdates

    from ais_pipeline.rules.outputs import iso_ms
    from ais_pipeline.tools.report import chart_bin, draw_duplicates

    day, minute = 86_400_000, 60_000
    start = 1_388_534_400_000  # 2014-01-01
    per_minute = {
        iso_ms(start + d * day + m * 97 * minute): {"positions_kept": 10, "duplicates_exact": 2, "duplicates_near": 0,
                                                    "late": 0}
        for d in range(31) for m in range(5)
    }  # fmt: skip
    late = {iso_ms(start + 3 * day + 5 * minute): 4}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib's "Locator attempting to generate ... ticks" included
        ax = draw_duplicates(per_minute, late, tmp_path / "chart.png")
    assert [chart_bin(n) for n in (60, 360, 361, 14 * 1440, 14 * 1440 + 1)] == [
        ("minute", 1), ("minute", 1), ("hour", 60), ("hour", 60), ("day", 1440),
    ]  # fmt: skip
    bars = [
        p
        for p in ax.patches
        if p.get_height() and p.get_facecolor()[:3] == (0.17254901960784313, 0.6274509803921569, 0.17254901960784313)
    ]
    assert len(bars) == 31 and {p.get_height() for p in bars} == {50}  # a day's five minutes in one bar
    assert {mdates.num2date(p.get_x()).strftime("%H:%M") for p in bars} == {"00:00"}
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert (
        labels[0].startswith("01-")
        and len(labels) <= 16
        and all(len(label) == 5 and label[2] == "-" for label in labels)
    )
    assert "per day" in ax.get_title() and "2014-01-01 to 2014-01-31" in ax.get_title()


def test_a_days_chart_has_a_bar_an_hour(tmp_path: Path):
    from ais_pipeline.rules.outputs import iso_ms
    from ais_pipeline.tools.report import draw_duplicates

    start = 1_388_534_400_000
    per_minute = {
        iso_ms(start + m * 7 * 60_000): {"positions_kept": 1, "duplicates_exact": 0, "duplicates_near": 0, "late": 0}
        for m in range(200)
    }  # 23 hours
    ax = draw_duplicates(per_minute, {}, tmp_path / "chart.png")
    assert "per hour" in ax.get_title() and ax.get_ylabel() == "position reports per hour"
    assert len([p for p in ax.patches if p.get_height()]) == 24


def test_the_page_lists_the_longest_loitering_and_the_map_marks_it(tmp_path: Path):
    import re

    from ais_pipeline.config import PipelineConfig
    from ais_pipeline.files import write_outputs
    from ais_pipeline.rules.plain import run_plain
    from tests.support.loitering_cases import IDLE, STILL, loitering_case_lines

    out = tmp_path / "run"
    result = run_plain(PipelineConfig(), loitering_case_lines())
    write_outputs(result, out)
    (out / "summary.json").write_text(json.dumps(dict(result.totals)))
    assert main([str(out)]) == 0
    page = (out / "report" / "index.html").read_text()
    table = page[page.index('<table id="loitering">') :].split("</table>")[0]
    rows = re.findall(r"<tr><td>(\d+)</td><td>[^<]*</td><td>[^<]*</td><td>([\d.]+)</td><td>([^<]+)</td>", table)
    # Each event by its last word, longest first: the one still going at the end, then the closed one.
    assert rows == [(str(STILL), "13.0", "open"), (str(IDLE), "10.0", "closed")]


def test_the_page_lists_the_longest_encounters_and_the_map_marks_them(tmp_path: Path):
    import re

    from ais_pipeline.config import PipelineConfig
    from ais_pipeline.files import write_outputs
    from ais_pipeline.rules.plain import run_plain
    from tests.support.encounter_cases import MEET, TWICE, encounter_case_lines

    out = tmp_path / "run"
    result = run_plain(PipelineConfig(), encounter_case_lines())
    write_outputs(result, out)
    (out / "summary.json").write_text(json.dumps(dict(result.totals)))
    assert main([str(out)]) == 0
    page = (out / "report" / "index.html").read_text()
    table = page[page.index('<table id="encounters">') :].split("</table>")[0]
    rows = re.findall(
        r"<tr><td>(\d+)</td><td>[^<]*</td><td>(\d+)</td><td>[^<]*</td><td>[^<]*</td><td>([\d.]+)</td><td>(\w+)</td>",
        table,
    )
    # Each encounter by its last word, longest first (the moored pair in port is none).
    assert rows == [
        (str(min(TWICE)), str(max(TWICE)), "8.0", "closed"),
        (str(min(MEET)), str(max(MEET)), "3.0", "closed"),
    ]
