"""The job's own sources (``java/src/main/java/ais/flink/``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyflink.common import WatermarkStrategy
from pyflink.datastream import DataStream, StreamExecutionEnvironment
from pyflink.datastream.connectors import Source
from pyflink.datastream.connectors.file_system import FileSource

from ais_pipeline.jvm.gateway import jvm, string_array
from ais_pipeline.resources import helpers_jar
from ais_pipeline.rules.feeds import FeedUrl


@dataclass(frozen=True)
class LanePacing:
    """How ``ais.flink.OrderedFiles.alignedLanes`` paces parallel file lanes: each reader's
    watermark follows its receivers by the job's watermark rule (these fields), and no reader
    reads more than ``max_drift_ms`` of event time ahead of the slowest one."""

    out_of_orderness_ms: int
    idle_timeout_ms: int
    max_clock_skew_ms: int
    consensus_lines: int
    warm_up_lines: int
    jump_lines: int
    max_drift_ms: int
    update_ms: int = 1000

    def build(self) -> WatermarkStrategy:
        return WatermarkStrategy(
            jvm().ais.flink.OrderedFiles.alignedLanes(
                self.out_of_orderness_ms,
                self.idle_timeout_ms,
                self.max_clock_skew_ms,
                self.consensus_lines,
                self.warm_up_lines,
                self.jump_lines,
                self.max_drift_ms,
                self.update_ms,
            )
        )


@dataclass(frozen=True)
class OrderedFiles:
    """``ais.flink.OrderedFiles``: the lines of a file, or of every file under a directory in name
    order (or of the ``files`` given, in name order, when there are any); with ``monitor_ms`` the
    directory is watched for new files. Read by ``parallelism``
    readers: one, or, with ``pacing``, several, each a lane that reads one file at a time (the
    next in name order when it is done) under watermark alignment."""

    name: str
    uid: str
    path: str
    monitor_ms: int = 0
    parallelism: int = 1
    pacing: LanePacing | None = None
    files: Sequence[str] = ()

    def read(self, env: StreamExecutionEnvironment) -> DataStream:
        env.add_jars(helpers_jar().as_uri())
        if self.files:
            source = FileSource(jvm().ais.flink.OrderedFiles.files(string_array(list(self.files))))
        else:
            source = FileSource(jvm().ais.flink.OrderedFiles.source(self.path, self.monitor_ms))
        strategy = WatermarkStrategy.no_watermarks() if self.pacing is None else self.pacing.build()
        return env.from_source(source, strategy, self.name).uid(self.uid).set_parallelism(self.parallelism)


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
