"""Anchorage lists for the port visits (:mod:`ais_pipeline.rules.ports`): a CSV file read once
per version of it (the job's operators and the plain loop build their rules from the same list)."""

from __future__ import annotations

import csv
import functools
from pathlib import Path

from ais_pipeline.rules.ports import Anchorages


def load_anchorages(path: Path) -> Anchorages:
    """An anchorage list: a CSV file with a header that has at least ``latitude``, ``longitude``
    and ``label`` (:meth:`Anchorages.from_rows`), read once per version of the file."""
    stat = path.stat()
    return _load_anchorages(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=4)
def _load_anchorages(path: str, _mtime_ns: int, _size: int) -> Anchorages:
    with open(path, newline="", encoding="utf-8") as fh:
        rows = csv.DictReader(fh)
        missing = {"latitude", "longitude", "label"} - set(rows.fieldnames or ())
        if missing:
            raise ValueError(f"{path}: no column {', '.join(sorted(missing))}")
        return Anchorages.from_rows(rows, Path(path).name)
