"""The one door between the job's Python and its Java classes.

One small wrapper per Java class of ``java/`` (and the few of Flink's own that PyFlink does not
wrap), in the style of PyFlink's connector wrappers: each takes Python values and streams and
returns PyFlink objects. No other module of the project touches py4j, ``get_gateway()`` or a
``_j_*`` attribute (``tests/unit/test_layout.py`` checks it).

The Java classes live in one jar built by Maven from ``java/pom.xml`` (``make setup``):
``build/java/ais-flink-helpers.jar``; the job adds it with ``add_jars`` so that ``flink run``
ships it to the cluster.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pyflink.common import Types
from pyflink.common.typeinfo import TypeInformation
from pyflink.datastream import DataStream, KeyedStream, StreamExecutionEnvironment
from pyflink.java_gateway import get_gateway

from ais_pipeline.config import PROJECT_ROOT, ConfigError

HELPERS_JAR = PROJECT_ROOT / "build" / "java" / "ais-flink-helpers.jar"


def helpers_jar() -> Path:
    """The job's Java jar; a one-line error when it has not been built."""
    if not HELPERS_JAR.exists():
        raise ConfigError(f"{HELPERS_JAR.relative_to(PROJECT_ROOT)} is missing: build it with `make setup`")
    return HELPERS_JAR


def _jvm() -> Any:
    return get_gateway().jvm


def _j(stream: DataStream) -> Any:
    return stream._j_data_stream


def _transform(stream: DataStream, name: str, out_type: TypeInformation, j_operator: Any) -> DataStream:
    """A Java operator after ``stream``, at its parallelism (the per-lane operators stay on the
    lane's subtask: forward, chained)."""
    j_stream = _j(stream)
    return DataStream(
        j_stream.transform(name, out_type.get_java_type_info(), j_operator).setParallelism(j_stream.getParallelism())
    )


def parallelism(stream: DataStream) -> int:
    """The parallelism a stream's operator runs at (set, or the environment's default)."""
    return int(_j(stream).getParallelism())


def _string_array(values: Sequence[str]) -> Any:
    gateway = get_gateway()
    array = gateway.new_array(gateway.jvm.String, len(values))
    for i, value in enumerate(values):
        array[i] = value
    return array


def java_properties(props: Mapping[str, str]) -> Any:
    """A ``java.util.Properties`` of string pairs."""
    j_props = _jvm().java.util.Properties()
    for key, value in props.items():
        j_props.setProperty(key, value)
    return j_props


# -- the job's own classes (java/src/main/java/ais/flink/) -------------------------------------


class OrderedFiles:
    """``ais.flink.OrderedFiles``: the lines of a file, or of every file under a directory in
    name order, read by one subtask; with ``monitor_ms`` the directory is watched for new files."""

    def __init__(self, path: str, monitor_ms: int = 0) -> None:
        self.path, self.monitor_ms = path, monitor_ms

    def read(self, env: StreamExecutionEnvironment, name: str, uid: str) -> DataStream:
        from pyflink.common import WatermarkStrategy
        from pyflink.datastream.connectors.file_system import FileSource

        env.add_jars(helpers_jar().as_uri())
        source = FileSource(_jvm().ais.flink.OrderedFiles.source(self.path, self.monitor_ms))
        return env.from_source(source, WatermarkStrategy.no_watermarks(), name).uid(uid).set_parallelism(1)


class LineBatches:
    """``ais.flink.LineBatches``: consecutive lines of a lane (a source subtask) as one
    ``Row(lane, String[])`` record (up to ``max_lines``, at most ``max_delay_ms`` of wall clock,
    never across a watermark, a barrier or the end of the input), so the Python parse operator is
    called once per batch; ``lane`` is a key Flink assigns to the same subtask index."""

    def __init__(self, max_lines: int, max_delay_ms: int) -> None:
        self.max_lines, self.max_delay_ms = max_lines, max_delay_ms

    def apply(self, lines: DataStream) -> DataStream:
        lines.get_execution_environment().add_jars(helpers_jar().as_uri())
        j_operator = _jvm().ais.flink.LineBatches(self.max_lines, self.max_delay_ms)
        batch_type = Types.ROW([Types.INT(), Types.BASIC_ARRAY(Types.STRING())])
        return _transform(lines, "batch lines", batch_type, j_operator)


