"""The one configuration object of the job, built in one place from flags and environment.

Every knob of the job is a command-line flag and an environment variable. The flag wins
over the variable, the variable over the default. Values are validated here so that a bad
flag gets a one-line error naming it instead of a Java stack trace.
"""

from __future__ import annotations

import argparse
import ipaddress
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ais_pipeline.archives import input_time
from ais_pipeline.errors import ConfigError
from ais_pipeline.postgres_url import PostgresError, Target, parse_url
from ais_pipeline.resources import ANCHORAGES, FLINK_CONF, SAMPLE_INPUT
from ais_pipeline.rules.feeds import is_feed_url, parse_feed_url
from ais_pipeline.rules.lane import INPUT_FORMATS

OUTPUT_FORMATS = ("jsonl", "geoparquet")
WINDOW_KINDS = ("tumbling", "sliding")

if TYPE_CHECKING:
    from ais_pipeline.rules.encounters import EncounterRules
    from ais_pipeline.rules.gaps import GapRules
    from ais_pipeline.rules.loitering import LoiteringRules
    from ais_pipeline.rules.ports import PortRules


def submitted_by_flink_cli() -> bool:
    """True under ``flink run -py``: the CLI starts the job's script with a gateway of its own and
    the job goes to that cluster (whose web UI and settings are the cluster's)."""
    return "PYFLINK_GATEWAY_PORT" in os.environ


LANES = ("one", "per-file")
STATE_BACKENDS = ("hashmap", "rocksdb")


@dataclass(frozen=True)
class _Knob:
    flag: str
    env: str
    kind: type
    default: object
    help: str
    shown: str = ""  # how --help names the default, when not by its value


def _default(name: str) -> Any:
    """A knob's default: written once, in :data:`_KNOBS`."""
    return _KNOBS[name].default


