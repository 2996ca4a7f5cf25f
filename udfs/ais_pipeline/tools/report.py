"""Pictures of a run: ``ais-pipeline report DIR [--window tumbling|sliding] [--start ISO] [--color
hours|vessels|reports]`` reads the outputs of a file run (``--output DIR``) and writes ``DIR/report/``
(with ``--postgres URL``, it reads the tables that runs wrote, and writes ``DIR/``):

- ``density.png``: final aggregates per geohash cell, each cell drawn as its geohash box on
  longitude/latitude axes over land and sea (the GLOBE land mask of the ``global-land-mask``
  package), coloured on a log scale when the values span a factor of 10 or more; cells too small
  to see at the map's span are merged into coarser geohash cells, which the title says. By
  default the vessel hours of the whole run (the final tumbling windows summed: each moment is in
  one tumbling window); ``--color vessels`` or ``reports``: one window, the busiest (most
  reports) unless ``--start`` names its start (with ``--start``, or ``--window sliding``, whose
  windows overlap, hours are that one window's too);
- ``types.png``: the run's vessel hours per ship type category (final tumbling windows);
- ``duplicates.png``: per minute of event time (per hour over more than six hours, per day over
  more than two weeks; one bar from each bin's start, ticks on bin boundaries, dated when the span
  crosses days), position reports kept against those dropped as exact duplicates, near
  duplicates and late for dedup, the reports kept but late for the tumbling window, and the
  duplicate ratio;
- ``index.html``: the pictures, and as tables the longest gaps, the busiest ports, the longest
  loitering, the longest encounters and the run summary; the map marks the gaps, ports,
  loitering and encounters too.

No map tiles: everything is drawn from the outputs and packaged data, offline.
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

from ais_pipeline.errors import ConfigError, guarded
from ais_pipeline.files import read_records
from ais_pipeline.rules import outputs

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
    hours: float = 0.0


def final_aggregates(aggregates: list[dict[str, Any]], window: str) -> dict[str, list[dict[str, Any]]]:
    """The final revision of every aggregate of one window kind, grouped by window start."""
    by_start: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (kind, _, start), agg in sorted(outputs.final_aggregates(aggregates).items()):
        if kind == window:
            by_start[start].append(agg)
    return dict(sorted(by_start.items()))


def one_configuration(aggregates: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """Per window kind, the aggregates of one configuration (size, slide, geohash precision), the
    one with the most of them, when a store holds runs with several; and, then, which ones they
    are ("" when each kind has one, or the records do not say)."""
    counts: dict[tuple[Any, ...], int] = {}
    for a in aggregates:
        key = (a["window"], a.get("window_seconds"), a.get("slide_seconds"), a.get("precision"))
        counts[key] = counts.get(key, 0) + 1
    chosen: dict[Any, tuple[Any, ...]] = {}
    for key in sorted(counts, key=lambda k: (-counts[k], str(k))):
        chosen.setdefault(key[0], key)
    if len(chosen) == len(counts):
        return aggregates, ""
    keep = set(chosen.values())
    kept = [
        a
        for a in aggregates
        if (a["window"], a.get("window_seconds"), a.get("slide_seconds"), a.get("precision")) in keep
    ]
    said = "; ".join(f"{k[0]} {k[1]} s (slide {k[2]} s), geohash precision {k[3]}" for k in sorted(keep))
    return kept, said


def busiest(windows: dict[str, list[dict[str, Any]]]) -> str:
    """The window start with the most reports (the earliest of equals)."""
    return max(sorted(windows), key=lambda start: sum(a["reports"] for a in windows[start]))


def cell_boxes(aggregates: list[dict[str, Any]], precision: int | None = None) -> list[CellBox]:
    """Each aggregate's geohash cell as a box; with ``precision`` coarser than the cells', the
    cells merged into their parent cells at that precision (reports and vessels summed: a vessel
    seen in two of the finer cells counts twice)."""
    import pygeohash

    merged: dict[str, list[float]] = {}
    for agg in aggregates:
        cell = agg["cell"][:precision] if precision else agg["cell"]
        totals = merged.setdefault(cell, [0, 0, 0.0])
        totals[0] += agg["vessels"]
        totals[1] += agg["reports"]
        totals[2] += agg.get("vessel_hours") or 0.0
    boxes = []
    for cell, (vessels, reports, hours) in sorted(merged.items()):
        lat, lon, lat_err, lon_err = pygeohash.decode_exactly(cell)
        box = (lat - lat_err, lat + lat_err, lon - lon_err, lon + lon_err)
        boxes.append(CellBox(cell, *box, int(vessels), int(reports), round(hours, 6)))
    return boxes


# Longitude width of a geohash cell per precision (degrees).
CELL_WIDTH = {p: 360 / 2 ** ((5 * p + 1) // 2) for p in range(1, 13)}


def picture_precision(aggregates: list[dict[str, Any]], width_px: int = 800) -> int:
    """The geohash precision at which the cells of the map are drawn: the data's own, unless its
    cells would be smaller than about 2 pixels across the map's span of longitude; then the finest
    precision whose cells are at least that wide."""
    import pygeohash

    data = max(len(a["cell"]) for a in aggregates)
    lons = [pygeohash.decode_exactly(a["cell"])[1] for a in aggregates]
    span = max(max(lons) - min(lons), CELL_WIDTH[data])
    for precision in range(data, 0, -1):
        if CELL_WIDTH[precision] >= 2 * span / width_px:
            return precision
    return 1


def colour_scale(values: Sequence[float], counts: bool = True) -> tuple[str, float, float]:
    """("log" or "linear", low, high) for a colour bar over these values: logarithmic when the
    largest is at least 10 times the smallest (most cells hold one vessel, a few many). Counts
    start at 1; hours at the smallest positive value."""
    low, high = min(values), max(values)
    floor = 1.0 if counts else min((v for v in values if v > 0), default=1.0)
    if high >= 10 * max(low, floor):
        return "log", max(low, floor), high
    return "linear", low, max(high, low + (1 if counts else floor))


def land_mask(lon_lo: float, lon_hi: float, lat_lo: float, lat_hi: float, nx: int = 1000, ny: int = 600) -> Any:
    """Land (True) on a grid over the map's extent, from the GLOBE 1 km land mask that the
    ``global-land-mask`` package ships: coastlines offline, no tiles."""
    import numpy as np
    from global_land_mask import globe

    lons = np.linspace(lon_lo, lon_hi, nx)
    lats = np.linspace(lat_lo, lat_hi, ny)
    grid_lon, grid_lat = np.meshgrid(lons, lats)
    return lons, lats, globe.is_land(grid_lat, grid_lon)


def draw_density(
    boxes: list[CellBox],
    title: str,
    color_by: str,
    png: Path,
    bad: Sequence[tuple[float, float]] = (),
    gaps: Sequence[tuple[float, float, bool]] = (),
    ports: Sequence[tuple[float, float, str]] = (),
    loitering: Sequence[tuple[float, float]] = (),
    encounters: Sequence[tuple[float, float]] = (),
) -> Any:
    """The map, with the run's bad fixes (lat, lon) as red crosses, its gaps' starts (lat, lon,
    suspected) as triangles (suspected ones filled), its ports of call (lat, lon, label) as
    labelled squares, its loitering events' places (lat, lon) as diamonds and its encounters'
    places as stars where they fall inside it; returns its axes' colour bar (for tests of the
    scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.collections import PatchCollection
    from matplotlib.colors import LogNorm, Normalize
    from matplotlib.patches import Rectangle

    fig, ax = plt.subplots(figsize=DENSITY_SIZE, dpi=DPI)
    values = [getattr(b, color_by) for b in boxes]
    lon_lo, lon_hi = min(b.lon_min for b in boxes), max(b.lon_max for b in boxes)
    lat_lo, lat_hi = min(b.lat_min for b in boxes), max(b.lat_max for b in boxes)
    pad_lon, pad_lat = max((lon_hi - lon_lo) * 0.05, 0.05), max((lat_hi - lat_lo) * 0.05, 0.05)
    x0, x1 = max(lon_lo - pad_lon, -180), min(lon_hi + pad_lon, 180)
    y0, y1 = max(lat_lo - pad_lat, -90), min(lat_hi + pad_lat, 90)
    lons, lats, land = land_mask(x0, x1, y0, y1)
    ax.set_facecolor("#dce9f5")  # sea
    ax.contourf(lons, lats, land.astype(float), levels=[0.5, 1.5], colors=["#d9d4c7"])  # land
    ax.contour(lons, lats, land.astype(float), levels=[0.5], colors=["#8c8672"], linewidths=0.4)
    patches = [Rectangle((b.lon_min, b.lat_min), b.lon_max - b.lon_min, b.lat_max - b.lat_min) for b in boxes]
    scale, low, high = colour_scale(values, counts=color_by != "hours")
    norm = LogNorm(low, high) if scale == "log" else Normalize(low, high)
    collection = PatchCollection(patches, cmap="viridis", norm=norm, linewidths=0.8)
    collection.set_array(np.asarray(values, dtype=float))
    collection.set_edgecolor(collection.to_rgba(np.asarray(values, dtype=float)))  # type: ignore[arg-type]
    ax.add_collection(collection)
    inside = [(lat, lon) for lat, lon in bad if x0 <= lon <= x1 and y0 <= lat <= y1]
    legend = False
    if inside:
        ax.scatter([lon for _, lon in inside], [lat for lat, _ in inside], marker="x", s=18, color="red", lw=0.8,
                   label=f"bad fixes ({len(inside)}): in no cell's figures")  # fmt: skip
        legend = True
    for suspected, face in ((False, "none"), (True, "#e8590c")):
        starts = [(lat, lon) for lat, lon, s in gaps if s == suspected and x0 <= lon <= x1 and y0 <= lat <= y1]
        if starts:
            label = "suspected disablings" if suspected else "gaps (AIS off)"
            ax.scatter([lon for _, lon in starts], [lat for lat, _ in starts], marker="^", s=30, facecolors=face,
                       edgecolors="#e8590c", lw=0.9, label=f"{label} ({len(starts)}): where they started")  # fmt: skip
            legend = True
    called = [(lat, lon, label) for lat, lon, label in ports if x0 <= lon <= x1 and y0 <= lat <= y1]
    if called:
        ax.scatter([lon for _, lon, _ in called], [lat for lat, _, _ in called], marker="s", s=26,
                   facecolors="white", edgecolors="black", lw=0.8, label=f"ports of call ({len(called)})")  # fmt: skip
        for lat, lon, label in called[:PORTS_LABELLED]:  # the busiest (more would overlap)
            ax.annotate(label, (lon, lat), xytext=(4, 4), textcoords="offset points", fontsize=7)
        legend = True
    idle = [(lat, lon) for lat, lon in loitering if x0 <= lon <= x1 and y0 <= lat <= y1]
    if idle:
        ax.scatter([lon for _, lon in idle], [lat for lat, _ in idle], marker="D", s=26, facecolors="#f59f00",
                   edgecolors="black", lw=0.6, label=f"loitering ({len(idle)}): where it was")  # fmt: skip
        legend = True
    met = [(lat, lon) for lat, lon in encounters if x0 <= lon <= x1 and y0 <= lat <= y1]
    if met:
        ax.scatter([lon for _, lon in met], [lat for lat, _ in met], marker="*", s=60, facecolors="#ae3ec9",
                   edgecolors="black", lw=0.5, label=f"encounters ({len(met)}): where they met")  # fmt: skip
        legend = True
    if legend:
        ax.legend(loc="lower left", fontsize=8)
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_xlabel("longitude")
    ax.set_ylabel("latitude")
    ax.grid(True, color="white", lw=0.5)
    ax.set_title(title, fontsize=10)
    label = "vessel hours" if color_by == "hours" else color_by
    bar = fig.colorbar(collection, ax=ax, label=f"{label} per cell" + (" (log scale)" if scale == "log" else ""))
    if scale == "log":  # 1, 2, 5, 10, 20, 50, ... written out (0.01, 0.02, ... for hours)
        from matplotlib.ticker import FixedLocator, NullLocator

        ticks = [round(t * 10.0**e, 6) for e in range(-6, 7) for t in (1, 2, 5) if low <= t * 10.0**e <= high]
        bar.ax.yaxis.set_major_locator(FixedLocator(ticks))
        bar.ax.yaxis.set_minor_locator(NullLocator())
        bar.ax.set_yticklabels([f"{t:,.0f}" if t >= 1 else f"{t:g}" for t in ticks])
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)
    return bar


