"""The task's one timer service, in two layers as Flink's (``ProcessingTimeService`` and
``InternalTimerService``):

- ``TaskTimerService``: the task's wall clock. Processing-time timers of its operators, the
  alignment timeout of alternating checkpoints, the checks of timeoutable barriers. Flink runs
  a task's timers on its mailbox thread; here too every callback runs on the task thread:
  when a timer is due, the service puts its action into the task's mailbox, and the task loop
  runs it between two batches like any other mail. One thread per task waits for the
  earliest due time (a heap), instead of a thread per timer.
- ``InternalTimerService``: the keyed timers of one operator in both time domains (the timers
  of ``KeyedProcessFunction``s and the window operator's trigger and cleanup timers). A timer
  is a (key, namespace, timestamp) triple, registered at most once; processing-time ones
  wake the task through the ``TaskTimerService`` above, event-time ones fire when the
  operator's watermark passes them (``advance_watermark``, called by the operator's
  ``process_watermark`` on the task thread). See the design note of that class.

Thread ownership: ``TaskTimerService.schedule``, ``schedule_after`` and ``cancel`` may be
called from any thread (operators call them on the task thread); its own thread only moves
due actions into the mailbox, and its state is guarded by ``_lock``. An
``InternalTimerService`` belongs to the task thread.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from flintlock.common.clock import Clock
from flintlock.common.state import MapStateDescriptor
from flintlock.runtime.network.event_time import MIN_WATERMARK
from flintlock.runtime.state.backend import NO_KEY, KeyedStateBackend
from flintlock.runtime.tasks.mailbox import Mailbox
from flintlock.runtime.tasks.operator import TimerScheduler

DEFAULT_BUNDLE_TIME_MS = 1000
"""``python.fn-execution.bundle.time``: how long a processing-time timer that was due when it
was registered waits at most for the end of its bundle."""


class TimerHandle:
    """A scheduled action; ``cancel`` before it is due and it never runs."""

    __slots__ = ("cancelled",)

    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class TaskTimerService:
    """The task's wall-clock timers (see the module docstring); a ``TimerScheduler``."""

    def __init__(self, mailbox: Mailbox, clock: Clock, name: str) -> None:
        self._mailbox = mailbox
        self._clock = clock
        self._name = name
        self._lock = threading.Condition()
        self._heap: list[tuple[float, int, Callable[[], None], str, TimerHandle]] = []
        self._sequence = itertools.count()  # ties keep the order they were scheduled in
        self._thread: threading.Thread | None = None
        self._closed = False

    def now_ms(self) -> int:
        """Processing time: the wall clock in milliseconds."""
        return self._clock.wall_ms()

    def schedule(self, timestamp_ms: int, callback: Callable[[int], None]) -> TimerHandle:
        """A processing-time timer: ``callback(timestamp_ms)`` on the task thread once the
        wall clock reaches ``timestamp_ms``."""
        delay_s = max(0.0, (timestamp_ms - self.now_ms()) / 1000.0)
        return self.schedule_after(delay_s, lambda: callback(timestamp_ms),
                                   f"timer {timestamp_ms}")

    def schedule_after(self, delay_s: float, action: Callable[[], None],
                       description: str) -> TimerHandle:
        """``action`` on the task thread after ``delay_s`` seconds."""
        handle = TimerHandle()
        with self._lock:
            if self._closed:
                handle.cancel()
                return handle
            heapq.heappush(self._heap, (time.monotonic() + max(0.0, delay_s),
                                        next(self._sequence), action, description, handle))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name=f"flintlock-timers-{self._name}")
                self._thread.start()
            self._lock.notify()
        return handle

    def close(self) -> None:
        """Cancels every timer and ends the service's thread (the task is ending)."""
        with self._lock:
            self._closed = True
            for entry in self._heap:
                entry[4].cancel()
            self._heap.clear()
            self._lock.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._closed and (
                        not self._heap or self._heap[0][0] > time.monotonic()):
                    wait = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._lock.wait(wait)
                if self._closed:
                    return
                _, _, action, description, handle = heapq.heappop(self._heap)
            if not handle.cancelled and not self._mailbox.closed:
                self._mailbox.offer(action, description)


