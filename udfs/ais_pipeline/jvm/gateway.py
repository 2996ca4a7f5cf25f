"""The py4j handles the wrappers of this package share: the gateway's JVM, the Java object behind
a PyFlink stream, Java arrays, properties and configurations, and Java errors in one line. The only
module of the project that calls ``get_gateway()`` or reads a PyFlink object's ``_j_*`` attribute
(``tests/unit/test_layout.py`` checks it)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pyflink.common.typeinfo import TypeInformation
from pyflink.datastream import DataStream, StreamExecutionEnvironment
from pyflink.java_gateway import get_gateway


def jvm() -> Any:
    return get_gateway().jvm


def java_stream(stream: DataStream) -> Any:
    """The Java ``DataStream`` behind a PyFlink one (PyFlink has no public accessor)."""
    return stream._j_data_stream


def java_environment(env: StreamExecutionEnvironment) -> Any:
    """The Java ``StreamExecutionEnvironment`` of a PyFlink one."""
    return env._j_stream_execution_environment


def java_type(type_info: TypeInformation) -> Any:
    return type_info.get_java_type_info()


def transform(stream: DataStream, name: str, out_type: TypeInformation, j_operator: Any) -> Any:
    """A Java operator after ``stream``, at its parallelism (an operator of a lane stays on the
    lane's subtask: forward, chained); the Java stream it makes."""
    j_stream = java_stream(stream)
    return j_stream.transform(name, java_type(out_type), j_operator).setParallelism(j_stream.getParallelism())


def string_array(values: Sequence[str]) -> Any:
    gateway = get_gateway()
    array = gateway.new_array(gateway.jvm.String, len(values))
    for i, value in enumerate(values):
        array[i] = value
    return array


def java_properties(props: Mapping[str, str]) -> Any:
    """A ``java.util.Properties`` of string pairs."""
    j_props = jvm().java.util.Properties()
    for key, value in props.items():
        j_props.setProperty(key, value)
    return j_props


def configuration(settings: Mapping[str, str]) -> Any:
    """A Java ``Configuration`` holding these settings."""
    conf = jvm().org.apache.flink.configuration.Configuration()
    for key, value in settings.items():
        conf.setString(key, value)
    return conf


class JavaError(Exception):
    """A Java exception from a call through the gateway, with its innermost message in one line."""

    def __init__(self, exc: Exception) -> None:
        super().__init__(innermost_cause(str(exc)))
        self.text = str(exc)


_THROWN = re.compile(r"^(?:Caused by: |: )?([\w.$]+(?:Exception|Error))(?:: (.*))?$")


def innermost_cause(text: str) -> str:
    """The message of the innermost exception of a Java stack trace (the last ``Caused by:``, else
    the first exception line): the cause a user can act on, in one line of at most 300
    characters. A Python exception raised in an operator comes through pemja as
    ``<class 'X'>: message`` and is said as ``X: message``."""
    lines = [line.strip() for line in text.strip().splitlines()]
    thrown = [m for m in map(_THROWN.match, lines) if m]
    caused = [
        m for line, m in zip(lines, map(_THROWN.match, lines), strict=True) if m and line.startswith("Caused by: ")
    ]
    if not thrown:
        return lines[0][:300] if lines and lines[0] else "unknown error"
    found = (caused or thrown)[-1 if caused else 0]
    message = found.group(2) or found.group(1).rsplit(".", 1)[-1]
    python = re.match(r"<class '(?:[\w.]+\.)?(\w+)'>: (.*)", message)
    if python:
        message = f"{python.group(1)}: {python.group(2)}"
    return message[:300]
