"""State scoped to a key *and a window*, on top of the keyed state backend.

The state backends scope state by key only (no namespaces), so a window operator keeps each
piece of per-window state in one keyed map state whose map key is the window: window contents,
trigger state (``TriggerContext.get_partitioned_state``) and the per-window state of a
``ProcessWindowFunction`` (``context.window_state()``). Being keyed state, all of it is
snapshotted, restored and rescaled with the key groups.

``WindowStates`` hands out facades with PyFlink's state interfaces for one (descriptor,
window) pair; values are replaced, never changed in place (a list or map grows into a new
object), so a snapshot in flight never sees a later change. ``merge`` folds the states of
merged windows (sessions) into the surviving one, as Flink's ``mergePartitionedState``.

Belongs to the task thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from flintlock.common.errors import FlintlockError
from flintlock.common.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueStateDescriptor,
)

PREFIX = "_flintlock_window_state."


class UnmergeableStateError(FlintlockError):
    """Merging windows asked to merge a state kind that cannot be merged (value or map)."""


class WindowStates:
    """Window-scoped states of one operator (see the module docstring)."""

    def __init__(self, backend: Any) -> None:
        self._backend = backend
        self._maps: dict[str, tuple[StateDescriptor, Any]] = {}

    def _map(self, descriptor: StateDescriptor) -> Any:
        known = self._maps.get(descriptor.name)
        if known is None:
            inner = MapStateDescriptor(PREFIX + descriptor.name, None, None)
            known = self._maps[descriptor.name] = (
                descriptor, self._backend.get_partitioned_state(inner))
        return known[1]

    def get(self, descriptor: StateDescriptor, window: Any) -> Any:
        by_window = self._map(descriptor)
        if isinstance(descriptor, ValueStateDescriptor):
            return _Value(by_window, window)
        if isinstance(descriptor, ListStateDescriptor):
            return _List(by_window, window)
        if isinstance(descriptor, ReducingStateDescriptor):
            return _Reducing(by_window, window, descriptor.reduce)
        if isinstance(descriptor, AggregatingStateDescriptor):
            return _Aggregating(by_window, window, descriptor.agg_function)
        if isinstance(descriptor, MapStateDescriptor):
            return _Map(by_window, window)
        raise TypeError(f"no window-scoped state for {descriptor!r}")

    def merge(self, descriptor: StateDescriptor, sources: Iterable[Any], target: Any) -> None:
        """Folds the state of ``sources`` (windows) into ``target``'s, for the current key."""
        by_window = self._map(descriptor)
        values = [by_window.get(w) for w in sources if w != target and by_window.contains(w)]
        if not values:
            return
        if isinstance(descriptor, ListStateDescriptor):
            merged: Any = tuple(by_window.get(target) or ())
            for value in values:
                merged += tuple(value)
        elif isinstance(descriptor, ReducingStateDescriptor):
            merged = by_window.get(target)
            for value in values:
                merged = value if merged is None else descriptor.reduce(merged, value)
        elif isinstance(descriptor, AggregatingStateDescriptor):
            merged = by_window.get(target)
            for value in values:
                merged = value if merged is None else descriptor.agg_function.merge(merged, value)
        else:
            raise UnmergeableStateError(f"state {descriptor.name!r} of kind "
                                        f"{type(descriptor).__name__} cannot be merged")
        for window in sources:
            if window != target:
                by_window.remove(window)
        by_window.put(target, merged)

    def clear_window(self, window: Any) -> None:
        """Drops every window-scoped state of ``window`` for the current key."""
        for _, by_window in self._maps.values():
            by_window.remove(window)


class _Scoped:
    __slots__ = ("_by_window", "_window")

    def __init__(self, by_window: Any, window: Any) -> None:
        self._by_window = by_window
        self._window = window

    def _get(self) -> Any:
        return self._by_window.get(self._window)

    def _set(self, value: Any) -> None:
        if value is None:
            self._by_window.remove(self._window)
        else:
            self._by_window.put(self._window, value)

    def clear(self) -> None:
        self._by_window.remove(self._window)


class _Value(_Scoped):
    __slots__ = ()

    def value(self) -> Any:
        return self._get()

    def update(self, value: Any) -> None:
        self._set(value)


class _List(_Scoped):
    __slots__ = ()

    def get(self) -> list[Any]:
        return list(self._get() or ())

    def add(self, value: Any) -> None:
        self._set((*(self._get() or ()), value))

    def add_all(self, values: Iterable[Any]) -> None:
        self._set((*(self._get() or ()), *values))

    def update(self, values: Iterable[Any]) -> None:
        self._set(tuple(values) or None)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.get())


class _Reducing(_Scoped):
    __slots__ = ("_reduce",)

    def __init__(self, by_window: Any, window: Any, reduce: Any) -> None:
        super().__init__(by_window, window)
        self._reduce = reduce

    def get(self) -> Any:
        return self._get()

    def add(self, value: Any) -> None:
        current = self._get()
        self._set(value if current is None else self._reduce(current, value))


class _Aggregating(_Scoped):
    __slots__ = ("_function",)

    def __init__(self, by_window: Any, window: Any, function: Any) -> None:
        super().__init__(by_window, window)
        self._function = function

    def get(self) -> Any:
        accumulator = self._get()
        return None if accumulator is None else self._function.get_result(accumulator)

    def add(self, value: Any) -> None:
        accumulator = self._get()
        if accumulator is None:
            accumulator = self._function.create_accumulator()
        self._set(self._function.add(value, accumulator))


class _Map(_Scoped):
    __slots__ = ()

    def _dict(self) -> dict[Any, Any]:
        return dict(self._get() or {})

    def get(self, key: Any) -> Any:
        return self._dict().get(key)

    def put(self, key: Any, value: Any) -> None:
        self._set({**self._dict(), key: value})

    def put_all(self, entries: dict[Any, Any]) -> None:
        self._set({**self._dict(), **entries})

    def remove(self, key: Any) -> None:
        entries = self._dict()
        entries.pop(key, None)
        self._set(entries or None)

    def contains(self, key: Any) -> bool:
        return key in self._dict()

    def items(self) -> Iterable[tuple[Any, Any]]:
        return list(self._dict().items())

    def keys(self) -> Iterable[Any]:
        return list(self._dict())

    def values(self) -> Iterable[Any]:
        return list(self._dict().values())

    def is_empty(self) -> bool:
        return not self._dict()
