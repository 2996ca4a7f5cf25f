"""The Python operators' keyed state: what they hold between calls and how it maps to Flink's.

- :class:`LaneGroups`: a lane's pending multipart groups, in map state keyed by lane (the parse
  operator), written through; :class:`LaneCsv`: the CSV file it is in the middle of.
- :class:`ShardVessels`: the dedup operator's vessels, in map state per vessel shard, with a
  bounded cache of them as Python objects, written behind when a marker arrives or when they
  leave the cache.
"""

from __future__ import annotations

import heapq
import json
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import fields
from typing import Any, TypeVar

from pyflink.common import Row, Types
from pyflink.datastream.functions import RuntimeContext
from pyflink.datastream.state import MapStateDescriptor, ValueStateDescriptor

from ais_pipeline.functions.rows import to_row
from ais_pipeline.jvm.state import KeySwitch
from ais_pipeline.rules.dedup import VesselMeta
from ais_pipeline.rules.gaps import VesselGaps
from ais_pipeline.rules.lane import LaneParser
from ais_pipeline.rules.multipart import PendingGroup
from ais_pipeline.rules.records import TIME_UNKNOWN
from ais_pipeline.rules.tracks import VesselTracks
from ais_pipeline.rules.transmitters import VesselTransmitters

T = TypeVar("T")
DEADLINE_GRAIN_MS = 1000  # multipart deadlines are checked on timers rounded up to the second


class LaneGroups:
    """The pending multipart groups of the current lane, in keyed map state (keyed by lane):
    :class:`ais_pipeline.rules.lane.GroupStores`. A new group arms a processing-time timer at
    its deadline, rounded up to the second."""

    def __init__(self, ctx: RuntimeContext) -> None:
        row = Types.ROW_NAMED(
            [f.name for f in fields(PendingGroup)],
            [Types.INT(), Types.INT(), Types.STRING(), Types.STRING(), Types.STRING(), Types.LONG(), Types.LONG()],
        )
        self.state = ctx.get_map_state(MapStateDescriptor("pending-groups", Types.STRING(), row))
        self.timers: Any = None

    def store(self, key: str) -> LaneGroup:
        return LaneGroup(self, key)

    def pending(self) -> list[str]:
        return sorted(self.state.keys())

    def expired(self, now_ms: int) -> list[str]:
        return sorted(key for key, row in self.state.items() if row[6] <= now_ms)


class LaneCsv:
    """Where a lane's parser is between lines, in keyed value state (keyed by lane): the CSV file
    it is in the middle of (its header line and the line number reached: a restored source goes on
    after the header it does not read again, so the parser must know it), a Gatehouse time
    waiting for the AIS message after it, and a file lane's clock (the time it told last, which
    its lines without a time take). Written when it changed, once per batch of lines."""

    def __init__(self, ctx: RuntimeContext) -> None:
        row = Types.ROW_NAMED(["header", "line_number"], [Types.STRING(), Types.LONG()])
        self.state = ctx.get_state(ValueStateDescriptor("csv-file", row))
        self.gatehouse_state = ctx.get_state(ValueStateDescriptor("gatehouse-time", Types.LONG()))
        self.told_state = ctx.get_state(ValueStateDescriptor("lane-told-time", Types.LONG()))
        self.loaded = False
        self.written: tuple[str, int] = ("", 0)
        self.gatehouse_written = TIME_UNKNOWN
        self.told_written = TIME_UNKNOWN

    def load(self, parser: LaneParser) -> None:
        """Once per operator instance, before its first batch: the parser as the state says."""
        if self.loaded:
            return
        self.loaded = True
        row = self.state.value()
        if row is not None:
            parser.restore_csv(row[0], row[1])
            self.written = (row[0], row[1])
        gatehouse = self.gatehouse_state.value()
        if gatehouse is not None:
            parser.gatehouse = self.gatehouse_written = gatehouse
        told = self.told_state.value()
        if told is not None:
            parser.told = self.told_written = told

    def save(self, parser: LaneParser) -> None:
        current = parser.csv_state()
        if current != self.written:
            if current[0]:
                self.state.update(Row(*current))
            else:
                self.state.clear()
            self.written = current
        if parser.gatehouse != self.gatehouse_written:
            if parser.gatehouse == TIME_UNKNOWN:
                self.gatehouse_state.clear()
            else:
                self.gatehouse_state.update(parser.gatehouse)
            self.gatehouse_written = parser.gatehouse
        if parser.told != self.told_written:
            self.told_state.update(parser.told)
            self.told_written = parser.told


