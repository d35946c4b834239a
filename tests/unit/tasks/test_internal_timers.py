"""Keyed timers of one operator (``timer_service.InternalTimerService``, issue 19): event-time
timers registered from ``process_element`` and from a window trigger fire when a watermark
passes them, once per (key, namespace, time); they travel in the keyed state's snapshot and
restore at another parallelism by key group; and a barrier arriving while a timer fires waits
for it on the task thread, so the snapshot holds the timer's effects."""

from __future__ import annotations

import decimal
import enum
import threading
from typing import Any, NamedTuple

import pytest

from flintlock.common.clock import SYSTEM_CLOCK
from flintlock.common.operator_spec import OperatorKind, OperatorSpec, WindowSpec
from flintlock.common.state import ValueStateDescriptor
from flintlock.common.windowing import Trigger, TriggerResult, TumblingEventTimeWindows
from flintlock.datastream.functions import KeyedProcessFunction, wrap_reduce
from flintlock.runtime.network.event_time import TimestampedBatch
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange, assign_key_to_operator
from flintlock.runtime.state.rocksdb import RocksDBKeyedStateBackend
from flintlock.runtime.tasks.mailbox import Mailbox
from flintlock.runtime.tasks.timer_service import (
    USER_TIMERS,
    WINDOW_TIMERS,
    InternalTimerService,
    TaskTimerService,
)
from flintlock.testing.operators import (
    CollectingOutput,
    ManualTimers,
    MemoryStateWriter,
    open_operator,
)
from flintlock.testing.waiting import wait_until

MAX_PARALLELISM = 128


class _Fired:
    """A ``Triggerable`` that records (domain, timestamp, key, namespace)."""

    def __init__(self) -> None:
        self.fired: list[tuple[str, int, Any, Any]] = []

    def on_event_time(self, timestamp: int, key: Any, namespace: Any) -> None:
        self.fired.append(("event", timestamp, key, namespace))

    def on_processing_time(self, timestamp: int, key: Any, namespace: Any) -> None:
        self.fired.append(("processing", timestamp, key, namespace))


def _backend(first: int = 0, last: int = MAX_PARALLELISM - 1) -> HeapKeyedStateBackend:
    return HeapKeyedStateBackend(KeyGroupRange(first, last), MAX_PARALLELISM)


def _operator(spec: OperatorSpec, backend: HeapKeyedStateBackend,
              timers: ManualTimers | None = None) -> tuple[Any, CollectingOutput]:
    return open_operator(spec, max_parallelism=MAX_PARALLELISM, timers=timers or ManualTimers(),
                         keyed_backend=backend, key_selectors=(lambda v: v[0],))


def test_event_timers_fire_once_per_key_namespace_and_time_earliest_first() -> None:
    backend, fired = _backend(), _Fired()
    timers = InternalTimerService(backend, ManualTimers(), WINDOW_TIMERS, fired)
    for key, namespace, timestamp in [("a", "w1", 20), ("a", "w1", 20), ("b", "w1", 20),
                                      ("a", "w2", 20), ("a", "w1", 10), ("b", "w1", 30)]:
        backend.set_current_key(key)
        timers.register_event_time_timer(namespace, timestamp)
    backend.set_current_key("b")
    timers.delete_event_time_timer("w1", 30)
    assert timers.timer_counts() == (0, 4)
    timers.advance_watermark(19)
    assert fired.fired == [("event", 10, "a", "w1")]
    timers.advance_watermark(100)
    assert fired.fired[1:] == [("event", 20, "a", "w1"), ("event", 20, "b", "w1"),
                               ("event", 20, "a", "w2")]
    assert timers.timer_counts() == (0, 0) and timers.current_watermark() == 100


def test_processing_timers_wake_the_task_once_and_fire_with_their_key() -> None:
    backend, fired, clock = _backend(), _Fired(), ManualTimers()
    timers = InternalTimerService(backend, clock, USER_TIMERS, fired)
    backend.set_current_key("k")
    timers.register_processing_time_timer(None, 50)
    timers.register_processing_time_timer(None, 50)
    timers.register_event_time_timer(None, 50)
    assert [t for t, _ in clock.scheduled] == [50]
    clock.advance(50)
    assert fired.fired == [("processing", 50, "k", None)]
    assert timers.timer_counts() == (0, 1)


