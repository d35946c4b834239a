"""The broadcast process operator: ``stream.connect(other.broadcast(descriptor)).process(f)``.

Input 0 is the ordinary stream (keyed for a ``KeyedBroadcastProcessFunction``), input 1 the
broadcast stream, whose every element reaches every parallel instance. Each instance keeps its
own copy of the broadcast state: one dict per ``MapStateDescriptor`` the stream was broadcast
with. ``process_broadcast_element`` may change it (``ctx.get_broadcast_state(d)`` is writable
there); ``process_element`` only reads it (a write is a ``ReadOnlyBroadcastStateError``), so
every instance that saw the same broadcast elements holds the same state, as in Flink.

Checkpoints: each instance writes its copy as union operator list state, one entry per
descriptor tagged with the writing subtask. On restore every instance receives all entries
(union redistribution) and takes one copy per descriptor — its own old subtask's if there was
one, else the lowest — so any new parallelism starts with the state everywhere.

Keyed variant: keyed state and timers (processing and event time) on the non-broadcast side and
in ``on_timer``; ``ctx.apply_to_keyed_state(descriptor, f)`` on the broadcast side calls
``f(key, state)`` for every key of this instance. Belongs to the task thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from flintlock.common import state as state_api
from flintlock.common.errors import FlintlockError
from flintlock.common.operator_spec import OperatorKind, OperatorSpec
from flintlock.common.state import ListStateDescriptor, MapStateDescriptor
from flintlock.runtime.tasks.contexts import ProcessContext
from flintlock.runtime.tasks.operators import TimerOperator

BROADCAST_STATE = ListStateDescriptor("_flintlock_broadcast_state", None)


class ReadOnlyBroadcastStateError(FlintlockError):
    """``process_element`` tried to change the broadcast state (only the broadcast side may)."""

    def __init__(self, state: str, method: str) -> None:
        super().__init__(state, method)
        self.state = state
        self.method = method

    def __str__(self) -> str:
        return (f"broadcast state {self.state!r} is read-only in process_element: "
                f"{self.method}() is only allowed in process_broadcast_element, so that every "
                "parallel instance keeps the same state")


class UnknownBroadcastStateError(FlintlockError):
    """A descriptor the stream was not broadcast with."""

    def __init__(self, state: str, known: tuple[str, ...]) -> None:
        super().__init__(state, known)
        self.state = state
        self.known = known

    def __str__(self) -> str:
        return (f"no broadcast state {self.state!r}: the stream was broadcast with "
                f"{list(self.known)}; pass the descriptor to broadcast(...)")


class BroadcastState(state_api.BroadcastState[Any, Any]):
    """One broadcast state (a map) of one parallel instance: PyFlink's ``BroadcastState``."""

    def __init__(self, name: str, entries: dict[Any, Any] | None = None) -> None:
        self.name = name
        self._entries: dict[Any, Any] = entries if entries is not None else {}

    def get(self, key: Any) -> Any:
        return self._entries.get(key)

    def contains(self, key: Any) -> bool:
        return key in self._entries

    def items(self) -> Iterable[tuple[Any, Any]]:
        return list(self._entries.items())

    def keys(self) -> Iterable[Any]:
        return list(self._entries)

    def values(self) -> Iterable[Any]:
        return list(self._entries.values())

    def is_empty(self) -> bool:
        return not self._entries

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._entries))

    def put(self, key: Any, value: Any) -> None:
        self._entries[key] = value

    def put_all(self, entries: dict[Any, Any]) -> None:
        self._entries.update(entries)

    def remove(self, key: Any) -> None:
        self._entries.pop(key, None)

    def clear(self) -> None:
        self._entries.clear()

    def snapshot(self) -> dict[Any, Any]:
        return dict(self._entries)