# name -> flag, environment variable, type, default, help. The order is the order of --help.
_KNOBS: dict[str, _Knob] = {
    "input_format": _Knob(
        "--input-format",
        "INPUT_FORMAT",
        str,
        "auto",
        "auto (each line's format by its look), nmea, json (every JSON dialect by its keys), aiscatcher, gpsd,"
        " aisstream, gpsdio, noaa (MarineCadastre CSV) or dma (aisdk CSV)",
    ),
    "output_format": _Knob(
        "--output-format",
        "OUTPUT_FORMAT",
        str,
        "jsonl",
        "with --output: jsonl (JSON Lines), geoparquet (GeoParquet 1.1 files that DuckDB, GeoPandas and QGIS"
        " open), or jsonl,geoparquet (both, side by side)",
    ),
    "window_s": _Knob("--window", "WINDOW_SECONDS", int, 60, "tumbling window, seconds"),
    "windows": _Knob(
        "--windows",
        "WINDOWS",
        str,
        "tumbling,sliding",
        "the window kinds computed and written: tumbling, sliding or tumbling,sliding (a lone vessel opens one"
        " tumbling window and, with the defaults, 15 sliding ones)",
    ),
    "slide_size_s": _Knob("--slide-size", "SLIDE_SIZE_SECONDS", int, 900, "sliding window size, seconds"),
    "slide_s": _Knob("--slide", "SLIDE_SECONDS", int, 60, "sliding window slide, seconds"),
    "lateness_s": _Knob("--lateness", "ALLOWED_LATENESS_SECONDS", int, 120, "allowed lateness, seconds"),
    "out_of_orderness_s": _Knob(
        "--out-of-orderness", "OUT_OF_ORDERNESS_SECONDS", int, 10, "watermark out-of-orderness, seconds"
    ),
    "idle_timeout_s": _Knob(
        "--idle-timeout",
        "IDLE_TIMEOUT_SECONDS",
        int,
        30,
        "a receiver this far behind the consensus (event time), or a source silent this long (wall clock), "
        "does not hold the watermark back, seconds",
    ),
    "watermark_warm_up": _Knob(
        "--watermark-warm-up",
        "WATERMARK_WARM_UP_LINES",
        int,
        64,
        "lines with a time before the first watermark (one wrong first clock cannot set it)",
    ),
    "dedup_ttl_s": _Knob("--dedup-ttl", "DEDUP_TTL_SECONDS", int, 120, "exact-duplicate TTL, event-time seconds"),
    "near_window_s": _Knob("--near-window", "NEAR_WINDOW_SECONDS", float, 2.0, "near-duplicate window, seconds"),
    "static_ttl_s": _Knob("--static-ttl", "STATIC_TTL_SECONDS", int, 86400, "static report TTL, seconds"),
    "max_gap_s": _Knob(
        "--max-gap",
        "MAX_GAP_SECONDS",
        int,
        600,
        "vessel hours: the longest gap between a vessel's positions whose time counts, seconds",
    ),
    "hours_grace_s": _Knob(
        "--hours-grace",
        "HOURS_GRACE_SECONDS",
        int,
        None,
        "vessel hours: how long past a window's end plus the allowed lateness its hours (and positions held"
        " for judgement) may still come, seconds; 0: final with its reports",
        "the gap cap (--max-gap) and a pane",
    ),
    "bad_fix_knots": _Knob(
        "--bad-fix-speed",
        "BAD_FIX_KNOTS",
        float,
        50.0,
        "a position the vessel could not have reached from its track at this speed (knots) is a bad fix; 0: off",
    ),
    "bad_fix_noise_m": _Knob(
        "--bad-fix-noise",
        "BAD_FIX_NOISE_METRES",
        float,
        500.0,
        "bad fixes: the distance two fixes may be apart at any speed (GPS noise, fixes seconds apart), metres",
    ),
    "gap_hours": _Knob(
        "--gap-hours",
        "GAP_HOURS",
        float,
        6.0,
        "AIS gaps: a vessel's positions this far apart are a gap (GFW's gap events); 0 turns gaps off",
    ),
    "gap_analysis_hours": _Knob(
        "--gap-analysis-hours", "GAP_ANALYSIS_HOURS", float, 12.0, "AIS gaps: the shortest suspected disabling"
    ),
    "gap_shore_nm": _Knob(
        "--gap-shore",
        "GAP_SHORE_NM",
        float,
        50.0,
        "AIS gaps: a suspected disabling starts and ends farther from shore, nm",
    ),
    "gap_min_positions": _Knob(
        "--gap-min-positions",
        "GAP_MIN_POSITIONS",
        int,
        14,
        "AIS gaps: a suspected disabling follows at least this many positions in the 12 hours before it",
    ),
    "gap_ttl_days": _Knob(
        "--gap-ttl",
        "GAP_TTL_DAYS",
        float,
        14.0,
        "AIS gaps: how long a silent vessel's last position waits for its return, days",
    ),
    "ports": _Knob(
        "--ports",
        "PORTS",
        str,
        "gfw",
        "port visits: the anchorage list, a CSV file with latitude, longitude and label columns (GFW's own"
        " columns too: s2id, sublabel, iso3); gfw: Global Fishing Watch's published list, bundled; off: no"
        " port visits",
    ),
    "port_entry_km": _Knob(
        "--port-entry-km", "PORT_ENTRY_KM", float, 3.0, "port visits: in port within this distance of an anchorage, km"
    ),
    "port_exit_km": _Knob(
        "--port-exit-km", "PORT_EXIT_KM", float, 4.0, "port visits: out of port at this distance or more, km"
    ),
    "port_stop_knots": _Knob(
        "--port-stop-speed", "PORT_STOP_KNOTS", float, 0.2, "port visits: stopped in port at this speed or less, kn"
    ),
    "port_move_knots": _Knob(
        "--port-move-speed", "PORT_MOVE_KNOTS", float, 0.5, "port visits: moving again at this speed or more, kn"
    ),
    "port_gap_hours": _Knob(
        "--port-gap-hours",
        "PORT_GAP_HOURS",
        float,
        4.0,
        "port visits: a silence in port this long is a port gap, hours",
    ),
    "loitering_hours": _Knob(
        "--loitering-hours",
        "LOITERING_HOURS",
        float,
        4.0,
        "loitering: slow hours in a row that make an event, at least; 0: no loitering events",
    ),
    "loitering_knots": _Knob(
        "--loitering-speed", "LOITERING_KNOTS", float, 2.0, "loitering: an hour is slow under this mean speed, kn"
    ),
    "loitering_shore_nm": _Knob(
        "--loitering-shore-nm",
        "LOITERING_SHORE_NM",
        float,
        20.0,
        "loitering: an event is published this far from shore on average, or farther, nm",
    ),
    "encounter_hours": _Knob(
        "--encounter-hours",
        "ENCOUNTER_HOURS",
        float,
        2.0,
        "encounters: hours side by side that make one, at least; 0: no encounters",
    ),
    "encounter_km": _Knob(
        "--encounter-km", "ENCOUNTER_KM", float, 0.5, "encounters: side by side this close or closer, km"
    ),
    "encounter_gap_minutes": _Knob(
        "--encounter-gap-minutes",
        "ENCOUNTER_GAP_MINUTES",
        float,
        60.0,
        "encounters: no resampled mark across a silence this long, minutes",
    ),
    "encounter_merge_hours": _Knob(
        "--encounter-merge-hours",
        "ENCOUNTER_MERGE_HOURS",
        float,
        4.0,
        "encounters: a pair's encounters less than this apart are one, hours",
    ),
    "encounter_knots": _Knob(
        "--encounter-speed",
        "ENCOUNTER_KNOTS",
        float,
        2.0,
        "encounters: published under this median speed, kn",
    ),
    "encounter_port_km": _Knob(
        "--encounter-port-km",
        "ENCOUNTER_PORT_KM",
        float,
        10.0,
        "encounters: published this far from the nearest anchorage or farther, km",
    ),
    "geohash_precision": _Knob("--geohash-precision", "GEOHASH_PRECISION", int, 6, "geohash cell precision, 1-12"),
    "max_clock_skew_s": _Knob(
        "--max-clock-skew", "MAX_CLOCK_SKEW_SECONDS", int, 300, "reports further ahead of the wall clock are rejected"
    ),
    "multipart_timeout_s": _Knob(
        "--multipart-timeout",
        "MULTIPART_TIMEOUT_SECONDS",
        int,
        60,
        "wall-clock wait for the rest of a multipart group, seconds",
    ),
    "parallelism": _Knob("--parallelism", "PARALLELISM", int, 1, "job parallelism"),
    "taskmanagers": _Knob(
        "--taskmanagers",
        "TASKMANAGERS",
        int,
        0,
        "local runs: 0 runs the job in this process (one Python interpreter at any parallelism); N starts"
        " a local cluster of N one-slot TaskManager processes (N interpreters) for the run",
    ),
    "lanes": _Knob(
        "--lanes",
        "LANES",
        str,
        "one",
        "files: one (one reader, the files in name order) or per-file (each file a lane, --parallelism readers,"
        " paced by watermark alignment)",
    ),
    "lane_drift_s": _Knob(
        "--lane-drift",
        "LANE_DRIFT_SECONDS",
        int,
        3600,
        "--lanes per-file: how far in event time a lane may read ahead of the slowest one, seconds",
    ),
    "web_ui_port": _Knob("--web-ui-port", "WEB_UI_PORT", int, 8081, "local web UI / REST port (0 picks a free one)"),
    "bind_address": _Knob(
        "--bind-address",
        "BIND_ADDRESS",
        str,
        "127.0.0.1",
        "address the local web UI / REST API and Prometheus metrics listen on; 0.0.0.0 opens them to the network",
    ),
    "checkpoint_interval_s": _Knob(
        "--checkpoint-interval",
        "CHECKPOINT_INTERVAL_SECONDS",
        int,
        None,
        "checkpoint every N seconds, 0 = off (Kafka sinks then at-least-once)",
        "flink-conf",
    ),
    "state_backend": _Knob(
        "--state-backend",
        "STATE_BACKEND",
        str,
        None,
        "hashmap (state on the JVM heap: fastest, for up to about a hundred thousand vessels) or rocksdb"
        " (state on local disk with incremental checkpoints: for the world's fleet)",
        "flink-conf's, hashmap",
    ),
    "vessel_cache": _Knob(
        "--vessel-cache",
        "VESSEL_CACHE",
        int,
        50000,
        "the vessels each dedup subtask holds as Python objects; past it, those heard longest ago wait in the state"
        " backend until they are heard again (0: every vessel, for the job's life)",
    ),
    "station": _Knob(
        "--station",
        "STATION",
        str,
        "",
        "live input (--input URL): the station of lines without a tag block",
        "the sender's address, or the MQTT topic",
    ),
    "feed_properties_file": _Knob(
        "--feed-properties",
        "FEED_PROPERTIES_FILE",
        str,
        "",
        "live input: a properties file of its credentials (username, password for MQTT; login, a line a TCP"
        " server expects first; client.id); FEED_USERNAME, FEED_PASSWORD, FEED_LOGIN, FEED_CLIENT_ID env vars too",
        "none",
    ),
    "source": _Knob("--source", "SOURCE", str, "file", "file, kafka or kinesis"),
    "bootstrap_servers": _Knob(
        "--bootstrap-servers", "KAFKA_BOOTSTRAP_SERVERS", str, "127.0.0.1:9092", "Kafka brokers, host:port,..."
    ),
    "topic": _Knob("--topic", "KAFKA_TOPIC", str, "ais-raw", "Kafka topic of raw lines (one line per record value)"),
    "group_id": _Knob("--group-id", "KAFKA_GROUP_ID", str, "ais-pipeline", "Kafka consumer group"),
    "starting_offsets": _Knob(
        "--starting-offsets",
        "KAFKA_STARTING_OFFSETS",
        str,
        "committed",
        "earliest, latest, committed (else earliest) or timestamp:<epoch ms>",
    ),
    "output_topic_prefix": _Knob(
        "--output-topic-prefix", "KAFKA_OUTPUT_TOPIC_PREFIX", str, "ais.", "output topics are <prefix><output name>"
    ),
    "kafka_delivery": _Knob(
        "--kafka-delivery",
        "KAFKA_DELIVERY",
        str,
        None,
        "Kafka outputs: exactly-once (transactions committed at checkpoints: a reader sees a record after the"
        " next checkpoint) or at-least-once (written at once, each record keyed by its id, so that a reader"
        " drops a repeat)",
        "exactly-once; at-least-once for a live input",
    ),
    "kafka_properties_file": _Knob(
        "--kafka-properties",
        "KAFKA_PROPERTIES_FILE",
        str,
        "",
        "Kafka client properties file (security.protocol, sasl.*, ssl.*); KAFKA_CLIENT_<NAME> env vars too",
        "none",
    ),
    "stream": _Knob("--stream", "KINESIS_STREAM", str, "", "Kinesis: the data stream of raw lines", "none"),
    "region": _Knob(
        "--region", "AWS_REGION", str, "", "Kinesis and DynamoDB: the AWS region (us-east-1, eu-west-1, ...)", "none"
    ),
    "kinesis_endpoint": _Knob(
        "--kinesis-endpoint",
        "KINESIS_ENDPOINT",
        str,
        "",
        "Kinesis: an endpoint of your own (a private endpoint, a local server), else AWS's for the region",
        "AWS's",
    ),
    "starting_position": _Knob(
        "--starting-position",
        "KINESIS_STARTING_POSITION",
        str,
        "latest",
        "Kinesis: trim-horizon (the oldest record kept), latest (from the job's start) or"
        " at-timestamp:<ISO 8601 or epoch ms>",
    ),
    "dynamodb_table": _Knob(
        "--dynamodb-table",
        "DYNAMODB_TABLE",
        str,
        "",
        "also write the aggregates into this DynamoDB table (key cell, window_start), replay-safe",
        "none",
    ),
    "dynamodb_endpoint": _Knob(
        "--dynamodb-endpoint",
        "DYNAMODB_ENDPOINT",
        str,
        "",
        "DynamoDB: an endpoint of your own (a private endpoint, a local server), else AWS's for the region",
        "AWS's",
    ),
    "dynamodb_windows": _Knob(
        "--dynamodb-windows",
        "DYNAMODB_WINDOWS",
        str,
        "all",
        "DynamoDB: the window kinds written, each a paid write: all (those of --windows), tumbling or sliding"
        " (the sliding windows are most of the aggregates: 15 for each tumbling one with the defaults)",
    ),
    "dynamodb_rounds": _Knob(
        "--dynamodb-retries",
        "DYNAMODB_MAX_RETRIES",
        int,
        8,
        "DynamoDB: an aggregate whose write is throttled is sent again this often, with growing pauses, before it"
        " is dead-lettered",
    ),
    "postgres_password_file": _Knob(
        "--postgres-password-file",
        "POSTGRES_PASSWORD_FILE",
        str,
        "",
        "file whose first line is the PostgreSQL password (when the URL has none; else PGPASSWORD)",
        "none",
    ),
    "postgres_batch_size": _Knob(
        "--postgres-batch-size", "POSTGRES_BATCH_SIZE", int, 1000, "PostgreSQL: rows per batch of one table"
    ),
    "postgres_batch_interval_ms": _Knob(
        "--postgres-batch-interval",
        "POSTGRES_BATCH_INTERVAL_MS",
        int,
        500,
        "PostgreSQL: a batch not yet full is written after this long, ms",
    ),
    "postgres_retries": _Knob(
        "--postgres-retries",
        "POSTGRES_MAX_RETRIES",
        int,
        5,
        "PostgreSQL: a failed batch is retried this often (at once, then 1 s, 2 s, ... later) before the job restarts",
    ),
}

