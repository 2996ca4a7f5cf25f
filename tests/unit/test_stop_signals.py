"""The stop signals of a run: counted, not raised, while its job runs; put back after a run that
was not stopped; ignored after one that was (a second Ctrl-C must not kill a run that is ending)."""

from __future__ import annotations

import os
import signal

import pytest

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
