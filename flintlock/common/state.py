"""User-facing state: PyFlink's state descriptors, TTL configuration and state interfaces.

Pure data, no I/O. A descriptor names a piece of keyed (or operator) state and says what kind
it is; the runtime (``flintlock.runtime.state``) turns a descriptor into a state object bound
to the current key. Names, constructor signatures and methods follow
``pyflink.datastream.state`` so that PyFlink jobs run unchanged; the DataStream API re-exports
everything here from ``flintlock.datastream.state``.

Type infos are opaque: flintlock keeps Python objects as they are and only remembers the type
info for the user's benefit. A reduce function is anything with ``.reduce(a, b)`` or a plain
callable ``f(a, b)``; an aggregate function is duck typed on PyFlink's ``AggregateFunction``
(``create_accumulator``, ``add(value, acc)``, ``get_result(acc)``, ``merge(a, b)``).

Descriptors are built on the user's thread and immutable once a job runs (``enable_time_to_live``
is called before). State objects belong to the task thread that created them.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

K = TypeVar("K")
V = TypeVar("V")
IN = TypeVar("IN")
OUT = TypeVar("OUT")


class StateKind(enum.Enum):
    """What a descriptor describes; the runtime keeps one state object per (name, kind)."""

    VALUE = "value"
    LIST = "list"
    MAP = "map"
    REDUCING = "reducing"
    AGGREGATING = "aggregating"


# ---------------------------------------------------------------------------------------------
# Time to live


class _HasMilliseconds(Protocol):
    def to_milliseconds(self) -> int: ...


def ttl_to_milliseconds(ttl: _HasMilliseconds | int | float) -> int:
    """A ``Time``/``Duration``-like object (``to_milliseconds()``) or plain milliseconds."""
    if isinstance(ttl, bool):
        raise TypeError("a boolean is not a time to live")
    millis = int(ttl) if isinstance(ttl, (int, float)) else int(ttl.to_milliseconds())
    if millis <= 0:
        raise ValueError(f"time to live must be positive, got {millis} ms")
    return millis


@dataclass(frozen=True, slots=True)
class StateTtlConfig:
    """When state expires and when its clock restarts (PyFlink's ``StateTtlConfig``).

    Build one with ``StateTtlConfig.new_builder(Time.seconds(1))...build()``. Time is processing
    time, read from the task's clock. ``cleanup_full_snapshot`` drops expired entries from
    snapshots; expired entries are otherwise removed when they are read.
    """

    ttl_ms: int
    update_type: StateTtlConfig.UpdateType
    state_visibility: StateTtlConfig.StateVisibility
    ttl_time_characteristic: StateTtlConfig.TtlTimeCharacteristic
    cleanup_full_snapshot: bool = False
    cleanup_in_background: bool = True

    class UpdateType(enum.Enum):
        Disabled = 0
        OnCreateAndWrite = 1
        OnReadAndWrite = 2

    class StateVisibility(enum.Enum):
        ReturnExpiredIfNotCleanedUp = 0
        NeverReturnExpired = 1

    class TtlTimeCharacteristic(enum.Enum):
        ProcessingTime = 0

    @staticmethod
    def new_builder(ttl: _HasMilliseconds | int) -> StateTtlConfig.Builder:
        return StateTtlConfig.Builder(ttl)

    def get_ttl_ms(self) -> int:
        return self.ttl_ms

    def get_ttl(self) -> Any:
        """The time to live as a ``Time`` (PyFlink's return type)."""
        from flintlock.common.time import Time

        return Time.milliseconds(self.ttl_ms)

    def get_update_type(self) -> StateTtlConfig.UpdateType:
        return self.update_type

    def get_state_visibility(self) -> StateTtlConfig.StateVisibility:
        return self.state_visibility

    def get_ttl_time_characteristic(self) -> StateTtlConfig.TtlTimeCharacteristic:
        return self.ttl_time_characteristic

    def is_enabled(self) -> bool:
        return self.update_type is not StateTtlConfig.UpdateType.Disabled

    class Builder:
        """PyFlink's builder; every setter returns the builder."""

        def __init__(self, ttl: _HasMilliseconds | int) -> None:
            self._ttl_ms = ttl_to_milliseconds(ttl)
            self._update = StateTtlConfig.UpdateType.OnCreateAndWrite
            self._visibility = StateTtlConfig.StateVisibility.NeverReturnExpired
            self._characteristic = StateTtlConfig.TtlTimeCharacteristic.ProcessingTime
            self._full_snapshot = False
            self._background = True

        def set_update_type(self, update_type: StateTtlConfig.UpdateType) -> StateTtlConfig.Builder:
            self._update = update_type
            return self

        def update_ttl_on_create_and_write(self) -> StateTtlConfig.Builder:
            return self.set_update_type(StateTtlConfig.UpdateType.OnCreateAndWrite)

        def update_ttl_on_read_and_write(self) -> StateTtlConfig.Builder:
            return self.set_update_type(StateTtlConfig.UpdateType.OnReadAndWrite)

        def set_state_visibility(
            self, visibility: StateTtlConfig.StateVisibility
        ) -> StateTtlConfig.Builder:
            self._visibility = visibility
            return self

        def return_expired_if_not_cleaned_up(self) -> StateTtlConfig.Builder:
            return self.set_state_visibility(
                StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp
            )

        def never_return_expired(self) -> StateTtlConfig.Builder:
            return self.set_state_visibility(StateTtlConfig.StateVisibility.NeverReturnExpired)

        def set_ttl_time_characteristic(
            self, characteristic: StateTtlConfig.TtlTimeCharacteristic
        ) -> StateTtlConfig.Builder:
            self._characteristic = characteristic
            return self

        def use_processing_time(self) -> StateTtlConfig.Builder:
            return self.set_ttl_time_characteristic(
                StateTtlConfig.TtlTimeCharacteristic.ProcessingTime
            )

        def set_ttl(self, ttl: _HasMilliseconds | int) -> StateTtlConfig.Builder:
            self._ttl_ms = ttl_to_milliseconds(ttl)
            return self

        def cleanup_full_snapshot(self) -> StateTtlConfig.Builder:
            self._full_snapshot = True
            return self

        def cleanup_incrementally(
            self, cleanup_size: int, run_cleanup_for_every_record: bool
        ) -> StateTtlConfig.Builder:
            """Accepted for compatibility; expired entries are removed when read."""
            return self

        def cleanup_in_rocksdb_compact_filter(
            self, query_time_after_num_entries: int, periodic_compaction_time: Any = None
        ) -> StateTtlConfig.Builder:
            """Accepted for compatibility; expired entries are removed when read."""
            return self

        def disable_cleanup_in_background(self) -> StateTtlConfig.Builder:
            self._background = False
            return self

        def build(self) -> StateTtlConfig:
            return StateTtlConfig(
                self._ttl_ms, self._update, self._visibility, self._characteristic,
                self._full_snapshot, self._background,
            )


# ---------------------------------------------------------------------------------------------
# Descriptors


class StateDescriptor(ABC):
    """Names a piece of state and its kind; equal names within one operator mean one state."""

    kind: StateKind

    def __init__(self, name: str, type_info: object = None) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"a state name must be a non-empty string, got {name!r}")
        self.name = name
        self.type_info = type_info
        self.ttl_config: StateTtlConfig | None = None

    def get_name(self) -> str:
        return self.name

    def get_type_info(self) -> object:
        return self.type_info

    def enable_time_to_live(self, ttl_config: StateTtlConfig) -> None:
        if not isinstance(ttl_config, StateTtlConfig):
            raise TypeError(f"expected a StateTtlConfig, got {type(ttl_config).__name__}")
        self.ttl_config = ttl_config if ttl_config.is_enabled() else None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class ValueStateDescriptor(StateDescriptor):
    kind = StateKind.VALUE

    def __init__(self, name: str, value_type_info: object = None) -> None:
        super().__init__(name, value_type_info)


class ListStateDescriptor(StateDescriptor):
    kind = StateKind.LIST

    def __init__(self, name: str, elem_type_info: object = None) -> None:
        super().__init__(name, elem_type_info)
        self.elem_type_info = elem_type_info


class MapStateDescriptor(StateDescriptor):
    kind = StateKind.MAP

    def __init__(self, name: str, key_type_info: object = None, value_type_info: object = None):
        super().__init__(name, (key_type_info, value_type_info))
        self.key_type_info = key_type_info
        self.value_type_info = value_type_info


def as_reduce_callable(reduce_function: Any) -> Callable[[Any, Any], Any]:
    """``reduce_function.reduce`` for a ReduceFunction-like object, else the callable itself."""
    method = getattr(reduce_function, "reduce", None)
    if callable(method):
        return method  # type: ignore[no-any-return]
    if callable(reduce_function):
        return reduce_function  # type: ignore[no-any-return]
    raise TypeError(
        f"a reduce function needs a reduce(a, b) method or must be callable, "
        f"got {type(reduce_function).__name__}"
    )


class ReducingStateDescriptor(StateDescriptor):
    kind = StateKind.REDUCING

    def __init__(self, name: str, reduce_function: Any, type_info: object = None) -> None:
        super().__init__(name, type_info)
        self.reduce_function = reduce_function
        self.reduce = as_reduce_callable(reduce_function)


_AGGREGATE_METHODS = ("create_accumulator", "add", "get_result", "merge")


class AggregatingStateDescriptor(StateDescriptor):
    kind = StateKind.AGGREGATING

    def __init__(self, name: str, agg_function: Any, state_type_info: object = None) -> None:
        super().__init__(name, state_type_info)
        missing = [m for m in _AGGREGATE_METHODS if not callable(getattr(agg_function, m, None))]
        if missing:
            raise TypeError(
                f"an aggregate function needs {', '.join(_AGGREGATE_METHODS)}; "
                f"{type(agg_function).__name__} lacks {', '.join(missing)}"
            )
        self.agg_function = agg_function


# ---------------------------------------------------------------------------------------------
# State interfaces (what user code calls; the runtime implements them)


class State(ABC):
    __slots__ = ()

    @abstractmethod
    def clear(self) -> None:
        """Remove the value(s) for the current key."""


class ValueState(State, Generic[V]):
    __slots__ = ()

    @abstractmethod
    def value(self) -> V | None:
        """The value for the current key, or None when there is none."""

    @abstractmethod
    def update(self, value: V | None) -> None:
        """Replace the value for the current key; ``None`` clears it."""


class AppendingState(State, Generic[IN, OUT]):
    __slots__ = ()

    @abstractmethod
    def get(self) -> OUT:
        ...

    @abstractmethod
    def add(self, value: IN) -> None:
        ...


class MergingState(AppendingState[IN, OUT]):
    """An appending state whose contents can be merged (windows will use this)."""

    __slots__ = ()


class ListState(MergingState[V, Iterable[V]]):
    __slots__ = ()

    @abstractmethod
    def update(self, values: list[V]) -> None:
        """Replace all elements; an empty list (or None) clears the state."""

    @abstractmethod
    def add_all(self, values: list[V]) -> None:
        ...

    def __iter__(self) -> Iterator[V]:
        return iter(self.get())


class ReducingState(MergingState[V, V]):
    """``get()`` is the reduction of everything added, or None when nothing was."""

    __slots__ = ()


class AggregatingState(MergingState[IN, OUT]):
    """``get()`` is the aggregate's result, or None when nothing was added."""

    __slots__ = ()


class MapState(State, Generic[K, V]):
    __slots__ = ()

    @abstractmethod
    def get(self, key: K) -> V | None:
        ...

    @abstractmethod
    def put(self, key: K, value: V) -> None:
        ...

    @abstractmethod
    def put_all(self, dict_value: dict[K, V]) -> None:
        ...

    @abstractmethod
    def remove(self, key: K) -> None:
        ...

    @abstractmethod
    def contains(self, key: K) -> bool:
        ...

    @abstractmethod
    def items(self) -> Iterable[tuple[K, V]]:
        ...

    @abstractmethod
    def keys(self) -> Iterable[K]:
        ...

    @abstractmethod
    def values(self) -> Iterable[V]:
        ...

    @abstractmethod
    def is_empty(self) -> bool:
        ...

    def __getitem__(self, key: K) -> V | None:
        return self.get(key)

    def __setitem__(self, key: K, value: V) -> None:
        self.put(key, value)

    def __delitem__(self, key: K) -> None:
        self.remove(key)

    def __contains__(self, key: object) -> bool:
        return self.contains(key)  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[K]:
        return iter(self.keys())


class ReadOnlyBroadcastState(State, Generic[K, V]):
    """A broadcast state (a map) as the non-broadcast side of a broadcast process function
    sees it: reads only."""

    __slots__ = ()

    @abstractmethod
    def get(self, key: K) -> V | None:
        ...

    @abstractmethod
    def contains(self, key: K) -> bool:
        ...

    @abstractmethod
    def items(self) -> Iterable[tuple[K, V]]:
        ...

    @abstractmethod
    def keys(self) -> Iterable[K]:
        ...

    @abstractmethod
    def values(self) -> Iterable[V]:
        ...

    @abstractmethod
    def is_empty(self) -> bool:
        ...

    @abstractmethod
    def __iter__(self) -> Iterator[K]:
        ...


class BroadcastState(ReadOnlyBroadcastState[K, V]):
    """A broadcast state as the broadcast side sees it: writable."""

    __slots__ = ()

    @abstractmethod
    def put(self, key: K, value: V) -> None:
        ...

    @abstractmethod
    def put_all(self, dict_value: dict[K, V]) -> None:
        ...

    @abstractmethod
    def remove(self, key: K) -> None:
        ...


__all__ = [
    "AggregatingState", "AggregatingStateDescriptor", "AppendingState", "BroadcastState",
    "ListState", "ListStateDescriptor", "MapState", "MapStateDescriptor", "MergingState",
    "ReadOnlyBroadcastState", "ReducingState", "ReducingStateDescriptor", "State",
    "StateDescriptor", "StateKind", "StateTtlConfig", "ValueState", "ValueStateDescriptor",
    "as_reduce_callable", "ttl_to_milliseconds",
]