class _TimerPerRecord(KeyedProcessFunction):
    """Registers an event-time timer at the end of each record's second, counts per key."""

    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count", None))

    def process_element(self, value: Any, ctx: Any) -> None:
        self.count.update((self.count.value() or 0) + 1)
        ctx.timer_service().register_event_time_timer(ctx.timestamp() // 1000 * 1000 + 999)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield ctx.get_current_key(), timestamp, self.count.value()


def _stamped(*records: tuple[str, int]) -> TimestampedBatch:
    return TimestampedBatch([(key,) for key, _ in records], [ts for _, ts in records])


def test_timers_from_process_element_fire_on_the_watermark_once_per_key_and_time() -> None:
    spec = OperatorSpec(OperatorKind.KEYED_PROCESS, keyed=True, function=_TimerPerRecord())
    operator, out = _operator(spec, _backend())
    operator.process_batch(_stamped(("a", 100), ("a", 500), ("b", 900), ("a", 1_500)))
    operator.process_watermark(998)
    assert out.records() == []
    operator.process_watermark(999)
    assert sorted(out.records()) == [(("a", 999, 3), 999), (("b", 999, 1), 999)]
    assert out.watermarks() == [998, 999]  # timers fire before the watermark goes on
    operator.process_watermark(2_000)
    assert out.records()[2:] == [(("a", 1_999, 3), 1_999)]


class _EveryTenMs(Trigger):
    """Fires a window at each 10 ms of event time inside it, and at its end."""

    def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> Any:
        ctx.register_event_time_timer(timestamp - timestamp % 10 + 9)
        ctx.register_event_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: Any) -> Any:
        return TriggerResult.FIRE

    def on_processing_time(self, time: int, window: Any, ctx: Any) -> Any:
        return TriggerResult.CONTINUE

    def on_merge(self, window: Any, ctx: Any) -> None:
        pass

    def clear(self, window: Any, ctx: Any) -> None:
        pass


def test_timers_from_a_window_trigger_fire_on_the_watermark_once_per_window_and_time() -> None:
    spec = OperatorSpec(OperatorKind.WINDOW, keyed=True, window=WindowSpec(
        TumblingEventTimeWindows.of(100), trigger=_EveryTenMs(),
        reduce_function=wrap_reduce(lambda a, b: (a[0], a[1] + b[1]))))
    operator, out = _operator(spec, _backend())
    operator.process_batch(TimestampedBatch([("k", 1), ("k", 2), ("k", 4)], [3, 5, 25]))
    operator.process_watermark(9)
    assert out.records() == [(("k", 7), 99)]  # the two records of 0..9: one timer, one firing
    operator.process_watermark(99)
    # at 29, then at the end: the trigger's timer and the cleanup timer are the same one
    assert out.records()[1:] == [(("k", 7), 99), (("k", 7), 99)]


def test_timers_restore_at_another_parallelism_by_key_group() -> None:
    spec = OperatorSpec(OperatorKind.KEYED_PROCESS, keyed=True, function=_TimerPerRecord())
    before = _backend()
    operator, _ = _operator(spec, before)
    keys = [f"key-{n}" for n in range(12)]
    operator.process_batch(_stamped(*[(key, 1_000 * (n % 3)) for n, key in enumerate(keys)]))
    files = MemoryStateWriter()
    handle = before.snapshot().write(files, "keyed")
    fired_by_subtask = []
    for subtask, (first, last) in enumerate([(0, 63), (64, 127)]):
        after = _backend(first, last)
        after.restore([handle], lambda h: files.files[h.uri.split("//")[1]])
        restored, out = _operator(spec, after)
        restored.process_watermark(10_000)
        fired = sorted(out.records())
        fired_by_subtask.append(fired)
        assert all(assign_key_to_operator(key, MAX_PARALLELISM, 2) == subtask
                   for (key, _, _), _ in fired)
    assert sorted(fired_by_subtask[0] + fired_by_subtask[1]) == sorted(
        ((key, 1_000 * (n % 3) + 999, 1), 1_000 * (n % 3) + 999) for n, key in enumerate(keys))
    assert fired_by_subtask[0] and fired_by_subtask[1]


def test_a_barrier_arriving_while_a_keyed_timer_fires_snapshots_after_it() -> None:
    """The processing-time timer runs as mail on the task thread; the barrier, put into the
    mailbox by another thread while the timer's callback runs, runs after it, so the snapshot
    holds the timer's effect and no longer holds the timer."""
    mailbox = Mailbox()
    task_timers = TaskTimerService(mailbox, SYSTEM_CLOCK, "keyed-barrier")
    backend = _backend()
    effects = backend.get_partitioned_state(ValueStateDescriptor("effects", None))
    in_timer, barrier_put, done = threading.Event(), threading.Event(), threading.Event()
    snapshots: list[tuple[Any, tuple[int, int]]] = []

    class _Blocking:
        def on_event_time(self, timestamp: int, key: Any, namespace: Any) -> None:
            raise AssertionError("no event-time timer here")

        def on_processing_time(self, timestamp: int, key: Any, namespace: Any) -> None:
            in_timer.set()
            barrier_put.wait(10)  # the barrier arrives while this callback runs
            effects.update("fired")

    timers = InternalTimerService(backend, task_timers, USER_TIMERS, _Blocking())

    def barrier() -> None:
        backend.set_current_key("k")
        snapshots.append((effects.value(), timers.timer_counts()))
        done.set()

    def network_thread() -> None:
        in_timer.wait(10)
        mailbox.put(barrier, "barrier 1", urgent=True)
        barrier_put.set()

    other = threading.Thread(target=network_thread)
    other.start()
    backend.set_current_key("k")
    timers.register_processing_time_timer(None, task_timers.now_ms())

    def step() -> bool:
        for mail in mailbox.take_all():
            mail.action()
        mailbox.wait(0.01)
        return done.is_set()

    wait_until(step)
    other.join()
    task_timers.close()
    assert snapshots == [("fired", (0, 0))]


