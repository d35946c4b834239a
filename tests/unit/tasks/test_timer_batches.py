"""A watermark's event-time timers taken a batch at a time (``InternalTimerService.
due_event_timers``, issue 32): the same timers, in the same order, with the same key set and
the same state left behind as ``advance_watermark`` firing them one ``Triggerable`` call at a
time — timers registered while they fire included (due ones come up in order, or wait for the
next watermark when the service defers new timers) — and the bundle of held processing-time
timers ends after them."""

from __future__ import annotations

import random
from typing import Any

import pytest

from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.tasks.timer_service import USER_TIMERS, WINDOW_TIMERS, InternalTimerService
from flintlock.testing.operators import ManualTimers


class _Chained:
    """A ``Triggerable`` whose timers register more: a timer at ``t`` of key ``k`` registers
    one at ``t + step[k]`` (due at once when the watermark is past it, before later timers
    still waiting)."""

    def __init__(self, backend: HeapKeyedStateBackend, steps: dict[Any, int]) -> None:
        self.backend = backend
        self.steps = steps
        self.service: InternalTimerService | None = None
        self.fired: list[tuple[int, Any, Any, Any]] = []

    def on_event_time(self, timestamp: int, key: Any, namespace: Any) -> None:
        current = self.backend.get_current_key()
        self.fired.append((timestamp, key, namespace, current))
        if timestamp < 60:
            assert self.service is not None
            self.service.register_event_time_timer(namespace, timestamp + self.steps[key])

    def on_processing_time(self, timestamp: int, key: Any, namespace: Any) -> None:
        raise AssertionError("no processing-time timers here")


def _service(seed: int, defer: bool, namespaced: bool) -> tuple[Any, _Chained, Any]:
    backend = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
    rng = random.Random(seed)
    keys = ["a", "b", 3, (4, "x")]
    chained = _Chained(backend, {key: rng.choice([1, 2, 7, 15]) for key in keys})
    service = InternalTimerService(backend, ManualTimers(),
                                   WINDOW_TIMERS if namespaced else USER_TIMERS, chained,
                                   defer_new_event_timers=defer)
    chained.service = service
    for _ in range(30):
        backend.set_current_key(rng.choice(keys))
        service.register_event_time_timer(rng.choice(["w1", "w2"]) if namespaced else None,
                                          rng.randrange(0, 50))
    return backend, chained, service


def _timer_table(backend: HeapKeyedStateBackend, namespaced: bool) -> dict[Any, Any]:
    """Every key's event-time timer entries, as the snapshot would write them."""
    descriptor = (WINDOW_TIMERS if namespaced else USER_TIMERS).event
    state = backend.get_partitioned_state(descriptor)
    table = {}
    for key in list(backend.keys(descriptor.name)):
        backend.set_current_key(key)
        table[key] = dict(state.items())
    return table


class _Model:
    """What the firing order must be, computed without a heap: among the registered timers
    due at the watermark (registered before the firing started, when deferring), the earliest,
    ties in registration order; each fired timer may register more."""

    def __init__(self, defer: bool) -> None:
        self.defer = defer
        self.pending: dict[tuple[int, Any, Any], int] = {}
        self.sequence = 0
        self.fired: list[tuple[int, Any, Any, Any]] = []

    def register(self, timestamp: int, key: Any, namespace: Any) -> None:
        if (timestamp, key, namespace) not in self.pending:
            self.sequence += 1
            self.pending[(timestamp, key, namespace)] = self.sequence

    def fire(self, watermark: int, steps: dict[Any, int]) -> None:
        limit = self.sequence
        while True:
            due = [(timer[0], sequence, timer) for timer, sequence in self.pending.items()
                   if timer[0] <= watermark and not (self.defer and sequence > limit)]
            if not due:
                return
            timestamp, _, (_, key, namespace) = min(due, key=lambda entry: entry[:2])
            del self.pending[(timestamp, key, namespace)]
            self.fired.append((timestamp, key, namespace, key))
            if timestamp < 60:
                self.register(timestamp + steps[key], key, namespace)


