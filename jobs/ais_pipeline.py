"""The AIS pipeline job: raw AIS lines to deduplicated positions and per-cell window aggregates.

    ais-pipeline run [--input PATH] [--output DIR] [flags]
    python -m jobs.ais_pipeline [--input PATH] [--output DIR] [flags]
    flink run -py jobs/ais_pipeline.py --pyFiles udfs [flags]

This file stays thin: it builds the config, builds the pipeline from the named functions of
``udfs``, and executes. ``build_pipeline`` takes any stream of lines, so a test builds the same job
on its own source.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# Run as a script (flink run -py jobs/ais_pipeline.py) the project root is not on sys.path.
_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from udfs.config import ConfigError, PipelineConfig, parse_config  # noqa: E402

log = logging.getLogger("ais_pipeline")


@dataclass(frozen=True)
class Streams:
    """The job's outputs, each a stream of JSON Lines (tallies: one summary figure name a line)."""

    positions: object
    static: object
    aggregates: object
    late: object
    dead_letter: object
    tally: object

    def named(self) -> dict[str, object]:
        return {
            "positions": self.positions,
            "static": self.static,
            "aggregates": self.aggregates,
            "late": self.late,
            "dead_letter": self.dead_letter,
        }


def flink_settings(config: PipelineConfig) -> dict[str, str]:
    """flink-conf/config.yaml flattened, plus what a local run must set for itself."""
    import yaml

    def flatten(prefix: str, node: object, out: dict[str, str]) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                flatten(f"{prefix}.{key}" if prefix else str(key), value, out)
        elif isinstance(node, list):
            out[prefix] = ";".join(str(v) for v in node)
        elif isinstance(node, bool):
            out[prefix] = "true" if node else "false"
        else:
            out[prefix] = str(node)

    settings: dict[str, str] = {}
    conf_file = config.flink_conf_dir / "config.yaml"
    if conf_file.exists():
        flatten("", yaml.safe_load(conf_file.read_text()) or {}, settings)
    settings["python.executable"] = sys.executable
    settings["python.client.executable"] = sys.executable
    settings["rest.port"] = str(config.web_ui_port)
    settings["rest.bind-port"] = str(config.web_ui_port)
    settings["parallelism.default"] = str(config.parallelism)
    return settings


def local_environment(config: PipelineConfig):  # type: ignore[no-untyped-def]
    """A StreamExecutionEnvironment on a local mini-cluster configured from flink-conf/."""
    from pyflink.common import Configuration
    from pyflink.datastream import StreamExecutionEnvironment

    # Thread mode embeds the interpreter in the JVM; it finds the venv's packages (pemja, pyflink)
    # and this project only through PYTHONPATH, which the JVM inherits from this process.
    site = [p for p in sys.path if p.endswith("site-packages")]
    paths = [str(_ROOT), *site, *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(p for p in paths if p))
    conf = Configuration()
    for key, value in flink_settings(config).items():
        conf.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_parallelism(config.parallelism)
    return env


def file_source(env, config: PipelineConfig):  # type: ignore[no-untyped-def]
    """Lines of a file or of every file under a directory (bounded: the job ends with the input)."""
    from pyflink.common import WatermarkStrategy
    from pyflink.datastream.connectors.file_system import FileSource, StreamFormat

    source = FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(config.input_path)).build()
    return env.from_source(source, WatermarkStrategy.no_watermarks(), "read lines").uid("source-lines")


def build_pipeline(lines, config: PipelineConfig, emit_tallies: bool = True) -> Streams:  # type: ignore[no-untyped-def]
    """The whole job on a stream of raw lines."""
    from pyflink.common import Duration, Types, WatermarkStrategy

    from udfs import flink_functions as f
    from udfs.records import report_type, vessel_pane_type

    watermarks = (
        WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(config.out_of_orderness_s))
        .with_idleness(Duration.of_seconds(config.idle_timeout_s))
        .with_timestamp_assigner(f.EventTime(config.input_format, config.max_clock_skew_ms))
    )
    timed = lines.assign_timestamps_and_watermarks(watermarks).name("event time and watermarks").uid("event-time")
    parsed = (
        timed.process(f.ParseLines(config.input_format, emit_tallies), output_type=report_type())
        .name("parse lines")
        .uid("parse")
    )
    assembled = (
        parsed.get_side_output(f.FRAGMENTS)
        .key_by(fragment_group, key_type=Types.STRING())
        .process(f.AssembleMultipart(config.multipart_timeout_ms, emit_tallies), output_type=report_type())
        .name("reassemble multipart")
        .uid("multipart")
    )
    vessels = (
        parsed.key_by(report_mmsi, key_type=Types.LONG())
        .connect(assembled.key_by(report_mmsi, key_type=Types.LONG()))
        .process(f.DedupVessel(config, emit_tallies), output_type=vessel_pane_type())
        .name("dedup by MMSI")
        .uid("dedup")
    )
    aggregates = (
        vessels.key_by(pane_cell, key_type=Types.STRING())
        .process(f.CellAggregates(config), output_type=Types.STRING())
        .name("cell windows")
        .uid("windows")
    )
    dead = parsed.get_side_output(f.DEAD).union(
        assembled.get_side_output(f.DEAD), vessels.get_side_output(f.DEAD)
    )
    tally = parsed.get_side_output(f.TALLY).union(
        assembled.get_side_output(f.TALLY), vessels.get_side_output(f.TALLY)
    )
    return Streams(
        positions=vessels.get_side_output(f.POSITIONS),
        static=vessels.get_side_output(f.STATIC),
        aggregates=aggregates,
        late=vessels.get_side_output(f.LATE_OUT),
        dead_letter=dead,
        tally=tally,
    )


