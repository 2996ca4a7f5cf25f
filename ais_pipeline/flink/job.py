"""The AIS pipeline job: raw AIS lines to deduplicated positions and per-cell window aggregates.

    ais-pipeline run [--input PATH] [--output DIR] [flags]
    python -m ais_pipeline.flink.job [--input PATH] [--output DIR] [flags]
    flink run -py ais_pipeline/flink/job.py --pyFiles ais_pipeline [flags]

The run: the config (:mod:`ais_pipeline.config`), the environment
(:mod:`ais_pipeline.flink.environment`), the topology (:func:`ais_pipeline.flink.topology.build_pipeline`)
on a file or Kafka source, the sinks, and the run summary. Flink and the JVM are imported only
once the flags are read, so a bad flag is a quick one-line error.
"""

from __future__ import annotations

import logging
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Run as a script (flink run -py ais_pipeline/flink/job.py) the project root is not on sys.path.
_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from ais_pipeline.config import ConfigError, PipelineConfig, parse_config, submitted_by_flink_cli  # noqa: E402

if TYPE_CHECKING:
    from ais_pipeline.flink.jvm import LocalCluster
    from ais_pipeline.flink.progress import ProgressLine
    from ais_pipeline.flink.topology import Streams

log = logging.getLogger("ais_pipeline")


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


class Stopped(Exception):
    """The user stopped the run (Ctrl-C or SIGTERM); the job was drained, or cancelled."""

    def __init__(self, drained: bool) -> None:
        super().__init__("drained" if drained else "cancelled")
        self.drained = drained


def execute_until_done_or_interrupted(  # type: ignore[no-untyped-def]
    env, name: str = "ais-pipeline", drain_to: Path | None = None, progress: Progress | None = None
) -> None:
    """Run the job until it ends. Ctrl-C (or SIGTERM) stops it: with ``drain_to``, by a final
    savepoint there that first drains event time (every window fires, every sink commits, as at
    the end of a file), then raises :class:`Stopped`; without it, or on a second Ctrl-C, the job
    is cancelled.

    A blocking ``env.execute`` sits in a call to the JVM that a signal does not interrupt; here the
    job runs detached and this process polls its status, sleeping in Python between polls."""
    import signal

    from ais_pipeline.flink import jvm

    signal.signal(signal.SIGTERM, signal.default_int_handler)
    job = env.execute_async(name)
    done = job.get_job_execution_result()
    line = progress.start(str(job.get_job_id())) if progress is not None else None
    try:
        while not done.done():
            if line is not None:
                line.update()
            time.sleep(0.2)
    except KeyboardInterrupt:
        drained = False
        if drain_to is not None:
            log.info("stopping: draining the job (Ctrl-C again cancels it)")
            try:
                stopped = jvm.stop_draining(job, drain_to.as_uri())
                deadline = time.monotonic() + 120
                while not done.done() and time.monotonic() < deadline:
                    time.sleep(0.2)
                drained = done.done() and stopped.done()
            except KeyboardInterrupt:
                pass
            except Exception as exc:  # the savepoint could not be taken: cancel instead
                log.warning("stopping: the job could not be drained (%s)", exc)
        if not drained:
            log.info("stopping: cancelling the job")
            cancelled = job.cancel()
            deadline = time.monotonic() + 30
            while not cancelled.done() and time.monotonic() < deadline:
                time.sleep(0.2)
        raise Stopped(drained) from None
    finally:
        if line is not None:
            line.close()
    done.result()  # raises when the job failed


@dataclass(frozen=True)
class Progress:
    """Where a local run's progress line reads from: its REST API, and the lines of its input
    when they are known (a file run that does not follow its directory)."""

    port: int
    total_lines: int | None = None

    def start(self, job_id: str) -> ProgressLine:
        from ais_pipeline.flink.progress import ProgressLine

        return ProgressLine(f"http://127.0.0.1:{self.port}", job_id, self.total_lines)


def count_input_lines(path: Path) -> int:
    """Input lines as Flink's text line format splits them (\\n, \\r or \\r\\n)."""
    from ais_pipeline.rules.plain import read_lines

    return sum(1 for _ in read_lines(path))