def _model(seed: int, defer: bool, namespaced: bool) -> tuple[_Model, dict[Any, int]]:
    """``_service``'s timers (the same draws) in a ``_Model``."""
    rng = random.Random(seed)
    keys = ["a", "b", 3, (4, "x")]
    steps = {key: rng.choice([1, 2, 7, 15]) for key in keys}
    model = _Model(defer)
    for _ in range(30):
        key = rng.choice(keys)
        namespace = rng.choice(["w1", "w2"]) if namespaced else None
        model.register(rng.randrange(0, 50), key, namespace)
    return model, steps


@pytest.mark.parametrize("defer", [False, True])
@pytest.mark.parametrize("namespaced", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_due_timers_in_batches_are_advance_watermarks_timers(seed: int, defer: bool,
                                                             namespaced: bool) -> None:
    one_backend, one, by_call = _service(seed, defer, namespaced)
    batch_backend, batched, by_batch = _service(seed, defer, namespaced)
    model, steps = _model(seed, defer, namespaced)
    for watermark in (10, 25, 25, 40, 70, 100):
        by_call.advance_watermark(watermark)
        for timestamp, key, namespace in by_batch.due_event_timers(watermark):
            batched.on_event_time(timestamp, key, namespace)
        model.fire(watermark, steps)
        assert batched.fired == one.fired == model.fired
        assert by_batch.timer_counts() == by_call.timer_counts()
        assert by_batch.watermark == by_call.watermark == watermark
    assert one.fired, "the timers fired"
    assert all(current == key for _, key, _, current in batched.fired)
    assert _timer_table(batch_backend, namespaced) == _timer_table(one_backend, namespaced)


def test_a_deleted_timer_is_not_yielded_and_stopping_early_keeps_the_rest() -> None:
    backend = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
    chained = _Chained(backend, {})
    service = InternalTimerService(backend, ManualTimers(), USER_TIMERS, chained)
    for key, timestamp in [("a", 1), ("b", 2), ("c", 3), ("d", 4)]:
        backend.set_current_key(key)
        service.register_event_time_timer(None, timestamp)
    backend.set_current_key("b")
    service.delete_event_time_timer(None, 2)
    due = service.due_event_timers(10)
    assert next(due) == (1, "a", None)
    due.close()  # the consumer stopped: "c" and "d" stay registered
    assert service.timer_counts() == (0, 2)
    assert list(service.due_event_timers(10)) == [(3, "c", None), (4, "d", None)]
    assert service.timer_counts() == (0, 0)


@pytest.mark.parametrize("namespaced", [False, True])
def test_the_registrar_registers_as_register_event_time_timer(namespaced: bool) -> None:
    """``event_timer_registrar()`` (the interval join's batch path) keeps the same timers, in
    the state a snapshot writes and in the firing order, as ``register_event_time_timer``."""
    rng = random.Random(7)
    draws = [(rng.choice(["a", "b", 3]), rng.choice(["w1", "w2"]) if namespaced else None,
              rng.randrange(0, 30)) for _ in range(40)]
    backends, services = [], []
    for direct in (False, True):
        backend = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
        service = InternalTimerService(backend, ManualTimers(),
                                       WINDOW_TIMERS if namespaced else USER_TIMERS,
                                       _Chained(backend, {}))
        register = service.event_timer_registrar() if direct else None
        for key, namespace, timestamp in draws:
            backend.set_current_key(key)
            if register is None:
                service.register_event_time_timer(namespace, timestamp)
            else:
                register(timestamp, namespace)
        backends.append(backend)
        services.append(service)
    assert services[1].timer_counts() == services[0].timer_counts()
    assert _timer_table(backends[1], namespaced) == _timer_table(backends[0], namespaced)
    assert list(services[1].due_event_timers(20)) == list(services[0].due_event_timers(20))