class ReceiverWatermarks:
    """``ais.flink.ReceiverWatermarks``: the lane's watermark, following its receivers (the rule
    of :mod:`ais_pipeline.rules.watermarks`), kept in checkpoints; each report stamped with the
    watermark it was read under and sent on as ``Row(mmsi, WireReport)``; lines far from the
    consensus counted per receiver (metrics, and tally records when ``tally_tag`` is given)."""

    def __init__(
        self,
        out_of_orderness_ms: int,
        idle_timeout_ms: int,
        max_clock_skew_ms: int,
        warm_up_lines: int,
        consensus_lines: int,
        step_ms: int,
        parsed_type: TypeInformation,
        report_type: TypeInformation,
    ) -> None:
        self.args = (out_of_orderness_ms, idle_timeout_ms, max_clock_skew_ms, warm_up_lines, consensus_lines, step_ms)
        self.parsed_type, self.report_type = parsed_type, report_type

    def apply(self, parsed: DataStream, name: str, uid: str, tally_tag: Any | None) -> DataStream:
        j_tag = None if tally_tag is None else tally_tag.get_java_output_tag()
        j_operator = _jvm().ais.flink.ReceiverWatermarks(
            *self.args, self.parsed_type.get_java_type_info(), self.report_type.get_java_type_info(), j_tag
        )
        out_type = Types.ROW([Types.LONG(), self.report_type])
        return _transform(parsed, name, out_type, j_operator).uid(uid)


class KeyedBatches:
    """``ais.flink.KeyedBatches``: ``Row(key, record)`` records as ``Row(shard, columns)`` batches
    per shard of the key (``key mod shards``), with a marker per shard before every checkpoint
    barrier, for a keyed Python operator that takes a batch per call."""

    def __init__(self, shards: int, max_records: int, max_delay_ms: int, record_type: TypeInformation) -> None:
        self.shards, self.max_records, self.max_delay_ms = shards, max_records, max_delay_ms
        self.record_type = record_type

    def apply(self, stream: DataStream, name: str) -> DataStream:
        from ais_pipeline.flink.rows import columns, keyed

        stream.get_execution_environment().add_jars(helpers_jar().as_uri())
        j_operator = _jvm().ais.flink.KeyedBatches(
            self.shards, self.max_records, self.max_delay_ms, True, self.record_type.get_java_type_info()
        )
        return _transform(stream, name, keyed(Types.INT(), columns(self.record_type)), j_operator)


class SplitLines:
    """``ais.flink.SplitLines``: a multi-line string record as one record per line."""

    def apply(self, stream: DataStream, name: str) -> DataStream:
        j_stream = _j(stream).flatMap(_jvm().ais.flink.SplitLines(), Types.STRING().get_java_type_info())
        return DataStream(j_stream).name(name)


class ColumnsToRows:
    """``ais.flink.ColumnsToRows``: a batch of columns (``rows.columns``) as one row per record."""

    def __init__(self, record_type: TypeInformation) -> None:
        self.record_type = record_type

    def apply(self, batches: DataStream, name: str) -> DataStream:
        j_type = self.record_type.get_java_type_info()
        j_stream = _j(batches).flatMap(_jvm().ais.flink.ColumnsToRows(j_type), j_type)
        return DataStream(j_stream).name(name)