# -- keyed timers of one operator --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TimerStates:
    """Where an ``InternalTimerService`` keeps its timers in the keyed state backend: one
    internal map state per time domain. The map key of a timer is its timestamp, or
    ``(timestamp, namespace)`` when ``namespaced``; the value is ``True``, or ``(key,)``, the
    key as it was registered, when the key's type is not one the backends give back
    unchanged (``_timer_value``). These names and entries are part of the checkpoint and
    savepoint format: keep them (a restore reads both values)."""

    processing: MapStateDescriptor
    event: MapStateDescriptor
    namespaced: bool


USER_TIMERS = TimerStates(MapStateDescriptor("_flintlock_processing_timers", None, None),
                          MapStateDescriptor("_flintlock_event_timers", None, None),
                          namespaced=False)
"""The timers of keyed process functions (one per key and time: no namespace)."""
WINDOW_TIMERS = TimerStates(
    MapStateDescriptor("_flintlock_window_processing_timers", None, None),
    MapStateDescriptor("_flintlock_window_event_timers", None, None),
    namespaced=True)
"""The window operator's timers (one per key, window and time)."""


_KEYS_GIVEN_BACK = frozenset({str, int, bytes})
"""Key types that every keyed backend's ``keys()`` returns as they were set. A RocksDB
backend's entry keys are canonical bytes (docs/internals/state.md, "Canonical key bytes"):
one encoding for all equal keys, decoded to the canonical member of their family, so a named
tuple comes back a tuple, an ``IntEnum`` an ``int``, a ``Decimal`` a number. A timer of such a
key keeps the key itself beside it, so ``on_timer`` after a restore sees the key the user
registered the timer with."""


def _timer_value(key: Any) -> Any:
    return True if type(key) in _KEYS_GIVEN_BACK else (key,)


class Triggerable(Protocol):
    """What an ``InternalTimerService`` calls for a due timer, with the timer's key already
    the current key of the keyed backend (task thread)."""

    def on_event_time(self, timestamp: int, key: Any, namespace: Any) -> None: ...

    def on_processing_time(self, timestamp: int, key: Any, namespace: Any) -> None: ...


