"""Flink's own stream operations that PyFlink does not offer as the job needs them: a side output
as the Java stream it is, keying in Java on a field the producing operator computed, and the
parallelism an operator runs at."""

from __future__ import annotations

from typing import Any

from pyflink.common import Types
from pyflink.common.typeinfo import TypeInformation
from pyflink.datastream import DataStream, KeyedStream, OutputTag

from ais_pipeline.jvm.gateway import java_stream, jvm


def parallelism(stream: DataStream) -> int:
    """The parallelism a stream's operator runs at (set, or the environment's default)."""
    return int(java_stream(stream).getParallelism())


def side_output(stream: DataStream, tag: OutputTag) -> DataStream:
    """A side output as the Java stream it is. PyFlink's ``get_side_output`` appends a Python
    identity map, which costs a Java/Python round trip for every record of the side output."""
    return DataStream(java_stream(stream).getSideOutput(tag.get_java_output_tag()))


def keyed_by_first_field(
    stream: DataStream, key_type: TypeInformation, record_type: TypeInformation, already_partitioned: bool = False
) -> KeyedStream:
    """Key a stream of ``Row(key, record)`` on its first field, in Java.

    The producing operator computes the key along with the record; PyFlink's ``key_by`` would add
    a Python operator (another round trip per record) just to compute it. A stream that is
    ``already_partitioned`` as the key would partition it (``ais.flink.LineBatches``' lanes), or
    one of a job at parallelism 1, is reinterpreted as keyed instead of shuffled: the operators
    then chain into one task.
    """
    j_key_type = Types.ROW([key_type]).get_java_type_info()
    j_keyed = java_keyed(stream, jvm().KeyByKeySelector(), j_key_type, already_partitioned)
    return KeyedStream(j_keyed, record_type, stream)


def java_keyed(stream: DataStream, j_selector: Any, j_key_type: Any = None, already_partitioned: bool = False) -> Any:
    """``stream`` keyed in Java by ``j_selector`` (its key type ``j_key_type``, or the one the
    selector gives): reinterpreted as keyed, so chained into the same task, when it is
    ``already_partitioned`` as the key would partition it or when the job runs at parallelism 1
    throughout; else shuffled by the key. The Java keyed stream."""
    j_stream = java_stream(stream)
    everything_on_one = j_stream.getParallelism() == 1 and stream.get_execution_environment().get_parallelism() == 1
    if already_partitioned or everything_on_one:
        utils = jvm().org.apache.flink.streaming.api.datastream.DataStreamUtils
        if j_key_type is None:
            return utils.reinterpretAsKeyedStream(j_stream, j_selector)
        return utils.reinterpretAsKeyedStream(j_stream, j_selector, j_key_type)
    return j_stream.keyBy(j_selector) if j_key_type is None else j_stream.keyBy(j_selector, j_key_type)
