"""The state objects of the ``hashmap`` backend, and their copy-on-write (guarded) mode.

A state object holds its table (a dict ``key → stored value``) and its backend, and reads
``backend.current_key`` on every call: ``set_current_key`` + ``value()`` + ``update()`` costs a
few dict operations. ``HeapValueState``, ``HeapListState``, ``HeapMapState``,
``HeapReducingState`` and ``HeapAggregatingState`` are the fast classes.

Guarded mode (the copy-on-write of heap.py's snapshot design note): while a snapshot that
shares a table's mutable values is in flight, each state object of that table has the class
``GUARDED[fast class]``, a subclass whose methods first give the current key's entry a private
deep copy (once per key per snapshot, remembered in ``_copied``). The backend switches the
class in and out (``__class__``), so without a snapshot in flight the hot path pays nothing.
``all_immutable`` / ``own_value`` decide, mostly in C, whether a value can be shared with a
snapshot as it is: an immutable scalar, or a tuple of them.

Threads: state objects and their tables belong to the task thread; the backend switches their
class under its guard lock, from the task thread or the snapshot thread that releases.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Collection
from itertools import chain
from typing import Any, Protocol

from flintlock.common.state import (
    AggregatingState,
    ListState,
    MapState,
    ReducingState,
    StateKind,
    ValueState,
)
from flintlock.runtime.state import pickles as state_pickles


class KeyHolder(Protocol):
    """What a state object reads of its backend: the key of the record being processed."""

    current_key: Any

_MISSING: Any = object()
_IMMUTABLE = frozenset({int, float, complex, str, bytes, bool, type(None), frozenset, range})


def _private_copy(value: Any) -> Any:
    return pickle.loads(state_pickles.dumps(value))


class HeapState:
    __slots__ = ("_backend", "_copied", "_table")

    def __init__(self, backend: KeyHolder, table: dict[Any, Any]) -> None:
        self._backend = backend
        self._table = table
        self._copied: set[Any] = set()

    def clear(self) -> None:
        self._table.pop(self._backend.current_key, None)


class HeapValueState(HeapState, ValueState[Any]):
    __slots__ = ()

    def value(self) -> Any:
        return self._table.get(self._backend.current_key)

    def update(self, value: Any) -> None:
        if value is None:
            self._table.pop(self._backend.current_key, None)
        else:
            self._table[self._backend.current_key] = value


class HeapListState(HeapState, ListState[Any]):
    """``get()`` returns the stored list itself (like Flink's heap backend): do not modify it."""

    __slots__ = ()

    def get(self) -> list[Any]:
        return self._table.get(self._backend.current_key) or []

    def add(self, value: Any) -> None:
        if value is None:
            raise ValueError("cannot add None to a list state")
        stored = self._table.get(self._backend.current_key)
        if stored is None:
            self._table[self._backend.current_key] = [value]
        else:
            stored.append(value)

    def add_all(self, values: list[Any]) -> None:
        values = list(values or ())
        if any(value is None for value in values):
            raise ValueError("cannot add None to a list state")
        if values:
            self._table.setdefault(self._backend.current_key, []).extend(values)

    def update(self, values: list[Any]) -> None:
        values = list(values or ())
        if any(value is None for value in values):
            raise ValueError("cannot add None to a list state")
        if values:
            self._table[self._backend.current_key] = values
        else:
            self._table.pop(self._backend.current_key, None)


class HeapMapState(HeapState, MapState[Any, Any]):
    __slots__ = ()

    def _map(self) -> dict[Any, Any]:
        return self._table.get(self._backend.current_key) or {}

    def get(self, key: Any) -> Any:
        return self._map().get(key)

    def put(self, key: Any, value: Any) -> None:
        stored = self._table.get(self._backend.current_key)
        if stored is None:
            self._table[self._backend.current_key] = {key: value}
        else:
            stored[key] = value

    def put_all(self, dict_value: dict[Any, Any]) -> None:
        if dict_value:
            self._table.setdefault(self._backend.current_key, {}).update(dict_value)

    def remove(self, key: Any) -> None:
        stored = self._table.get(self._backend.current_key)
        if stored is not None:
            stored.pop(key, None)
            if not stored:
                del self._table[self._backend.current_key]

    def contains(self, key: Any) -> bool:
        return key in self._map()

    def items(self) -> list[tuple[Any, Any]]:
        return list(self._map().items())

    def keys(self) -> list[Any]:
        return list(self._map())

    def values(self) -> list[Any]:
        return list(self._map().values())

    def is_empty(self) -> bool:
        return not self._map()


class HeapReducingState(HeapState, ReducingState[Any]):
    __slots__ = ("_reduce",)

    def __init__(
        self, backend: KeyHolder, table: dict[Any, Any],
        reduce: Callable[[Any, Any], Any],
    ) -> None:
        super().__init__(backend, table)
        self._reduce = reduce

    def get(self) -> Any:
        return self._table.get(self._backend.current_key)

    def add(self, value: Any) -> None:
        key = self._backend.current_key
        current = self._table.get(key, _MISSING)
        self._table[key] = value if current is _MISSING else self._reduce(current, value)


class HeapAggregatingState(HeapState, AggregatingState[Any, Any]):
    __slots__ = ("_function",)

    def __init__(
        self, backend: KeyHolder, table: dict[Any, Any], function: Any
    ) -> None:
        super().__init__(backend, table)
        self._function = function

    def get(self) -> Any:
        accumulator = self._table.get(self._backend.current_key, _MISSING)
        return None if accumulator is _MISSING else self._function.get_result(accumulator)

    def add(self, value: Any) -> None:
        key = self._backend.current_key
        accumulator = self._table.get(key, _MISSING)
        if accumulator is _MISSING:
            accumulator = self._function.create_accumulator()
        self._table[key] = self._function.add(value, accumulator)


def _own_current_entry(state: HeapState) -> None:
    """Guarded mode: give the current key's entry a private copy once per snapshot."""
    key = state._backend.current_key
    if key not in state._copied:
        state._copied.add(key)
        stored = state._table.get(key, _MISSING)
        if stored is not _MISSING and not _is_immutable(stored):
            state._table[key] = _private_copy(stored)


def own_value(value: Any) -> Any:
    """``value`` itself if nothing reachable from it can change, else a private deep copy."""
    return value if _is_immutable(value) else _private_copy(value)


def all_immutable(values: Collection[Any]) -> bool:
    """Every value is ``_is_immutable`` — decided in C: the set of the values' types, and for
    a table of tuples the types of their items (a table of counts or of key/count tuples)."""
    kinds = set(map(type, values))
    if kinds <= _IMMUTABLE:
        return True
    # building the set of item types is faster than issuperset over the iterator (measured)
    return kinds == {tuple} and set(map(type, chain.from_iterable(values))) <= _IMMUTABLE


def _is_immutable(value: Any) -> bool:
    """Nothing reachable from ``value`` can change (so a snapshot may share it): an immutable
    scalar, or a tuple of them (the common shape of a keyed reduce's accumulator)."""
    kind = type(value)
    if kind in _IMMUTABLE:
        return True
    return kind is tuple and _IMMUTABLE.issuperset(map(type, value))  # in C: no temporary set


def _guarded_class(cls: type[HeapState], methods: tuple[str, ...]) -> type[HeapState]:
    namespace: dict[str, Any] = {"__slots__": ()}
    for name in methods:
        base = getattr(cls, name)

        def guarded(self: HeapState, *args: Any, _base: Any = base) -> Any:
            _own_current_entry(self)
            return _base(self, *args)

        guarded.__name__ = name
        namespace[name] = guarded
    return type(f"Guarded{cls.__name__}", (cls,), namespace)


STATE_CLASSES: dict[StateKind, type[HeapState]] = {
    StateKind.VALUE: HeapValueState,
    StateKind.LIST: HeapListState,
    StateKind.MAP: HeapMapState,
    StateKind.REDUCING: HeapReducingState,
    StateKind.AGGREGATING: HeapAggregatingState,
}
_METHODS: dict[StateKind, tuple[str, ...]] = {
    StateKind.VALUE: ("value", "update", "clear"),
    StateKind.LIST: ("get", "add", "add_all", "update", "clear"),
    StateKind.MAP: (
        "get", "put", "put_all", "remove", "contains", "items", "keys", "values", "is_empty",
        "clear",
    ),
    StateKind.REDUCING: ("get", "add", "clear"),
    StateKind.AGGREGATING: ("get", "add", "clear"),
}
GUARDED: dict[type[HeapState], type[HeapState]] = {
    cls: _guarded_class(cls, _METHODS[kind]) for kind, cls in STATE_CLASSES.items()
}
UNGUARDED = {guarded: fast for fast, guarded in GUARDED.items()}
