"""An output folder read back as its records, whichever files a run left in it: JSON Lines parts,
GeoParquet parts, both (a run with ``--output-format jsonl,geoparquet``: the JSON Lines are read,
once), and the JSON Lines a DynamoDB sink adds to a GeoParquet run's dead letters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ais_pipeline.files import count_records, output_parts, read_records
from ais_pipeline.geoparquet_outputs import columns

pytestmark = pytest.mark.unit

DEAD = [
    {"id": "a", "raw": "!AIVDM,2,1,0,,539aMs,0*12", "reason": "incomplete_multipart", "receiver": "117", "detail": "x"},
    {"id": "b", "raw": "junk", "reason": "not_ais"},  # no receiver, no detail: the JSON leaves them out
]


def write_parquet(path: Path, records: list[dict[str, object]]) -> None:
    """A dead-letter part file in the writer's columns (tests/flink covers the job's own files)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = [c.name for c in columns("dead_letter")]
    table = pa.table({n: pa.array([r.get(n) for r in records], pa.string()) for n in names})
    table = table.append_column("geometry", pa.array([None] * len(records), pa.binary()))
    pq.write_table(table, path)


def write_jsonl(path: Path, records: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_a_geoparquet_part_reads_as_the_records_the_json_lines_hold(tmp_path: Path):
    folder = tmp_path / "dead_letter"
    folder.mkdir()
    write_parquet(folder / "part-1-0.parquet", DEAD)
    write_parquet(folder / ".part-2-0.parquet.inprogress.x", DEAD)  # not committed: not read
    assert read_records(folder) == DEAD
    assert count_records(folder) == 2


def test_a_folder_with_both_formats_is_read_once_from_its_json_lines(tmp_path: Path):
    folder = tmp_path / "dead_letter"
    folder.mkdir()
    write_parquet(folder / "part-1-0.parquet", DEAD)
    write_jsonl(folder / "part-2-0.jsonl", DEAD)
    assert [p.name for p in output_parts(folder)] == ["part-2-0.jsonl"]
    assert read_records(folder) == DEAD and count_records(folder) == 2


def test_a_geoparquet_runs_dead_letters_from_dynamodb_are_read_beside_its_parts(tmp_path: Path):
    folder = tmp_path / "dead_letter"
    folder.mkdir()
    write_parquet(folder / "part-1-0.parquet", DEAD[:1])
    refused = {"id": "c", "raw": "{}", "reason": "dynamodb_rejected", "detail": "item too large"}
    write_jsonl(folder / "dynamodb-0-x.jsonl", [refused])
    assert [p.name for p in output_parts(folder)] == ["dynamodb-0-x.jsonl", "part-1-0.parquet"]
    assert read_records(folder) == [refused, DEAD[0]] and count_records(folder) == 2