class _TimerQueue:
    """The timers of one time domain. ``_registered`` holds every live timer as a
    ``(timestamp, key, namespace)`` triple: registering a timer that exists is one set lookup
    (the per-record case: every element of a window registers the same timer). The map state
    holds the same timers per key (what checkpoints carry), the heap orders them for firing:
    its entries are ``(timestamp, sequence, timer)`` with ``timer`` the triple itself, so
    firing one builds no tuple. A deleted timer stays in the heap and is skipped when it
    comes up."""

    __slots__ = (
        "_backend",
        "_descriptor",
        "_heap",
        "_held",
        "_namespaced",
        "_registered",
        "_sequence",
        "_state",
    )

    def __init__(self, backend: Any, descriptor: MapStateDescriptor, namespaced: bool) -> None:
        self._backend = backend
        self._descriptor = descriptor
        self._namespaced = namespaced
        self._registered: set[tuple[int, Any, Any]] = set()
        self._heap: list[tuple[int, int, tuple[int, Any, Any]]] = []
        self._held: list[tuple[int, int, tuple[int, Any, Any]]] = []
        self._sequence = 0  # ties fire in registration order; also marks "registered since"
        self._state: Any = None

    def _timers(self) -> Any:
        if self._state is None:
            self._state = self._backend.get_partitioned_state(self._descriptor)
        return self._state

    def __len__(self) -> int:
        return len(self._registered)

    def restore(self) -> None:
        """Rebuilds the index and the firing order from the restored state of every key."""
        backend = self._backend
        for stored_key in list(backend.keys(self._descriptor.name)):
            backend.set_current_key(stored_key)
            for entry, value in list(self._timers().items()):
                timestamp, namespace = entry if self._namespaced else (entry, None)
                key = value[0] if type(value) is tuple else stored_key
                timer = (timestamp, key, namespace)
                if timer not in self._registered:
                    self._registered.add(timer)
                    self._push(timer)

    def register(self, timestamp: int, namespace: Any, held: bool = False) -> bool:
        """Registers for the current key; False if that timer exists already. A ``held``
        timer is registered (and snapshotted) but does not fire before ``release_held``."""
        key = self._backend.current_key
        if key is NO_KEY:
            key = self._backend.get_current_key()  # raises the backend's error
        timer = (timestamp, key, namespace)
        registered = self._registered
        if timer in registered:
            return False
        registered.add(timer)
        state = self._state if self._state is not None else self._timers()
        state.put((timestamp, namespace) if self._namespaced else timestamp,
                  True if type(key) in _KEYS_GIVEN_BACK else (key,))  # _timer_value
        self._sequence += 1
        if held:
            self._held.append((timestamp, self._sequence, timer))
        else:
            heapq.heappush(self._heap, (timestamp, self._sequence, timer))
        return True

    @property
    def holds(self) -> bool:
        """Whether held timers wait for ``release_held``."""
        return bool(self._held)

    def release_held(self) -> None:
        """Lets the held timers fire."""
        held, self._held = self._held, []
        for item in held:
            heapq.heappush(self._heap, item)

    def delete(self, timestamp: int, namespace: Any) -> None:
        timer = (timestamp, self._backend.get_current_key(), namespace)
        if timer in self._registered:
            self._registered.discard(timer)
            self._timers().remove((timestamp, namespace) if self._namespaced else timestamp)

    def earliest(self) -> int | None:
        return self._heap[0][0] if self._heap else None

    def fire_due(self, now: int, on_fire: Callable[[int, Any, Any], None],
                 registered_before: bool = False) -> None:
        """Fires every timer at or before ``now``, earliest first, with its key set. With
        ``registered_before`` a timer registered while these fire waits for the next call,
        even if it is due already."""
        for timestamp, key, namespace in self.due(now, registered_before):
            on_fire(timestamp, key, namespace)

    def due(self, now: int, registered_before: bool = False
            ) -> Iterator[tuple[int, Any, Any]]:
        """The timers at or before ``now`` as ``fire_due`` fires them: each is taken out of
        the index and the state and its key set as the current key just before it is
        yielded, so a timer registered while the caller handles one is seen at the next step
        (if due, and not ``registered_before``). Stopping early keeps the timers not yet
        yielded."""
        backend, heap, registered = self._backend, self._heap, self._registered
        state = self._timers()
        namespaced = self._namespaced
        plain_key = type(backend).set_current_key is KeyedStateBackend.set_current_key
        limit = self._sequence
        deferred: list[tuple[int, int, tuple[int, Any, Any]]] = []
        pop = heapq.heappop
        try:
            while heap and heap[0][0] <= now:
                item = pop(heap)
                timer = item[2]
                if registered_before and item[1] > limit:
                    deferred.append(item)
                    continue
                if timer not in registered:
                    continue  # deleted, or fired already
                registered.discard(timer)
                timestamp, key, namespace = timer
                if plain_key:
                    backend.current_key = key
                else:
                    backend.set_current_key(key)
                state.remove((timestamp, namespace) if namespaced else timestamp)
                yield timer
        finally:
            for item in deferred:
                heapq.heappush(heap, item)

    def _push(self, timer: tuple[int, Any, Any]) -> None:
        self._sequence += 1
        heapq.heappush(self._heap, (timer[0], self._sequence, timer))


