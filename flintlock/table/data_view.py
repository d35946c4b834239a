"""PyFlink's ``ListView`` and ``MapView``: collections an aggregate function's accumulator may
hold. flintlock keeps the whole accumulator in keyed state, so a view is a plain in-memory
list or dict that travels with it (checkpointed, restored and rescaled like any accumulator)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

__all__ = ["DataView", "ListView", "MapView"]

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")


class DataView:
    def clear(self) -> None:
        raise NotImplementedError


class ListView(DataView, Generic[T]):
    def __init__(self) -> None:
        self._list: list[T] = []

    def get(self) -> Iterable[T]:
        return self._list

    def add(self, value: T) -> None:
        self._list.append(value)

    def add_all(self, values: Iterable[T]) -> None:
        self._list.extend(values)

    def clear(self) -> None:
        self._list = []

    def __iter__(self) -> Iterator[T]:
        return iter(self._list)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ListView) and self._list == other._list

    def __hash__(self) -> int:
        return hash(tuple(self._list))


class MapView(DataView, Generic[K, V]):
    def __init__(self) -> None:
        self._map: dict[K, V] = {}

    def get(self, key: K) -> V | None:
        return self._map.get(key)

    def put(self, key: K, value: V) -> None:
        self._map[key] = value

    def put_all(self, mapping: dict[K, V]) -> None:
        self._map.update(mapping)

    def remove(self, key: K) -> None:
        self._map.pop(key, None)

    def contains(self, key: K) -> bool:
        return key in self._map

    def items(self) -> Iterable[tuple[K, V]]:
        return self._map.items()

    def keys(self) -> Iterable[K]:
        return self._map.keys()

    def values(self) -> Iterable[V]:
        return self._map.values()

    def is_empty(self) -> bool:
        return not self._map

    def clear(self) -> None:
        self._map = {}

    def __getitem__(self, key: K) -> V:
        return self._map[key]

    def __setitem__(self, key: K, value: V) -> None:
        self._map[key] = value

    def __delitem__(self, key: K) -> None:
        del self._map[key]

    def __contains__(self, key: object) -> bool:
        return key in self._map

    def __iter__(self) -> Iterator[K]:
        return iter(self._map)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MapView) and self._map == other._map

    def __hash__(self) -> int:
        return hash(tuple(sorted(map(repr, self._map.items()))))
