"""Reassembly of multipart messages (type 5 comes in two sentences), in plain Python.

Fragments are grouped by the tag-block group id ``g:<n>-<total>-<id>`` when there is one, else by
(receiver, sequence id, channel, fragment count); see :func:`ais_pipeline.rules.parse.parse_nmea`. A group takes
receiver and time from its first fragment. A group that cannot complete is dead-lettered as
``incomplete_multipart``: a fragment out of order, a new first fragment for the same group, the end
of input, or no last fragment before the timeout.

The timeout is wall-clock time after the first fragment arrived, not event time: the fragments of
a group are adjacent in a feed, while event time can leap between them (satellite downloads mix
reports from hours apart), and a replay that runs faster than the feed did must reassemble the
same groups. The end of input ends every pending group, so a file run is reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from ais_pipeline.rules.parse import DeadLetter, Skipped, report_from_payload
from ais_pipeline.rules.records import Fragment, Report

INCOMPLETE = "incomplete_multipart"


@dataclass(slots=True)
class PendingGroup:
    frag_cnt: int
    next_num: int
    payload: str
    raw: str  # the lines so far, joined by "\n"
    receiver: str
    ts: int
    deadline: int  # wall-clock epoch ms


class GroupStore(Protocol):
    """One group's state; the store arms the deadline and the end-of-input timer on ``put`` of a
    new group and disarms them on ``clear``."""

    def get(self) -> PendingGroup | None: ...
    def put(self, group: PendingGroup) -> None: ...
    def clear(self) -> None: ...


Assembled = Report | Skipped | DeadLetter


@dataclass(slots=True)
class Step:
    """What one fragment produced: at most a dead letter for a broken group, and a message when
    the group completed. ``joined`` counts the fragments merged into the message beyond its
    first, so that every line is accounted for exactly once."""

    dead: DeadLetter | None = None
    message: Assembled | None = None
    joined: int = 0


class MultipartAssembler:
    def __init__(self, timeout_ms: int) -> None:
        self.timeout_ms = timeout_ms

    def on_fragment(self, store: GroupStore, frag: Fragment, now_ms: int) -> Step:
        """``frag.ts`` is the time the group takes if this is its first fragment."""
        pending = store.get()
        dead: DeadLetter | None = None
        if frag.frag_num == 1:
            if pending is not None:
                dead = DeadLetter(pending.raw, INCOMPLETE, pending.receiver, "a new first fragment for the same group")
                store.clear()
            deadline = now_ms + self.timeout_ms
            store.put(PendingGroup(frag.frag_cnt, 2, frag.payload, frag.raw, frag.receiver, frag.ts, deadline))
            return Step(dead=dead)
        if pending is None or pending.next_num != frag.frag_num or pending.frag_cnt != frag.frag_cnt:
            raw = frag.raw if pending is None else pending.raw + "\n" + frag.raw
            receiver = frag.receiver if pending is None else pending.receiver
            expected = "no first fragment" if pending is None else f"expected fragment {pending.next_num}"
            store.clear()
            why = f"fragment {frag.frag_num} of {frag.frag_cnt} out of order: {expected}"
            return Step(dead=DeadLetter(raw, INCOMPLETE, receiver, why))
        payload = pending.payload + frag.payload
        raw = pending.raw + "\n" + frag.raw
        if frag.frag_num < frag.frag_cnt:
            store.put(replace(pending, next_num=frag.frag_num + 1, payload=payload, raw=raw))
            return Step()
        store.clear()
        message = report_from_payload(payload, frag.fill, pending.receiver, pending.ts, raw)
        return Step(message=message, joined=frag.frag_cnt - 1)

    def expire(self, store: GroupStore, end_of_input: bool) -> DeadLetter | None:
        """The deadline passed, or the input ended: a pending group is dead-lettered."""
        pending = store.get()
        if pending is None:
            return None
        store.clear()
        why = "the input ended before the rest of the group" if end_of_input else "the rest of the group never came"
        return DeadLetter(pending.raw, INCOMPLETE, pending.receiver, why)


class DictGroupStore:
    def __init__(self) -> None:
        self.group: PendingGroup | None = None

    def get(self) -> PendingGroup | None:
        return self.group

    def put(self, group: PendingGroup) -> None:
        self.group = group

    def clear(self) -> None:
        self.group = None
