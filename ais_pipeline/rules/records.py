"""The typed records that cross between operators: one frozen dataclass per kind, each with an
explicit Flink row type built from the same field list.

Outputs (positions, static, aggregates, late, dead letter) leave the job as JSON Lines and are
formatted by :mod:`ais_pipeline.rules.outputs`; the records here are the ones that travel between operators.
Each ``*_type()`` function returns a *fresh* type object: an ``OutputTag`` whose type object was
already used by another operator fails to pickle.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Annotated, Any

Int32 = Annotated[int, "int32"]  # a 32-bit integer on the wire (Java int); plain ``int`` is 64-bit

# Message types, as SPEC.md groups them.
POSITION_TYPES = frozenset({1, 2, 3, 18, 19, 27})
STATIC_TYPES = frozenset({5, 24})


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class VesselPane:
    """What kept reports of one vessel add to one cell in one pane (the slice both window kinds
    are made of). ``tumbling`` / ``sliding`` say which window kinds it counts for: a late report
    may be too late for one kind only. A report too late for the first sliding windows that
    contain it, but not for the later ones, counts from ``sliding_from`` (a window end) on;
    0 means every sliding window. The dedup operator decides all this, once."""

    cell: str
    pane_start: int
    mmsi: int
    reports: Int32
    sog_milli_sum: int  # sum of SOG in thousandths of a knot, exact whatever the order
    sog_count: Int32
    tumbling: bool
    sliding: bool
    sliding_from: int = 0


TIME_UNKNOWN = -(2**63)  # Long.MIN_VALUE: "no event time", never moves a watermark

_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def values(record: Any) -> tuple[Any, ...]:
    """A dataclass record's field values, in declaration order."""
    cls = type(record)
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return tuple([getattr(record, n) for n in names])