def minute_step(minutes: int) -> int:
    """Minutes between labelled ticks: every minute for up to 15, then 2, 5, 10, 15, 30, 60, ..."""
    for step in (1, 2, 5, 10, 15, 30, 60, 120, 360, 720, 1440):
        if minutes / step <= 15:
            return step
    return 1440 * (minutes // (1440 * 15) + 1)


# The duplicates chart's bin, by the span of the run's event time: a minute up to six hours, an
# hour up to two weeks, a day beyond (about a thousand bars at most, and ticks that read).
CHART_BINS = (("minute", 1, 6 * 60), ("hour", 60, 14 * 1440), ("day", 1440, None))


def chart_bin(span_minutes: int) -> tuple[str, int]:
    """The bin (its name, its minutes) of a chart of ``span_minutes`` of event time."""
    for name, size, upto in CHART_BINS:
        if upto is None or span_minutes <= upto:
            return name, size
    raise AssertionError("the last bin takes any span")


def binned(per_minute: dict[str, dict[str, int]], minutes: int) -> dict[str, dict[str, int]]:
    """Per-minute figures added up into bins of ``minutes`` (from midnight UTC), each under the
    ISO time of its start, in time order."""
    from ais_pipeline.rules.outputs import iso_ms, parse_iso_ms

    size = minutes * 60_000
    out: dict[str, dict[str, int]] = {}
    for iso, figures in per_minute.items():
        ts = parse_iso_ms(iso)
        key = iso_ms(ts - ts % size)
        into = out.setdefault(key, {})
        for name, n in figures.items():
            into[name] = into.get(name, 0) + n
    return dict(sorted(out.items()))


def draw_duplicates(per_minute: dict[str, dict[str, int]], late_for_window: dict[str, int], png: Path) -> Any:
    """Per minute of event time (per hour or per day over a longer span: :data:`CHART_BINS`), one
    bar from the bin's start: kept, exact and near duplicates, reports late for dedup, stacked;
    the reports kept but late for the tumbling window as points; the duplicate ratio as a line.
    Ticks on bin boundaries, labelled with the date when the span crosses days. Returns the axes
    (for tests)."""
    import matplotlib

    matplotlib.use("Agg")
    from datetime import datetime

    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

    def day_number(iso: str) -> float:
        return float(mdates.date2num(datetime.fromisoformat(iso.replace("Z", "+00:00"))))

    span = 0
    if per_minute:
        days = [day_number(m) for m in per_minute]
        span = round((max(days) - min(days)) * 1440) + 1
    unit, size = chart_bin(span)
    bins, late_bins = binned(per_minute, size), binned({k: {"late": v} for k, v in late_for_window.items()}, size)
    width = size / 1440  # a bin, in days
    starts = [day_number(m) for m in bins]
    kept = [v.get("positions_kept", 0) for v in bins.values()]
    exact = [v.get("duplicates_exact", 0) for v in bins.values()]
    near = [v.get("duplicates_near", 0) for v in bins.values()]
    late = [v.get("late", 0) for v in bins.values()]
    fig, ax = plt.subplots(figsize=CHART_SIZE, dpi=DPI)
    ax.bar(starts, kept, 0.85 * width, align="edge", label="kept", color="tab:green")
    bottom = kept
    for values, label, color in (
        (exact, "exact duplicates", "tab:red"),
        (near, "near duplicates", "tab:orange"),
        (late, "late for dedup (dropped)", "tab:purple"),
    ):
        if any(values):  # a series with no report stays out of the legend too
            ax.bar(starts, values, 0.85 * width, bottom=bottom, align="edge", label=label, color=color)
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    if any(v["late"] for v in late_bins.values()):
        xs = [day_number(m) + 0.425 * width for m in late_bins]
        ax.plot(xs, [v["late"] for v in late_bins.values()], "v", color="tab:blue", ms=6,
                label="kept, late for the tumbling window")  # fmt: skip
    ax.set_ylabel(f"position reports per {unit}")
    first_day = last_day = ""
    if starts:
        first_day, last_day = next(iter(bins))[:10], next(reversed(bins))[:10]
        count = round((max(starts) - min(starts)) / width) + 1  # bins the span holds
        if unit == "minute":
            step = minute_step(count)
            if step < 60:
                ax.xaxis.set_major_locator(mdates.MinuteLocator(byminute=range(0, 60, step)))
            else:
                ax.xaxis.set_major_locator(mdates.HourLocator(byhour=range(0, 24, max(step // 60, 1))))
            ax.xaxis.set_minor_locator(mdates.MinuteLocator())
        elif unit == "hour":
            step = next(s for s in (1, 2, 3, 6, 12, 24, 48, 96, 168, 336) if count / s <= 15)
            if step < 24:
                ax.xaxis.set_major_locator(mdates.HourLocator(byhour=range(0, 24, step)))
            else:
                ax.xaxis.set_major_locator(mdates.DayLocator(interval=step // 24))
            ax.xaxis.set_minor_locator(
                mdates.HourLocator(byhour=range(0, 24, 6)) if count > 96 else mdates.HourLocator()
            )
        else:
            ax.xaxis.set_major_locator(mdates.DayLocator(interval=max(1, -(-count // 15))))
            ax.xaxis.set_minor_locator(mdates.DayLocator())
        ax.set_xlim(min(starts), max(starts) + width)
    one_day = first_day == last_day
    ax.xaxis.set_major_formatter(
        mdates.DateFormatter("%H:%M" if one_day else "%m-%d %H:%M" if unit != "day" else "%m-%d")
    )
    ax2 = ax.twinx()
    ratio = [(e + n) / (k + e + n) if k + e + n else 0 for k, e, n in zip(kept, exact, near, strict=True)]
    ax2.plot([m + 0.425 * width for m in starts], ratio, color="black", marker=".", lw=1, label="duplicate ratio")
    ax2.set_ylim(0, 1)
    ax2.set_ylabel("duplicate ratio")
    handles, labels = ax.get_legend_handles_labels()
    handles2, labels2 = ax2.get_legend_handles_labels()
    order = ["kept", "exact duplicates", "near duplicates", "late for dedup (dropped)"]
    pairs = sorted(zip(handles + handles2, labels + labels2, strict=True), key=lambda p: _rank(order, p[1]))
    ax.legend([h for h, _ in pairs], [label for _, label in pairs], loc="upper left", fontsize="small")
    when = first_day if one_day else f"{first_day} to {last_day}"
    ax.set_title(f"Reports kept and dropped per {unit} of event time, {when} (UTC); each bar from its {unit}")
    if not one_day:
        ax.set_xlabel("month-day (UTC)" if unit == "day" else "month-day hour:minute (UTC)")
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)
    return ax


def hours_by_type(tumbling: list[dict[str, Any]]) -> dict[str, float]:
    """Vessel hours per ship type category over final tumbling aggregates, in the categories' order."""
    from ais_pipeline.rules.vessel_hours import ALL_CATEGORIES

    totals = dict.fromkeys(ALL_CATEGORIES, 0.0)
    for agg in tumbling:
        for name, figures in (agg.get("by_type") or {}).items():
            totals[name] = totals.get(name, 0.0) + float(figures["vessel_hours"])
    return {name: round(h, 6) for name, h in totals.items()}


def draw_types(hours: dict[str, float], late_hours: float, png: Path) -> Any:
    """Vessel hours per ship type category, one bar each (the chart's axes, for tests)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=CHART_SIZE, dpi=DPI)
    names = list(hours)
    ax.barh(names, [hours[n] for n in names], color="tab:blue")
    ax.invert_yaxis()
    for i, name in enumerate(names):
        if hours[name]:
            ax.text(hours[name], i, f" {hours[name]:.3f}", va="center", fontsize=8)
    ax.set_xlabel("vessel hours (final tumbling windows)")
    late = f"; {late_hours} h too late for their windows, not counted" if late_hours else ""
    ax.set_title(f"vessel hours by ship type: {round(sum(hours.values()), 6)} h{late}", fontsize=10)
    ax.grid(True, axis="x", color="#ddd", lw=0.5)
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)
    return ax


def _rank(order: list[str], label: str) -> int:
    return order.index(label) if label in order else len(order)


def late_per_minute(late: list[dict[str, Any]], window: str = "tumbling") -> dict[str, int]:
    """Records of the late output for one window kind, per minute of their event time."""
    counts: dict[str, int] = {}
    for record in late:
        if record.get("window") == window:
            ts = outputs.parse_iso_ms(str(record["timestamp"]))
            minute = outputs.iso_ms(ts - ts % 60_000)
            counts[minute] = counts.get(minute, 0) + 1
    return dict(sorted(counts.items()))


def summary_table(summary: dict[str, Any]) -> str:
    rows = []
    for key, value in summary.items():
        if key == "per_minute":
            continue
        shown = ", ".join(f"{k} {v}" for k, v in value.items()) if isinstance(value, dict) else str(value)
        rows.append(f"<tr><th>{html.escape(key)}</th><td>{html.escape(shown)}</td></tr>")
    return "\n".join(rows)


LONGEST_GAPS = 20


def gap_events(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last word on each gap (closed over open), longest first."""
    last: dict[str, dict[str, Any]] = {}
    for record in records:
        kept = last.get(record["id"])
        if kept is None or (kept["open"] and not record["open"]) or (kept["open"] and record["hours"] > kept["hours"]):
            last[record["id"]] = record
    return sorted(last.values(), key=lambda g: (-float(g["hours"]), str(g["start_time"]), int(g["mmsi"])))


def gaps_table(gaps: Sequence[dict[str, Any]]) -> str:
    """The longest gaps, a row each."""
    if not gaps:
        return "<p>No vessel went silent for longer than the gap threshold.</p>"
    head = (
        "<tr><th>mmsi</th><th>ship type</th><th>start</th><th>hours</th><th>state</th>"
        "<th>from shore (nm)</th><th>positions before</th><th>others heard (reports, vessels)</th></tr>"
    )
    rows = []
    for g in gaps[:LONGEST_GAPS]:
        state = "open" if g["open"] else ("suspected disabling" if g["suspected_disabling"] else "closed")
        shore = f"{g['start_shore_nm']}" + ("" if g["end_shore_nm"] is None else f" / {g['end_shore_nm']}")
        cells = [
            g["mmsi"], g["ship_type"], g["start_time"], g["hours"], state, shore, g["positions_before"],
            f"{g.get('coverage_reports')}, {g.get('coverage_vessels')} in {g.get('coverage_cell')}",
        ]  # fmt: skip
        rows.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    more = f"<p>{len(gaps) - LONGEST_GAPS} more in the gaps output.</p>" if len(gaps) > LONGEST_GAPS else ""
    return f'<table id="gaps">\n{head}\n' + "\n".join(rows) + "\n</table>" + more


PORTS_SHOWN = 20
PORTS_LABELLED = 8
CALL_CONFIDENCE = 2  # a call: a visit with a stop or a gap (1: an entry and an exit alone, a pass-by)


def port_calls(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ports of the visits of confidence 2 or more, each visit by its last record (closed
    over open, else the newest), busiest first: calls, arrivals (with an entry), departures (with
    an exit), vessels in port at the end, the median and the longest dwell of the calls that
    ended, and calls per ship type."""
    import statistics

    last: dict[str, dict[str, Any]] = {}
    for record in records:
        kept = last.get(record["id"])
        if kept is None or (kept["open"] and (not record["open"] or str(record["as_of"]) >= str(kept["as_of"]))):
            last[record["id"]] = record
    ports: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for visit in last.values():
        if int(visit["confidence"]) >= CALL_CONFIDENCE:
            ports.setdefault((str(visit["start_label"]), str(visit["start_iso3"] or "")), []).append(visit)
    out = []
    for (label, iso3), visits in ports.items():
        kinds = [{e["type"] for e in v["events"]} for v in visits]
        ended = [float(v["hours"]) for v in visits if not v["open"]]
        types: dict[str, int] = {}
        for v in visits:
            types[str(v["ship_type"])] = types.get(str(v["ship_type"]), 0) + 1
        out.append(
            {
                "port": label, "iso3": iso3, **_where(visits),
                "calls": len(visits), "arrivals": sum("PORT_ENTRY" in k for k in kinds),
                "departures": sum("PORT_EXIT" in k for k in kinds), "in_port": sum(bool(v["open"]) for v in visits),
                "median_hours": round(statistics.median(ended), 2) if ended else None,
                "longest_hours": round(max(ended), 2) if ended else None,
                "by_type": dict(sorted(types.items(), key=lambda t: (-t[1], t[0]))),
            }
        )  # fmt: skip
    return sorted(out, key=lambda p: (-p["calls"], p["port"], p["iso3"]))


def _where(visits: list[dict[str, Any]]) -> dict[str, float]:
    """A port's place on the map: the anchorage most of its calls began at (of several, the
    southernmost, then westernmost), whatever order the records came in."""
    counts: dict[tuple[float, float], int] = {}
    for v in visits:
        at = (float(v["lat"]), float(v["lon"]))
        counts[at] = counts.get(at, 0) + 1
    lat, lon = min(counts, key=lambda at: (-counts[at], at))
    return {"lat": lat, "lon": lon}


def ports_table(ports: Sequence[dict[str, Any]]) -> str:
    """The busiest ports, a row each."""
    if not ports:
        return "<p>No port calls (visits with a stop or a gap) in this run.</p>"
    head = (
        "<tr><th>port</th><th>iso3</th><th>calls</th><th>arrivals</th><th>departures</th><th>in port at the end</th>"
        "<th>median dwell (h)</th><th>longest dwell (h)</th><th>calls by ship type</th></tr>"
    )
    rows = []
    for p in ports[:PORTS_SHOWN]:
        types = ", ".join(f"{t} {n}" for t, n in p["by_type"].items())
        cells = [
            p["port"], p["iso3"], p["calls"], p["arrivals"], p["departures"], p["in_port"],
            "" if p["median_hours"] is None else p["median_hours"],
            "" if p["longest_hours"] is None else p["longest_hours"], types,
        ]  # fmt: skip
        rows.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    more = (
        f"<p>{len(ports) - PORTS_SHOWN} more ports in the port_visits output.</p>" if len(ports) > PORTS_SHOWN else ""
    )
    return f'<table id="ports">\n{head}\n' + "\n".join(rows) + "\n</table>" + more


LOITERING_SHOWN = 20


def last_words(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last word on each event of records written under one id until closed (closed over open,
    else the newest), of those published at their last word."""
    last: dict[str, dict[str, Any]] = {}
    for record in records:
        kept = last.get(record["id"])
        if kept is None or (kept["open"] and (not record["open"] or str(record["as_of"]) > str(kept["as_of"]))):
            last[record["id"]] = record
    return [e for e in last.values() if e["published"]]


def loitering_events(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The published loitering events' last words, longest first."""
    return sorted(last_words(records), key=lambda e: (-float(e["hours"]), str(e["start_time"]), int(e["mmsi"])))


def encounter_events(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The published encounters' last words, longest first."""
    return sorted(last_words(records), key=lambda e: (-float(e["hours"]), str(e["start_time"]), str(e["id"])))


def loitering_table(events: Sequence[dict[str, Any]]) -> str:
    """The longest loitering events, a row each."""
    if not events:
        return "<p>No vessel loitered long enough, far enough from shore, in this run.</p>"
    head = (
        "<tr><th>mmsi</th><th>ship type</th><th>start</th><th>hours</th><th>state</th>"
        "<th>mean speed (kn)</th><th>from shore (nm)</th><th>where</th></tr>"
    )
    rows = []
    for e in events[:LOITERING_SHOWN]:
        cells = [
            e["mmsi"], e["ship_type"], e["start_time"], e["hours"], "open" if e["open"] else "closed",
            "" if e["avg_speed_kn"] is None else e["avg_speed_kn"], e["shore_nm"], f"{e['lat']}, {e['lon']}",
        ]  # fmt: skip
        rows.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    more = (
        f"<p>{len(events) - LOITERING_SHOWN} more in the loitering output.</p>" if len(events) > LOITERING_SHOWN else ""
    )
    return f'<table id="loitering">\n{head}\n' + "\n".join(rows) + "\n</table>" + more


ENCOUNTERS_SHOWN = 20


def encounters_table(events: Sequence[dict[str, Any]]) -> str:
    """The longest encounters, a row each."""
    if not events:
        return "<p>No two vessels met long enough, slow enough, away from ports, in this run.</p>"
    head = (
        "<tr><th>mmsi</th><th>ship type</th><th>mmsi</th><th>ship type</th><th>start</th><th>hours</th>"
        "<th>state</th><th>median distance (km)</th><th>median speed (kn)</th><th>from shore (nm)</th>"
        "<th>where</th></tr>"
    )
    rows = []
    for e in events[:ENCOUNTERS_SHOWN]:
        cells = [
            e["mmsi_1"], e["ship_type_1"], e["mmsi_2"], e["ship_type_2"], e["start_time"], e["hours"],
            "open" if e["open"] else "closed", e["median_distance_km"], e["median_speed_kn"], e["shore_nm"],
            f"{e['lat']}, {e['lon']}",
        ]  # fmt: skip
        rows.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    more = (
        f"<p>{len(events) - ENCOUNTERS_SHOWN} more in the encounters output.</p>"
        if len(events) > ENCOUNTERS_SHOWN
        else ""
    )
    return f'<table id="encounters">\n{head}\n' + "\n".join(rows) + "\n</table>" + more


def write_index(
    report: Path,
    summary: dict[str, Any],
    title: str,
    gaps: Sequence[dict[str, Any]] = (),
    ports: Sequence[dict[str, Any]] = (),
    loitering: Sequence[dict[str, Any]] = (),
    encounters: Sequence[dict[str, Any]] = (),
) -> None:
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
<h2>Vessel hours by ship type</h2>
<img src="types.png" alt="vessel hours per ship type category" width="1000" height="450">
<h2>Longest gaps (vessels that went dark)</h2>
{gaps_table(gaps)}
<h2>Busiest ports (calls: visits with a stop or a gap; dwell in hours, of the calls that ended)</h2>
{ports_table(ports)}
<h2>Longest loitering (slow hours in a row, far from shore)</h2>
{loitering_table(loitering)}
<h2>Longest encounters (two vessels side by side at sea)</h2>
{encounters_table(encounters)}
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


def make_report(run_dir: Path, window: str = "tumbling", start: str | None = None, color_by: str = "hours") -> Path:
    """The report of a file run's output directory, into ``run_dir/report/``."""
    summary_file = run_dir / "summary.json"
    if not summary_file.exists():
        raise ConfigError(f"report: {run_dir} holds no summary.json (the --output DIR of a file run)")
    summary = json.loads(summary_file.read_text())
    aggregates, late = read_records(run_dir / "aggregates"), read_records(run_dir / "late")
    bad = read_records(run_dir / "bad_fixes")
    gaps, visits = read_records(run_dir / "gaps"), read_records(run_dir / "port_visits")
    loitering, encounters = read_records(run_dir / "loitering"), read_records(run_dir / "encounters")
    where = str(run_dir / "aggregates")
    return draw_report(
        run_dir / "report", where, summary, aggregates, late, window, start, color_by, bad, gaps, visits, loitering,
        encounters,
    )  # fmt: skip


def make_report_from_postgres(
    target: Any, report: Path, window: str = "tumbling", start: str | None = None, color_by: str = "hours"
) -> Path:
    """The report of what the PostgreSQL tables hold (``--postgres URL``), into ``report``: the
    aggregates and late records of every run into them, and the summary of the newest file run."""
    from ais_pipeline import postgres

    tables = postgres.read_outputs(
        target, ("aggregates", "late", "bad_fixes", "gaps", "port_visits", "loitering", "encounters")
    )
    summary = postgres.latest_run_summary(target) or {}
    where = f"the table ais_aggregates in {target.shown()}"
    return draw_report(
        report,
        where,
        summary,
        tables["aggregates"],
        tables["late"],
        window,
        start,
        color_by,
        tables["bad_fixes"],
        tables["gaps"],
        tables["port_visits"],
        tables["loitering"],
        tables["encounters"],
    )


def draw_report(
    report: Path,
    where: str,
    summary: dict[str, Any],
    aggregates: list[dict[str, Any]],
    late_records: list[dict[str, Any]],
    window: str,
    start: str | None,
    color_by: str,
    bad_fixes: Sequence[dict[str, Any]] = (),
    gap_records: Sequence[dict[str, Any]] = (),
    visit_records: Sequence[dict[str, Any]] = (),
    loitering_records: Sequence[dict[str, Any]] = (),
    encounter_records: Sequence[dict[str, Any]] = (),
) -> Path:
    aggregates, others = one_configuration(aggregates)
    windows = final_aggregates(aggregates, window)
    if not windows:
        raise ConfigError(f"report: {where} has no {window} aggregates")
    tumbling = [a for aggs in final_aggregates(aggregates, "tumbling").values() for a in aggs]
    if color_by == "hours" and start is None and window == "tumbling":  # the whole run: each moment in one
        if not tumbling:
            raise ConfigError(f"report: {where} has no tumbling aggregates")
        aggs = [a for a in tumbling if a.get("vessel_hours")] or tumbling
        first, last = min(a["window_start"] for a in aggs), max(a["window_end"] for a in aggs)
        total = round(sum(a.get("vessel_hours") or 0.0 for a in aggs), 6)
        title = f"vessel hours {first} to {last}: {len({a['cell'] for a in aggs})} cells, {total} h"
    else:
        chosen = start or busiest(windows)
        if chosen not in windows:
            raise ConfigError(
                f"--start: no {window} window starts at {chosen} (first {min(windows)}, last {max(windows)})"
            )
        aggs = windows[chosen]
        end = aggs[0]["window_end"]
        reports = sum(a["reports"] for a in aggs)
        title = f"{window} window {chosen} to {end}: {len(aggs)} cells, {reports} reports"
        if color_by == "hours":
            title += f", {round(sum(a.get('vessel_hours') or 0.0 for a in aggs), 6)} vessel hours"
    if others:
        title += f" (windows of {others}; the table holds others too)"
    data_precision, precision = max(len(a["cell"]) for a in aggs), picture_precision(aggs)
    map_title = title
    if precision < data_precision:
        map_title += f"\ndrawn as geohash cells of precision {precision} (the data's {data_precision}, summed)"
    report.mkdir(parents=True, exist_ok=True)
    bad = [(float(b["lat"]), float(b["lon"])) for b in bad_fixes]
    gaps = gap_events(gap_records)
    starts = [(float(g["start_lat"]), float(g["start_lon"]), bool(g["suspected_disabling"])) for g in gaps]
    ports = port_calls(visit_records)
    called = [(p["lat"], p["lon"], p["port"]) for p in ports]
    loitering = loitering_events(loitering_records)
    idle = [(float(e["lat"]), float(e["lon"])) for e in loitering]
    encounters = encounter_events(encounter_records)
    met = [(float(e["lat"]), float(e["lon"])) for e in encounters]
    boxes = cell_boxes(aggs, precision)
    draw_density(boxes, map_title, color_by, report / "density.png", bad, starts, called, idle, met)
    draw_types(hours_by_type(tumbling), float(summary.get("late_hours") or 0.0), report / "types.png")
    late = late_per_minute(late_records)
    draw_duplicates(summary.get("per_minute") or {}, late, report / "duplicates.png")
    write_index(report, summary, title, gaps, ports, loitering, encounters)
    return report


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="ais-pipeline report", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "dir", type=Path, help="the --output DIR of a file run; with --postgres, where to write the report"
    )
    parser.add_argument(
        "--postgres",
        metavar="URL",
        help="read the PostgreSQL tables instead (postgresql://user@host:port/db; PGPASSWORD, or"
        " --postgres-password-file)",
    )
    parser.add_argument("--postgres-password-file", default="", help="file whose first line is the password")
    parser.add_argument("--window", choices=("tumbling", "sliding"), default="tumbling")
    parser.add_argument("--start", help="window start, as in the aggregates (default: the busiest window)")
    parser.add_argument(
        "--color",
        choices=("hours", "vessels", "reports"),
        default="hours",
        help="vessel hours of the whole run (default), or vessels or reports of one window",
    )
    args = parser.parse_args(list(argv))
    from ais_pipeline import postgres

    if args.postgres:
        try:
            target = postgres.parse_url(args.postgres, args.postgres_password_file)
        except postgres.PostgresError as exc:
            raise ConfigError(f"--postgres: {exc}") from None
        report = make_report_from_postgres(target, args.dir, args.window, args.start, args.color)
    else:
        report = make_report(args.dir, args.window, args.start, args.color)
    print(f"report in {report}/index.html")
    return 0


if __name__ == "__main__":
    sys.exit(guarded(main, sys.argv[1:]))