class CellWindows:
    """``ais.flink.CellWindows``: tumbling and sliding aggregates per geohash cell, keyed by cell
    on Flink's keyed state and event-time timers; ``VesselPane`` rows in, ``Aggregate`` rows out."""

    def __init__(
        self,
        window_ms: int,
        slide_size_ms: int,
        slide_ms: int,
        lateness_ms: int,
        contribution_type: TypeInformation,
        aggregate_type: TypeInformation,
    ) -> None:
        self.spec = (window_ms, slide_size_ms, slide_ms, lateness_ms)
        self.contribution_type, self.aggregate_type = contribution_type, aggregate_type

    def apply(self, contributions: DataStream, name: str, uid: str) -> DataStream:
        jvm = _jvm()
        j_in = self.contribution_type.get_java_type_info()
        j_out = self.aggregate_type.get_java_type_info()
        windows = jvm.ais.flink.CellWindows(jvm.ais.flink.WindowSpec(*self.spec), j_in, j_out)
        j_keyed = _j(contributions).keyBy(jvm.ais.flink.FieldKey(j_in, "cell"))
        return DataStream(j_keyed.transform(name, j_out, windows.operator()).uid(uid))


class AggregateJson:
    """``ais.flink.AggregateJson``: ``Aggregate`` rows as their JSON lines."""

    def __init__(self, aggregate_type: TypeInformation) -> None:
        self.aggregate_type = aggregate_type

    def apply(self, aggregates: DataStream, name: str) -> DataStream:
        j_map = _jvm().ais.flink.AggregateJson(self.aggregate_type.get_java_type_info())
        return DataStream(_j(aggregates).map(j_map, Types.STRING().get_java_type_info())).name(name)


def check_layouts(
    parsed_type: TypeInformation,
    report_type: TypeInformation,
    contribution_type: TypeInformation,
    aggregate_type: TypeInformation,
) -> bool:
    """Build each Java operator that reads or writes a record with Python's row types: each
    resolves the fields it uses by name and checks their types, and raises naming a field that
    does not match."""
    jvm = _jvm()
    j = [t.get_java_type_info() for t in (parsed_type, report_type, contribution_type, aggregate_type)]
    jvm.ais.flink.CellWindows(jvm.ais.flink.WindowSpec(60_000, 900_000, 60_000, 120_000), j[2], j[3])
    jvm.ais.flink.ReceiverWatermarks(10_000, 30_000, 300_000, 64, 256, 60_000, j[0], j[1], None)
    jvm.ais.flink.AggregateJson(j[3])
    return True


def duplicate_ratio_gauge(metric_group: Any, counters: Sequence[Any]) -> Any | None:
    """``ais.flink.DuplicateRatio`` over the Java counters behind PyFlink metric counters, made
    inside a running task (thread mode, through pemja); None where that is not possible."""
    j_group = getattr(metric_group, "_metrics", None)
    j_counters = [getattr(c, "_inner_counter", None) for c in counters]
    if j_group is None or None in j_counters:
        return None
    from pemja import findClass

    # The class is in the job's jar: load it with the task's (user code) class loader, which
    # pemja's findClass does not use; pemja cannot pass constructor arguments either.
    loader = findClass("java.lang.Thread").currentThread().getContextClassLoader()
    gauge = loader.loadClass("ais.flink.DuplicateRatio").newInstance().of(*j_counters)
    return j_group.gauge("duplicate_ratio", gauge)


def set_gauge(metric_group: Any, name: str) -> Any | None:
    """``ais.flink.SetGauge`` registered as ``name``: a gauge whose value Python sets with
    ``.set(n)`` and the metric threads read in Java. PyFlink's Python gauge calls back into the
    interpreter from the metric thread, which crashed a TaskManager (SIGSEGV in ``take_gil``) when
    it was read while the job ended. Thread mode only; None otherwise."""
    j_group = getattr(metric_group, "_metrics", None)
    if j_group is None:
        return None
    from pemja import findClass

    loader = findClass("java.lang.Thread").currentThread().getContextClassLoader()
    gauge = loader.loadClass("ais.flink.SetGauge").newInstance()
    j_group.gauge(name, gauge)
    return gauge


