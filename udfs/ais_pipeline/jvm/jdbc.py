"""PostgreSQL through Flink's JDBC connector and the job's own ``ais.flink.jdbc`` classes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pyflink.datastream import DataStream
from pyflink.datastream.connectors.base import Sink

from ais_pipeline.jvm.gateway import jvm, string_array


@dataclass(frozen=True)
class PostgresTableSink:
    """``ais.flink.jdbc.PostgresTableSink``: the JSON records of one output into one table, by
    ``statement`` (one ``?`` per field of ``fields``, in order; ``*`` for every field no other
    takes, as JSON), through Flink's JDBC connector at least once, in batches, retried."""

    name: str
    uid: str
    table: str
    jdbc_url: str
    user: str
    password: str = field(repr=False)  # never in a message
    statement: str = field(repr=False)
    fields: Sequence[str] = ()
    batch_size: int = 1000
    batch_interval_ms: int = 500
    max_retries: int = 5

    def apply(self, stream: DataStream) -> None:
        j_sink = jvm().ais.flink.jdbc.PostgresTableSink.sink(
            self.table,
            self.jdbc_url,
            self.user,
            self.password,
            self.statement,
            string_array(list(self.fields)),
            self.batch_size,
            self.batch_interval_ms,
            self.max_retries,
        )
        stream.sink_to(Sink(j_sink)).name(self.name).uid(self.uid)
