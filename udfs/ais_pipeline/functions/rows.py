"""Flink row types of the records in :mod:`ais_pipeline.rules.records`, built from the dataclasses'
own field annotations (the one declaration of each record), and the conversions between records
and rows.

Each function returns a *fresh* type object: an ``OutputTag`` whose type object was already used
by another operator fails to pickle.
"""

from __future__ import annotations

import types
import typing
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import fields
from functools import cache
from operator import attrgetter
from typing import Any, TypeVar

from pyflink.common import Row, Types
from pyflink.common.typeinfo import TypeInformation

from ais_pipeline.rules.records import (
    COPY_MARK,
    Int32,
    LaneBatch,
    Report,
    VesselPane,
    WireReport,
    pack_report,
    unpack_report,
    values,
)
from ais_pipeline.rules.windows import Aggregate

T = TypeVar("T")


def _flink_type(annotation: Any) -> TypeInformation:
    """The Flink type of one field annotation (``X | None``: Flink's types are nullable)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        (inner,) = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _flink_type(inner)
    if typing.get_origin(annotation) is list:
        (element,) = typing.get_args(annotation)
        return Types.BASIC_ARRAY(_flink_type(element))
    if annotation == Int32:
        return Types.INT()
    simple = {int: Types.LONG, float: Types.DOUBLE, str: Types.STRING, bool: Types.BOOLEAN}
    if annotation not in simple:
        raise TypeError(f"no Flink type for a record field annotated {annotation!r}")
    return simple[annotation]()


@cache
def _layout(cls: type) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    hints = typing.get_type_hints(cls, include_extras=True)
    names = tuple(f.name for f in fields(cls))
    return names, tuple(hints[n] for n in names)


def row_type(cls: type) -> TypeInformation:
    """The named Flink row type of a record dataclass, its fields in declaration order."""
    names, annotations = _layout(cls)
    return Types.ROW_NAMED(list(names), [_flink_type(a) for a in annotations])


def report_type() -> TypeInformation:
    return row_type(Report)


def vessel_pane_type() -> TypeInformation:
    return row_type(VesselPane)


def aggregate_type() -> TypeInformation:
    return row_type(Aggregate)


def to_row(record: Any) -> Row:
    """A dataclass record as a Flink Row, fields in declaration order."""
    return Row(*values(record))


def from_row(cls: type[T], row: Any) -> T:
    """A Flink Row back into its dataclass."""
    return cls(*row)


def keyed(key_type: TypeInformation, record_type: TypeInformation) -> TypeInformation:
    """``Row(key, record)``: what an operator emits for the next one to be keyed in Java."""
    return Types.ROW([key_type, record_type])


def columns(record_type: TypeInformation) -> TypeInformation:
    """A batch of records as columns: a row with the record type's field names, each field an
    array of that field's values, one per record. (Thread mode converts an array of rows through
    one reused row buffer, so every element would arrive as the last one: columns instead.)"""
    return Types.ROW_NAMED(
        list(record_type.get_field_names()),  # type: ignore[attr-defined]
        [Types.BASIC_ARRAY(t) for t in record_type.get_field_types()],  # type: ignore[attr-defined]
    )


def to_columns(records: list[Any]) -> Row:
    """Records of one dataclass as a :func:`columns` batch."""
    return Row(*[list(map(get, records)) for get in _getters(type(records[0]))])


_GETTERS: dict[type, tuple[Callable[[Any], Any], ...]] = {}


def _getters(cls: type) -> tuple[Callable[[Any], Any], ...]:
    """One attribute getter per field of a dataclass, in declaration order."""
    getters = _GETTERS.get(cls)
    if getters is None:
        getters = _GETTERS[cls] = tuple(attrgetter(f.name) for f in fields(cls))
    return getters


def lane_batch_type() -> TypeInformation:
    return row_type(LaneBatch)


def wire_report_type() -> TypeInformation:
    return row_type(WireReport)


def parsed_type() -> TypeInformation:
    """A batch of a lane's entries as columns (one array per field, one value per entry), for
    ``ais.flink.ReceiverWatermarks``: ``assigned`` (the event time the line moves its source's
    clock with), ``source`` (its receiver), ``received`` (the line was stamped on receipt: it moves a
    live lane's received clock), and the entry's report, if it has one, as its ``mmsi``
    and the rest ``packed`` (:func:`ais_pipeline.rules.records.pack_report`); both null for an
    entry without one."""
    return Types.ROW_NAMED(
        ["assigned", "source", "received", "mmsi", "packed"],
        [
            Types.BASIC_ARRAY(Types.LONG()),
            Types.BASIC_ARRAY(Types.STRING()),
            Types.BASIC_ARRAY(Types.BOOLEAN()),
            Types.BASIC_ARRAY(Types.LONG()),
            Types.BASIC_ARRAY(Types.STRING()),
        ],
    )


def parsed_entry(assigned: int, source: str, report: Report | None, received: bool = False) -> tuple[Any, ...]:
    """One entry of a :func:`parsed_type` batch."""
    if report is None:
        return (assigned, source, received, None, None)
    return (assigned, source, received, report.mmsi, pack_report(report))


def in_lane_order(batch: LaneBatch, entries: list[tuple[int, tuple[Any, ...]]]) -> list[list[Any]]:
    """The :func:`parsed_type` columns of a lane's batch: the entries of the plain sentences
    parsed in Java (``batch.fast_at``) and ``entries``, those of the other lines, each with its
    line's place in the batch, in the order of the lines."""
    fast: list[list[Any]] = [batch.assigned, batch.source, batch.received, batch.mmsi, batch.packed]
    if not entries:
        return fast
    merged: list[list[Any]] = [[], [], [], [], []]
    at, start = batch.fast_at, 0
    for place, entry in entries:
        stop = bisect_left(at, place, start)
        for column, source in zip(merged, fast, strict=True):
            column.extend(source[start:stop])
        for column, value in zip(merged, entry, strict=True):
            column.append(value)
        start = stop
    for column, source in zip(merged, fast, strict=True):
        column.extend(source[start:])
    return merged


def wire_reports(batch: Any) -> tuple[list[Report], list[int]]:
    """A batch of :func:`wire_report_type` columns back into reports, and the event times of the
    exact copies among them (:func:`ais_pipeline.rules.records.copy_marker`)."""
    mmsis, watermarks, packed = batch
    copies = [int(p[1:]) for p in packed if p[:1] == COPY_MARK]
    if not copies:
        return [unpack_report(m, w, p) for m, w, p in zip(mmsis, watermarks, packed, strict=True)], copies
    reports = [unpack_report(m, w, p) for m, w, p in zip(mmsis, watermarks, packed, strict=True) if p[:1] != COPY_MARK]
    return reports, copies