STARTING_OFFSETS = ("earliest", "latest", "committed")
EXACTLY_ONCE, AT_LEAST_ONCE = "exactly-once", "at-least-once"
# Seconds between checkpoints of a live input's run, unless set: the exactly-once sinks (files,
# Kafka transactions) show a record after the checkpoint that follows it (flink-conf's 10 s for
# every other run).
LIVE_CHECKPOINT_S = 5
STARTING_POSITIONS = ("trim-horizon", "latest")
SOURCES = ("file", "kafka", "kinesis")
# Outputs on Kafka: the fields whose values, joined by "|", key each output's records.
OUTPUT_KEYS: dict[str, tuple[str, ...]] = {
    "positions": ("mmsi",),
    "static": ("mmsi", "msg_type", "partno"),
    # A window is its kind, size, slide and precision: runs with other windows do not overwrite it.
    "aggregates": ("window", "window_seconds", "slide_seconds", "precision", "cell", "window_start"),
    "late": ("mmsi",),
    "dead_letter": (),
    "bad_fixes": ("mmsi",),
    "gaps": ("id",),
    "port_visits": ("id",),
    "loitering": ("id",),
    "encounters": ("id",),
}


@dataclass(frozen=True)
class TrackRules:
    """The vessel tracks' knobs: the gap cap (longer gaps give no time and end a track), and the
    speed (knots; 0 turns bad fixes off) and noise distance (metres) by which a fix fits a track."""

    max_gap_ms: int
    max_knots: float
    noise_m: float


PORTS_GFW, PORTS_OFF = "gfw", "off"


@dataclass(frozen=True)
class PortVisitsConfig:
    """Port visits' knobs: the anchorage list and the rule's thresholds."""

    anchorages: Path
    rules: PortRules


