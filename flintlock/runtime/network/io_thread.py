"""The network I/O thread of a TaskManager: one selector loop that moves bytes, not records.

Every socket of a TaskManager's data plane (the listening socket, connections being
authenticated, authenticated connections) is registered with this loop's selector; every
connection, server and client handler is owned by the loop. Other threads reach them only
through ``call_soon`` (thread-safe: a deque plus a self-pipe to wake ``select``) or
``call_now_or_soon``, for example a producer's ``notify_data_available`` or a consumer
announcing credit.

Owned by the loop means: touched only by a thread holding the *loop lock*. The loop thread
holds it for each round of handlers (never while it waits in ``select``). ``call_now_or_soon``
lets another thread run a task itself, under the loop lock, when the loop is idle — nothing
posted is waiting and no round is running — and posts it otherwise. That spares the
hand-off to the loop thread (a wake-up, a GIL switch and a scheduler delay) on the paths
that matter: a producer's buffer goes onto the socket from the thread that finished it
(docs/internals/transport.md, "Sending without a hand-off").

Invariants:

- Work posted with ``call_soon`` runs in posting order, on this thread. A task run by
  ``call_now_or_soon`` runs before everything posted after it and after everything posted
  before it (it is posted whenever anything is queued).
- Timers (``call_later``) are the TaskManager's one timer service for the data plane:
  handshake deadlines, liveness checks, and the partition-request back-off of local and
  remote input channels alike (``request_backoff``). They run on this thread; the returned
  ``TimerHandle`` cancels a timer that has not run (any thread).
- ``flush_later(conn)`` batches writes: a connection asked to flush is flushed once, after the
  current round of reads, tasks and timers (or after the task run by ``call_now_or_soon``), so
  many small frames share one ``sendmsg``.
- ``stop()`` runs the registered closers, closes the selector and the wake-up pipe and joins
  the thread: nothing is left behind; afterwards ``call_now_or_soon`` runs nothing.

Who calls it: ``transport.TcpTransport`` and ``flintlock.testing.transport``.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import selectors
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

log = logging.getLogger(__name__)

Task = Callable[[], None]


class Flushable(Protocol):
    def flush(self) -> None: ...


class TimerHandle:
    """A timer of ``IOThread.call_later``; ``cancel`` (any thread) keeps it from running."""

    __slots__ = ("cancelled", "task")

    def __init__(self, task: Task) -> None:
        self.task = task
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class IOThread:
    """A selector loop on its own daemon thread; ``sockets=False`` makes a socket-free loop
    (tasks and timers only, woken by a condition) for the in-memory transport."""

    def __init__(self, name: str, sockets: bool = True) -> None:
        self.name = name
        self._selector = selectors.DefaultSelector() if sockets else None
        self._wake: tuple[socket.socket, socket.socket] | None = None
        if self._selector is not None:
            self._wake = socket.socketpair()
            for end in self._wake:
                end.setblocking(False)
            self._selector.register(self._wake[0], selectors.EVENT_READ, self._drain_wakeups)
        self._cond = threading.Condition(threading.Lock())
        self._tasks: deque[Task] = deque()  # guarded by _cond
        self._woken = False  # a wake-up is pending; guarded by _cond
        self._loop_lock = threading.Lock()  # held while handlers run (see the module doc)
        self._timers: list[tuple[float, int, TimerHandle]] = []  # loop thread only
        self._counter = itertools.count()
        self._to_flush: dict[int, Flushable] = {}  # guarded by _loop_lock
        self._closers: dict[int, Task] = {}  # guarded by _loop_lock (or before start)
        self._running = False
        self._stopped = False  # the loop ended: nothing runs any more; guarded by _loop_lock
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    @property
    def selector(self) -> selectors.BaseSelector:
        if self._selector is None:
            raise RuntimeError(f"I/O thread {self.name} serves no sockets")
        return self._selector

    # -- any thread ---------------------------------------------------------------------------

    def start(self) -> None:
        self._running = True
        self._thread.start()

    def in_loop(self) -> bool:
        return threading.current_thread() is self._thread

    def call_soon(self, task: Task) -> None:
        with self._cond:
            self._tasks.append(task)
            if self._woken:
                return
            self._woken = True
            if self._wake is None:
                self._cond.notify()
                return
        try:
            self._wake[1].send(b"\0")
        except OSError:  # stopped, or the pipe is full (then it is awake anyway)
            pass

    def call_now_or_soon(self, task: Task) -> None:
        """Runs ``task`` on the calling thread, under the loop lock, if the loop is idle (the
        loop thread waits in ``select`` and nothing is posted); else posts it (``call_soon``).
        Connections the task asks to ``flush_later`` are flushed before this returns. From
        the loop thread itself this is ``call_soon`` (a handler's task runs after it)."""
        if self.in_loop() or not self._loop_lock.acquire(blocking=False):
            self.call_soon(task)
            return
        try:
            with self._cond:
                queued = bool(self._tasks)
            if queued or not self._running or self._stopped:
                self.call_soon(task)
                return
            self._guarded(task)
            self._flush_requested()
        finally:
            self._loop_lock.release()

    def call_later(self, delay_s: float, task: Task) -> TimerHandle:
        """Runs ``task`` on this thread after ``delay_s`` (any thread); a ``Scheduler`` of the
        input channels."""
        handle = TimerHandle(task)
        due = time.monotonic() + max(0.0, delay_s)
        self.call_soon(lambda: heapq.heappush(self._timers, (due, next(self._counter), handle)))
        return handle

    def add_closer(self, closer: Task) -> int:
        """Run ``closer`` on this thread when the loop stops (before the selector closes);
        returns a token for ``remove_closer`` (called when the resource closed by itself)."""
        token = next(self._counter)
        self._closers[token] = closer
        return token

    def remove_closer(self, token: int) -> None:
        self._closers.pop(token, None)

    def stop(self, timeout_s: float = 10.0) -> None:
        if not self._thread.is_alive():
            self._close_resources()
            return
        self.call_soon(self._request_stop)
        self._thread.join(timeout_s)

    # -- loop thread --------------------------------------------------------------------------

    def flush_later(self, conn: Flushable) -> None:
        """Under the loop lock: flush ``conn`` once the current round (or inline task) ends."""
        self._to_flush[id(conn)] = conn

    def _request_stop(self) -> None:
        self._running = False

    def _drain_wakeups(self, mask: int) -> None:
        """One read suffices: at most one byte is written per round (``_woken``)."""
        assert self._wake is not None
        try:
            self._wake[0].recv(4096)
        except BlockingIOError:
            pass

    def _run(self) -> None:
        try:
            while self._running:
                self._run_once()
        finally:
            with self._loop_lock:
                self._stopped = True
                for closer in list(self._closers.values()):
                    try:
                        closer()
                    except Exception:
                        log.exception("closing %s", self.name)
                self._close_resources()

    def _run_once(self) -> None:
        timeout = None
        if self._timers:
            timeout = max(0.0, self._timers[0][0] - time.monotonic())
        ready: list[tuple[selectors.SelectorKey, int]] = []
        if self._selector is None:
            with self._cond:
                if not self._tasks:
                    self._cond.wait(timeout)
        else:
            with self._cond:
                if self._tasks:
                    timeout = 0.0
            ready = self._selector.select(timeout)
        with self._loop_lock:
            for key, mask in ready:
                self._guarded(key.data, mask)
            self._run_tasks()
            self._run_timers()
            self._flush_requested()

    def _flush_requested(self) -> None:
        while self._to_flush:
            pending, self._to_flush = self._to_flush, {}
            for conn in pending.values():
                conn.flush()

    def _run_tasks(self) -> None:
        with self._cond:
            tasks, self._tasks = self._tasks, deque()
            self._woken = False
        for task in tasks:
            self._guarded(task)

    def _run_timers(self) -> None:
        now = time.monotonic()
        while self._timers and self._timers[0][0] <= now:
            _, _, handle = heapq.heappop(self._timers)
            if not handle.cancelled:
                self._guarded(handle.task)

    def _guarded(self, fn: Callable[..., None], *args: int) -> None:
        """Handlers fail their own connection on error; anything escaping is a bug, logged so
        the loop (and every other connection) keeps running."""
        try:
            fn(*args)
        except Exception:
            log.exception("unexpected error on %s", self.name)

    def _close_resources(self) -> None:
        if self._selector is not None:
            self._selector.close()
        for end in self._wake or ():
            end.close()
