"""GeoParquet part files through Flink's file sink and the job's ``ais.flink.GeoParquetSink``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyflink.datastream import DataStream
from pyflink.datastream.connectors.base import Sink

from ais_pipeline.jvm.gateway import jvm, string_array


@dataclass(frozen=True)
class GeoParquetParts:
    """``ais.flink.GeoParquetSink``: the JSON records of one output as GeoParquet part files
    straight under ``directory``, one row each (columns ``names`` of ``types``, from the record's
    ``fields``; ``geometry`` one of NONE, POINT, CELL, GAP), committed with the checkpoints and at
    the end of a bounded input; a part also rolls at ``max_bytes`` or ``max_ms`` old."""

    name: str
    uid: str
    directory: str
    names: Sequence[str]
    types: Sequence[str]
    fields: Sequence[str]
    geometry: str
    max_bytes: int
    max_ms: int

    def apply(self, stream: DataStream) -> None:
        j_sink = jvm().ais.flink.GeoParquetSink.of(
            self.directory,
            string_array(list(self.names)),
            string_array(list(self.types)),
            string_array(list(self.fields)),
            self.geometry,
            self.max_bytes,
            self.max_ms,
        )
        stream.sink_to(Sink(j_sink)).name(self.name).uid(self.uid)
