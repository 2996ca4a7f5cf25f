"""The AIS traffic job: raw AIS lines in (a file, a directory of files, a live feed, a Kafka topic, or
a Kinesis data stream); deduplicated positions, static reports, per-cell tumbling and sliding
aggregates, late reports and dead letters out (JSON Lines or GeoParquet files, or Kafka topics; PostgreSQL
tables too with ``--postgres``, the aggregates into a DynamoDB table with ``--dynamodb-table``).

    ais-pipeline run [flags]                                   in a local mini-cluster, web UI on :8081
    python jobs/ais_traffic.py [flags]                         the same
    flink run -py jobs/ais_traffic.py --pyFiles udfs [flags]   on a Flink cluster

``--help`` lists the flags.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from pyflink.datastream import StreamExecutionEnvironment

from ais_pipeline import postgres
from ais_pipeline.config import PipelineConfig, parse_config, submitted_by_flink_cli
from ais_pipeline.errors import Cancelled, guarded
from ais_pipeline.pipeline import aws, kafka, sinks, sources, webui
from ais_pipeline.pipeline.execution import install_interrupt, stop_requested
from ais_pipeline.pipeline.runs import FileRun, Outcome, checkpointing_on, submit_kafka, submit_kinesis
from ais_pipeline.pipeline.shape import place
from ais_pipeline.pipeline.topology import Streams, build_pipeline
from ais_pipeline.rules.feeds import parse_feed_url
from ais_pipeline.rules.outputs import format_summary

log = logging.getLogger("ais_pipeline")


def file_job(config: PipelineConfig) -> Outcome:
    """The job on a file or a directory, in a local mini-cluster, until its input ends (or, with
    --follow, until Ctrl-C), or on a live feed until Ctrl-C; the run's summary. With --kafka-output
    its outputs go to Kafka topics, as a Kafka run's do."""
    with FileRun(config, to_kafka=config.kafka_output) as run:
        if config.kafka_output:
            kafka.use_connector(run.env)
            kafka.check_topics(config)
        lines = sources.input_lines(run.env, config)
        streams = build_pipeline(run.env, lines, config)
        sinks.file_sinks(
            streams, run.output_dir, run.tally_dir, print_too=run.prints_every_record, formats=config.output_formats
        )  # with --kafka-output: copies for the summary to count
        if config.kafka_output:
            kafka_outputs(run.env, streams, config)
        if config.postgres is not None:
            sinks.postgres_sinks(run.env, streams.named(), config)
        if config.dynamodb_table:
            aws.use_helpers(run.env)
            aws.prepare_table(config)
            sinks.dynamodb_sink(streams, config, run.output_dir / "dead_letter")
        return run.execute()


def kinesis_job(config: PipelineConfig) -> Outcome | str:
    """The job from a Kinesis data stream to files (``--output``, JSON Lines or GeoParquet), and with
    ``--dynamodb-table`` the aggregates into DynamoDB (and with ``--postgres`` every output into
    PostgreSQL). Under ``flink run`` it is submitted (its job id); locally it runs until stopped
    (or, with --bounded, to where the shards were at its start) and sums itself up as a file run
    does."""
    if submitted_by_flink_cli():
        env = place(config).env  # the cluster of flink run
        kinesis_streams(env, config, config.output_dir, None)
        return submit_kinesis(env, config)
    with FileRun(config, kinesis=True) as run:
        kinesis_streams(run.env, config, run.output_dir, run.tally_dir)
        return run.execute()


def kinesis_streams(
    env: StreamExecutionEnvironment, config: PipelineConfig, output_dir: Path | None, tally_dir: Path | None
) -> Streams:
    """Kinesis in (the stream checked first), the topology, files (and DynamoDB, PostgreSQL) out."""
    aws.use_helpers(env)
    aws.check_stream(config)
    if config.dynamodb_table:
        aws.prepare_table(config)
    lines = sources.kinesis_lines(env, config)
    streams = build_pipeline(env, lines, config, emit_tallies=tally_dir is not None)
    if output_dir is not None:
        sinks.file_sinks(streams, output_dir, tally_dir, print_too=False, formats=config.output_formats)
    if config.dynamodb_table:
        sinks.dynamodb_sink(streams, config, None if output_dir is None else output_dir / "dead_letter")
    if config.postgres is not None:
        sinks.postgres_sinks(env, streams.named(), config)
    return streams


def kafka_job(config: PipelineConfig) -> Outcome | str:
    """The job from a Kafka topic to one topic per output: exactly once with checkpoints on (the
    sinks' transactions commit on checkpoints), at least once without. Under ``flink run`` it is
    submitted (its job id); locally it runs until stopped (or to the --bounded offsets) and sums
    itself up as a file run does."""
    if submitted_by_flink_cli():
        env = place(config).env  # the cluster of flink run
        kafka_streams(env, config, emit_tallies=False)
        return submit_kafka(env, config)
    with FileRun(config, kafka=True) as run:
        streams = kafka_streams(run.env, config, emit_tallies=True)
        sinks.file_sinks(streams, run.output_dir, run.tally_dir, print_too=False)  # counted for the summary
        return run.execute()


