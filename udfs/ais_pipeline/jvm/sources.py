"""The job's own sources (``java/src/main/java/ais/flink/``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyflink.common import WatermarkStrategy
from pyflink.datastream import DataStream, StreamExecutionEnvironment
from pyflink.datastream.connectors import Source
from pyflink.datastream.connectors.file_system import FileSource

from ais_pipeline.jvm.gateway import jvm
from ais_pipeline.resources import helpers_jar
from ais_pipeline.rules.feeds import FeedUrl


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


@dataclass(frozen=True)
class FeedLines:
    """``ais.flink.feeds.FeedSource``: the lines of a live feed (``udp``, ``tcp``, ``tcp-listen``
    or ``mqtt``), unbounded, read by one subtask; a line without a tag block stamped with its
    station (``station``, else the sender) and receive time. ``secrets`` (MQTT login, a TCP
    server's login line, the MQTT client id) go to the Java source alone."""

    name: str
    uid: str
    feed: FeedUrl
    station: str
    buffer_lines: int
    secrets: Mapping[str, str] = field(default_factory=dict, repr=False)

    def build(self) -> Any:
        gateway = jvm()
        props = gateway.java.util.Properties()
        for key, value in self.secrets.items():
            props.setProperty(key, value)
        feed = self.feed
        return gateway.ais.flink.feeds.FeedSource.source(
            feed.scheme, feed.host, feed.port, feed.topic, self.station, self.buffer_lines, props
        )

    def read(self, env: StreamExecutionEnvironment) -> DataStream:
        env.add_jars(helpers_jar().as_uri())
        return (
            env.from_source(Source(self.build()), WatermarkStrategy.no_watermarks(), self.name)
            .uid(self.uid)
            .set_parallelism(1)
        )
