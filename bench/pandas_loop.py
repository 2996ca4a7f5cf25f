"""What a data engineer would write instead of the job for a NOAA day: pandas, whole columns at a
time, the same dedup and windows. The benchmark runs it beside the job on the same rows.

    python -m bench.pandas_loop ais-2026-01-01.csv.zst      # needs pandas (the dev extra)

The same rules, vectorised: rows that do not parse are dropped (counted); an exact duplicate is a
row whose identity (MMSI, time, position at 5 decimals, SOG, COG, heading) came before; a row
without a fix is no position; a near duplicate is at the position (5 decimals) of its vessel's
previous row within 2 s; tumbling windows of 60 s and sliding windows of 900 s every 60 s per
geohash-6 cell: reports, distinct vessels and mean SOG. It reads the whole file at once and knows
no lateness: it is the batch answer for a file that is in time order, as a day's file is, and its
figures equal the job's on such a file (the benchmark checks the positions and aggregates counts).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

_BASE32 = np.array(list("0123456789bcdefghjkmnpqrstuvwxyz"))
PANE_MS = 60_000
SLIDE_PANES = 15  # 900 s windows every 60 s


def geohash6(lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
    """Geohash cells of precision 6 (30 bits, longitude first), for whole columns."""
    lat_lo, lat_hi = np.full(lat.shape, -90.0), np.full(lat.shape, 90.0)
    lon_lo, lon_hi = np.full(lon.shape, -180.0), np.full(lon.shape, 180.0)
    code = np.zeros(lat.shape, dtype=np.int64)
    for bit in range(30):
        if bit % 2 == 0:
            mid = (lon_lo + lon_hi) / 2
            up = lon >= mid
            lon_lo, lon_hi = np.where(up, mid, lon_lo), np.where(up, lon_hi, mid)
        else:
            mid = (lat_lo + lat_hi) / 2
            up = lat >= mid
            lat_lo, lat_hi = np.where(up, mid, lat_lo), np.where(up, lat_hi, mid)
        code = (code << 1) | up.astype(np.int64)
    chars = [_BASE32[(code >> (5 * (5 - i))) & 31] for i in range(6)]
    return np.char.add(np.char.add(np.char.add(chars[0], chars[1]), np.char.add(chars[2], chars[3])),
                       np.char.add(chars[4], chars[5]))  # fmt: skip


def run(path: Path) -> dict[str, float | int]:
    started = time.monotonic()
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)  # compression by the file's name
    read_s = time.monotonic() - started
    rows = len(frame)
    names = {c.lower(): c for c in frame.columns}
    lat_col = names.get("latitude", names.get("lat"))
    lon_col = names.get("longitude", names.get("lon"))
    time_col = names.get("base_date_time", names.get("basedatetime"))
    mmsi = pd.to_numeric(frame[names["mmsi"]], errors="coerce")
    ts = pd.to_datetime(frame[time_col].str.replace("T", " ", n=1), format="%Y-%m-%d %H:%M:%S", errors="coerce")
    lat = pd.to_numeric(frame[lat_col], errors="coerce")
    lon = pd.to_numeric(frame[lon_col], errors="coerce")
    sog = pd.to_numeric(frame[names["sog"]].replace("", np.nan), errors="coerce")
    cog = pd.to_numeric(frame[names["cog"]].replace("", np.nan), errors="coerce")
    heading = pd.to_numeric(frame[names["heading"]].replace("", np.nan), errors="coerce")
    ok = mmsi.notna() & ts.notna() & lat.notna() & lon.notna()
    df = pd.DataFrame(
        {
            "mmsi": mmsi[ok].astype(np.int64),
            "ts": ts[ok].astype("int64") // 1_000_000,
            "lat": lat[ok],
            "lon": lon[ok],
            "sog": sog[ok],
            "cog": cog[ok],
            "heading": heading[ok],
        }
    )
    df["lat5"] = np.rint(df["lat"] * 1e5).astype(np.int64)
    df["lon5"] = np.rint(df["lon"] * 1e5).astype(np.int64)
    exact = df.duplicated(["mmsi", "ts", "lat5", "lon5", "sog", "cog", "heading"])
    df = df[~exact]
    fix = df["lat"].between(-90, 90) & df["lon"].between(-180, 180)
    no_position = int((~fix).sum())
    df = df[fix]
    previous = df.groupby("mmsi", sort=False)[["ts", "lat5", "lon5"]].shift(1)
    near = (df["ts"] - previous["ts"] <= 2000) & (df["lat5"] == previous["lat5"]) & (df["lon5"] == previous["lon5"])
    df = df[~near].copy()
    df["cell"] = geohash6(df["lat"].to_numpy(), df["lon"].to_numpy())
    df["pane"] = df["ts"] // PANE_MS * PANE_MS
    df["sog_ok"] = df["sog"].where(df["sog"] < 102.3)
    tumbling = df.groupby(["cell", "pane"]).agg(
        reports=("mmsi", "size"), vessels=("mmsi", "nunique"), avg_sog=("sog_ok", "mean")
    )
    # Every sliding window a pane belongs to: starts pane - 14 min ... pane.
    starts = np.repeat(df["pane"].to_numpy(), SLIDE_PANES) - np.tile(np.arange(SLIDE_PANES) * PANE_MS, len(df))
    slid = pd.DataFrame(
        {
            "cell": np.repeat(df["cell"].to_numpy(), SLIDE_PANES),
            "start": starts,
            "mmsi": np.repeat(df["mmsi"].to_numpy(), SLIDE_PANES),
            "sog_ok": np.repeat(df["sog_ok"].to_numpy(), SLIDE_PANES),
        }
    )
    sliding = slid.groupby(["cell", "start"]).agg(
        reports=("mmsi", "size"), vessels=("mmsi", "nunique"), avg_sog=("sog_ok", "mean")
    )
    return {
        "rows": rows,
        "unreadable": int((~ok).sum()),
        "duplicates_exact": int(exact.sum()),
        "no_position": no_position,
        "duplicates_near": int(near.sum()),
        "positions_kept": len(df),
        "aggregates": len(tumbling) + len(sliding),
        "read_seconds": round(read_s, 3),
        "seconds": round(time.monotonic() - started, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path, help="a NOAA CSV file, plain or compressed")
    args = parser.parse_args(argv)
    print(json.dumps(run(args.file)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