def fragment_group(row) -> str:  # type: ignore[no-untyped-def]
    return row.group  # type: ignore[no-any-return]


def report_mmsi(row) -> int:  # type: ignore[no-untyped-def]
    return row.mmsi  # type: ignore[no-any-return]


def pane_cell(row) -> str:  # type: ignore[no-untyped-def]
    return row.cell  # type: ignore[no-any-return]


def jsonl_sink(directory: Path):  # type: ignore[no-untyped-def]
    """JSON Lines part files written straight into ``directory``."""
    from pyflink.common.serialization import Encoder
    from pyflink.datastream.connectors.file_system import (
        BucketAssigner,
        FileSink,
        OutputFileConfig,
    )

    return (
        FileSink.for_row_format(str(directory), Encoder.simple_string_encoder())
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
        .with_output_file_config(OutputFileConfig.builder().with_part_suffix(".jsonl").build())
        .build()
    )


def attach_file_sinks(streams: Streams, output_dir: Path, tally_dir: Path) -> None:
    for name, stream in streams.named().items():
        stream.sink_to(jsonl_sink(output_dir / name)).name(f"write {name}").uid(f"sink-{name}")  # type: ignore[attr-defined]
    streams.tally.sink_to(jsonl_sink(tally_dir)).name("write tallies").uid("sink-tally")  # type: ignore[attr-defined]


def attach_print_sinks(streams: Streams, tally_dir: Path) -> None:
    for name, stream in streams.named().items():
        stream.print(name).name(f"print {name}")  # type: ignore[attr-defined]
    streams.tally.sink_to(jsonl_sink(tally_dir)).name("write tallies").uid("sink-tally")  # type: ignore[attr-defined]


def count_lines(path: Path) -> int:
    """Input lines as Flink's text line format splits them (\\n, \\r or \\r\\n)."""
    files = [path] if path.is_file() else [p for p in sorted(path.rglob("*")) if p.is_file() and not p.name.startswith((".", "_"))]
    total = 0
    for file in files:
        with file.open(encoding="utf-8", errors="replace", newline=None) as fh:
            total += sum(1 for _ in fh)
    return total


def run(config: PipelineConfig) -> dict[str, object]:
    """Run the job on a file or directory in a local mini-cluster; returns the run summary."""
    import json

    from udfs import outputs

    env = local_environment(config)
    lines = file_source(env, config)
    streams = build_pipeline(lines, config)
    scratch = Path(tempfile.mkdtemp(prefix="ais-tally-"))
    try:
        if config.output_dir is not None:
            for name in (*outputs.OUTPUTS, "summary.json"):
                target = config.output_dir / name
                if target.is_dir():
                    shutil.rmtree(target)
                elif target.exists():
                    target.unlink()
            attach_file_sinks(streams, config.output_dir, scratch)
        else:
            attach_print_sinks(streams, scratch)
        log.info("web UI at http://localhost:%s while the job runs", config.web_ui_port)
        started = time.monotonic()
        env.execute("ais-pipeline")
        elapsed = time.monotonic() - started
        summary = outputs.summarize(outputs.read_tallies(scratch), count_lines(config.input_path))
        summary["seconds"] = round(elapsed, 3)
        if config.output_dir is not None:
            (config.output_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        return summary
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    from udfs import outputs

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        config = parse_config(sys.argv[1:] if argv is None else argv)
    except ConfigError as exc:
        print(f"ais-pipeline: error: {exc}", file=sys.stderr)
        return 2
    print(f"Flink web UI: http://localhost:{config.web_ui_port} (while the job runs)", file=sys.stderr)
    summary = run(config)
    print(outputs.format_summary(summary))
    if config.output_dir is not None:
        print(f"outputs in {config.output_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
