"""The load job: the output directory of a file run (``--output DIR``, JSON Lines or GeoParquet)
into the PostgreSQL tables, each record through its table's idempotent statement, as
``--postgres`` writes them during a run (loading twice changes nothing).

    ais-pipeline load DIR --postgres URL [--postgres-batch-size N ...]
    python jobs/load_postgres.py DIR --postgres URL
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from pyflink.common import Types

from ais_pipeline import files, geoparquet_outputs, postgres
from ais_pipeline.config import PipelineConfig, add_arguments, from_args
from ais_pipeline.errors import ConfigError, guarded
from ais_pipeline.jvm.sources import OrderedFiles
from ais_pipeline.pipeline import sinks
from ais_pipeline.pipeline.environment import local_environment
from ais_pipeline.pipeline.ports import unused_port
from ais_pipeline.pipeline.runs import RunRecord
from ais_pipeline.rules.outputs import OUTPUTS, with_window_key

log = logging.getLogger("ais_pipeline")


def record_files(directory: Path, scratch: Path) -> dict[str, list[str]]:
    """Output name -> the JSON Lines files that hold its records: its JSON Lines part files, and
    for each GeoParquet part file (a run with ``--output-format geoparquet``) its rows written as
    JSON Lines under ``scratch``."""
    found: dict[str, list[str]] = {}
    for name in OUTPUTS:
        for part in files.output_parts(directory / name):
            if part.suffix == geoparquet_outputs.PART_SUFFIX:
                lines = scratch / name / f"{part.stem}.jsonl"
                lines.parent.mkdir(parents=True, exist_ok=True)
                with lines.open("w", encoding="utf-8") as out:
                    out.writelines(json.dumps(r) + "\n" for r in geoparquet_outputs.read_part(part, name))
                part = lines
            found.setdefault(name, []).append(str(part.resolve()))
    return found


def load_job(directory: Path, config: PipelineConfig) -> dict[str, object] | None:
    """Every output folder of ``directory`` into its table; the run's summary.json, when there is
    one (it goes into ``ais_runs``)."""
    with tempfile.TemporaryDirectory(prefix="ais-load-") as scratch:
        return _load(directory, config, record_files(directory, Path(scratch)))


def _load(directory: Path, config: PipelineConfig, parts: dict[str, list[str]]) -> dict[str, object] | None:
    # A short batch job: its web UI on any free port, never in the way of a running one.
    env = local_environment(dataclasses.replace(config, web_ui_port=unused_port()))
    streams = {
        name: OrderedFiles(f"read {name}", f"source-{name}", str(directory / name), files=paths).read(env)
        for name, paths in parts.items()
    }
    if not streams:
        raise ConfigError(f"{directory}: no output directories ({', '.join(OUTPUTS)}) to load")
    if "aggregates" in streams:  # files of earlier versions: their windows' key completed
        slide_s = config.slide_s
        streams["aggregates"] = (
            streams["aggregates"]
            .map(lambda line: with_window_key(line, slide_s), output_type=Types.STRING())
            .name("aggregate with its window's key")
        )
    sinks.postgres_sinks(env, streams, config)
    summary_file = directory / "summary.json"
    summary = json.loads(summary_file.read_text()) if summary_file.is_file() else None
    record = RunRecord(config, f"load:{directory}")
    env.execute("ais-pipeline load")
    record.finish(summary)
    return summary


def main(argv: Sequence[str]) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    log.setLevel(logging.INFO)
    parser = argparse.ArgumentParser(prog="ais-pipeline load", description=load_job.__doc__)
    parser.add_argument("directory", help="the output directory of a file run (--output DIR)")
    add_arguments(parser)
    args = parser.parse_args(list(argv))
    config = from_args(args)
    if config.postgres is None:
        raise ConfigError("--postgres (POSTGRES_URL): where to load to is missing")
    postgres.prepare(config.postgres)
    directory = Path(args.directory)
    load_job(directory, config)
    print(f"loaded {directory} into {config.postgres.shown()}")
    return 0


if __name__ == "__main__":
    sys.exit(guarded(main, sys.argv[1:]))
