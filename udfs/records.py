"""The typed records that cross between operators: one frozen dataclass per kind, each with an
explicit Flink row type built from the same field list.

Outputs (positions, static, aggregates, late, dead letter) leave the job as JSON Lines and are
formatted by :mod:`udfs.outputs`; the records here are the ones that travel between operators.
Each ``*_type()`` function returns a *fresh* type object: an ``OutputTag`` whose type object was
already used by another operator fails to pickle.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, TypeVar

from pyflink.common import Row, Types
from pyflink.common.typeinfo import TypeInformation

T = TypeVar("T")

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
    msg_type: int
    identity: str
    payload: str  # armored payload, "" for JSON input
    fill: int
    receiver: str
    raw: str  # the line (or lines, joined by "\n")
    lat: float | None = None
    lon: float | None = None
    sog: float | None = None
    cog: float | None = None
    heading: int | None = None
    # The parse operator's watermark when it read the line. Lateness is decided against it, so
    # the same input in the same order always gives the same late reports.
    watermark: int = -(2**63)


@dataclass(frozen=True, slots=True)
class Fragment:
    """One sentence of a multipart message, on its way to the operator that reassembles it."""

    group: str  # the reassembly key: tag-block group id, or receiver/sequence/channel/count
    frag_num: int
    frag_cnt: int
    payload: str
    fill: int
    receiver: str  # "" when the sentence did not say
    ts: int  # event time, epoch ms; TIME_UNKNOWN when the sentence carried none
    has_time: bool
    raw: str
    watermark: int = -(2**63)


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
    reports: int
    sog_milli_sum: int  # sum of SOG in thousandths of a knot, exact whatever the order
    sog_count: int
    tumbling: bool
    sliding: bool
    sliding_from: int = 0


TIME_UNKNOWN = -(2**63)  # Long.MIN_VALUE: "no event time", never moves a watermark


def report_type() -> TypeInformation:
    return Types.ROW_NAMED(
        [f.name for f in fields(Report)],
        [
            Types.LONG(),
            Types.LONG(),
            Types.INT(),
            Types.STRING(),
            Types.STRING(),
            Types.INT(),
            Types.STRING(),
            Types.STRING(),
            Types.DOUBLE(),
            Types.DOUBLE(),
            Types.DOUBLE(),
            Types.DOUBLE(),
            Types.INT(),
            Types.LONG(),
        ],
    )


def fragment_type() -> TypeInformation:
    return Types.ROW_NAMED(
        [f.name for f in fields(Fragment)],
        [
            Types.STRING(),
            Types.INT(),
            Types.INT(),
            Types.STRING(),
            Types.INT(),
            Types.STRING(),
            Types.LONG(),
            Types.BOOLEAN(),
            Types.STRING(),
            Types.LONG(),
        ],
    )


def vessel_pane_type() -> TypeInformation:
    return Types.ROW_NAMED(
        [f.name for f in fields(VesselPane)],
        [
            Types.STRING(),
            Types.LONG(),
            Types.LONG(),
            Types.INT(),
            Types.LONG(),
            Types.INT(),
            Types.BOOLEAN(),
            Types.BOOLEAN(),
            Types.LONG(),
        ],
    )


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def values(record: Any) -> tuple[Any, ...]:
    """A dataclass record's field values, in declaration order."""
    cls = type(record)
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return tuple([getattr(record, n) for n in names])


def to_row(record: Any) -> Row:
    """A dataclass record as a Flink Row, fields in declaration order."""
    return Row(*values(record))


def from_row(cls: type[T], row: Any) -> T:
    """A Flink Row back into its dataclass."""
    return cls(*row)


def keyed(key_type: TypeInformation, record_type: TypeInformation) -> TypeInformation:
    """``Row(key, record)``: what an operator emits for the next one to be keyed in Java."""
    return Types.ROW([key_type, record_type])


def parsed_type() -> TypeInformation:
    """A batch of parsed lines as columns (one array per field, one value per line), for
    ``ais.flink.StampedWatermarks``: ``assigned`` (the event time the line moves the watermark
    with), ``mmsi`` and the report's fields, then ``group`` and the fragment's fields. A line is
    a report (``group`` null) or a multipart fragment (the report's fields null)."""
    report, fragment = report_type(), fragment_type()
    return Types.ROW(
        [
            Types.BASIC_ARRAY(Types.LONG()),
            Types.BASIC_ARRAY(Types.LONG()),
            *[Types.BASIC_ARRAY(t) for t in report.get_field_types()],  # type: ignore[attr-defined]
            Types.BASIC_ARRAY(Types.STRING()),
            *[Types.BASIC_ARRAY(t) for t in fragment.get_field_types()],  # type: ignore[attr-defined]
        ]
    )


_NO_REPORT = (None,) * len(fields(Report))
_NO_FRAGMENT = (None,) * len(fields(Fragment))


def parsed_report(assigned: int, report: Report) -> tuple[Any, ...]:
    """One line of a :func:`parsed_type` batch: a report."""
    return (assigned, report.mmsi, *values(report), None, *_NO_FRAGMENT)


def parsed_fragment(assigned: int, fragment: Fragment) -> tuple[Any, ...]:
    """One line of a :func:`parsed_type` batch: a multipart fragment."""
    return (assigned, None, *_NO_REPORT, fragment.group, *values(fragment))


def columns(record_type: TypeInformation) -> TypeInformation:
    """A batch of records as columns (``ais.flink.KeyedBatches``): a row with the record type's
    field names, each field an array of that field's values, one per record."""
    return Types.ROW_NAMED(
        list(record_type.get_field_names()),  # type: ignore[attr-defined]
        [Types.BASIC_ARRAY(t) for t in record_type.get_field_types()],  # type: ignore[attr-defined]
    )


def from_columns(cls: type[T], batch: Any) -> list[T]:
    """A batch of columns back into its dataclass records."""
    return [cls(*record) for record in zip(*batch, strict=True)]
