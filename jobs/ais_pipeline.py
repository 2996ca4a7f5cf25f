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
        from udfs.outputs import OUTPUTS

        return {name: getattr(self, name) for name in OUTPUTS}


CHECKPOINT_INTERVAL = "execution.checkpointing.interval"


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

    interval = config.checkpoint_interval_s
    if submitted_by_flink_cli():  # the cluster has its own settings; -pyexec names its Python
        settings = {"parallelism.default": str(config.parallelism)}
        if interval:
            settings[CHECKPOINT_INTERVAL] = f"{interval}s"
        return settings
    settings = {}
    conf_file = config.flink_conf_dir / "config.yaml"
    if conf_file.exists():
        flatten("", yaml.safe_load(conf_file.read_text()) or {}, settings)
    if interval == 0:
        settings.pop(CHECKPOINT_INTERVAL, None)
    elif interval is not None:
        settings[CHECKPOINT_INTERVAL] = f"{interval}s"
    settings["parallelism.default"] = str(config.parallelism)
    settings["python.executable"] = sys.executable
    settings["python.client.executable"] = sys.executable
    settings["rest.port"] = str(config.web_ui_port)
    settings["rest.bind-port"] = str(config.web_ui_port)
    return settings


def reporters_on_gateway_classpath() -> None:
    """Let a local run load the metric reporters of flink-conf (Prometheus).

    A cluster loads reporters as plugins from the package's plugins/ folder; Flink's mini-cluster
    creates its metric registry without a plugin manager, so there a reporter must be on the
    classpath. PyFlink's local gateway adds ``HADOOP_CLASSPATH`` to its classpath."""
    import glob

    import pyflink

    plugins = os.path.join(os.path.dirname(pyflink.__file__), "plugins")
    jars = sorted(glob.glob(os.path.join(plugins, "metrics-prometheus", "*.jar")))
    current = [p for p in os.environ.get("HADOOP_CLASSPATH", "").split(os.pathsep) if p]
    os.environ["HADOOP_CLASSPATH"] = os.pathsep.join(dict.fromkeys([*current, *jars]))


def local_environment(config: PipelineConfig):  # type: ignore[no-untyped-def]
    """A StreamExecutionEnvironment on a local mini-cluster configured from flink-conf/."""
    from pyflink.common import Configuration
    from pyflink.datastream import StreamExecutionEnvironment

    # Thread mode embeds the interpreter in the JVM; it finds the venv's packages (pemja, pyflink)
    # and this project only through PYTHONPATH, which the JVM inherits from this process.
    site = [p for p in sys.path if p.endswith("site-packages")]
    paths = [str(_ROOT), *site, *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(p for p in paths if p))
    if not submitted_by_flink_cli():
        reporters_on_gateway_classpath()
    conf = Configuration()
    for key, value in flink_settings(config).items():
        conf.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_parallelism(config.parallelism)
    return env


def file_source(env, config: PipelineConfig):  # type: ignore[no-untyped-def]
    """Lines of a file or of every file under a directory: bounded (the job ends with the input),
    or, with --follow, watching for new files until the job is stopped."""
    from pyflink.common import Duration, WatermarkStrategy
    from pyflink.datastream.connectors.file_system import FileSource, StreamFormat

    builder = FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(config.input_path))
    if config.follow:
        builder = builder.monitor_continuously(Duration.of_seconds(1))
    source = builder.build()
    return env.from_source(source, WatermarkStrategy.no_watermarks(), "read lines").uid("source-lines")


HELPERS_JAR = _ROOT / "build" / "ais-flink-helpers.jar"


def build_java_if_stale(jar: Path, sources: Path, *args: str, force: bool = False) -> None:
    """Run ``scripts/build-java.sh ARGS`` when ``jar`` is missing or older than a ``.java`` file
    under ``sources`` (or when ``force``); raises CalledProcessError, with the script's output."""
    import subprocess

    stale = force or not jar.exists() or any(s.stat().st_mtime > jar.stat().st_mtime for s in sources.rglob("*.java"))
    if stale:
        env = dict(os.environ, PYTHON=sys.executable)
        script = str(_ROOT / "scripts" / "build-java.sh")
        subprocess.run(["bash", script, *args], check=True, env=env, capture_output=True, text=True)