@dataclass(frozen=True)
class PipelineConfig:
    """Everything the pipeline needs to know; times in seconds as the user gives them."""

    input_path: Path = SAMPLE_INPUT
    # A live feed instead of a path: udp://, tcp://, tcp-listen:// or mqtt:// (--input URL).
    input_feed: str = ""
    output_dir: Path | None = None
    input_format: str = _default("input_format")
    output_format: str = _default("output_format")
    window_s: int = _default("window_s")
    windows: str = _default("windows")
    slide_size_s: int = _default("slide_size_s")
    slide_s: int = _default("slide_s")
    lateness_s: int = _default("lateness_s")
    out_of_orderness_s: int = _default("out_of_orderness_s")
    idle_timeout_s: int = _default("idle_timeout_s")
    watermark_warm_up: int = _default("watermark_warm_up")
    dedup_ttl_s: int = _default("dedup_ttl_s")
    near_window_s: float = _default("near_window_s")
    static_ttl_s: int = _default("static_ttl_s")
    max_gap_s: int = _default("max_gap_s")
    hours_grace_s: int | None = _default("hours_grace_s")
    bad_fix_knots: float = _default("bad_fix_knots")
    bad_fix_noise_m: float = _default("bad_fix_noise_m")
    gap_hours: float = _default("gap_hours")
    gap_analysis_hours: float = _default("gap_analysis_hours")
    gap_shore_nm: float = _default("gap_shore_nm")
    gap_min_positions: int = _default("gap_min_positions")
    gap_ttl_days: float = _default("gap_ttl_days")
    ports: str = _default("ports")
    port_entry_km: float = _default("port_entry_km")
    port_exit_km: float = _default("port_exit_km")
    port_stop_knots: float = _default("port_stop_knots")
    port_move_knots: float = _default("port_move_knots")
    port_gap_hours: float = _default("port_gap_hours")
    loitering_hours: float = _default("loitering_hours")
    loitering_knots: float = _default("loitering_knots")
    loitering_shore_nm: float = _default("loitering_shore_nm")
    encounter_hours: float = _default("encounter_hours")
    encounter_km: float = _default("encounter_km")
    encounter_gap_minutes: float = _default("encounter_gap_minutes")
    encounter_merge_hours: float = _default("encounter_merge_hours")
    encounter_knots: float = _default("encounter_knots")
    encounter_port_km: float = _default("encounter_port_km")
    geohash_precision: int = _default("geohash_precision")
    max_clock_skew_s: int = _default("max_clock_skew_s")
    multipart_timeout_s: int = _default("multipart_timeout_s")
    parallelism: int = _default("parallelism")
    taskmanagers: int = _default("taskmanagers")
    lanes: str = _default("lanes")
    lane_drift_s: int = _default("lane_drift_s")
    web_ui_port: int = _default("web_ui_port")
    bind_address: str = _default("bind_address")
    follow: bool = False
    print_all: bool = False
    no_wait: bool = False
    checkpoint_interval_s: int | None = _default("checkpoint_interval_s")
    state_backend: str | None = _default("state_backend")
    vessel_cache: int = _default("vessel_cache")
    station: str = _default("station")
    feed_properties_file: str = _default("feed_properties_file")
    source: str = _default("source")
    bootstrap_servers: str = _default("bootstrap_servers")
    topic: str = _default("topic")
    group_id: str = _default("group_id")
    starting_offsets: str = _default("starting_offsets")
    bounded: bool = False
    # A file run's time for its lines without one before their lane told one (not a flag: found in
    # the input, see with_input_time); None for any other run (its lines take their ingestion time).
    input_time_ms: int | None = None
    # The outputs to Kafka topics: always from a Kafka input, with --kafka-output from any other.
    kafka_output: bool = False
    kafka_delivery: str | None = _default("kafka_delivery")
    output_topic_prefix: str = _default("output_topic_prefix")
    kafka_properties_file: str = _default("kafka_properties_file")
    stream: str = _default("stream")
    region: str = _default("region")
    kinesis_endpoint: str = _default("kinesis_endpoint")
    starting_position: str = _default("starting_position")
    dynamodb_table: str = _default("dynamodb_table")
    dynamodb_endpoint: str = _default("dynamodb_endpoint")
    dynamodb_create: bool = False
    dynamodb_rounds: int = _default("dynamodb_rounds")
    dynamodb_windows: str = _default("dynamodb_windows")
    postgres_password_file: str = _default("postgres_password_file")
    postgres_batch_size: int = _default("postgres_batch_size")
    postgres_batch_interval_ms: int = _default("postgres_batch_interval_ms")
    postgres_retries: int = _default("postgres_retries")
    # The PostgreSQL outputs (--postgres URL); the password is kept out of every repr.
    postgres: Target | None = None
    # Test-only fault injection: "MARKER=TEXT" makes the parse operator throw on the first line
    # containing TEXT while the file MARKER does not exist (it creates it first, so once).
    test_fail_once: str = ""
    # Client properties (credentials among them): never in repr, never logged.
    kafka_properties: Mapping[str, str] = field(default_factory=dict, repr=False)
    feed_secrets: Mapping[str, str] = field(default_factory=dict, repr=False)
    flink_conf_dir: Path = FLINK_CONF

    def __post_init__(self) -> None:
        self.validate()

    # Milliseconds, as the operators use them.
    @property
    def lane_drift_ms(self) -> int:
        return self.lane_drift_s * 1000

    @property
    def window_ms(self) -> int:
        return self.window_s * 1000

    @property
    def slide_size_ms(self) -> int:
        return self.slide_size_s * 1000

    @property
    def slide_ms(self) -> int:
        return self.slide_s * 1000

    @property
    def pane_ms(self) -> int:
        """The slice that both window kinds are made of: gcd of the tumbling size and the slide."""
        return math.gcd(self.window_ms, self.slide_ms)

    @property
    def lateness_ms(self) -> int:
        return self.lateness_s * 1000

    @property
    def dedup_ttl_ms(self) -> int:
        return self.dedup_ttl_s * 1000

    @property
    def near_window_ms(self) -> int:
        return round(self.near_window_s * 1000)

    @property
    def static_ttl_ms(self) -> int:
        return self.static_ttl_s * 1000

    @property
    def max_gap_ms(self) -> int:
        return self.max_gap_s * 1000

    @property
    def grace_ms(self) -> int:
        """How much longer than the allowed lateness a window takes contributions decided in time
        but delivered later (vessel time, positions held for judgement): unless set, the gap cap
        and a pane (the judgement of a single fix comes at the first watermark step at or after
        the cap, up to a pane later, and must find its window open even without lateness)."""
        if self.hours_grace_s is not None:
            return self.hours_grace_s * 1000
        return self.max_gap_ms + self.pane_ms

    @property
    def track_rules(self) -> TrackRules:
        """The knobs of the vessel tracks: segments and bad fixes."""
        return TrackRules(self.max_gap_ms, self.bad_fix_knots, self.bad_fix_noise_m)

    @property
    def gap_rules(self) -> GapRules | None:
        """GFW's gap thresholds (None: gaps off, ``--gap-hours 0``)."""
        from ais_pipeline.rules.gaps import GapRules

        if self.gap_hours == 0:
            return None
        hour = 3_600_000
        return GapRules(
            round(self.gap_hours * hour), round(self.gap_analysis_hours * hour), self.gap_shore_nm,
            self.gap_min_positions,
        )  # fmt: skip

    @property
    def gap_ttl_ms(self) -> int:
        return round(self.gap_ttl_days * 86_400_000)

    @property
    def port_visits(self) -> PortVisitsConfig | None:
        """Port visits' anchorage list and GFW's thresholds (None: off, ``--ports off``); their
        transmitters are kept as long as the gap events' (``--gap-ttl``)."""
        from ais_pipeline.rules.ports import PortRules

        if self.ports == PORTS_OFF:
            return None
        rules = PortRules(
            self.port_entry_km, self.port_exit_km, self.port_stop_knots, self.port_move_knots,
            round(self.port_gap_hours * 3_600_000), self.gap_ttl_ms,
        )  # fmt: skip
        return PortVisitsConfig(ANCHORAGES if self.ports == PORTS_GFW else Path(self.ports), rules)

    @property
    def loitering(self) -> LoiteringRules | None:
        """Loitering's thresholds (None: off, ``--loitering-hours 0``)."""
        from ais_pipeline.rules.loitering import LoiteringRules

        if self.loitering_hours == 0:
            return None
        return LoiteringRules(self.loitering_knots, self.loitering_hours, self.loitering_shore_nm)

    @property
    def encounters(self) -> EncounterRules | None:
        """Encounters' thresholds (None: off, ``--encounter-hours 0``); the rest are GFW's."""
        from ais_pipeline.rules.encounters import EncounterRules

        if self.encounter_hours == 0:
            return None
        return EncounterRules(
            max_gap_ms=round(self.encounter_gap_minutes * 60_000),
            encounter_km=self.encounter_km,
            min_minutes=self.encounter_hours * 60,
            merge_hours=self.encounter_merge_hours,
            max_speed_kn=self.encounter_knots,
            min_port_km=self.encounter_port_km,
        )

    @property
    def out_of_orderness_ms(self) -> int:
        return self.out_of_orderness_s * 1000

    @property
    def idle_timeout_ms(self) -> int:
        return self.idle_timeout_s * 1000

    @property
    def max_clock_skew_ms(self) -> int:
        return self.max_clock_skew_s * 1000

    @property
    def multipart_timeout_ms(self) -> int:
        return self.multipart_timeout_s * 1000

    def validate(self) -> None:
        def bad(name: str, why: str) -> ConfigError:
            knob = _KNOBS.get(name)
            label = f"{knob.flag} ({knob.env})" if knob else name
            return ConfigError(f"{label}: {why}")

        if self.input_format not in INPUT_FORMATS:
            raise bad("input_format", f"must be one of {', '.join(INPUT_FORMATS)}, not {self.input_format!r}")
        self._validate_output_format(bad)
        kinds = self.windows.split(",")
        if not kinds or not set(kinds) <= set(WINDOW_KINDS) or len(set(kinds)) != len(kinds):
            raise bad("windows", f"must be tumbling, sliding or tumbling,sliding, not {self.windows!r}")
        for name in (
            "window_s",
            "slide_size_s",
            "slide_s",
            "dedup_ttl_s",
            "static_ttl_s",
            "multipart_timeout_s",
            "max_gap_s",
        ):
            if getattr(self, name) <= 0:
                raise bad(name, f"must be a positive number of seconds, not {getattr(self, name)}")
        if self.watermark_warm_up < 1:
            raise bad("watermark_warm_up", f"must be at least 1 line, not {self.watermark_warm_up}")
        if self.idle_timeout_s <= 0:
            raise bad("idle_timeout_s", f"must be a positive number of seconds, not {self.idle_timeout_s}")
        for name in ("lateness_s", "out_of_orderness_s", "near_window_s", "max_clock_skew_s", "bad_fix_knots",
                     "bad_fix_noise_m"):  # fmt: skip
            if getattr(self, name) < 0:
                raise bad(name, f"must not be negative, not {getattr(self, name)}")
        for name in (
            "bad_fix_knots",
            "bad_fix_noise_m",
            "gap_hours",
            "gap_analysis_hours",
            "gap_shore_nm",
            "gap_ttl_days",
        ):
            if not math.isfinite(getattr(self, name)):
                raise bad(name, f"must be a finite number, not {getattr(self, name)}")
        for name in ("port_entry_km", "port_exit_km", "port_stop_knots", "port_move_knots", "port_gap_hours",
                     "loitering_knots", "encounter_km", "encounter_gap_minutes", "encounter_merge_hours",
                     "encounter_knots"):  # fmt: skip
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise bad(name, f"must be a number above 0, not {value}")
        for name in ("loitering_hours", "loitering_shore_nm", "encounter_hours", "encounter_port_km"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise bad(name, f"must be a number of 0 or more, not {value}")
        if self.port_exit_km < self.port_entry_km:
            raise bad("port_exit_km", f"{self.port_exit_km} km is less than --port-entry-km {self.port_entry_km}")
        if self.port_move_knots < self.port_stop_knots:
            raise bad(
                "port_move_knots", f"{self.port_move_knots} kn is less than --port-stop-speed {self.port_stop_knots}"
            )
        if self.ports not in (PORTS_GFW, PORTS_OFF) and not Path(self.ports).is_file():
            raise bad("ports", f"{self.ports}: no such file (a CSV anchorage list, gfw or off)")
        for name in ("gap_hours", "gap_analysis_hours", "gap_shore_nm", "gap_min_positions"):
            if getattr(self, name) < 0:
                raise bad(name, f"must not be negative, not {getattr(self, name)}")
        if self.gap_ttl_days * 24 <= self.gap_hours:
            raise bad("gap_ttl_days", f"{self.gap_ttl_days} days is not longer than --gap-hours {self.gap_hours}")
        if self.hours_grace_s is not None and self.hours_grace_s < 0:
            raise bad("hours_grace_s", f"must not be negative, not {self.hours_grace_s}")
        if self.slide_size_s % self.slide_s != 0:
            raise bad("slide_s", f"{self.slide_s} s does not divide the sliding window size {self.slide_size_s} s")
        if not 1 <= self.geohash_precision <= 12:
            raise bad("geohash_precision", f"must be between 1 and 12, not {self.geohash_precision}")
        if not 1 <= self.parallelism <= 64:
            raise bad("parallelism", f"must be between 1 and 64, not {self.parallelism}")
        if not 0 <= self.taskmanagers <= 64:
            raise bad("taskmanagers", f"must be between 0 and 64, not {self.taskmanagers}")
        if self.taskmanagers and self.parallelism > self.taskmanagers:
            raise bad(
                "taskmanagers",
                f"{self.taskmanagers} TaskManagers of one slot run at most --parallelism {self.taskmanagers},"
                f" not {self.parallelism}",
            )
        if self.taskmanagers and submitted_by_flink_cli():
            raise bad("taskmanagers", "a job submitted by flink run runs on that cluster's TaskManagers")
        if self.lanes not in LANES:
            raise bad("lanes", f"must be one of {', '.join(LANES)}, not {self.lanes!r}")
        if self.lane_drift_s <= 0:
            raise bad("lane_drift_s", f"must be a positive number of seconds, not {self.lane_drift_s}")
        if not 0 <= self.web_ui_port <= 65535:
            raise bad("web_ui_port", f"must be a port number, not {self.web_ui_port}")
        try:
            ipaddress.ip_address(self.bind_address)
        except ValueError:
            why = f"must be an IP address (127.0.0.1, 0.0.0.0, ...), not {self.bind_address!r}"
            raise bad("bind_address", why) from None
        if self.checkpoint_interval_s is not None and self.checkpoint_interval_s < 0:
            raise bad("checkpoint_interval_s", f"must be 0 (off) or seconds, not {self.checkpoint_interval_s}")
        if self.state_backend is not None and self.state_backend not in STATE_BACKENDS:
            raise bad("state_backend", f"must be one of {', '.join(STATE_BACKENDS)}, not {self.state_backend!r}")
        if self.vessel_cache < 0:
            raise bad("vessel_cache", f"must be 0 (every vessel) or a number of vessels, not {self.vessel_cache}")
        if self.postgres_batch_size < 1:
            raise bad("postgres_batch_size", f"must be at least 1, not {self.postgres_batch_size}")
        if self.postgres_batch_interval_ms < 0:
            raise bad("postgres_batch_interval_ms", f"must not be negative, not {self.postgres_batch_interval_ms}")
        if self.postgres_retries < 0:
            raise bad("postgres_retries", f"must not be negative, not {self.postgres_retries}")
        if self.source not in SOURCES:
            raise bad("source", f"must be file, kafka or kinesis, not {self.source!r}")
        if self.dynamodb_table or self.source == "kinesis":
            self._validate_aws(bad)
        if self.kafka_delivery is not None and self.kafka_delivery not in (EXACTLY_ONCE, AT_LEAST_ONCE):
            raise bad("kafka_delivery", f"must be {EXACTLY_ONCE} or {AT_LEAST_ONCE}, not {self.kafka_delivery!r}")
        if self.source == "kafka":
            self._validate_kafka(bad)
        elif self.kafka_output:
            self._validate_brokers(bad)
        if self.source in ("kafka", "kinesis"):
            pass
        elif self.input_feed:
            parse_feed_url(self.input_feed, "--input")
            if self.lanes != "one":
                raise ConfigError("--lanes: a live feed (--input URL) is one lane; --lanes per-file is for files")
            if self.follow:
                raise ConfigError("--follow: a live feed (--input URL) runs until it is stopped anyway")
        elif not self.input_path.exists():
            raise ConfigError(f"--input: no such file or directory: {self.input_path}")
        elif not (self.input_path.is_file() or self.input_path.is_dir()):
            # Flink's file source on a pipe (`--input <(...)`) sat for minutes before it read it.
            raise ConfigError(
                f"--input: not a regular file or directory: {self.input_path} (write the lines to a file first)"
            )

    def _validate_output_format(self, bad: Callable[[str, str], ConfigError]) -> None:
        formats = self.output_format.split(",")
        if not set(formats) <= set(OUTPUT_FORMATS) or len(set(formats)) != len(formats):
            raise bad("output_format", f"must be jsonl, geoparquet or jsonl,geoparquet, not {self.output_format!r}")
        if self.output_formats != ("jsonl",):
            if self.writes_kafka:
                raise bad("output_format", "a Kafka run's outputs are topics; --output-format is for files")
            if self.output_dir is None:
                raise bad("output_format", "only a run with --output writes files")

    @property
    def dynamodb_window_kinds(self) -> tuple[str, ...]:
        """The window kinds written into the DynamoDB table."""
        if self.dynamodb_windows == "all":
            return self.window_kinds
        return tuple(k for k in self.window_kinds if k in self.dynamodb_windows.split(","))

    @property
    def window_kinds(self) -> tuple[str, ...]:
        """The window kinds computed and written: ``tumbling``, ``sliding`` or both."""
        return tuple(k for k in WINDOW_KINDS if k in self.windows.split(","))

    @property
    def output_formats(self) -> tuple[str, ...]:
        """The formats of the output files: ``jsonl``, ``geoparquet`` or both."""
        return tuple(f for f in OUTPUT_FORMATS if f in self.output_format.split(","))

    def _validate_kafka(self, bad: Callable[[str, str], ConfigError]) -> None:
        self._validate_brokers(bad)
        if not self.topic:
            raise bad("topic", "must not be empty")
        if not self.group_id:
            raise bad("group_id", "must not be empty")
        if self.starting_offsets not in STARTING_OFFSETS:
            kind, _, value = self.starting_offsets.partition(":")
            if kind != "timestamp" or not value.isdigit():
                raise bad(
                    "starting_offsets",
                    f"must be earliest, latest, committed or timestamp:<epoch ms>, not {self.starting_offsets!r}",
                )

    def _validate_brokers(self, bad: Callable[[str, str], ConfigError]) -> None:
        if not self.bootstrap_servers.strip():
            raise bad("bootstrap_servers", "must name at least one broker (host:port)")
        for server in self.bootstrap_servers.split(","):
            host, sep, port = server.strip().rpartition(":")
            if not sep or not host or not port.isdigit():
                raise bad("bootstrap_servers", f"expected host:port, got {server.strip()!r}")

    def _validate_aws(self, bad: Callable[[str, str], ConfigError]) -> None:
        if not self.region:
            raise bad("region", "Kinesis and DynamoDB need an AWS region (us-east-1, eu-west-1, ...)")
        for name in ("kinesis_endpoint", "dynamodb_endpoint"):
            url = getattr(self, name)
            if url and not (url.startswith(("http://", "https://")) and len(url.split("//", 1)[1]) > 0):
                raise bad(name, f"must be an http:// or https:// URL, not {url!r}")
        if self.source == "kinesis":
            if not self.stream:
                raise bad("stream", "a Kinesis run reads a stream: name it")
            if self.starting_position not in STARTING_POSITIONS:
                kind, _, value = self.starting_position.partition(":")
                if kind != "at-timestamp" or not _is_time(value):
                    raise bad(
                        "starting_position",
                        "must be trim-horizon, latest or at-timestamp:<ISO 8601 time or epoch ms>,"
                        f" not {self.starting_position!r}",
                    )
        if self.dynamodb_rounds < 1:
            raise bad("dynamodb_rounds", f"must be at least 1, not {self.dynamodb_rounds}")
        if self.dynamodb_windows != "all":
            kinds = self.dynamodb_windows.split(",")
            if not set(kinds) <= set(WINDOW_KINDS) or len(set(kinds)) != len(kinds):
                raise bad(
                    "dynamodb_windows",
                    f"must be all, tumbling, sliding or tumbling,sliding, not {self.dynamodb_windows!r}",
                )
            if not set(kinds) <= set(self.window_kinds):
                raise bad(
                    "dynamodb_windows", f"{self.dynamodb_windows} windows are not computed (--windows {self.windows})"
                )

    def without_secrets(self) -> PipelineConfig:
        """The config with no credentials (Kafka client properties, the PostgreSQL login), for
        what is pickled into the job graph (the Python operators)."""
        import dataclasses

        return dataclasses.replace(self, kafka_properties={}, feed_secrets={}, postgres=None)

    @property
    def open_to_network(self) -> bool:
        """True when the web UI and metrics listen beyond this machine's loopback."""
        return not ipaddress.ip_address(self.bind_address).is_loopback

    def output_topics(self) -> dict[str, str]:
        """Output name -> Kafka topic."""
        return {name: self.output_topic_prefix + name for name in OUTPUT_KEYS}

    @property
    def writes_kafka(self) -> bool:
        """The outputs go to Kafka topics: a Kafka run's always, any other's with --kafka-output."""
        return self.source == "kafka" or self.kafka_output

    @property
    def kafka_exactly_once(self) -> bool:
        """The delivery the Kafka outputs ask for (with checkpoints off, at least once anyway):
        exactly once unless set, at least once for a live input, whose positions are written as
        they come (a network feed is not replayed after a restart either: what a restart loses is
        in flight, not in the sink)."""
        if self.kafka_delivery is not None:
            return self.kafka_delivery == EXACTLY_ONCE
        return not self.input_feed

    def output_keys(self, name: str) -> tuple[str, ...]:
        """The fields that key one output's Kafka records: :data:`OUTPUT_KEYS`, or at least once
        the record's id (every output has one but the aggregates, keyed by their window), so that
        a reader drops a repeat and a withdrawal lands on what it withdraws."""
        if self.kafka_exactly_once or name == "aggregates":
            return OUTPUT_KEYS[name]
        return ("id",)


def _is_time(value: str) -> bool:
    """An epoch in milliseconds, or an ISO 8601 time with its offset (2024-06-01T00:00:00Z)."""
    from datetime import datetime

    if value.isdigit():
        return True
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).tzinfo is not None
    except ValueError:
        return False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of every knob; defaults are None so that the environment can fill in."""
    parser.add_argument(
        "--input",
        dest="input_path",
        help="file or directory of lines, or a live feed: udp://HOST:PORT, tcp://HOST:PORT, tcp-listen://HOST:PORT,"
        " mqtt://HOST[:PORT]/TOPIC (default: bundled sample) [INPUT_PATH]",
    )
    parser.add_argument("--output", dest="output_dir", help="write JSON Lines here (default: print)")
    parser.add_argument(
        "--follow",
        action="store_true",
        default=None,
        help="keep watching the input directory for new files; the job runs until stopped [FOLLOW]",
    )
    parser.add_argument(
        "--print-all",
        action="store_true",
        default=None,
        help="without --output: print every record the job emits, not a sample of each output [PRINT_ALL]",
    )
    parser.add_argument(
        "--no-wait",
        action="store_true",
        default=None,
        help="on a terminal, end when a file run ends instead of keeping its web UI up until Enter [NO_WAIT]",
    )
    parser.add_argument(
        "--postgres",
        dest="postgres_url",
        default=None,
        help="also write every output to PostgreSQL tables: postgresql://user[:password]@host[:port]/database"
        " [POSTGRES_URL]",
    )
    parser.add_argument("--test-fail-once", dest="test_fail_once", default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--kafka-output",
        action="store_true",
        default=None,
        help="a file or live input: write every output to Kafka topics (--output-topic-prefix), as a Kafka run"
        " does, instead of files [KAFKA_OUTPUT]",
    )
    parser.add_argument(
        "--bounded",
        action="store_true",
        default=None,
        help="Kafka: stop at the offsets that are the latest when the job starts; Kinesis: stop each shard where it"
        " was when the job started [KAFKA_BOUNDED]",
    )
    parser.add_argument(
        "--dynamodb-create",
        action="store_true",
        default=None,
        help="create the --dynamodb-table when it is missing, on demand capacity [DYNAMODB_CREATE]",
    )
    for name, knob in _KNOBS.items():
        parser.add_argument(
            knob.flag, dest=name, default=None, help=f"{knob.help} [{knob.env}, default {knob.shown or knob.default}]"
        )


def from_args(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> PipelineConfig:
    """Build the config: flag, else environment variable, else default."""
    env = os.environ if environ is None else environ
    values: dict[str, object] = {}
    for name, knob in _KNOBS.items():
        raw = getattr(args, name, None)
        source = knob.flag
        if raw is None and knob.env in env:
            raw, source = env[knob.env], knob.env
        if raw is None:
            continue
        try:
            values[name] = knob.kind(raw)
        except ValueError:
            raise ConfigError(f"{source}: expected {knob.kind.__name__}, got {raw!r}") from None
    given = getattr(args, "input_path", None) or env.get("INPUT_PATH", "")
    if given and is_feed_url(given):
        values["input_feed"] = given
    elif given:
        values["input_path"] = Path(given)
    if getattr(args, "follow", None) or env.get("FOLLOW", "").lower() in ("1", "true", "yes"):
        values["follow"] = True
    if getattr(args, "print_all", None) or env.get("PRINT_ALL", "").lower() in ("1", "true", "yes"):
        values["print_all"] = True
    if getattr(args, "no_wait", None) or env.get("NO_WAIT", "").lower() in ("1", "true", "yes"):
        values["no_wait"] = True
    if getattr(args, "test_fail_once", None):
        values["test_fail_once"] = args.test_fail_once
    if getattr(args, "bounded", None) or env.get("KAFKA_BOUNDED", "").lower() in ("1", "true", "yes"):
        values["bounded"] = True
    if getattr(args, "kafka_output", None) or env.get("KAFKA_OUTPUT", "").lower() in ("1", "true", "yes"):
        values["kafka_output"] = True
    if getattr(args, "dynamodb_create", None) or env.get("DYNAMODB_CREATE", "").lower() in ("1", "true", "yes"):
        values["dynamodb_create"] = True
    values["kafka_properties"] = kafka_client_properties(str(values.get("kafka_properties_file", "")), env)
    values["feed_secrets"] = feed_secrets(str(values.get("feed_properties_file", "")), env)
    url = getattr(args, "postgres_url", None) or env.get("POSTGRES_URL", "")
    if url:
        try:
            values["postgres"] = parse_url(url, str(values.get("postgres_password_file", "")), env)
        except PostgresError as exc:
            raise ConfigError(f"--postgres (POSTGRES_URL): {exc}") from None
    if getattr(args, "output_dir", None):
        values["output_dir"] = Path(args.output_dir)
    elif env.get("OUTPUT_DIR"):
        values["output_dir"] = Path(env["OUTPUT_DIR"])
    source = str(values.get("source", _default("source")))
    if getattr(args, "output_format", None) is None and (
        not values.get("output_dir") or source == "kafka" or values.get("kafka_output")
    ):
        values.pop("output_format", None)  # OUTPUT_FORMAT is for the runs that write files; the flag is refused
    _refuse_flags_the_source_cannot_use(args, source, bool(values.get("kafka_output")))
    if not values.get("input_feed"):
        for name in _FEED_ONLY:
            if getattr(args, name, None):
                raise ConfigError(f"{_KNOBS[name].flag}: only a live input (--input udp://, tcp://, ...) uses it")
    config = PipelineConfig(**values)  # type: ignore[arg-type]
    return with_input_time(config)


def with_input_time(config: PipelineConfig) -> PipelineConfig:
    """A file run's config with the time its lines without a time take before their lane told one
    (:func:`ais_pipeline.archives.input_time`); any other run's as it is."""
    if config.source != "file" or config.input_feed or config.input_time_ms is not None:
        return config
    return replace(config, input_time_ms=input_time(config.input_path, config.input_format, config.max_clock_skew_ms))