class InternalTimerService:
    """Keyed timers of one operator, in processing and event time (Flink's
    ``InternalTimerService``).

    Design note. A timer is ``(key, namespace, timestamp)`` in one time domain; registering
    it twice keeps one (the namespace is the window for the window operator, None for process
    functions). Timers are keyed state (DESIGN.md §5): each key's timers live in an internal
    map state of the operator's keyed backend (``TimerStates``), so they are snapshotted,
    restored and rescaled by key group with the rest of the operator's keyed state, and a
    restore at another parallelism brings each subtask the timers of its own key groups
    (``restore`` rebuilds the in-memory index from them). In memory, a set answers "is this
    timer registered" and a heap per domain orders the timers for firing.

    Firing, always on the task thread with the timer's key set as the current key:
    processing-time timers when the task's ``TimerScheduler`` reaches the earliest one (one
    wake-up scheduled at a time); event-time timers when ``advance_watermark`` passes them.
    With ``defer_new_event_timers`` (the window operator) an event-time timer registered
    while a watermark's timers fire waits for the next watermark even if it is due, as
    PyFlink's window timers do (see ``window_operator``).

    Bundles. PyFlink runs a Python operator's records in bundles and hands the timers they
    registered to the JVM when the bundle ends, which is before the watermark that ended it
    is processed; so a processing-time timer registered for a time already past (a window
    cleanup at the end of an event-time window, under an assigner whose ``is_event_time`` is
    False: PyFlink's documented custom assigner) fires *after* the event-time timers of the
    next watermark, never before. Here too: such a timer is registered and snapshotted at
    once but held until the bundle ends — when the next watermark has fired its event-time
    timers, or ``python.fn-execution.bundle.time`` after the first held timer, whichever comes
    first. Timers due in the future are not held: they fire at their time.
    """

    def __init__(self, backend: Any, scheduler: TimerScheduler, states: TimerStates,
                 triggerable: Triggerable, defer_new_event_timers: bool = False,
                 bundle_time_ms: int = DEFAULT_BUNDLE_TIME_MS) -> None:
        if backend is None:
            raise ValueError("keyed timers need a keyed state backend")
        self._scheduler = scheduler
        self._triggerable = triggerable
        self._processing = _TimerQueue(backend, states.processing, states.namespaced)
        self._event = _TimerQueue(backend, states.event, states.namespaced)
        self._wakeup_at: int | None = None
        self._defer_new_event_timers = defer_new_event_timers
        self._bundle_time_ms = bundle_time_ms
        self._bundle = 0  # counts bundles: a scheduled end of an ended bundle does nothing
        self.watermark = MIN_WATERMARK
        """The operator's event time: the last watermark passed to ``advance_watermark``."""

    def restore(self) -> None:
        """After the keyed backend was restored: rebuilds the timers of every key."""
        self._processing.restore()
        self._event.restore()
        self._schedule_wakeup()

    def current_processing_time(self) -> int:
        return self._scheduler.now_ms()

    def current_watermark(self) -> int:
        return self.watermark

    def register_processing_time_timer(self, namespace: Any, timestamp: int) -> None:
        """A processing-time timer for the current key (kept once per key, namespace, time).
        One that is due already waits for the end of the bundle (see the class doc)."""
        now = self._scheduler.now_ms()
        due = timestamp <= now
        opens_bundle = due and not self._processing.holds
        if not self._processing.register(timestamp, namespace, held=due):
            return
        if not due:
            self._schedule_wakeup()
        elif opens_bundle:
            bundle = self._bundle
            self._scheduler.schedule(now + self._bundle_time_ms,
                                     lambda _now: self._end_bundle(bundle))

    def delete_processing_time_timer(self, namespace: Any, timestamp: int) -> None:
        self._processing.delete(timestamp, namespace)

    def register_event_time_timer(self, namespace: Any, timestamp: int) -> None:
        """An event-time timer for the current key (kept once per key, namespace, time)."""
        self._event.register(timestamp, namespace)

    def delete_event_time_timer(self, namespace: Any, timestamp: int) -> None:
        self._event.delete(timestamp, namespace)

    def event_timer_registrar(self) -> Callable[[int, Any], bool]:
        """``register_event_time_timer`` without its layers, for a batch path: a callable
        ``(timestamp, namespace)`` registering for the current key (an int timestamp)."""
        return self._event.register

    def timer_counts(self) -> tuple[int, int]:
        """(processing-time, event-time) timers registered and not fired yet."""
        return len(self._processing), len(self._event)

    def advance_watermark(self, watermark: int) -> None:
        """Event time reached ``watermark``: fires every event-time timer at or before it,
        then ends the bundle (held processing-time timers fire after this watermark)."""
        self.watermark = watermark
        self._event.fire_due(watermark, self._triggerable.on_event_time,
                             self._defer_new_event_timers)
        self._end_bundle(self._bundle)

    def due_event_timers(self, watermark: int) -> Iterator[tuple[int, Any, Any]]:
        """``advance_watermark`` for an operator that fires a watermark's timers itself, a
        batch at a time (no ``Triggerable`` call per timer): yields each due ``(timestamp,
        key, namespace)`` in the order ``advance_watermark`` fires them, its key the current
        key, and ends the bundle once exhausted. The caller must exhaust it."""
        self.watermark = watermark
        yield from self._event.due(watermark, self._defer_new_event_timers)
        self._end_bundle(self._bundle)

    def _end_bundle(self, bundle: int) -> None:
        if bundle != self._bundle or not self._processing.holds:
            return
        self._bundle += 1
        self._processing.release_held()
        self._schedule_wakeup()

    def _schedule_wakeup(self) -> None:
        earliest = self._processing.earliest()
        if earliest is None:
            return
        if self._wakeup_at is None or earliest < self._wakeup_at:
            self._wakeup_at = earliest
            self._scheduler.schedule(earliest, self._fire_due)

    def _fire_due(self, now: int) -> None:
        self._wakeup_at = None
        now = max(now, self._scheduler.now_ms())
        self._processing.fire_due(now, self._triggerable.on_processing_time)
        self._schedule_wakeup()
