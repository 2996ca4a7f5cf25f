"""Pictures of a run: ``ais-pipeline report DIR [--window tumbling|sliding] [--start ISO] [--color
vessels|reports]`` reads the outputs of a file run (``--output DIR``) and writes ``DIR/report/``:

- ``density.png``: the final aggregates of one window per geohash cell, each cell drawn as its
  geohash box on longitude/latitude axes and coloured by vessels (or reports), with a colour bar;
  the window is the busiest one (most reports) unless ``--start`` names its start;
- ``duplicates.png``: per minute of event time, position reports kept against those dropped as
  exact duplicates, near duplicates and late, and the duplicate ratio;
- ``index.html``: both pictures and the run summary as a table.

No map tiles: everything is drawn from the outputs, offline.
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ais_pipeline.config import ConfigError
from ais_pipeline.rules import outputs
from ais_pipeline.rules.outputs import read_jsonl

DENSITY_SIZE = (10, 6)  # inches at 100 dpi: 1000 x 600 pixels
CHART_SIZE = (10, 4.5)  # 1000 x 450 pixels
DPI = 100


@dataclass(frozen=True)
class CellBox:
    cell: str
    lat_min: float
    lat_max: float
    lon_min: float
    lon_max: float
    vessels: int
    reports: int


def final_aggregates(aggregates: list[dict[str, Any]], window: str) -> dict[str, list[dict[str, Any]]]:
    """The final revision of every aggregate of one window kind, grouped by window start."""
    by_start: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (kind, _, start), agg in sorted(outputs.final_aggregates(aggregates).items()):
        if kind == window:
            by_start[start].append(agg)
    return dict(sorted(by_start.items()))


def busiest(windows: dict[str, list[dict[str, Any]]]) -> str:
    """The window start with the most reports (the earliest of equals)."""
    return max(sorted(windows), key=lambda start: sum(a["reports"] for a in windows[start]))


def cell_boxes(aggregates: list[dict[str, Any]]) -> list[CellBox]:
    import pygeohash

    boxes = []
    for agg in aggregates:
        lat, lon, lat_err, lon_err = pygeohash.decode_exactly(agg["cell"])
        boxes.append(
            CellBox(
                agg["cell"], lat - lat_err, lat + lat_err, lon - lon_err, lon + lon_err, agg["vessels"], agg["reports"]
            )
        )
    return boxes


def draw_density(boxes: list[CellBox], title: str, color_by: str, png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    fig, ax = plt.subplots(figsize=DENSITY_SIZE, dpi=DPI)
    values = [getattr(b, color_by) for b in boxes]
    patches = [Rectangle((b.lon_min, b.lat_min), b.lon_max - b.lon_min, b.lat_max - b.lat_min) for b in boxes]
    # Cells of precision 6 are about 1 km: an edge of the cell's own colour keeps each one
    # visible when the map spans oceans.
    collection = PatchCollection(patches, cmap="viridis", linewidths=2.5)
    collection.set_array(values)
    import numpy as np

    collection.set_edgecolor(collection.to_rgba(np.asarray(values)))  # type: ignore[arg-type]
    collection.set_clim(min(values), max(max(values), min(values) + 1))
    ax.add_collection(collection)
    lon_lo, lon_hi = min(b.lon_min for b in boxes), max(b.lon_max for b in boxes)
    lat_lo, lat_hi = min(b.lat_min for b in boxes), max(b.lat_max for b in boxes)
    pad_lon, pad_lat = max((lon_hi - lon_lo) * 0.05, 0.05), max((lat_hi - lat_lo) * 0.05, 0.05)
    ax.set_xlim(max(lon_lo - pad_lon, -180), min(lon_hi + pad_lon, 180))
    ax.set_ylim(max(lat_lo - pad_lat, -90), min(lat_hi + pad_lat, 90))
    ax.set_xlabel("longitude")
    ax.set_ylabel("latitude")
    ax.grid(True, color="0.85", lw=0.5)
    ax.set_title(title, fontsize=10)
    fig.colorbar(collection, ax=ax, label=f"{color_by} per cell")
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)


def draw_duplicates(per_minute: dict[str, dict[str, int]], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from datetime import datetime

    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

    minutes = [float(mdates.date2num(datetime.fromisoformat(m.replace("Z", "+00:00")))) for m in per_minute]
    kept = [v["positions_kept"] for v in per_minute.values()]
    exact = [v["duplicates_exact"] for v in per_minute.values()]
    near = [v["duplicates_near"] for v in per_minute.values()]
    late = [v["late"] for v in per_minute.values()]
    fig, ax = plt.subplots(figsize=CHART_SIZE, dpi=DPI)
    width = 0.8 / (24 * 60)  # most of a minute, in days
    ax.bar(minutes, kept, width, label="kept", color="tab:green")
    bottom = kept
    for values, label, color in (
        (exact, "exact duplicates", "tab:red"),
        (near, "near duplicates", "tab:orange"),
        (late, "late", "tab:purple"),
    ):
        ax.bar(minutes, values, width, bottom=bottom, label=label, color=color)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    ax.set_ylabel("position reports per minute")
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%m-%d %H:%M"))
    ax2 = ax.twinx()
    ratio = [(e + n) / (k + e + n) if k + e + n else 0 for k, e, n in zip(kept, exact, near, strict=True)]
    ax2.plot(minutes, ratio, color="black", marker=".", lw=1, label="duplicate ratio")
    ax2.set_ylim(0, 1)
    ax2.set_ylabel("duplicate ratio")
    handles = ax.get_legend_handles_labels()
    handles2 = ax2.get_legend_handles_labels()
    ax.legend(handles[0] + handles2[0], handles[1] + handles2[1], loc="upper left", fontsize="small")
    ax.set_title("Reports kept and dropped per minute of event time (UTC)")
    fig.autofmt_xdate()
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)


def summary_table(summary: dict[str, Any]) -> str:
    rows = []
    for key, value in summary.items():
        if key == "per_minute":
            continue
        shown = ", ".join(f"{k} {v}" for k, v in value.items()) if isinstance(value, dict) else str(value)
        rows.append(f"<tr><th>{html.escape(key)}</th><td>{html.escape(shown)}</td></tr>")
    return "\n".join(rows)


def write_index(report: Path, summary: dict[str, Any], title: str) -> None:
    page = f"""<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>AIS run report</title>
