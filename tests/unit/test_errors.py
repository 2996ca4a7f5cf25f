"""A failing job is one line naming its cause, found in the innermost frame of Java's trace."""

from __future__ import annotations

import pytest

from ais_pipeline.errors import ConfigError, guarded
from ais_pipeline.jvm.gateway import innermost_cause

pytestmark = pytest.mark.unit

TRACE = """An error occurred while calling o96.get.
: java.util.concurrent.ExecutionException: org.apache.flink.runtime.client.JobExecutionException: Job execution failed.
\tat java.base/java.util.concurrent.CompletableFuture.reportGet(CompletableFuture.java:396)
Caused by: org.apache.flink.runtime.JobException: Recovery is suppressed by NoRestartBackoffTimeStrategy
\tat org.apache.flink.runtime.executiongraph.failover.ExecutionFailureHandler.handleFailure(Execution.java:2)
Caused by: pemja.core.PythonException: <class 'RuntimeError'>: injected failure on a line containing 'AIVDM'
\tat /work/udfs/ais_pipeline/functions/operators.py.process_element(operators.py:148)
"""


def test_the_innermost_cause_of_a_java_trace_in_one_line():
    assert innermost_cause(TRACE) == "RuntimeError: injected failure on a line containing 'AIVDM'"
    assert innermost_cause(": java.lang.IllegalStateException: no slot\n\tat x") == "no slot"
    assert innermost_cause("") == "unknown error"


def test_a_user_error_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]):
    def command(argv: object) -> int:
        raise ConfigError("--window (WINDOW_SECONDS): must be a positive number of seconds, not -5")

    assert guarded(command, []) == 2
    assert capsys.readouterr().err == (
        "ais-pipeline: error: --window (WINDOW_SECONDS): must be a positive number of seconds, not -5\n"
    )