# Flags (given on the command line) that only one source uses: a flag the run's source cannot use
# is a one-line error, never silently ignored. (Environment variables may be set for every run.)
_KAFKA_ONLY = ("bootstrap_servers", "topic", "group_id", "starting_offsets", "output_topic_prefix",
               "kafka_properties_file", "kafka_delivery")  # fmt: skip
_KAFKA_OUTPUT = (
    "bootstrap_servers",
    "output_topic_prefix",
    "kafka_properties_file",
    "kafka_delivery",
)  # --kafka-output
_KINESIS_ONLY = ("stream", "kinesis_endpoint", "starting_position")
_FILE_ONLY = {"input_path": "--input", "follow": "--follow", "print_all": "--print-all", "no_wait": "--no-wait",
              "lanes": "--lanes", "lane_drift_s": "--lane-drift"}  # fmt: skip
_FEED_ONLY = ("station", "feed_properties_file")


def _refuse_flags_the_source_cannot_use(args: argparse.Namespace, source: str, kafka_output: bool) -> None:
    if source not in SOURCES:
        return  # validate() names the flag
    reads = {"file": "files", "kafka": "Kafka (--source kafka)", "kinesis": "Kinesis (--source kinesis)"}[source]
    if kafka_output and source == "kafka":
        raise ConfigError("--kafka-output: a Kafka run writes its outputs to Kafka anyway")
    if source != "kafka":
        for name in _KAFKA_ONLY:
            if kafka_output and name in _KAFKA_OUTPUT:
                continue
            if getattr(args, name, None):
                flag = _KNOBS[name].flag
                if name in _KAFKA_OUTPUT:
                    raise ConfigError(
                        f"{flag}: only a run that writes Kafka reads it (--source kafka, or --kafka-output);"
                        f" this one reads {reads}"
                    )
                raise ConfigError(f"{flag}: only a Kafka run reads it (--source kafka); this one reads {reads}")
    if source != "kinesis":
        for name in _KINESIS_ONLY:
            if getattr(args, name, None):
                flag = _KNOBS[name].flag
                raise ConfigError(f"{flag}: only a Kinesis run reads it (--source kinesis); this one reads {reads}")
    if source == "file" and getattr(args, "bounded", None):
        raise ConfigError("--bounded: only a Kafka or Kinesis run reads it; this one reads files")
    if source != "file":
        for name, flag in _FILE_ONLY.items():
            if getattr(args, name, None):
                raise ConfigError(f"{flag}: only a file run uses it; this one reads {reads}")


