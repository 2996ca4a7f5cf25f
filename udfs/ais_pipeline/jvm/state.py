"""The keyed state backend under a Python operator (thread mode): ``ais.flink.ShardKeySwitch``.

PyFlink's embedded operator hands its Python function the Java keyed state backend, which sets the
key that every state access uses (the current record's or timer's). The dedup operator takes the
reports of all its vessel shards in one call, under the key of its first shard, and reads or
writes another shard's vessels under that shard's own key: :class:`KeySwitch` moves the backend to
that key and back. Process mode (state behind Beam's state API) has no such backend: there
:func:`key_switch` returns None."""

from __future__ import annotations

from typing import Any

from ais_pipeline.jvm.metrics import task_class


class KeySwitch:
    """The backend's current key as a vessel shard's key, and back to the key it had."""

    __slots__ = ("_switch",)

    def __init__(self, switch: Any) -> None:
        self._switch = switch

    def to(self, key: int) -> None:
        self._switch.to(key)

    def back(self) -> None:
        self._switch.back()


def key_switch(runtime_context: Any) -> KeySwitch | None:
    """A :class:`KeySwitch` over the keyed state backend of the operator ``runtime_context`` is
    of, or None where there is none to reach (process mode)."""
    backend = getattr(runtime_context, "get_keyed_state_backend", lambda: None)()
    j_backend = getattr(backend, "_keyed_state_backend", None)
    if j_backend is None:
        return None
    switch = task_class("ais.flink.ShardKeySwitch")
    switch.bind(j_backend)
    return KeySwitch(switch)
