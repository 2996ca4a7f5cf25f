"""The PostgreSQL outputs of a run (``--postgres URL``): one JDBC sink per output, each writing
its table's idempotent statement (:mod:`ais_pipeline.postgres`), beside the files or topics.
Also ``ais-pipeline load DIR --postgres URL``: a file run's output directory into the tables,
through the same sinks."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from pyflink.datastream import DataStream, StreamExecutionEnvironment

from ais_pipeline.config import ConfigError, PipelineConfig, add_arguments, from_args
from ais_pipeline.flink import jvm
from ais_pipeline.postgres import TABLES


def attach_postgres_sinks(
    env: StreamExecutionEnvironment, streams: Mapping[str, DataStream], config: PipelineConfig
) -> None:
    """Every output (name -> stream of its JSON records) into its table."""
    target = config.postgres
    assert target is not None
    from ais_pipeline.flink.environment import connector_jars

    # Flink's JDBC connector and the PostgreSQL driver (build/jars/jdbc/), fetched when missing.
    for jar in connector_jars("jdbc", "JDBC connector jars"):
        env.add_jars(jar.as_uri())
    for name, stream in streams.items():
        table = TABLES[name]
        sink = jvm.PostgresSink(
            table.name,
            target.jdbc_url(),
            target.user,
            target.password,
            table.statement(),
            table.fields,
            config.postgres_batch_size,
            config.postgres_batch_interval_ms,
            config.postgres_retries,
        )
        stream.sink_to(sink.sink()).name(f"write PostgreSQL {table.name}").uid(f"postgres-{name}")


log = logging.getLogger("ais_pipeline")


def load(directory: Path, config: PipelineConfig) -> dict[str, object] | None:
    """The outputs of a file run (``--output DIR``) into the tables, each record through its
    table's statement; returns the run's summary.json, when there is one."""
    import dataclasses

    from ais_pipeline import postgres
    from ais_pipeline.flink.environment import local_environment
    from ais_pipeline.rules.outputs import OUTPUTS
    from ais_pipeline.tools.ports import unused_port

    assert config.postgres is not None
    # A short batch job: its web UI on any free port, never in the way of a running one.
    env = local_environment(dataclasses.replace(config, web_ui_port=unused_port()))
    streams = {
        name: jvm.OrderedFiles(str(directory / name)).read(env, f"read {name}", f"source-{name}")
        for name in OUTPUTS
        if (directory / name).is_dir()
    }
    if not streams:
        raise ConfigError(f"{directory}: no output directories ({', '.join(OUTPUTS)}) to load")
    attach_postgres_sinks(env, streams, config)
    summary_file = directory / "summary.json"
    summary = json.loads(summary_file.read_text()) if summary_file.is_file() else None
    run_id = postgres.start_run(config.postgres, f"load:{directory}")
    env.execute("ais-pipeline load")
    postgres.finish_run(config.postgres, run_id, summary)
    return summary


def load_main(argv: Sequence[str]) -> int:
    """``ais-pipeline load DIR --postgres URL [--postgres-batch-size N ...]``."""
    from ais_pipeline import postgres

    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    log.setLevel(logging.INFO)
    parser = argparse.ArgumentParser(prog="ais-pipeline load", description=load.__doc__)
    parser.add_argument("directory", help="the output directory of a file run (--output DIR)")
    add_arguments(parser)
    args = parser.parse_args(list(argv))
    try:
        config = from_args(args)
        if config.postgres is None:
            raise ConfigError("--postgres (POSTGRES_URL): where to load to is missing")
        postgres.prepare(config.postgres)
        directory = Path(args.directory)
        load(directory, config)
    except (ConfigError, postgres.PostgresError) as exc:
        print(f"ais-pipeline: error: {exc}", file=sys.stderr)
        return 2
    print(f"loaded {directory} into {config.postgres.shown()}")
    return 0
