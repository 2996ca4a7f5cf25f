"""What a run writes and how it ends, around the job's topology.

- :class:`FileRun`: a local run on a file or a directory. It clears the outputs of an earlier
  run, collects the tallies, runs the job until its input ends (or until Ctrl-C drains it), and
  makes the run's summary (``summary.json`` under ``--output``, or a sample of each output).
- :func:`execute_kafka`: a Kafka run, locally until stopped (or until ``--bounded`` offsets are
  read), or submitted to the cluster of ``flink run`` and left running there; a Kinesis run the
  same (:func:`submit_kinesis`), its outputs files as a file run's.
- :class:`RunRecord`: with ``--postgres``, the run's row in ``ais_runs``, started once and
  finished once.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from types import TracebackType

from pyflink.datastream import StreamExecutionEnvironment

from ais_pipeline import files, postgres
from ais_pipeline.config import PipelineConfig
from ais_pipeline.errors import Cancelled
from ais_pipeline.jvm.cluster import client_rest_url
from ais_pipeline.pipeline.execution import LocalJob, Stopped, StopSignals, execute
from ais_pipeline.pipeline.shape import place
from ais_pipeline.pipeline.started import await_start
from ais_pipeline.pipeline.taskmanagers import TaskManagerCluster
from ais_pipeline.pipeline.webui import Cluster
from ais_pipeline.rules.outputs import OUTPUTS

log = logging.getLogger("ais_pipeline")

SAMPLE_RECORDS = 3


class RunRecord:
    """The run's row in ``ais_runs`` (with ``--postgres``; nothing without): started when the job
    is about to run, finished with its summary (none for a Kafka run) once it has ended."""

    def __init__(self, config: PipelineConfig, source: str) -> None:
        self._target = config.postgres
        self._id = postgres.start_run(self._target, source) if self._target is not None else ""

    def finish(self, summary: dict[str, object] | None) -> None:
        if self._target is not None and self._id:
            postgres.finish_run(self._target, self._id, summary)
            self._id = ""


@dataclass
class Outcome:
    """How a file run ended: its summary, the sample of each output it prints without --output,
    and the local cluster it kept up for its web UI (the caller closes it)."""

    summary: dict[str, object]
    sample: list[str] = field(default_factory=list)
    cluster: Cluster | None = None

    @property
    def stopped(self) -> bool:
        return "stopped" in self.summary


class FileRun:
    """A local run that sums itself up: ``with FileRun(config) as run:`` gives its environment
    and the folders its file sinks write to; :meth:`execute` runs the job. A file run's outputs
    are its files (``--output``, else a scratch folder); a local Kafka run (``kafka=True``), or one
    whose outputs go to Kafka (``to_kafka``), writes copies of its outputs to a scratch folder for
    the summary to count, and its ``--output`` holds only ``summary.json``."""

    def __init__(
        self, config: PipelineConfig, kafka: bool = False, kinesis: bool = False, to_kafka: bool = False
    ) -> None:
        self.config = config
        self.kafka = kafka
        self.to_kafka = to_kafka
        self.kinesis = kinesis
        self.cluster: Cluster | None = None
        self.stops = StopSignals()  # counting from the job's submission on
        placed = place(config)
        self.env, self.cluster, self.keeps_web_ui = placed.env, placed.cluster, placed.keeps_web_ui
        try:
            self.scratch = Path(tempfile.mkdtemp(prefix="ais-run-"))
            copies = kafka or to_kafka  # outputs in topics: the files are copies for the summary
            self.output_dir = self.scratch / "out" if copies or config.output_dir is None else config.output_dir
            self.tally_dir = self.scratch / "tally"
            for name in (*OUTPUTS, "summary.json"):  # an earlier run's outputs
                target = self.output_dir / name
                if target.is_dir():
                    shutil.rmtree(target)
                elif target.exists():
                    target.unlink()
        except BaseException:  # no __exit__ for a run that did not begin: its cluster stops here
            if self.cluster is not None:
                self.cluster.close()
            raise

    def __enter__(self) -> FileRun:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        try:
            if self.cluster is not None and (kind is not None or not self.keeps_web_ui):
                self.cluster.close()
        finally:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.stops.__exit__(kind, exc, tb)

    @property
    def prints_every_record(self) -> bool:
        return self.config.output_dir is None and self.config.print_all

    def execute(self) -> Outcome:
        """Run the job to the end of its input (or until Ctrl-C drains it), then sum it up. A run
        cancelled before it drained raises :class:`~ais_pipeline.errors.Cancelled`: it has no
        summary."""
        config = self.config
        if self.kafka:
            what, name = f"kafka:{config.topic}", f"ais-pipeline {config.topic}"
        elif self.kinesis:
            what, name = f"kinesis:{config.stream}", f"ais-pipeline {config.stream}"
        else:
            what, name = config.input_feed or str(config.input_path), "ais-pipeline"
        record = RunRecord(config, what)
        unbounded = config.follow or self.kafka or self.kinesis or bool(config.input_feed)
        total = None if unbounded else files.input_bytes(config.input_path)
        started = time.monotonic()
        stopped: Stopped | None = None
        # From the job's submission until the run's cluster is closed, stop signals act on the job
        # and are not raised: the summary of a job that ended is always made.
        self.stops.__enter__()
        try:
            local = LocalJob(config.web_ui_port, total, live=bool(config.input_feed))
            execute(self.env, name, local, self.scratch / "savepoint", self.stops)
        except Stopped as exc:
            stopped = exc
        elapsed = time.monotonic() - started
        # The lines the job's source read (decompressed, and only as far as a corrupt archive or a
        # stop let it), as the parse operator counted them.
        tallies = files.read_tallies(self.tally_dir)
        summary = files.summarize(tallies, tallies.get("lines", 0), self.output_dir)
        summary["seconds"] = round(elapsed, 3)
        if stopped is not None:
            summary["stopped"] = "drained" if stopped.drained else "cancelled"
        record.finish(summary)
        if stopped is not None and not stopped.drained:
            raise Cancelled
        outcome = Outcome(summary, cluster=self.cluster if self.keeps_web_ui else None)
        if config.output_dir is not None:
            config.output_dir.mkdir(parents=True, exist_ok=True)  # an empty input writes no part file
            (config.output_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        elif not config.print_all and not (self.kafka or self.to_kafka):
            outcome.sample = sample_of(self.output_dir)
        elif self.prints_every_record and isinstance(self.cluster, TaskManagerCluster):
            outcome.sample = self.cluster.printed()  # its TaskManagers printed them into their logs
        return outcome


def sample_of(output_dir: Path) -> list[str]:
    """The first records of each output (a run without --output), and how to get them all."""
    sample: list[str] = []
    for name in OUTPUTS:
        total = files.count_records(output_dir / name)
        sample.extend(f"{name}> {line}" for line in islice(files.output_lines(output_dir / name), SAMPLE_RECORDS))
        if total > SAMPLE_RECORDS:
            sample.append(f"{name}> ... {total - SAMPLE_RECORDS:,} more")
    sample.append("(--output DIR writes every record; --print-all prints them)")
    return sample


def checkpointing_on(env: StreamExecutionEnvironment) -> bool:
    return bool(env.get_checkpoint_config().is_checkpointing_enabled())


def submit_kinesis(env: StreamExecutionEnvironment, config: PipelineConfig) -> str:
    """Submit a Kinesis job to the cluster of ``flink run`` and leave it running there (a bounded
    one ends by itself) once it has started (:func:`await_start`); its job id."""
    RunRecord(config, f"kinesis:{config.stream}")
    job_id = str(env.execute_async(f"ais-pipeline {config.stream}").get_job_id())
    await_start(client_rest_url(env), job_id)
    return job_id


def submit_kafka(env: StreamExecutionEnvironment, config: PipelineConfig) -> str:
    """Submit a Kafka job to the cluster of ``flink run`` and leave it running there (its row in
    ais_runs stays without an end) once it has started (:func:`await_start`); its job id."""
    RunRecord(config, f"kafka:{config.topic}")
    job_id = str(env.execute_async(f"ais-pipeline {config.topic}").get_job_id())
    await_start(client_rest_url(env), job_id)
    return job_id