<style>body{{font-family:sans-serif;margin:2em;max-width:1100px}}table{{border-collapse:collapse}}
th,td{{border:1px solid #ccc;padding:.2em .6em;text-align:left}}img{{max-width:100%}}</style></head>
<body>
<h1>AIS run report</h1>
<h2>Traffic density</h2>
<p>{html.escape(title)}</p>
<img src="density.png" alt="density map of {html.escape(title)}" width="1000" height="600">
<h2>Duplicates over time</h2>
<img src="duplicates.png" alt="reports kept and dropped per minute" width="1000" height="450">
<h2>Summary</h2>
<table id="summary">
{summary_table(summary)}
</table>
</body>
</html>
"""
    (report / "index.html").write_text(page, encoding="utf-8")


def make_report(run_dir: Path, window: str = "tumbling", start: str | None = None, color_by: str = "vessels") -> Path:
    summary_file = run_dir / "summary.json"
    if not summary_file.exists():
        raise ConfigError(f"report: {run_dir} holds no summary.json (the --output DIR of a file run)")
    summary = json.loads(summary_file.read_text())
    windows = final_aggregates(read_jsonl(run_dir / "aggregates"), window)
    if not windows:
        raise ConfigError(f"report: {run_dir / 'aggregates'} has no {window} aggregates")
    chosen = start or busiest(windows)
    if chosen not in windows:
        raise ConfigError(f"--start: no {window} window starts at {chosen} (first {min(windows)}, last {max(windows)})")
    aggs = windows[chosen]
    end = aggs[0]["window_end"]
    reports = sum(a["reports"] for a in aggs)
    title = f"{window} window {chosen} to {end}: {len(aggs)} cells, {reports} reports"
    report = run_dir / "report"
    report.mkdir(exist_ok=True)
    draw_density(cell_boxes(aggs), title, color_by, report / "density.png")
    draw_duplicates(summary.get("per_minute") or {}, report / "duplicates.png")
    write_index(report, summary, title)
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ais-pipeline report", description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", type=Path, help="the --output DIR of a file run")
    parser.add_argument("--window", choices=("tumbling", "sliding"), default="tumbling")
    parser.add_argument("--start", help="window start, as in the aggregates (default: the busiest window)")
    parser.add_argument("--color", choices=("vessels", "reports"), default="vessels")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        report = make_report(args.dir, args.window, args.start, args.color)
    except ConfigError as exc:
        print(f"ais-pipeline: error: {exc}", file=sys.stderr)
        return 2
    print(f"report in {report}/index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