def stop_draining(job_client: Any, directory: str) -> Any:
    """Stop a job with a final savepoint in ``directory`` that first drains event time (every
    window fires, every sink commits): a CompletableFuture of the savepoint's path. PyFlink 2.3's
    ``JobClient.stop_with_savepoint`` calls a Java method that no longer exists (Flink 2 added
    the savepoint format argument)."""
    from pyflink.common.completable_future import CompletableFuture

    canonical = _jvm().org.apache.flink.core.execution.SavepointFormatType.CANONICAL
    return CompletableFuture(job_client._j_job_client.stopWithSavepoint(True, directory, canonical), str)


def _configuration(settings: Mapping[str, str]) -> Any:
    """A Java ``Configuration`` holding these settings."""
    conf = _jvm().org.apache.flink.configuration.Configuration()
    for key, value in settings.items():
        conf.setString(key, value)
    return conf


class LocalCluster:
    """Flink's ``MiniCluster`` started by this process, outliving the jobs run on it: the jobs go
    to it through its REST API (``execution.target: remote``), so that its web UI still shows a
    finished job. (PyFlink's local executor starts a mini-cluster per job and shuts it down, web
    UI and all, when the job ends.)"""

    def __init__(self, settings: Mapping[str, str]) -> None:
        jvm = _jvm()
        conf = _configuration(settings)
        slots = int(settings.get("taskmanager.numberOfTaskSlots", "1"))
        builder = jvm.org.apache.flink.runtime.minicluster.MiniClusterConfiguration.Builder()
        built = builder.setConfiguration(conf).setNumTaskManagers(1).setNumSlotsPerTaskManager(slots).build()
        self._cluster = jvm.org.apache.flink.runtime.minicluster.MiniCluster(built)
        self._cluster.start()

    @property
    def rest_port(self) -> int:
        return int(self._cluster.getRestAddress().get().getPort())

    def environment(self, settings: Mapping[str, str]) -> StreamExecutionEnvironment:
        """An execution environment whose jobs go to this cluster (a remote environment: a local
        one would start a mini-cluster of its own)."""
        j_env = _jvm().org.apache.flink.streaming.api.environment.StreamExecutionEnvironment.createRemoteEnvironment(
            "127.0.0.1", self.rest_port, _configuration(settings), _string_array([])
        )
        return StreamExecutionEnvironment(j_env)

    def close(self) -> None:
        self._cluster.close()


# -- Flink's own classes that PyFlink does not wrap --------------------------------------------


def side_output(stream: DataStream, tag: Any) -> DataStream:
    """A side output as the Java stream it is. PyFlink's ``get_side_output`` appends a Python
    identity map, which costs a Java/Python round trip for every record of the side output."""
    return DataStream(_j(stream).getSideOutput(tag.get_java_output_tag()))


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
    jvm = _jvm()
    j_stream = _j(stream)
    j_key_type = Types.ROW([key_type]).get_java_type_info()
    everything_on_one = j_stream.getParallelism() == 1 and stream.get_execution_environment().get_parallelism() == 1
    if already_partitioned or everything_on_one:
        j_keyed = jvm.org.apache.flink.streaming.api.datastream.DataStreamUtils.reinterpretAsKeyedStream(
            j_stream, jvm.KeyByKeySelector(), j_key_type
        )
    else:
        j_keyed = j_stream.keyBy(jvm.KeyByKeySelector(), j_key_type)
    return KeyedStream(j_keyed, record_type, stream)


# -- Kafka (the connector jar and java/src/main/java/ais/flink/kafka/) --------------------------


class KafkaLines:
    """``ais.flink.kafka.KafkaLines``: a record value as a line (a tombstone is an empty line;
    bytes that are not UTF-8 come with replacement characters); set on a KafkaSource builder."""

    def set_on(self, builder: Any) -> Any:
        builder._j_builder.setDeserializer(_jvm().ais.flink.kafka.KafkaLines())
        return builder


