"""The job's own sources (``java/src/main/java/ais/flink/``)."""

from __future__ import annotations

from dataclasses import dataclass

from pyflink.common import WatermarkStrategy
from pyflink.datastream import DataStream, StreamExecutionEnvironment
from pyflink.datastream.connectors.file_system import FileSource

from ais_pipeline.jvm.gateway import jvm
from ais_pipeline.resources import helpers_jar


@dataclass(frozen=True)
class OrderedFiles:
    """``ais.flink.OrderedFiles``: the lines of a file, or of every file under a directory in name
    order, read by one subtask; with ``monitor_ms`` the directory is watched for new files."""

    name: str
    uid: str
    path: str
    monitor_ms: int = 0

    def read(self, env: StreamExecutionEnvironment) -> DataStream:
        env.add_jars(helpers_jar().as_uri())
        source = FileSource(jvm().ais.flink.OrderedFiles.source(self.path, self.monitor_ms))
        return env.from_source(source, WatermarkStrategy.no_watermarks(), self.name).uid(self.uid).set_parallelism(1)