def helpers_jar() -> Path:
    """The job's Java helper jar (line batches, stamped watermarks, line splitting, the
    duplicate-ratio gauge), built from java/src when missing or older than its sources."""
    build_java_if_stale(HELPERS_JAR, _ROOT / "java" / "src")
    return HELPERS_JAR


LINES_PER_BATCH = 256
BATCH_DELAY_MS = 100


def line_batches(lines):  # type: ignore[no-untyped-def]
    """Lines in batches of up to ``LINES_PER_BATCH`` (at most ``BATCH_DELAY_MS`` of wall clock
    apart, and none held across a checkpoint), in Java (``ais.flink.LineBatches``): the parse
    operator then crosses into Python once per batch, not once per line."""
    from pyflink.common import Types
    from pyflink.datastream import DataStream
    from pyflink.java_gateway import get_gateway

    lines.get_execution_environment().add_jars(helpers_jar().as_uri())
    j_operator = get_gateway().jvm.ais.flink.LineBatches(LINES_PER_BATCH, BATCH_DELAY_MS)
    j_type = Types.BASIC_ARRAY(Types.STRING()).get_java_type_info()
    return DataStream(lines._j_data_stream.transform("batch lines", j_type, j_operator))


def stamped_watermarks(parsed, config: PipelineConfig):  # type: ignore[no-untyped-def]
    """Bounded out-of-orderness watermarks from the parsed records' event times, with idleness,
    kept in checkpoints; each record stamped with the watermark it was read under (a Java
    operator of the helper jar, ``ais.flink.StampedWatermarks``): after a restore the job judges
    lateness against the watermark it had, not one that starts again from nothing.
    Returns the reports, as ``Row(mmsi, report)``, and the fragments, as ``Row(group, fragment)``."""
    from dataclasses import fields

    from pyflink.common import Types
    from pyflink.datastream import DataStream
    from pyflink.java_gateway import get_gateway

    from udfs.flink_functions import window_spec
    from udfs.records import Fragment, Report, fragment_type, keyed, report_type

    jvm = get_gateway().jvm
    report_row = keyed(Types.LONG(), report_type()).get_java_type_info()
    fragment_row = keyed(Types.STRING(), fragment_type()).get_java_type_info()
    tag = jvm.org.apache.flink.util.OutputTag("fragments", fragment_row)
    j_operator = jvm.ais.flink.StampedWatermarks(
        config.out_of_orderness_s * 1000,
        config.idle_timeout_s * 1000,
        window_spec(config).watermark_step_ms,
        len(fields(Report)),
        len(fields(Fragment)),
        [f.name for f in fields(Report)].index("watermark"),
        [f.name for f in fields(Fragment)].index("watermark"),
        tag,
    )
    j_stream = parsed._j_data_stream.transform("watermarks (per event, checkpointed)", report_row, j_operator)
    reports = DataStream(j_stream.uid("watermarks"))
    return reports, DataStream(j_stream.getSideOutput(tag))


RECORDS_PER_BATCH = 1024


def keyed_batches(stream, shards: int, record_type, name: str):  # type: ignore[no-untyped-def]
    """``Row(key, record)`` records as ``Row(shard, columns)`` batches per shard of the key, in
    Java (``ais.flink.KeyedBatches``): the keyed Python operator downstream is called once per
    batch. A batch leaves before every watermark, so that operator's timers fire exactly when
    they would without batching; before every checkpoint barrier a marker per shard tells it to
    write what it holds to keyed state."""
    from pyflink.common import Types
    from pyflink.datastream import DataStream
    from pyflink.java_gateway import get_gateway

    from udfs.records import columns, keyed

    stream.get_execution_environment().add_jars(helpers_jar().as_uri())
    j_operator = get_gateway().jvm.ais.flink.KeyedBatches(
        shards, RECORDS_PER_BATCH, BATCH_DELAY_MS, True, record_type.get_java_type_info()
    )
    j_type = keyed(Types.INT(), columns(record_type)).get_java_type_info()
    return DataStream(stream._j_data_stream.transform(name, j_type, j_operator))