def properties_file(path: str, flag: str) -> dict[str, str]:
    """A Java properties file: ``key=value`` lines, ``#`` and ``!`` comments."""
    props: dict[str, str] = {}
    if not path:
        return props
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"{flag}: no such file: {file}")
    for number, raw in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", "!")):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ConfigError(f"{flag}: line {number} of {file} is not key=value")
        props[key.strip()] = value.strip()
    return props


FEED_SECRETS = ("username", "password", "login", "client.id")


def feed_secrets(path: str, environ: Mapping[str, str]) -> dict[str, str]:
    """A live feed's credentials: the properties file, then ``FEED_USERNAME``, ``FEED_PASSWORD``,
    ``FEED_LOGIN`` and ``FEED_CLIENT_ID``. Never from the command line, never logged."""
    props = properties_file(path, "--feed-properties (FEED_PROPERTIES_FILE)")
    unknown = sorted(set(props) - set(FEED_SECRETS))
    if unknown:
        raise ConfigError(f"--feed-properties: unknown keys {', '.join(unknown)} (known: {', '.join(FEED_SECRETS)})")
    for key in FEED_SECRETS:
        value = environ.get("FEED_" + key.replace(".", "_").upper())
        if value:
            props[key] = value
    return props


def kafka_client_properties(path: str, environ: Mapping[str, str]) -> dict[str, str]:
    """Kafka client properties: a Java properties file (``key=value`` lines, ``#`` comments),
    then ``KAFKA_CLIENT_<NAME>`` variables (``KAFKA_CLIENT_SASL_MECHANISM`` -> ``sasl.mechanism``)."""
    props = properties_file(path, "--kafka-properties (KAFKA_PROPERTIES_FILE)")
    for name, value in environ.items():
        if name.startswith("KAFKA_CLIENT_") and len(name) > len("KAFKA_CLIENT_"):
            props[name[len("KAFKA_CLIENT_") :].lower().replace("_", ".")] = value
    return props


def parse_config(argv: Sequence[str], environ: Mapping[str, str] | None = None) -> PipelineConfig:
    parser = argparse.ArgumentParser(prog="ais-pipeline run")
    add_arguments(parser)
    return from_args(parser.parse_args(list(argv)), environ)
