"""The typed records that cross between operators: one dataclass per kind (slotted, not frozen:
several are made per line, and a frozen one costs several times as much to make), whose field
annotations are the wire types the Flink row types are built from
(:mod:`ais_pipeline.functions.rows`).

Outputs (positions, static, aggregates, late, dead letter) leave the job as JSON Lines and are
formatted by :mod:`ais_pipeline.rules.outputs`; the records here are the ones that travel
between operators.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Annotated, Any

Int32 = Annotated[int, "int32"]  # a 32-bit integer on the wire (Java int); plain ``int`` is 64-bit

# Message types: positions (1, 2, 3, 18, 19, 27) and static and voyage reports (5, 24).
POSITION_TYPES = frozenset({1, 2, 3, 18, 19, 27})
STATIC_TYPES = frozenset({5, 24})


@dataclass(slots=True)
class Report:
    """One AIS message (reassembled when it came in several sentences), not yet decoded.

    ``identity`` is what makes two copies the same report: the armored payload plus fill bits
    for NMEA; mmsi, time and rounded position for JSON. JSON input arrives decoded, so its
    fields ride along in ``lat``/``lon``/``sog``/``cog``/``heading``.
    """

    mmsi: int
    ts: int  # event time, epoch milliseconds
    msg_type: Int32
    identity: str
    payload: str  # armored payload, "" for JSON input
    fill: Int32
    receiver: str
    raw: str  # the line (or lines, joined by "\n")
    lat: float | None = None
    lon: float | None = None
    sog: float | None = None
    cog: float | None = None
    heading: Int32 | None = None
    # The watermark in force when the line was read (stamped by the watermark stage). Lateness is
    # decided against it, so the same input in the same order always gives the same late reports.
    watermark: int = -(2**63)
    # A decoded archive row's static fields (name, IMO, call sign, ...) as canonical JSON, "" for
    # none: they become a static report when they change (ais_pipeline.rules.csv_rows).
    static: str = ""


@dataclass(slots=True)
class WireReport:
    """A :class:`Report` as it travels through the JVM between the parse and the dedup operators:
    the fields the Java operators use as their own (``mmsi`` to key it, ``watermark``, which the
    watermark stage stamps) and every other field packed in one string (:func:`pack_report`).
    Each value that crosses between Python and Java is converted on its own, and that costs more
    than packing: one string instead of twelve values."""

    mmsi: int
    watermark: int
    packed: str


@dataclass(slots=True)
class LaneBatch:
    """A batch of a lane's lines on its way into the Python parse operator, as columns: the
    ``lines`` Python decides, each with its place in the batch (``line_at``), and the entries of
    the plain sentences already parsed in Java (``ais.flink.FastSentences``), each with its place
    (``fast_at``) and its ``parsed_type`` fields (``assigned``, ``source``, ``received``, ``mmsi``,
    ``packed``: what :func:`ais_pipeline.rules.lane.LaneParser.line` and :func:`pack_report` give
    for it, and whether the line was stamped on receipt); ``total`` is the batch's number of lines."""

    lines: list[str]
    line_at: list[Int32]
    fast_at: list[Int32]
    assigned: list[int]
    source: list[str]
    received: list[bool]
    mmsi: list[int]
    packed: list[str]
    total: Int32


# The packed fields are separated by the ASCII unit separator, which no line of text the job
# accepts holds (a line with one is dead-lettered as not text, as NUL is).
FIELD_SEPARATOR = "\x1f"
_PACKED = ("ts", "msg_type", "identity", "payload", "fill", "receiver", "raw", "lat", "lon", "sog", "cog", "heading")


def pack_report(report: Report) -> str:
    """The fields of ``report`` but ``mmsi`` and ``watermark`` in one string; ``identity`` is left
    out when it is the NMEA one (payload and fill bits), which :func:`unpack_report` rebuilds."""
    r = report
    identity = "" if r.payload and r.identity == f"{r.payload},{r.fill}" else r.identity
    head = f"{r.ts}\x1f{r.msg_type}\x1f{identity}\x1f{r.payload}\x1f{r.fill}\x1f{r.receiver}\x1f{r.raw}"
    if r.lat is None and r.lon is None and r.sog is None and r.cog is None and r.heading is None and not r.static:
        return head
    tail = "\x1f".join("" if v is None else repr(v) for v in (r.lat, r.lon, r.sog, r.cog, r.heading))
    if r.static:
        return f"{head}\x1f{tail}\x1f{r.static}"
    return f"{head}\x1f{tail}"


# What an exact copy travels as from the Java operator that decides it (``ais.flink.ExactCopies``)
# to the vessel operator, which counts it: this character (the ASCII record separator, which no
# accepted line holds either) and the copy's event time, in place of the packed report.
COPY_MARK = "\x1e"


def copy_marker(ts: int) -> str:
    """The packed field of an exact copy's record: :data:`COPY_MARK` and its event time."""
    return f"{COPY_MARK}{ts}"


def _float(text: str) -> float | None:
    return None if text == "" else float(text)


def unpack_report(mmsi: int, watermark: int, packed: str) -> Report:
    """The :class:`Report` that :func:`pack_report` packed, with its mmsi and watermark."""
    f = packed.split("\x1f")
    payload, fill = f[3], int(f[4])
    identity = f[2] or f"{payload},{fill}"
    if len(f) == 7:
        return Report(mmsi, int(f[0]), int(f[1]), identity, payload, fill, f[5], f[6], watermark=watermark)
    heading = None if f[11] == "" else int(f[11])
    return Report(
        mmsi, int(f[0]), int(f[1]), identity, payload, fill, f[5], f[6],
        _float(f[7]), _float(f[8]), _float(f[9]), _float(f[10]), heading, watermark, f[12] if len(f) > 12 else "",
    )  # fmt: skip


@dataclass(slots=True)
class Fragment:
    """One sentence of a multipart message, on its way to the operator that reassembles it."""

    group: str  # the reassembly key: tag-block group id, or receiver/sequence/channel/count
    frag_num: Int32
    frag_cnt: Int32
    payload: str
    fill: Int32
    receiver: str  # "" when the sentence did not say
    ts: int  # event time, epoch ms; TIME_UNKNOWN when the sentence carried none
    has_time: bool
    raw: str


@dataclass(slots=True)
class VesselPane:
    """What one vessel adds to one cell in one pane (the slice both window kinds are made of):
    a kept report (``reports`` 1, its speed), or time the vessel spent there (``vessel_ms``, a
    vessel-hours segment's part in the pane, ``reports`` 0). ``category`` is the vessel's ship
    type category (:mod:`ais_pipeline.rules.vessel_hours`). ``tumbling`` / ``sliding`` say which
    window kinds it counts for: a late one may be too late for one kind only. One too late for
    the first sliding windows that contain it, but not for the later ones, counts from
    ``sliding_from`` (a window end) on; 0 means every sliding window. The dedup operator decides
    all this, once."""

    cell: str
    pane_start: int
    mmsi: int
    reports: Int32
    sog_milli_sum: int  # sum of SOG in thousandths of a knot, exact whatever the order
    sog_count: Int32
    tumbling: bool
    sliding: bool
    sliding_from: int = 0
    vessel_ms: int = 0
    category: str = "unknown"


TIME_UNKNOWN = -(2**63)  # Long.MIN_VALUE: "no event time", never moves a watermark

_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def values(record: Any) -> tuple[Any, ...]:
    """A dataclass record's field values, in declaration order."""
    cls = type(record)
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return tuple([getattr(record, n) for n in names])