class ReadOnlyBroadcastState(state_api.ReadOnlyBroadcastState[Any, Any]):
    """The non-broadcast side's view of a broadcast state: reads only."""

    def __init__(self, state: BroadcastState) -> None:
        self._state = state

    def get(self, key: Any) -> Any:
        return self._state.get(key)

    def contains(self, key: Any) -> bool:
        return self._state.contains(key)

    def items(self) -> Iterable[tuple[Any, Any]]:
        return self._state.items()

    def keys(self) -> Iterable[Any]:
        return self._state.keys()

    def values(self) -> Iterable[Any]:
        return self._state.values()

    def is_empty(self) -> bool:
        return self._state.is_empty()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._state)

    def clear(self) -> None:
        raise ReadOnlyBroadcastStateError(self._state.name, "clear")

    def _refuse(self, method: str) -> Callable[..., None]:
        def refuse(*args: Any) -> None:
            raise ReadOnlyBroadcastStateError(self._state.name, method)
        return refuse

    def __getattr__(self, name: str) -> Any:
        if name in ("put", "put_all", "remove"):
            return self._refuse(name)
        raise AttributeError(name)


class BroadcastProcessContext(ProcessContext):
    """``ctx`` of both sides (and ``on_timer``) of a broadcast process function."""

    __slots__ = ("_operator", "writable")

    def __init__(self, backend: Any, service: Any, operator: BroadcastProcessOperator) -> None:
        super().__init__(backend, service)
        self._operator = operator
        self.writable = False

    def get_broadcast_state(self, state_descriptor: MapStateDescriptor) -> Any:
        state = self._operator.broadcast_state(state_descriptor)
        return state if self.writable else ReadOnlyBroadcastState(state)

    def current_processing_time(self) -> int:
        return int(self._service.current_processing_time())

    def current_watermark(self) -> int:
        return int(self._service.current_watermark())

    def apply_to_keyed_state(self, state_descriptor: Any,
                             function: Callable[[Any, Any], None]) -> None:
        if self._backend is None:
            raise FlintlockError("apply_to_keyed_state() needs a keyed stream "
                                 "(KeyedBroadcastProcessFunction)")
        self._backend.apply_to_all_keys(state_descriptor, function)


class BroadcastProcessOperator(TimerOperator):
    """BROADCAST_PROCESS and KEYED_BROADCAST_PROCESS (see the module docstring)."""

    def __init__(self, spec: OperatorSpec) -> None:
        super().__init__(spec)
        self._descriptors = {d.name: d for d in spec.broadcast_states}
        self._states: dict[str, BroadcastState] = {}

    def broadcast_state(self, descriptor: MapStateDescriptor) -> BroadcastState:
        name = str(getattr(descriptor, "name", descriptor))
        if not isinstance(descriptor, MapStateDescriptor) or name not in self._descriptors:
            raise UnknownBroadcastStateError(name, tuple(self._descriptors))
        state = self._states.get(name)
        if state is None:
            state = self._states[name] = BroadcastState(name)
        return state

    def initialize_state(self, restored: Any) -> None:
        entries = list(self.context.operator_backend.get_union_list_state(BROADCAST_STATE).get())
        if not entries:
            return
        mine = self.context.subtask_index
        origins = {origin for origin, _, _ in entries}
        chosen = mine if mine in origins else min(origins)
        for origin, name, items in entries:
            if origin == chosen:
                self._states[name] = BroadcastState(name, dict(items))

    def open(self) -> None:
        keyed = self.spec.kind is OperatorKind.KEYED_BROADCAST_PROCESS
        self._open_timers(keyed_timers=keyed)
        service = self._timers if self._timers is not None else self._time_only
        self._ctx = BroadcastProcessContext(
            self.context.keyed_backend if keyed else None, service, self)
        super().open()
        self._restore_timers()

    def process_batch(self, records: list[Any]) -> None:
        process, ctx = self.function.process_element, self._ctx
        assert isinstance(ctx, BroadcastProcessContext)
        ctx.writable = False
        get_key = self._key_selector(0) if self.spec.keyed else None
        self._apply(records, lambda value: process(value, ctx), get_key)

    def process_batch2(self, records: list[Any]) -> None:
        process, ctx = self.function.process_broadcast_element, self._ctx
        assert isinstance(ctx, BroadcastProcessContext)
        ctx.writable = True
        try:
            self._apply(records, lambda value: process(value, ctx), None)
        finally:
            ctx.writable = False

    def snapshot_state(self, checkpoint_id: int) -> Any:
        origin = self.context.subtask_index
        self.context.operator_backend.get_union_list_state(BROADCAST_STATE).update(
            [(origin, name, state.snapshot()) for name, state in self._states.items()])
        return None
