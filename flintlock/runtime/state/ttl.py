"""Time to live: decorators that give any backend's state an expiry (PyFlink's StateTtlConfig).

A TTL state wraps an inner state of the same backend that stores ``(value, last_access_ms)``
pairs: per value for value, reducing and aggregating state (the latter two over an inner
*value* state), per element for list state, per entry for map state. ``last_access_ms`` comes
from the injected clock's ``wall_ms()`` (processing time that survives a restore in another
process). An entry is expired when ``last_access_ms + ttl <= now``.

* The timestamp is set on create and write, and also on read with ``OnReadAndWrite``.
* An expired entry is removed when it is read. ``NeverReturnExpired`` never shows it;
  ``ReturnExpiredIfNotCleanedUp`` shows it that one last time.
* ``cleanup_full_snapshot`` drops expired entries from snapshots (``snapshot_filter``).

The hot path of state without TTL is untouched: these classes exist only for descriptors that
enable TTL. Owned by the task thread, like the inner state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from flintlock.common.clock import Clock
from flintlock.common.state import (
    AggregatingState,
    ListState,
    MapState,
    ReducingState,
    StateKind,
    StateTtlConfig,
    ValueState,
)

Stamped = tuple[Any, float]


class _Ttl:
    __slots__ = ("_clock", "_on_read", "_return_expired", "_ttl_ms")

    def __init__(self, config: StateTtlConfig, clock: Clock) -> None:
        self._clock = clock
        self._ttl_ms = config.ttl_ms
        self._on_read = config.update_type is StateTtlConfig.UpdateType.OnReadAndWrite
        self._return_expired = (
            config.state_visibility is StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp
        )

    def _now(self) -> float:
        return float(self._clock.wall_ms())

    def _expired(self, stamped: Stamped, now: float) -> bool:
        return stamped[1] + self._ttl_ms <= now


class TtlValueState(_Ttl, ValueState[Any]):
    __slots__ = ("_inner",)

    def __init__(self, inner: ValueState[Any], config: StateTtlConfig, clock: Clock) -> None:
        super().__init__(config, clock)
        self._inner = inner

    def _read(self) -> tuple[bool, Any]:
        """(present and visible, value) with expiry cleanup and read refresh applied."""
        stamped = self._inner.value()
        if stamped is None:
            return False, None
        now = self._now()
        if self._expired(stamped, now):
            self._inner.clear()
            return self._return_expired, stamped[0]
        if self._on_read:
            self._inner.update((stamped[0], now))
        return True, stamped[0]

    def value(self) -> Any:
        visible, value = self._read()
        return value if visible else None

    def update(self, value: Any) -> None:
        if value is None:
            self._inner.clear()
        else:
            self._inner.update((value, self._now()))

    def clear(self) -> None:
        self._inner.clear()


class TtlReducingState(ReducingState[Any]):
    __slots__ = ("_reduce", "_value")

    def __init__(self, value: TtlValueState, reduce: Callable[[Any, Any], Any]) -> None:
        self._value = value
        self._reduce = reduce

    def get(self) -> Any:
        return self._value.value()

    def add(self, value: Any) -> None:
        visible, current = self._value._read()
        self._value.update(self._reduce(current, value) if visible else value)

    def clear(self) -> None:
        self._value.clear()


class TtlAggregatingState(AggregatingState[Any, Any]):
    __slots__ = ("_function", "_value")

    def __init__(self, value: TtlValueState, function: Any) -> None:
        self._value = value
        self._function = function

    def get(self) -> Any:
        visible, accumulator = self._value._read()
        return self._function.get_result(accumulator) if visible else None

    def add(self, value: Any) -> None:
        visible, accumulator = self._value._read()
        if not visible:
            accumulator = self._function.create_accumulator()
        self._value.update(self._function.add(value, accumulator))

    def clear(self) -> None:
        self._value.clear()


class TtlListState(_Ttl, ListState[Any]):
    __slots__ = ("_inner",)

    def __init__(self, inner: ListState[Any], config: StateTtlConfig, clock: Clock) -> None:
        super().__init__(config, clock)
        self._inner = inner

    def get(self) -> list[Any]:
        stamped: list[Stamped] = list(self._inner.get())
        if not stamped:
            return []
        now = self._now()
        alive = [e for e in stamped if not self._expired(e, now)]
        visible = stamped if self._return_expired else alive
        if self._on_read and alive:
            alive = [(value, now) for value, _ in alive]
        if len(alive) != len(stamped) or self._on_read:
            self._inner.update(alive)
        return [value for value, _ in visible]

    def _stamp_all(self, values: list[Any] | None) -> list[Stamped]:
        now = self._now()
        stamped = [(value, now) for value in values or ()]
        if any(value is None for value, _ in stamped):
            raise ValueError("cannot add None to a list state")
        return stamped

    def add(self, value: Any) -> None:
        self._inner.add_all(self._stamp_all([value]))

    def add_all(self, values: list[Any]) -> None:
        self._inner.add_all(self._stamp_all(values))

    def update(self, values: list[Any]) -> None:
        self._inner.update(self._stamp_all(values))

    def clear(self) -> None:
        self._inner.clear()


class TtlMapState(_Ttl, MapState[Any, Any]):
    __slots__ = ("_inner",)

    def __init__(self, inner: MapState[Any, Any], config: StateTtlConfig, clock: Clock) -> None:
        super().__init__(config, clock)
        self._inner = inner

    def _read(self, key: Any, stamped: Stamped | None, now: float) -> tuple[bool, Any]:
        if stamped is None:
            return False, None
        if self._expired(stamped, now):
            self._inner.remove(key)
            return self._return_expired, stamped[0]
        if self._on_read:
            self._inner.put(key, (stamped[0], now))
        return True, stamped[0]

    def get(self, key: Any) -> Any:
        visible, value = self._read(key, self._inner.get(key), self._now())
        return value if visible else None

    def contains(self, key: Any) -> bool:
        return self._read(key, self._inner.get(key), self._now())[0]

    def put(self, key: Any, value: Any) -> None:
        self._inner.put(key, (value, self._now()))

    def put_all(self, dict_value: dict[Any, Any]) -> None:
        now = self._now()
        self._inner.put_all({key: (value, now) for key, value in dict_value.items()})

    def remove(self, key: Any) -> None:
        self._inner.remove(key)

    def items(self) -> list[tuple[Any, Any]]:
        now = self._now()
        result = []
        for key, stamped in list(self._inner.items()):
            visible, value = self._read(key, stamped, now)
            if visible:
                result.append((key, value))
        return result

    def keys(self) -> list[Any]:
        return [key for key, _ in self.items()]

    def values(self) -> list[Any]:
        return [value for _, value in self.items()]

    def is_empty(self) -> bool:
        return not self.items()

    def clear(self) -> None:
        self._inner.clear()


def snapshot_filter(
    kind: StateKind, config: StateTtlConfig, now: float
) -> Callable[[Any], Any | None]:
    """For ``cleanup_full_snapshot``: stored value → stored value without expired parts, or
    None when nothing of it is left."""
    ttl = config.ttl_ms

    def alive(stamped: Stamped) -> bool:
        return stamped[1] + ttl > now

    def keep_value(stored: Stamped) -> Stamped | None:
        return stored if alive(stored) else None

    def keep_list(stored: Iterable[Stamped]) -> list[Stamped] | None:
        return [e for e in stored if alive(e)] or None

    def keep_map(stored: dict[Any, Stamped]) -> dict[Any, Stamped] | None:
        return {k: e for k, e in stored.items() if alive(e)} or None

    if kind is StateKind.LIST:
        return keep_list
    if kind is StateKind.MAP:
        return keep_map
    return keep_value