def keeps_web_ui(config: PipelineConfig) -> bool:
    """A file run on a terminal keeps its web UI up once the job has ended, until the user is done
    with it (not with --no-wait or --follow, and not when stdin or stdout is not a terminal)."""
    return (
        not config.no_wait and not config.follow and sys.stdin.isatty() and sys.stdout.isatty()
    ) and not submitted_by_flink_cli()


def run(config: PipelineConfig, cluster: list[LocalCluster] | None = None) -> dict[str, object]:
    """Run the job on a file or directory in a local mini-cluster; returns the run summary. With
    ``cluster``, the mini-cluster outlives the job and is put there for the caller to close."""
    import json

    from ais_pipeline.flink.environment import file_source, local_environment
    from ais_pipeline.flink.topology import build_pipeline
    from ais_pipeline.rules import outputs

    env = local_environment(config, cluster)
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
        attach_sinks(streams, output_dir, scratch / "tally", print_too=config.output_dir is None and config.print_all)
        run_id = start_postgres_run(env, streams, config, str(config.input_path))
        total = None if config.follow else count_input_lines(config.input_path)
        started = time.monotonic()
        stopped: Stopped | None = None
        try:
            progress = Progress(config.web_ui_port, total)
            execute_until_done_or_interrupted(env, drain_to=scratch / "savepoint", progress=progress)
        except Stopped as exc:
            stopped = exc
        elapsed = time.monotonic() - started
        summary = outputs.summarize(
            outputs.read_tallies(scratch / "tally"),
            total if total is not None else count_input_lines(config.input_path),
            output_dir,
        )
        summary["seconds"] = round(elapsed, 3)
        if stopped is not None:
            summary["stopped"] = "drained" if stopped.drained else "cancelled"
        if config.postgres is not None and run_id:
            from ais_pipeline import postgres

            postgres.finish_run(config.postgres, run_id, summary)
        if config.output_dir is not None:
            config.output_dir.mkdir(parents=True, exist_ok=True)  # an empty input writes no part file
            (config.output_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        elif not config.print_all:
            print_sample(output_dir)
        if stopped is not None and not stopped.drained:
            raise KeyboardInterrupt
        return summary
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def start_postgres_run(env, streams: Streams, config: PipelineConfig, source: str) -> str:  # type: ignore[no-untyped-def]
    """With --postgres: every output into its table too, and the run's row in ais_runs (its id)."""
    if config.postgres is None:
        return ""
    from ais_pipeline import postgres
    from ais_pipeline.flink.tables import attach_postgres_sinks

    attach_postgres_sinks(env, streams.named(), config)
    return postgres.start_run(config.postgres, source)


SAMPLE_RECORDS = 3


def print_sample(output_dir: Path) -> None:
    """The first records of each output (a run without --output), and how to get them all."""
    from itertools import islice

    from ais_pipeline.rules import outputs

    for name in outputs.OUTPUTS:
        total = outputs.count_lines(output_dir / name)
        for line in islice(outputs.output_lines(output_dir / name), SAMPLE_RECORDS):
            print(f"{name}> {line}")
        if total > SAMPLE_RECORDS:
            print(f"{name}> ... {total - SAMPLE_RECORDS:,} more")
    print("(--output DIR writes every record; --print-all prints them)")


def checkpointing_on(env) -> bool:  # type: ignore[no-untyped-def]
    return bool(env.get_checkpoint_config().is_checkpointing_enabled())


def run_kafka(config: PipelineConfig) -> str:
    """Run the job from a Kafka topic to one topic per output. Locally it runs until stopped (or,
    with --bounded, until the input's offsets at start are consumed); under ``flink run`` it is
    submitted and left running on the cluster. Returns the job id."""
    from ais_pipeline.flink import kafka as kafka_io
    from ais_pipeline.flink.environment import local_environment
    from ais_pipeline.flink.topology import build_pipeline

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
    run_id = start_postgres_run(env, streams, config, f"kafka:{config.topic}")
    if submitted_by_flink_cli():
        job = env.execute_async(f"ais-pipeline {config.topic}")
        job_id = str(job.get_job_id())
        print(f"submitted job {job_id}")
        return job_id
    try:
        execute_until_done_or_interrupted(env, f"ais-pipeline {config.topic}", progress=Progress(config.web_ui_port))
    finally:
        if config.postgres is not None and run_id:
            from ais_pipeline import postgres

            postgres.finish_run(config.postgres, run_id, None)
    return ""


def free_web_ui_port(config: PipelineConfig) -> PipelineConfig:
    """The config with a usable web UI port: 0 picks a free one; a taken one is an error."""
    import dataclasses

    from ais_pipeline.tools.ports import bindable, unused_port

    if submitted_by_flink_cli():
        return config
    if config.web_ui_port == 0:
        return dataclasses.replace(config, web_ui_port=unused_port())
    if not bindable(config.web_ui_port):
        raise ConfigError(
            f"--web-ui-port (WEB_UI_PORT): port {config.web_ui_port} is in use; pick another, or 0 for a free one"
        )
    return config


def open_warning(config: PipelineConfig) -> str:
    return (
        f"ais-pipeline: warning: --bind-address {config.bind_address}: the web UI, its REST API (which"
        " takes job submissions) and the Prometheus metrics are open to the network"
    )


TERMINAL = {"FINISHED", "FAILED", "CANCELED"}
WAITING = "The web UI still shows the finished job at http://localhost:{port}: press Enter (or Ctrl-C) to end."


def wait_for_user(cluster: LocalCluster, port: int) -> None:
    """Keep the mini-cluster and its web UI up until the user presses Enter or Ctrl-C."""
    from ais_pipeline.flink.progress import rest_json

    def get(path: str) -> Any:
        return rest_json(f"http://127.0.0.1:{port}", path)

    # The REST API caches a job's page for a few seconds: say it once the web UI shows the end.
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            jobs = get("/jobs/overview")["jobs"]
            if jobs and all(get(f"/jobs/{j['jid']}")["state"] in TERMINAL for j in jobs):
                break
        except OSError:
            break
        time.sleep(0.5)
    print(WAITING.format(port=port), flush=True)
    try:
        sys.stdin.readline()
    except KeyboardInterrupt:
        pass
    finally:
        cluster.close()


def main(argv: Sequence[str] | None = None) -> int:
    from ais_pipeline.rules import outputs

    # The job's own messages at INFO; the libraries' (Beam's type hints and optional modules,
    # PyFlink's Cython check) only from WARNING up.
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    log.setLevel(logging.INFO)
    try:
        config = free_web_ui_port(parse_config(sys.argv[1:] if argv is None else argv))
    except ConfigError as exc:
        print(f"ais-pipeline: error: {exc}", file=sys.stderr)
        return 2
    if config.postgres is not None:
        from ais_pipeline import postgres

        try:
            postgres.prepare(config.postgres)
        except postgres.PostgresError as exc:
            print(f"ais-pipeline: error: {exc}", file=sys.stderr)
            return 2
        log.info("outputs also into PostgreSQL %s", config.postgres.shown())
        if config.postgres.password_in_url:
            print(
                "ais-pipeline: warning: the password in the --postgres URL is visible to other users of this"
                " machine (ps, shell history); PGPASSWORD or --postgres-password-file keep it out of sight",
                file=sys.stderr,
            )
    if not submitted_by_flink_cli():
        until = "until you end the run" if config.source == "file" and keeps_web_ui(config) else "while the job runs"
        print(f"Flink web UI: http://localhost:{config.web_ui_port} ({until})", file=sys.stderr)
        if config.open_to_network:
            print(open_warning(config), file=sys.stderr)
    if config.source == "kafka":
        try:
            run_kafka(config)
        except ConfigError as exc:
            print(f"ais-pipeline: error: {exc}", file=sys.stderr)
            return 2
        except (KeyboardInterrupt, Stopped):
            print("ais-pipeline: stopped", file=sys.stderr)
            return 130
        return 0
    log.info("input %s (%s), output %s", config.input_path, config.input_format, config.output_dir or "printed")
    kept: list[LocalCluster] = []
    try:
        summary = run(config, kept if keeps_web_ui(config) else None)
    except KeyboardInterrupt:
        print("ais-pipeline: stopped (the job was cancelled before it drained: no summary)", file=sys.stderr)
        return 130
    print(outputs.format_summary(summary))
    if config.output_dir is not None:
        print(f"outputs in {config.output_dir}")
    if kept and "stopped" not in summary:
        wait_for_user(kept[0], config.web_ui_port)
    if "stopped" in summary:
        # --follow runs end this way; a file run stopped before its end has read part of its input.
        print("ais-pipeline: stopped; the summary is of what was read until then", file=sys.stderr)
        return 0 if config.follow else 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