def side_output(stream, tag):  # type: ignore[no-untyped-def]
    """A side output as the Java stream it is. PyFlink's ``get_side_output`` appends a Python
    identity map, which costs a Java/Python round trip for every record of the side output."""
    from pyflink.datastream import DataStream

    return DataStream(stream._j_data_stream.getSideOutput(tag.get_java_output_tag()))


def one_record_per_line(stream):  # type: ignore[no-untyped-def]
    """Split multi-line string records into one record per line, in Java (the helper jar)."""
    from pyflink.common import Types
    from pyflink.datastream import DataStream
    from pyflink.java_gateway import get_gateway

    j_split = get_gateway().jvm.ais.flink.SplitLines()
    return DataStream(stream._j_data_stream.flatMap(j_split, Types.STRING().get_java_type_info()))


def keyed_by_first_field(stream, key_type, record_type):  # type: ignore[no-untyped-def]
    """Key a stream of ``Row(key, record)`` on its first field, in Java.

    The producing Python operator computes the key along with the record; PyFlink's ``key_by``
    would add a Python operator (another round trip per record) just to compute it. At
    parallelism 1 every key lives in the one subtask, so the stream is reinterpreted as keyed
    instead of shuffled: the operators then chain into one task, without network buffers and
    without Python threads contending for the interpreter.
    """
    from pyflink.common import Types
    from pyflink.datastream import KeyedStream
    from pyflink.java_gateway import get_gateway

    jvm = get_gateway().jvm
    if stream._j_data_stream.getParallelism() == 1:
        j_keyed = jvm.org.apache.flink.streaming.api.datastream.DataStreamUtils.reinterpretAsKeyedStream(
            stream._j_data_stream, jvm.KeyByKeySelector(), Types.ROW([key_type]).get_java_type_info()
        )
    else:
        j_keyed = stream._j_data_stream.keyBy(jvm.KeyByKeySelector(), Types.ROW([key_type]).get_java_type_info())
    return KeyedStream(j_keyed, record_type, stream)


def build_pipeline(env, lines, config: PipelineConfig, emit_tallies: bool = True) -> Streams:  # type: ignore[no-untyped-def]
    """The whole job on a stream of raw lines."""
    from pyflink.common import Types

    from udfs import flink_functions as f
    from udfs.dedup import VESSEL_SHARDS
    from udfs.records import columns, fragment_type, keyed, parsed_type, report_type, vessel_pane_type
    from udfs.windows import CELL_SHARDS

    parsed = (
        line_batches(lines)
        .process(f.ParseLines(config, emit_tallies), output_type=parsed_type())
        .name("parse lines")
        .uid("parse")
    )
    reports, fragment_rows = stamped_watermarks(parsed, config)
    report_batches = keyed_batches(reports, VESSEL_SHARDS, report_type(), "batch reports by vessel shard")
    fragments = keyed_by_first_field(fragment_rows, Types.STRING(), fragment_type())
    assembled = (
        fragments.process(
            f.AssembleMultipart(config.multipart_timeout_ms, emit_tallies),
            output_type=keyed(Types.LONG(), report_type()),
        )
        .name("reassemble multipart")
        .uid("multipart")
    )
    assembled_batches = keyed_batches(assembled, VESSEL_SHARDS, report_type(), "batch reassembled reports")
    vessels = (
        keyed_by_first_field(report_batches, Types.INT(), columns(report_type()))
        .connect(keyed_by_first_field(assembled_batches, Types.INT(), columns(report_type())))
        .process(f.DedupVessel(config, emit_tallies), output_type=keyed(Types.INT(), vessel_pane_type()))
        .name("dedup by MMSI")
        .uid("dedup-shards")
    )
    pane_batches = keyed_batches(vessels, CELL_SHARDS, vessel_pane_type(), "batch panes by cell shard")
    fired = (
        keyed_by_first_field(pane_batches, Types.INT(), columns(vessel_pane_type()))
        .process(f.CellAggregates(config), output_type=Types.STRING())
        .name("cell windows (keyed by cell shard)")
        .uid("windows-batched")
    )

    def lines_of(stream, what: str):  # type: ignore[no-untyped-def]
        return one_record_per_line(stream).name(f"one {what} per record")

    aggregates = lines_of(fired, "aggregate")
    dead = side_output(parsed, f.DEAD).union(
        side_output(assembled, f.DEAD), lines_of(side_output(vessels, f.DEAD), "dead letter")
    )
    tally = side_output(parsed, f.TALLY).union(
        side_output(assembled, f.TALLY), lines_of(side_output(vessels, f.TALLY), "tally")
    )
    return Streams(
        positions=lines_of(side_output(vessels, f.POSITIONS), "position"),
        static=lines_of(side_output(vessels, f.STATIC), "static report"),
        aggregates=aggregates,
        late=lines_of(side_output(vessels, f.LATE_OUT), "late report"),
        dead_letter=dead,
        tally=tally,
    )


