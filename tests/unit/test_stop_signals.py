"""The stop signals of a run: counted, not raised, while its job runs; put back after a run that
was not stopped; ignored after one that was (a second Ctrl-C must not kill a run that is ending)."""

from __future__ import annotations

import os
import signal

import pytest

from ais_pipeline.config import SAMPLE_INPUT
from ais_pipeline.pipeline.execution import StopSignals, still_starting

pytestmark = pytest.mark.unit


@pytest.fixture
def handlers():
    before = {sig: signal.getsignal(sig) for sig in StopSignals.SIGNALS}
    yield before
    for sig, handler in before.items():
        signal.signal(sig, handler)


def test_signals_during_the_block_are_counted_not_raised(handlers) -> None:
    with StopSignals() as stops:
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGHUP)
        os.kill(os.getpid(), signal.SIGTERM)
    assert stops.count == 3


def test_a_block_without_a_signal_puts_the_handlers_of_before_back(handlers) -> None:
    with StopSignals() as stops:
        pass
    assert stops.count == 0
    assert {sig: signal.getsignal(sig) for sig in StopSignals.SIGNALS} == handlers


def test_after_a_stop_a_second_ctrl_c_is_ignored_not_raised(handlers) -> None:
    with StopSignals():
        os.kill(os.getpid(), signal.SIGINT)
    assert all(signal.getsignal(sig) is signal.SIG_IGN for sig in StopSignals.SIGNALS)
    os.kill(os.getpid(), signal.SIGINT)  # raised as KeyboardInterrupt if it were not ignored


def test_a_stop_lost_before_the_job_was_submitted_still_stops_the_run(handlers) -> None:
    from ais_pipeline.errors import StoppedBeforeStart
    from ais_pipeline.pipeline import execution

    try:
        execution.interrupt(signal.SIGINT, None)
    except KeyboardInterrupt:
        pass  # as a finalizer of a library drops what it raises
    with StopSignals() as stops, pytest.raises(StoppedBeforeStart):
        # No job is submitted: the environment is never touched.
        execution.execute(None, "never", execution.LocalJob(0), stops=stops)  # type: ignore[arg-type]
    assert stops.count == 1
    with StopSignals() as later:
        pass
    assert later.count == 0  # taken once


def test_a_stop_dropped_by_a_finalizer_prints_no_traceback_and_still_counts(handlers, capsys) -> None:
    import gc
    import sys

    from ais_pipeline.pipeline import execution

    class Finalized:
        def __del__(self) -> None:
            execution.interrupt(signal.SIGINT, None)  # as a Ctrl-C that lands in py4j's finalizer

    before = sys.unraisablehook
    execution.install_interrupt()
    try:
        Finalized()
        gc.collect()
    finally:
        sys.unraisablehook = before
    assert "Traceback" not in capsys.readouterr().err
    with StopSignals() as stops:
        pass
    assert stops.count == 1


def test_a_drain_that_came_before_the_jobs_tasks_ran_is_asked_for_again_and_no_other_failure_is():
    cause = (
        "java.util.concurrent.CompletionException: org.apache.flink.runtime.checkpoint.CheckpointException: "
        "Checkpoint triggering task Source: read lines (1/1) of job 18bc is not being executed at the moment. "
        "Aborting checkpoint. Failure reason: Not all required tasks are currently running.\n\tat java.base/..."
    )
    assert still_starting({"class": "java.util.concurrent.CompletionException", "stack-trace": cause})
    declined = cause.replace("Not all required tasks are currently running", "Checkpoint was declined")
    assert not still_starting({"class": "java.util.concurrent.CompletionException", "stack-trace": declined})
    assert not still_starting({"class": "java.io.IOException"})


def test_an_error_after_a_stop_that_cut_a_call_to_the_jvm_ends_on_the_stop_line(
    handlers, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stop that lands in the middle of a py4j call leaves its connection out of step: the next
    lookup of one of our Java classes fails as if the jar were missing. The run says it stopped."""
    from ais_pipeline.jobs import ais_traffic
    from ais_pipeline.pipeline import execution

    def stopped_then_broken(config: object) -> None:
        try:
            execution.interrupt(signal.SIGINT, None)
        except KeyboardInterrupt:
            pass  # dropped by py4j, as in a finalizer
        raise TypeError("Could not found the Java class 'ais.flink.ColumnsToRows'.")

    monkeypatch.setattr(ais_traffic, "file_job", stopped_then_broken)
    monkeypatch.setattr(ais_traffic.webui, "announce", lambda config: None)
    try:
        assert ais_traffic.main(["--input", str(SAMPLE_INPUT), "--web-ui-port", "0"]) == 130
    finally:
        with StopSignals():  # take the stop, as a run would
            pass
    assert capsys.readouterr().err.strip().splitlines()[-1] == "ais-pipeline: stopped before the job started"


def test_an_error_without_a_stop_keeps_its_traceback(handlers, monkeypatch: pytest.MonkeyPatch) -> None:
    from ais_pipeline.jobs import ais_traffic

    def broken(config: object) -> None:
        raise TypeError("a defect")

    monkeypatch.setattr(ais_traffic, "file_job", broken)
    monkeypatch.setattr(ais_traffic.webui, "announce", lambda config: None)
    with pytest.raises(TypeError, match="a defect"):
        ais_traffic.main(["--input", str(SAMPLE_INPUT), "--web-ui-port", "0"])
