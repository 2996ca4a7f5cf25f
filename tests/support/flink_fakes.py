"""Small fakes of the Flink services a Python operator's state uses, for unit tests without a JVM:
keyed map and value state (scoped by the current key, as Flink's is), a runtime context that
hands them out, and a timer service that records what was registered."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


class FakeRuntimeContext:
    """``get_map_state`` as Flink's keyed context gives it: one map per (state name, current key)."""

    def __init__(self) -> None:
        self.key: Any = None
        self.maps: dict[tuple[str, Any], dict[Any, Any]] = {}

    def get_map_state(self, descriptor: Any) -> FakeMapState:
        return FakeMapState(self, descriptor.name)

    def get_state(self, descriptor: Any) -> FakeValueState:
        return FakeValueState(self, descriptor.name)

    def held(self) -> dict[tuple[str, Any], dict[Any, Any]]:
        """Every non-empty map: what a checkpoint would hold."""
        return {where: dict(m) for where, m in self.maps.items() if m}


class FakeMapState:
    def __init__(self, ctx: FakeRuntimeContext, name: str) -> None:
        self._ctx, self._name = ctx, name

    def _map(self) -> dict[Any, Any]:
        assert self._ctx.key is not None, "keyed state used without a current key"
        return self._ctx.maps.setdefault((self._name, self._ctx.key), {})

    def get(self, key: Any) -> Any:
        return self._map().get(key)

    def put(self, key: Any, value: Any) -> None:
        self._map()[key] = value

    def remove(self, key: Any) -> None:
        self._map().pop(key, None)

    def keys(self) -> Iterator[Any]:
        return iter(list(self._map()))

    def items(self) -> Iterator[tuple[Any, Any]]:
        return iter(list(self._map().items()))


class FakeValueState:
    """Keyed value state, kept as a one-entry map so that ``held`` shows it too."""

    def __init__(self, ctx: FakeRuntimeContext, name: str) -> None:
        self._map = FakeMapState(ctx, name)

    def value(self) -> Any:
        return self._map.get("value")

    def update(self, value: Any) -> None:
        self._map.put("value", value)

    def clear(self) -> None:
        self._map.remove("value")


class FakeTimerService:
    """Records the timers registered, as Flink keeps one per key and time."""

    def __init__(self, ctx: FakeRuntimeContext) -> None:
        self._ctx = ctx
        self.event_time: set[tuple[Any, int]] = set()
        self.processing_time: set[tuple[Any, int]] = set()

    def register_event_time_timer(self, ts: int) -> None:
        self.event_time.add((self._ctx.key, ts))

    def register_processing_time_timer(self, ts: int) -> None:
        self.processing_time.add((self._ctx.key, ts))

    def delete_event_time_timer(self, ts: int) -> None:
        self.event_time.discard((self._ctx.key, ts))


class FakeKeySwitch:
    """``ais_pipeline.jvm.state.KeySwitch`` on the fake context: the current key as a shard's key,
    and back to the key it had (counting the switches)."""

    def __init__(self, ctx: FakeRuntimeContext) -> None:
        self._ctx = ctx
        self._saved: Any = None
        self.switches = 0

    def to(self, key: int) -> None:
        if self._saved is None:
            self._saved = self._ctx.key
        self._ctx.key = key
        self.switches += 1

    def back(self) -> None:
        if self._saved is not None:
            self._ctx.key, self._saved = self._saved, None