def jsonl_sink(directory: Path):  # type: ignore[no-untyped-def]
    """JSON Lines part files written straight into ``directory``, committed on every checkpoint
    (and at the end of a bounded input), so a running job's outputs can be read as it goes."""
    from pyflink.common.serialization import Encoder
    from pyflink.datastream.connectors.file_system import (
        BucketAssigner,
        FileSink,
        OutputFileConfig,
        RollingPolicy,
    )

    return (
        FileSink.for_row_format(str(directory), Encoder.simple_string_encoder())
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
        .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy())
        .with_output_file_config(OutputFileConfig.builder().with_part_suffix(".jsonl").build())
        .build()
    )


def attach_sinks(streams: Streams, output_dir: Path, tally_dir: Path, print_too: bool) -> None:
    """Every output as JSON Lines under ``output_dir`` (the summary counts them there), the
    tallies under ``tally_dir``, and, for a run without --output, every output printed too."""
    for name, stream in streams.named().items():
        stream.sink_to(jsonl_sink(output_dir / name)).name(f"write {name}").uid(f"sink-{name}")  # type: ignore[attr-defined]
        if print_too:
            stream.print(name).name(f"print {name}")  # type: ignore[attr-defined]
    streams.tally.sink_to(jsonl_sink(tally_dir)).name("write tallies").uid("sink-tally")  # type: ignore[attr-defined]


def execute_until_done_or_interrupted(env, name: str = "ais-pipeline") -> None:  # type: ignore[no-untyped-def]
    """Run the job; Ctrl-C (or SIGTERM) cancels it and ends the run cleanly.

    A blocking ``env.execute`` sits in a call to the JVM that a signal does not interrupt; here the
    job runs detached and this process polls its status, sleeping in Python between polls."""
    import signal

    signal.signal(signal.SIGTERM, signal.default_int_handler)
    job = env.execute_async(name)
    done = job.get_job_execution_result()
    try:
        while not done.done():
            time.sleep(0.2)
    except KeyboardInterrupt:
        log.info("stopping: cancelling the job")
        cancelled = job.cancel()
        deadline = time.monotonic() + 30
        while not cancelled.done() and time.monotonic() < deadline:
            time.sleep(0.2)
        raise
    done.result()  # raises when the job failed


def count_input_lines(path: Path) -> int:
    """Input lines as Flink's text line format splits them (\\n, \\r or \\r\\n)."""
    from udfs.plain import read_lines

    return sum(1 for _ in read_lines(path))