def kafka_outputs(env: StreamExecutionEnvironment, streams: Streams, config: PipelineConfig) -> None:
    """Every output to its Kafka topic, exactly once when asked and checkpoints are on."""
    exactly_once = config.kafka_exactly_once and checkpointing_on(env)
    if exactly_once:
        how = "exactly once (transactions committed on checkpoints)"
    else:
        how = (
            "at least once ("
            + ("no checkpoints" if config.kafka_exactly_once else "written at once, keyed by id")
            + ")"
        )
    what = f"Kafka {config.topic}" if config.source == "kafka" else config.input_feed or str(config.input_path)
    log.info("%s -> topics %s*, %s", what, config.output_topic_prefix, how)
    sinks.kafka_sinks(streams, config, exactly_once)


def kafka_streams(env: StreamExecutionEnvironment, config: PipelineConfig, emit_tallies: bool) -> Streams:
    """Kafka in, the topology, Kafka (and PostgreSQL) out."""
    kafka.use_connector(env)
    kafka.check_topics(config)
    lines = sources.kafka_lines(env, config)
    streams = build_pipeline(env, lines, config, emit_tallies=emit_tallies)
    kafka_outputs(env, streams, config)
    if config.postgres is not None:
        sinks.postgres_sinks(env, streams.named(), config)
    if config.dynamodb_table:
        aws.use_helpers(env)
        aws.prepare_table(config)
        sinks.dynamodb_sink(streams, config, None)
    return streams


def prepared(argv: Sequence[str]) -> PipelineConfig:
    """The config of the flags, checked against the world before a JVM starts: a free web UI
    port, and a database that takes the outputs."""
    config = webui.with_free_port(parse_config(argv))
    if config.postgres is not None:
        postgres.prepare(config.postgres)
        log.info("outputs also into PostgreSQL %s", config.postgres.shown())
        if config.postgres.password_in_url:
            print(
                "ais-pipeline: warning: the password in the --postgres URL is visible to other users of this"
                " machine (ps, shell history); PGPASSWORD or --postgres-password-file keep it out of sight",
                file=sys.stderr,
            )
    return config


def not_a_stop(record: logging.LogRecord) -> bool:
    """Whether a log record is more than a stop: py4j logs the KeyboardInterrupt that a stop
    signal raises in a call to the JVM with its traceback, before the run says in one line that it
    stopped."""
    return not (record.exc_info and isinstance(record.exc_info[1], KeyboardInterrupt))


def main(argv: Sequence[str]) -> int:
    """``ais-pipeline run [flags]``: run the job and say how it went."""
    # The job's own messages at INFO; the libraries' (Beam's type hints and optional modules,
    # PyFlink's Cython check) only from WARNING up.
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    for handler in logging.getLogger().handlers:
        handler.addFilter(not_a_stop)
    log.setLevel(logging.INFO)
    # Ctrl-C, SIGTERM (a service manager, kill) and SIGHUP (the terminal closed) stop the run from
    # its first step on: a cluster of its own, half started, is stopped too.
    install_interrupt()
    config = prepared(argv)
    webui.announce(config)
    try:
        if config.source in ("kafka", "kinesis"):
            ran = kafka_job(config) if config.source == "kafka" else kinesis_job(config)
            if isinstance(ran, str):
                print(f"submitted job {ran}")
                return 0
            outcome = ran
        else:
            if config.input_feed:
                log.info("live input %s (until Ctrl-C), output %s", config.input_feed, config.output_dir or "printed")
                if parse_feed_url(config.input_feed, "--input").open_to_network:
                    print(
                        f"ais-pipeline: warning: --input {config.input_feed}: the job listens on the network",
                        file=sys.stderr,
                    )
            else:
                log.info(
                    "input %s (%s), output %s", config.input_path, config.input_format, config.output_dir or "printed"
                )
            outcome = file_job(config)
    except Cancelled:
        print("ais-pipeline: stopped (the job was cancelled before it drained: no summary)", file=sys.stderr)
        return 130
    except KeyboardInterrupt:  # while the job or its cluster was being made; once submitted, a stop drains it
        print("ais-pipeline: stopped before the job started", file=sys.stderr)
        return 130
    except Exception:
        if not stop_requested():
            raise
        # A stop that cut a call to the JVM in the middle: what failed next is the stop's doing.
        log.debug("an error after a stop, before the job started", exc_info=True)
        print("ais-pipeline: stopped before the job started", file=sys.stderr)
        return 130
    print("\n".join([*outcome.sample, format_summary(outcome.summary)]))
    if config.output_dir is not None:
        print(
            f"summary in {config.output_dir / 'summary.json'}"
            if config.source == "kafka"
            else f"outputs in {config.output_dir}"
        )
    if outcome.stopped:
        # --follow and unbounded Kafka runs end this way; a file run stopped before its end has
        # read part of its input.
        print("ais-pipeline: stopped; the summary is of what was read until then", file=sys.stderr)
        ends_so = config.follow or bool(config.input_feed) or (config.source != "file" and not config.bounded)
        return 0 if ends_so else 130
    if outcome.cluster is not None:
        webui.wait_for_user(outcome.cluster, config.web_ui_port)
    return 0


if __name__ == "__main__":
    sys.exit(guarded(main, sys.argv[1:]))