def _service_at(now: int, bundle_time_ms: int = 1_000
                ) -> tuple[HeapKeyedStateBackend, ManualTimers, _Fired, InternalTimerService]:
    backend, clock, fired = _backend(), ManualTimers(now), _Fired()
    return backend, clock, fired, InternalTimerService(backend, clock, WINDOW_TIMERS, fired,
                                                       bundle_time_ms=bundle_time_ms)


def test_a_processing_timer_due_at_registration_fires_after_the_next_watermarks_timers() -> None:
    backend, clock, fired, timers = _service_at(now=1_000)
    backend.set_current_key("a")
    timers.register_event_time_timer("w", 14)
    timers.register_processing_time_timer("w", 14)  # a window cleanup, long past
    assert timers.timer_counts() == (1, 1)  # registered (and in the snapshot) at once
    clock.advance(0)
    assert fired.fired == []  # held for the end of the bundle
    timers.advance_watermark(2**63 - 1)
    clock.advance(0)
    assert fired.fired == [("event", 14, "a", "w"), ("processing", 14, "a", "w")]


def test_a_held_timer_waits_at_most_the_bundle_time_and_future_timers_are_not_held() -> None:
    backend, clock, fired, timers = _service_at(now=1_000, bundle_time_ms=200)
    backend.set_current_key("a")
    timers.register_processing_time_timer("w", 900)
    timers.register_processing_time_timer("w", 1_100)
    clock.advance(100)
    assert fired.fired == [("processing", 1_100, "a", "w")]
    clock.advance(99)
    assert fired.fired == [("processing", 1_100, "a", "w")]
    clock.advance(1)  # the bundle ends: the held timer may fire
    clock.advance(0)
    assert fired.fired[1:] == [("processing", 900, "a", "w")]
    timers.register_processing_time_timer("w", 1_000)  # a new bundle starts with it
    clock.advance(0)
    assert len(fired.fired) == 2
    timers.advance_watermark(0)
    clock.advance(0)
    assert fired.fired[2:] == [("processing", 1_000, "a", "w")]


class _Point(NamedTuple):
    x: int
    y: int


class _Level(enum.IntEnum):
    LOW = 1


class _Colour(enum.StrEnum):
    RED = "red"


@pytest.mark.parametrize("key", [_Point(1, 2), _Level.LOW, _Colour.RED, True,
                                 decimal.Decimal("2.5"), 2.0, "plain", 7],
                         ids=lambda key: type(key).__name__)
def test_a_timer_restored_from_rocksdb_fires_with_the_key_it_was_registered_with(
        tmp_path, key) -> None:
    """The RocksDB backend decodes its canonical key bytes to the canonical member of a key's
    family (a named tuple to a tuple); a restored timer still fires with the key as
    registered, its type included (docs/known-issues.md, fixed)."""
    before = RocksDBKeyedStateBackend(KeyGroupRange(0, MAX_PARALLELISM - 1), MAX_PARALLELISM,
                                      local_dir=str(tmp_path / "before"))
    after = RocksDBKeyedStateBackend(KeyGroupRange(0, MAX_PARALLELISM - 1), MAX_PARALLELISM,
                                     local_dir=str(tmp_path / "after"))
    try:
        timers = InternalTimerService(before, ManualTimers(), USER_TIMERS, _Fired())
        before.set_current_key(key)
        timers.register_event_time_timer(None, 10)
        timers.register_processing_time_timer(None, 10_000)
        files = MemoryStateWriter()
        handle = before.snapshot().write(files, "keyed")
        after.restore([handle], lambda h: files.files[h.uri.split("//")[1]])
        fired, clock = _Fired(), ManualTimers()
        restored = InternalTimerService(after, clock, USER_TIMERS, fired)
        restored.restore()
        restored.advance_watermark(100)
        clock.advance(10_000)
        assert fired.fired == [("event", 10, key, None), ("processing", 10_000, key, None)]
        assert [type(fired_key) for _, _, fired_key, _ in fired.fired] == [type(key)] * 2
    finally:
        before.dispose()
        after.dispose()