class LaneGroup:
    __slots__ = ("_groups", "_key")

    def __init__(self, groups: LaneGroups, key: str) -> None:
        self._groups, self._key = groups, key

    def get(self) -> PendingGroup | None:
        row = self._groups.state.get(self._key)
        return None if row is None else PendingGroup(*row)

    def put(self, group: PendingGroup) -> None:
        if group.next_num == 2:  # a new group: arm its deadline
            grain = DEADLINE_GRAIN_MS
            self._groups.timers.register_processing_time_timer(-(-group.deadline // grain) * grain)
        self._groups.state.put(self._key, to_row(group))

    def clear(self) -> None:
        self._groups.state.remove(self._key)


# The map state's name: new whenever the value's layout changes, so that a savepoint of another
# layout restores without this state (started empty) instead of being misread.
VESSELS_STATE = "vessels-v5"
_META_NAMES = [f.name for f in fields(VesselMeta)]
_COMPACT = (",", ":")


class _VesselEntry:
    """One vessel's state as Python objects, and as the one value keyed state holds of it
    (:meth:`to_text`): JSON text of its :class:`ais_pipeline.rules.dedup.VesselMeta` (``m``, in
    field order), its last kept
    static reports (``s``: kind -> content and event time), its tracks (``t``:
    :class:`ais_pipeline.rules.tracks.VesselTracks`, the fixes held and the open tracks), its
    gaps (``g``: :class:`ais_pipeline.rules.gaps.VesselGaps`, its last position and positions per
    minute) and its transmitters' port visits (``p``:
    :class:`ais_pipeline.rules.transmitters.VesselTransmitters`), each left out when empty: a vessel kept
    for its gap and port visits alone is its meta, its gaps and its transmitters.
    A value written before the exact-copy rule ran in Java may hold the identities it had seen
    (``i``): they are not read (the Java operator remembers identities now)."""

    __slots__ = ("gaps", "meta", "ports", "static", "track", "watched")

    def __init__(self) -> None:
        self.watched = False  # kept only for its gap (counted in ShardVessels.watching)
        self.meta: VesselMeta | None = None
        self.static: dict[str, tuple[str, int]] = {}
        self.track: VesselTracks | None = None
        self.gaps: VesselGaps | None = None
        self.ports: VesselTransmitters | None = None

    def to_text(self) -> str:
        meta = self.meta
        assert meta is not None
        value: dict[str, Any] = {"m": [getattr(meta, name) for name in _META_NAMES]}
        if self.static:
            value["s"] = self.static
        if self.track is not None:
            value["t"] = self.track.to_list()
        if self.gaps is not None:
            value["g"] = self.gaps.to_list()
        if self.ports is not None:
            value["p"] = self.ports.to_list()
        return json.dumps(value, separators=_COMPACT)

    @classmethod
    def from_text(
        cls, text: str, new_track: Callable[[], VesselTracks], new_gaps: Callable[[], VesselGaps]
    ) -> _VesselEntry:
        value = json.loads(text)
        entry = cls()
        entry.meta = meta = VesselMeta(*value["m"])
        entry.watched = bool(meta.gap_watch)
        entry.static = {k: (content, ts) for k, (content, ts) in value.get("s", {}).items()}
        if "t" in value:
            entry.track = new_track().restore(value["t"])
        if "g" in value:
            entry.gaps = new_gaps().restore(value["g"])
        if "p" in value:
            entry.ports = VesselTransmitters.from_list(value["p"])
        return entry

    @staticmethod
    def meta_of(text: str) -> VesselMeta:
        """The meta alone of a vessel's value (what its timers need)."""
        return VesselMeta(*json.loads(text)["m"])


def _murmur(code: int) -> int:
    """Flink's ``MathUtils.murmurHash(int)``, in 32-bit arithmetic."""
    mask = 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & mask

    h = (code * 0xCC9E2D51) & mask
    h = rotl(h, 15)
    h = (h * 0x1B873593) & mask
    h = rotl(h, 13)
    h = (h * 5 + 0xE6546B64) & mask
    h ^= 4
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    h ^= h >> 16
    signed = h - (1 << 32) if h & 0x80000000 else h
    if signed >= 0:
        return signed
    return -signed if signed != -(1 << 31) else 0


def shard_keys(shards: int) -> list[int]:
    """Each vessel shard's key (``ais.flink.KeyedBatches.shardKeys``): the smallest non-negative
    integer Flink assigns to the key group of the shard's number, with as many key groups as
    shards. The keyed stream's key is ``Row(key)``, whose hash code (Flink's ``Row.hashCode``) is
    ``62 + key``; the golden keys (``tests/golden/shard_keys.json``) hold Java and Python to the
    same list."""
    keys = [-1] * shards
    found, key = 0, 0
    while found < shards:
        group = _murmur(62 + key) % shards
        if keys[group] < 0:
            keys[group] = key
            found += 1
        key += 1
    return keys


class _Shard:
    """What one operator instance knows of one vessel shard besides the vessels it holds: those
    changed since they were last written to keyed state (a cleared one is no longer held), and
    whether every vessel of the shard in keyed state is held in Python (then a vessel not held is
    a new one, and keyed state is not asked)."""

    __slots__ = ("complete", "dirty")

    def __init__(self) -> None:
        self.dirty: set[int] = set()
        self.complete = True


class ShardVessels:
    """The dedup operator's vessels: Flink keyed state, keyed by vessel shard (map state MMSI ->
    vessel under the shard's key), with a bounded write-behind cache of them as Python objects.

    Keyed state is the truth for checkpoints, restores and rescaling. A vessel's shard is its
    MMSI mod ``shards`` (the job's maximum parallelism), and a shard's key is in the key group of
    its number (:func:`shard_keys`). A batch of reports comes under one key and may hold vessels
    of every shard of the subtask (``ais.flink.KeyedBatches``). A shard is first read when its
    first marker arrives (an empty batch under the shard's own key, which the batcher sends for
    every shard before anything else): its vessels' timers are registered, and its vessels are
    held in Python while the cache has room. The Python copy takes every read and write, and the
    vessels that changed are written back to keyed state when another marker for the shard
    arrives (one for every shard before every checkpoint barrier; with aligned checkpoints the
    marker comes after everything before the barrier on each channel). Only this instance writes
    its shards, and a restore starts a new instance with an empty copy, so the copy never
    disagrees with the state it was loaded from.

    The cache holds at most ``cache_limit`` vessels after each call (0: every vessel, for the
    operator's life). Past it, the vessels used longest ago are dropped from Python at the end of
    the call, the changed ones written to keyed state first, under their shard's key
    (``switch``, :class:`ais_pipeline.jvm.state.KeySwitch`); a vessel not held is read from keyed state, under
    its shard's key, before the call that needs it (:meth:`prefetch`).

    A vessel's timer is kept in one map of this instance, time -> vessels due (all of its shards
    are read here), and registered in Flink under the key current when the vessel asks for it
    (one Flink timer per key and time). The first Flink timer of a watermark's advance to fire
    takes every vessel due up to the watermark, in time order (:meth:`due_until`), and fires them
    vessel by vessel (:meth:`fire`): so a vessel's timers are taken in their order whatever keys
    they were registered under (a shard's load
    registers its vessels' timers again under the shard's own key, beside those restored under
    the batches' keys, which may now be on another subtask and then find nothing due).
    """

    def __init__(
        self,
        ctx: RuntimeContext,
        new_track: Callable[[], VesselTracks],
        new_gaps: Callable[[], VesselGaps],
        shards: int,
        cache_limit: int = 0,
        switch: KeySwitch | None = None,
    ) -> None:
        self._state = ctx.get_map_state(MapStateDescriptor(VESSELS_STATE, Types.LONG(), Types.STRING()))
        self._new_track = new_track
        self._new_gaps = new_gaps
        self._shards = shards
        self._keys = shard_keys(shards)
        self._number_of_key = {key: n for n, key in enumerate(self._keys)}
        self._switch = switch
        self.cache_limit = cache_limit if switch is not None else 0  # bounded only where keys can be switched
        self.shards: dict[int, _Shard] = {}  # by shard number: those read
        self.cache: OrderedDict[int, _VesselEntry] = OrderedDict()  # the vessels held, used longest ago first
        self.incomplete = 0  # the shards with vessels in keyed state only
        self._absent: set[int] = set()  # looked up in keyed state this call, and not there
        self.due: dict[int, set[int]] = {}  # timer -> the vessels due then
        self.times: list[int] = []  # the times of ``due``, a heap (with times already taken)
        self.registered: dict[int, set[int]] = {}  # Flink key -> the times registered under it
        self.key = 0
        self.timer_service: Any = None
        self._firing: tuple[int, int, list[int]] | None = None  # in fire(): vessel, watermark, its times due
        self.vessels_held = 0  # the vessels of all shards read, in Python or in keyed state
        self.watching = 0  # of them, those of which only what their gap needs is kept

    def bind(self, key: int, timer_service: Any) -> None:
        """The operator's current key (Flink has set it) and timer service, for this call."""
        self.key = key
        self.timer_service = timer_service
        self._absent.clear()

    def marker(self) -> None:
        """A marker for the current key's shard: read the shard the first time, else write the
        vessels of it that changed to keyed state."""
        number = self._number_of_key.get(self.key)
        if number is None:
            raise ValueError(f"a marker under key {self.key}, which is no vessel shard's key ({self._shards} shards)")
        shard = self.shards.get(number)
        if shard is None:
            self.shards[number] = shard = _Shard()
            self._load(shard)
        elif shard.dirty:
            self._write(shard)

    def _write(self, shard: _Shard) -> None:
        """The shard's changed vessels into keyed state (under the shard's key, current)."""
        cache = self.cache
        for mmsi in shard.dirty:
            entry = cache.get(mmsi)
            if entry is None:
                self._state.remove(mmsi)
            else:
                self._state.put(mmsi, entry.to_text())
        shard.dirty.clear()

    def _load(self, shard: _Shard) -> None:
        limit = self.cache_limit
        for mmsi, row in self._state.items():
            self.vessels_held += 1
            if not limit or len(self.cache) < limit:
                entry = _VesselEntry.from_text(row, self._new_track, self._new_gaps)
                self.cache[mmsi] = entry
                meta = entry.meta
                assert meta is not None
            else:  # only what its timers need: the vessel stays in keyed state
                meta = _VesselEntry.meta_of(row)
                if shard.complete:
                    shard.complete = False
                    self.incomplete += 1
            if meta.gap_watch:
                self.watching += 1
            for at in (meta.cleanup_at, meta.hours_at, meta.gaps_at, meta.ports_at):
                if at != TIME_UNKNOWN:
                    self.timer(at, mmsi)

    def _shard(self, mmsi: int) -> _Shard:
        shard = self.shards.get(mmsi % self._shards)
        if shard is None:
            raise ValueError(
                f"vessel {mmsi}: its shard {mmsi % self._shards} was not loaded (no marker came first): the"
                " report batcher sends this subtask another's shards, so the dedup operator's parallelism is not"
                " the one the job was built with (rescaling a running job in place is not supported: stop it"
                " with a savepoint and submit it again at the new parallelism)"
            )
        return shard

    def prefetch(self, mmsis: Iterable[int]) -> None:
        """The vessels of ``mmsis`` that are in keyed state only, read into the cache: one switch
        to each shard's key and back."""
        if not self.incomplete:
            return
        cache, absent = self.cache, self._absent
        wanted: dict[int, list[int]] = {}
        for mmsi in mmsis:
            if mmsi in cache or mmsi in absent:
                continue
            number = mmsi % self._shards
            shard = self._shard(mmsi)
            if shard.complete or mmsi in shard.dirty:  # new, or cleared since the shard was written
                continue
            absent.add(mmsi)
            wanted.setdefault(number, []).append(mmsi)
        for vessels in self._under_shard_keys(wanted):
            for mmsi in vessels:
                row = self._state.get(mmsi)
                if row is not None:
                    cache[mmsi] = _VesselEntry.from_text(row, self._new_track, self._new_gaps)
                    absent.discard(mmsi)

    def evict(self) -> None:
        """At the end of a call: past the cache's limit, the vessels used longest ago leave
        Python (down to nine tenths of it), the changed ones written to keyed state first."""
        limit, cache = self.cache_limit, self.cache
        if not limit or len(cache) <= limit:
            return
        keep = limit - limit // 10
        writes: dict[int, list[tuple[int, _VesselEntry]]] = {}
        while len(cache) > keep:
            mmsi, entry = cache.popitem(last=False)
            number = mmsi % self._shards
            shard = self.shards[number]
            if shard.complete:
                shard.complete = False
                self.incomplete += 1
            if mmsi in shard.dirty:
                shard.dirty.discard(mmsi)
                writes.setdefault(number, []).append((mmsi, entry))
            elif entry.meta is None:  # made for a report that changed nothing: never in keyed state
                self.vessels_held -= 1
        for entries in self._under_shard_keys(writes):
            for mmsi, entry in entries:
                self._state.put(mmsi, entry.to_text())

    def _under_shard_keys(self, by_shard: dict[int, list[T]]) -> Iterator[list[T]]:
        """Each shard's items, with the keyed state backend under that shard's key while the
        caller handles them; the call's own key again afterwards."""
        if not by_shard:
            return
        switch = self._switch
        assert switch is not None
        try:
            for number, items in by_shard.items():
                switch.to(self._keys[number])
                yield items
        finally:
            switch.back()

    def vessel(self, mmsi: int) -> _VesselView:
        cache = self.cache
        entry = cache.get(mmsi)
        if entry is None:
            shard = self._shard(mmsi)
            if not shard.complete and mmsi not in shard.dirty and mmsi not in self._absent:
                self.prefetch((mmsi,))
                entry = cache.get(mmsi)
            if entry is None:
                entry = cache[mmsi] = _VesselEntry()
                self.vessels_held += 1
        else:
            shard = self.shards[mmsi % self._shards]
            if self.cache_limit:
                cache.move_to_end(mmsi)
        return _VesselView(self, shard, mmsi, entry)

    def holds(self, mmsi: int) -> bool:
        """Whether the vessel is held (in keyed state only: after :meth:`prefetch` of it)."""
        return mmsi in self.cache

    def timer(self, ts: int, mmsi: int) -> None:
        """An event-time timer at ``ts`` for a vessel; Flink gets one per key and time, under the
        current key. One the vessel :meth:`fire` is firing asks for up to the watermark is taken
        in the same firing."""
        firing = self._firing
        if firing is not None and firing[0] == mmsi and ts <= firing[1]:
            heapq.heappush(firing[2], ts)
            return
        due = self.due.get(ts)
        if due is None:
            due = self.due[ts] = set()
            heapq.heappush(self.times, ts)
        due.add(mmsi)
        registered = self.registered.get(self.key)
        if registered is None:
            registered = self.registered[self.key] = set()
        if ts not in registered:
            registered.add(ts)
            self.timer_service.register_event_time_timer(ts)

    def due_until(self, fired: int, watermark: int) -> Iterator[tuple[int, set[int]]]:
        """When a Flink timer of the current key fires (at ``fired``): every vessel due up to the
        watermark, earliest first, including those due at times registered meanwhile (Flink fires
        those next in this watermark's advance). The Flink timers of the current key at those
        times are deleted; those under other keys fire later and find nothing due."""
        registered = self.registered.get(self.key, set())
        registered.discard(fired)
        times = self.times
        while times and times[0] <= watermark:
            ts = heapq.heappop(times)
            due = self.due.pop(ts, None)
            if due is None:
                continue
            if ts in registered:
                registered.discard(ts)
                self.timer_service.delete_event_time_timer(ts)
            yield ts, due

    def fire(self, fired: int, watermark: int, on_timer: Callable[[_VesselView, int, int], None]) -> Iterator[None]:
        """When a Flink timer of the current key fires (at ``fired``): ``on_timer(vessel, time,
        mmsi)`` for every vessel's timers due up to the watermark (:meth:`due_until`), vessel by
        vessel, each vessel's in their order (with those it asks for meanwhile up to the
        watermark), the vessels in the order of their first timer due. A vessel's timers depend on
        that vessel alone, so each sees what :meth:`due_until`'s order gives it; but a vessel with
        several timers due (all of them, at the input's end) is read from keyed state once, not
        once per timer. The vessels are read in chunks of half the cache (one switch to each
        shard's key per chunk), and the cache is trimmed after each chunk; it yields after each
        chunk, so that the caller emits what the chunk released before the next one."""
        by_vessel: dict[int, list[int]] = {}
        for ts, due in self.due_until(fired, watermark):
            for mmsi in sorted(due):
                times = by_vessel.get(mmsi)
                if times is None:
                    by_vessel[mmsi] = [ts]
                else:
                    times.append(ts)  # ascending: a heap
        vessels = list(by_vessel)
        step = max(1, self.cache_limit // 2) if self.cache_limit else max(1, len(vessels))
        cache = self.cache
        try:
            for start in range(0, len(vessels), step):
                chunk = vessels[start : start + step]
                self.prefetch(chunk)
                for mmsi in chunk:
                    times = by_vessel[mmsi]
                    self._firing = (mmsi, watermark, times)
                    last = None
                    while times and mmsi in cache:  # a vessel cleared meanwhile has no timers left
                        ts = heapq.heappop(times)
                        if ts != last:
                            last = ts
                            on_timer(self.vessel(mmsi), ts, mmsi)
                self._firing = None
                self.evict()
                yield
        finally:
            self._firing = None

    def keys_held(self) -> int:
        """The vessels held with their dedup state (not those kept only for their gap)."""
        return self.vessels_held - self.watching

    def gap_keys_held(self) -> int:
        """The vessels silent past the retention, kept only for the gap their return would close."""
        return self.watching

    def cached(self) -> int:
        """The vessels held as Python objects."""
        return len(self.cache)


class _VesselView:
    """:class:`ais_pipeline.rules.dedup.VesselStore` of one vessel of a shard."""

    __slots__ = ("_entry", "_mmsi", "_shard", "_store")

    def __init__(self, store: ShardVessels, shard: _Shard, mmsi: int, entry: _VesselEntry) -> None:
        self._store = store
        self._shard = shard
        self._mmsi = mmsi
        self._entry = entry

    def _changed(self) -> None:
        self._shard.dirty.add(self._mmsi)

    def meta(self) -> VesselMeta | None:
        return self._entry.meta

    def set_meta(self, meta: VesselMeta) -> None:
        self._entry.meta = meta  # changed in place by the rules: always written back
        self._changed()

    def static(self, kind: str) -> tuple[str, int] | None:
        return self._entry.static.get(kind)

    def set_static(self, kind: str, content: str, ts: int) -> None:
        self._entry.static[kind] = (content, ts)
        self._changed()

    def track(self) -> VesselTracks | None:
        return self._entry.track

    def set_track(self, track: VesselTracks | None) -> None:
        self._entry.track = track  # changed in place by the rules: always written back
        self._changed()

    def gaps(self) -> VesselGaps | None:
        return self._entry.gaps

    def set_gaps(self, gaps: VesselGaps | None) -> None:
        self._entry.gaps = gaps  # changed in place by the rules: always written back
        self._changed()

    def transmitters(self) -> VesselTransmitters | None:
        return self._entry.ports

    def set_transmitters(self, transmitters: VesselTransmitters | None) -> None:
        self._entry.ports = transmitters  # changed in place by the rules: always written back
        self._changed()

    def clear(self) -> None:
        store = self._store
        entry = store.cache.pop(self._mmsi, None)
        if entry is not None:
            store.vessels_held -= 1
            if entry.watched:
                store.watching -= 1
        self._entry = _VesselEntry()
        self._changed()

    def clear_but_gaps(self) -> None:
        entry = self._entry
        entry.static.clear()
        entry.track = None
        if not entry.watched:
            entry.watched = True
            self._store.watching += 1
        self._changed()

    def resume(self) -> None:
        if self._entry.watched:
            self._entry.watched = False
            self._store.watching -= 1

    def register_timer(self, ts: int) -> None:
        self._store.timer(ts, self._mmsi)
