"""`ais-pipeline report`: real PNGs of the right size with content, and an HTML page that links
them and shows the summary; made from the outputs of the bundled sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ais_pipeline.rules.outputs import read_jsonl
from ais_pipeline.rules.plain import main as plain_main
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


def test_report_writes_a_density_map_a_duplicates_chart_and_a_page(run_dir: Path, capsys):
    assert main([str(run_dir)]) == 0
    report = run_dir / "report"
    density, chart = image(report / "density.png"), image(report / "duplicates.png")
    assert density.shape[:2] == (600, 1000) and chart.shape[:2] == (450, 1000)
    for picture in (density, chart):
        pixels = picture[:, :, :3].reshape(-1, 3)
        assert len({tuple(p) for p in pixels[::7]}) > 50  # drawn, not blank
    page = (report / "index.html").read_text()
    assert 'src="density.png"' in page and 'src="duplicates.png"' in page
    assert "<th>positions_kept</th><td>7294</td>" in page and "<th>duplicates_exact</th><td>881</td>" in page
    # The busiest tumbling window of the sample: 02:14, in the title of the map and the page.
    assert "tumbling window 2022-11-10T02:14:00.000Z to 2022-11-10T02:15:00.000Z" in page
    assert capsys.readouterr().out.strip() == f"report in {report}/index.html"


def test_busiest_window_is_the_one_with_most_reports(run_dir: Path):
    windows = final_aggregates(read_jsonl(run_dir / "aggregates"), "tumbling")
    totals = {start: sum(a["reports"] for a in aggs) for start, aggs in windows.items()}
    assert busiest(windows) == max(totals, key=totals.__getitem__) == "2022-11-10T02:14:00.000Z"


def test_per_minute_figures_add_up_to_the_summary(run_dir: Path):
    summary = json.loads((run_dir / "summary.json").read_text())
    minutes = summary["per_minute"].values()
    for figure in ("positions_kept", "duplicates_exact", "duplicates_near", "late"):
        assert sum(m[figure] for m in minutes) == summary[figure]


def test_a_window_that_does_not_exist_is_a_one_line_error(run_dir: Path, capsys):
    assert main([str(run_dir), "--start", "1999-01-01T00:00:00.000Z"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ais-pipeline: error: --start: no tumbling window starts at")