class KeyedJsonRecords:
    """``ais.flink.kafka.KeyedJsonRecords``: a JSON line to a record of ``topic`` keyed by the
    values of ``key_fields`` joined by ``|``; set on a KafkaSink builder."""

    def __init__(self, topic: str, key_fields: Sequence[str]) -> None:
        self.topic, self.key_fields = topic, list(key_fields)

    def set_on(self, builder: Any) -> Any:
        j_schema = _jvm().ais.flink.kafka.KeyedJsonRecords(self.topic, _string_array(self.key_fields))
        builder._j_builder.setRecordSerializer(j_schema)
        return builder


class KafkaAdmin:
    """The connector's own (shaded) Kafka admin client, so that the user's security properties
    mean exactly what they mean to the job. Java errors come out as :class:`JavaError`."""

    def __init__(self, props: Mapping[str, str]) -> None:
        from py4j.protocol import Py4JJavaError

        jvm = _jvm()
        self._admin_package = jvm.org.apache.flink.kafka.shaded.org.apache.kafka.clients.admin
        try:
            self._admin = self._admin_package.Admin.create(java_properties(props))
        except Py4JJavaError as exc:
            raise JavaError(exc) from None
        self._seconds = jvm.java.util.concurrent.TimeUnit.SECONDS

    def topic_names(self, timeout_s: int) -> set[str]:
        from py4j.protocol import Py4JJavaError

        try:
            return set(self._admin.listTopics().names().get(timeout_s, self._seconds))
        except Py4JJavaError as exc:
            raise JavaError(exc) from None

    def create_topics(self, names: Sequence[str], timeout_s: int) -> None:
        """Create topics with the broker's default partitions and replication."""
        from py4j.protocol import Py4JJavaError

        jvm = _jvm()
        empty = jvm.java.util.Optional.empty()
        topics = jvm.java.util.ArrayList()
        for name in names:
            topics.add(self._admin_package.NewTopic(name, empty, empty))
        try:
            self._admin.createTopics(topics).all().get(timeout_s, self._seconds)
        except Py4JJavaError as exc:
            raise JavaError(exc) from None

    def close(self) -> None:
        self._admin.close()


# -- PostgreSQL (the JDBC connector's jars and java/src/main/java/ais/flink/jdbc/) ---------------


class PostgresSink:
    """``ais.flink.jdbc.PostgresTableSink``: the JSON records of one output into one table, by
    ``statement`` (one ``?`` per field of ``fields``, in order; ``*`` for every field no other
    takes, as JSON), through Flink's JDBC connector at least once, in batches, retried."""

    def __init__(
        self,
        table: str,
        jdbc_url: str,
        user: str,
        password: str,
        statement: str,
        fields: Sequence[str],
        batch_size: int,
        batch_interval_ms: int,
        max_retries: int,
    ) -> None:
        self._table = table
        self._args = (jdbc_url, user, password, statement, list(fields), batch_size, batch_interval_ms, max_retries)

    def __repr__(self) -> str:  # the password stays out of every message
        return f"PostgresSink({self._table!r}, {self._args[0]!r})"

    def sink(self) -> Any:
        """The sink, for ``DataStream.sink_to``."""
        from pyflink.datastream.connectors.base import Sink

        url, user, password, statement, fields, size, interval, retries = self._args
        j_sink = _jvm().ais.flink.jdbc.PostgresTableSink.sink(
            self._table, url, user, password, statement, _string_array(fields), size, interval, retries
        )
        return Sink(j_sink)


class JavaError(Exception):
    """A Java exception from a call through the gateway, with its innermost message in one line."""

    def __init__(self, exc: Exception) -> None:
        super().__init__(_cause(exc))
        self.text = str(exc)


def _cause(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    for line in text:
        if "Exception:" in line or "Error:" in line:
            return line.strip().split(": ", 1)[-1][:300]
    return text[0][:300] if text else type(exc).__name__
