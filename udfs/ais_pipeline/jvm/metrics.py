"""Java gauges on a Python operator's metric group (thread mode).

PyFlink has no public way to register a Java metric from Python, and its own Python gauges are
read by the metric threads by calling back into the interpreter, which crashed a TaskManager
(SIGSEGV in ``take_gil``) when a gauge was read while the job ended. So these reach the Java
metric group and counters behind PyFlink's embedded (thread mode) metric objects, and return None
where there are none (process mode)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def task_class(name: str) -> Any:
    """A class of the job's jar, loaded with the running task's (user code) class loader, which
    pemja's ``findClass`` does not use; pemja cannot pass constructor arguments either."""
    from pemja import findClass

    loader = findClass("java.lang.Thread").currentThread().getContextClassLoader()
    return loader.loadClass(name).newInstance()


def duplicate_ratio_gauge(metric_group: Any, counters: Sequence[Any]) -> Any | None:
    """``ais.flink.DuplicateRatio`` over the Java counters behind PyFlink metric counters (kept,
    exact and near duplicates), registered as ``duplicate_ratio``."""
    j_group = getattr(metric_group, "_metrics", None)
    j_counters = [getattr(c, "_inner_counter", None) for c in counters]
    if j_group is None or None in j_counters:
        return None
    return j_group.gauge("duplicate_ratio", task_class("ais.flink.DuplicateRatio").of(*j_counters))


def set_gauge(metric_group: Any, name: str) -> Any | None:
    """``ais.flink.SetGauge`` registered as ``name``: a gauge whose value Python sets with
    ``.set(n)`` and the metric threads read in Java."""
    j_group = getattr(metric_group, "_metrics", None)
    if j_group is None:
        return None
    gauge = task_class("ais.flink.SetGauge")
    j_group.gauge(name, gauge)
    return gauge