def run(config: PipelineConfig) -> dict[str, object]:
    """Run the job on a file or directory in a local mini-cluster; returns the run summary."""
    import json

    from udfs import outputs

    env = local_environment(config)
    lines = file_source(env, config)
    streams = build_pipeline(env, lines, config)
    scratch = Path(tempfile.mkdtemp(prefix="ais-run-"))
    output_dir = config.output_dir or scratch / "out"
    try:
        for name in (*outputs.OUTPUTS, "summary.json"):
            target = output_dir / name
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
        attach_sinks(streams, output_dir, scratch / "tally", print_too=config.output_dir is None)
        started = time.monotonic()
        execute_until_done_or_interrupted(env)
        elapsed = time.monotonic() - started
        summary = outputs.summarize(
            outputs.read_tallies(scratch / "tally"), count_input_lines(config.input_path), output_dir
        )
        summary["seconds"] = round(elapsed, 3)
        if config.output_dir is not None:
            (config.output_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        return summary
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def checkpointing_on(env) -> bool:  # type: ignore[no-untyped-def]
    return bool(env.get_checkpoint_config().is_checkpointing_enabled())


def run_kafka(config: PipelineConfig) -> str:
    """Run the job from a Kafka topic to one topic per output. Locally it runs until stopped (or,
    with --bounded, until the input's offsets at start are consumed); under ``flink run`` it is
    submitted and left running on the cluster. Returns the job id."""
    from jobs import kafka_io

    env = local_environment(config)
    for jar in kafka_io.kafka_jars():
        env.add_jars(jar.as_uri())
    kafka_io.check_topics(config)
    exactly_once = checkpointing_on(env)
    log.info(
        "Kafka %s -> topics %s*, %s",
        config.topic,
        config.output_topic_prefix,
        "exactly once (transactions committed on checkpoints)" if exactly_once else "at least once (no checkpoints)",
    )
    streams = build_pipeline(env, kafka_io.kafka_source(env, config), config, emit_tallies=False)
    kafka_io.attach_kafka_sinks(streams, config, exactly_once)
    if submitted_by_flink_cli():
        job = env.execute_async(f"ais-pipeline {config.topic}")
        job_id = str(job.get_job_id())
        print(f"submitted job {job_id}")
        return job_id
    execute_until_done_or_interrupted(env, f"ais-pipeline {config.topic}")
    return ""


def submitted_by_flink_cli() -> bool:
    """True under ``flink run -py``: the CLI starts this script with a gateway of its own and
    the job goes to that cluster (whose web UI is the cluster's)."""
    return "PYFLINK_GATEWAY_PORT" in os.environ


def free_web_ui_port(config: PipelineConfig) -> PipelineConfig:
    """The config with a usable web UI port: 0 picks a free one; a taken one is an error."""
    import dataclasses

    from jobs.ports import bindable, unused_port

    if submitted_by_flink_cli():
        return config
    if config.web_ui_port == 0:
        return dataclasses.replace(config, web_ui_port=unused_port())
    if not bindable(config.web_ui_port):
        raise ConfigError(
            f"--web-ui-port (WEB_UI_PORT): port {config.web_ui_port} is in use; pick another, or 0 for a free one"
        )
    return config


def main(argv: Sequence[str] | None = None) -> int:
    from udfs import outputs

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        config = free_web_ui_port(parse_config(sys.argv[1:] if argv is None else argv))
    except ConfigError as exc:
        print(f"ais-pipeline: error: {exc}", file=sys.stderr)
        return 2
    if not submitted_by_flink_cli():
        print(f"Flink web UI: http://localhost:{config.web_ui_port} (while the job runs)", file=sys.stderr)
    if config.source == "kafka":
        try:
            run_kafka(config)
        except ConfigError as exc:
            print(f"ais-pipeline: error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("ais-pipeline: stopped", file=sys.stderr)
            return 130
        return 0
    log.info("input %s (%s), output %s", config.input_path, config.input_format, config.output_dir or "printed")
    try:
        summary = run(config)
    except KeyboardInterrupt:
        print("ais-pipeline: stopped", file=sys.stderr)
        return 130
    print(outputs.format_summary(summary))
    if config.output_dir is not None:
        print(f"outputs in {config.output_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
