"""PyFlink's ``ListView`` and ``MapView``: collections an aggregate function's accumulator may
hold.

A view made by ``create_accumulator`` is a plain in-memory list or dict. The bundled Python
group aggregation (``flintlock.datastream.changelog.bundled_agg``) binds each view field of an
accumulator to a keyed ``ListState`` / ``MapState`` of its own, as PyFlink keeps a state-backed
view per key and view: the accumulator is stored without its views, and every read and write
of a bound view goes through to its state, so a large view is never read whole (unless the
function iterates it). The aggregation finds the views by their ``_flintlock_view_kind``
("list" / "map") and binds them with ``_flintlock_bind(state)`` (it cannot import this
module: ``flintlock.datastream`` never imports ``flintlock.table``). A bound view is only valid
while the state's current key is the one it was read for.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Generic, TypeVar

__all__ = ["DataView", "ListView", "MapView"]

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")


class DataView:
    _flintlock_view_kind = ""

    def clear(self) -> None:
        raise NotImplementedError

    def _flintlock_bind(self, state: Any) -> None:
        raise NotImplementedError


class ListView(DataView, Generic[T]):
    _flintlock_view_kind = "list"

    def __init__(self) -> None:
        self._list: list[T] = []
        self._state: Any = None

    def _flintlock_bind(self, state: Any) -> None:
        """Reads and writes go to ``state`` (a keyed ListState) from now on."""
        self._state = state
        self._list = []

    def get(self) -> Iterable[T]:
        if self._state is not None:
            return list(self._state.get() or ())
        return self._list

    def add(self, value: T) -> None:
        if self._state is not None:
            self._state.add(value)
        else:
            self._list.append(value)

    def add_all(self, values: Iterable[T]) -> None:
        if self._state is not None:
            self._state.add_all(list(values))
        else:
            self._list.extend(values)

    def clear(self) -> None:
        if self._state is not None:
            self._state.clear()
        else:
            self._list = []

    def __iter__(self) -> Iterator[T]:
        return iter(self.get())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ListView) and list(self.get()) == list(other.get())

    def __hash__(self) -> int:
        return hash(tuple(self.get()))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as an unbound view of the current contents."""
        return (_list_view_of, (list(self.get()),))


class MapView(DataView, Generic[K, V]):
    _flintlock_view_kind = "map"

    def __init__(self) -> None:
        self._map: dict[K, V] = {}
        self._state: Any = None

    def _flintlock_bind(self, state: Any) -> None:
        """Reads and writes go to ``state`` (a keyed MapState) from now on."""
        self._state = state
        self._map = {}

    def get(self, key: K) -> V | None:
        if self._state is not None:
            value: V | None = self._state.get(key)
            return value
        return self._map.get(key)

    def put(self, key: K, value: V) -> None:
        if self._state is not None:
            self._state.put(key, value)
        else:
            self._map[key] = value

    def put_all(self, mapping: dict[K, V]) -> None:
        if self._state is not None:
            self._state.put_all(dict(mapping))
        else:
            self._map.update(mapping)

    def remove(self, key: K) -> None:
        if self._state is not None:
            self._state.remove(key)
        else:
            self._map.pop(key, None)

    def contains(self, key: K) -> bool:
        if self._state is not None:
            return bool(self._state.contains(key))
        return key in self._map

    def items(self) -> Iterable[tuple[K, V]]:
        return self._state.items() if self._state is not None else self._map.items()

    def keys(self) -> Iterable[K]:
        return self._state.keys() if self._state is not None else self._map.keys()

    def values(self) -> Iterable[V]:
        return self._state.values() if self._state is not None else self._map.values()

    def is_empty(self) -> bool:
        if self._state is not None:
            return bool(self._state.is_empty())
        return not self._map

    def clear(self) -> None:
        if self._state is not None:
            self._state.clear()
        else:
            self._map = {}

    def __getitem__(self, key: K) -> V:
        if self._state is None:
            return self._map[key]
        value = self._state.get(key)
        if value is None and not self._state.contains(key):
            raise KeyError(key)
        result: V = value
        return result

    def __setitem__(self, key: K, value: V) -> None:
        self.put(key, value)

    def __delitem__(self, key: K) -> None:
        if not self.contains(key):
            raise KeyError(key)
        self.remove(key)

    def __contains__(self, key: object) -> bool:
        return self.contains(key)  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[K]:
        return iter(self.keys())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MapView) and dict(self.items()) == dict(other.items())

    def __hash__(self) -> int:
        return hash(tuple(sorted(map(repr, self.items()))))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as an unbound view of the current contents."""
        return (_map_view_of, (dict(self.items()),))


def _list_view_of(values: list[Any]) -> ListView[Any]:
    view: ListView[Any] = ListView()
    view._list = values
    return view


def _map_view_of(mapping: dict[Any, Any]) -> MapView[Any, Any]:
    view: MapView[Any, Any] = MapView()
    view._map = mapping
    return view
