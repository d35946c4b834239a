"""Savepoint triggers of the REST endpoint: trigger id → the JobManager's savepoint future.

Flink's REST API is asynchronous for savepoints: ``POST .../savepoints`` (or ``.../stop``)
answers at once with a trigger id, and ``GET .../savepoints/<trigger-id>`` reports
IN_PROGRESS, then COMPLETED with the location or the failure cause.

A per-job endpoint dies with its job, and stop-with-savepoint ends the job right after the
savepoint completes, so a client could lose the answer it is polling for. Hence the
invariant this registry keeps for ``RestEndpoint.close``: a trigger whose outcome is known
but that no client has fetched yet is *unfetched*, and the endpoint stays up (bounded by its
linger time) until every outcome was fetched. Triggers still in progress when the job has
ended are failed (``fail_in_progress``) so they too get an answer.

Thread ownership: called from HTTP request threads and the job's closing thread; one lock
guards the table, and a condition wakes ``wait_until_fetched``.
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass

from flintlock.common.errors import FlintlockError


class TriggerState(enum.Enum):
    IN_PROGRESS = "IN_PROGRESS"
    COMPLETED = "COMPLETED"


class UnknownTriggerError(FlintlockError):
    """No savepoint trigger with this id exists for the job."""

    def __init__(self, trigger_id: str) -> None:
        super().__init__(trigger_id)
        self.trigger_id = trigger_id

    def __str__(self) -> str:
        return f"no savepoint operation with trigger id {self.trigger_id!r}"


class DuplicateTriggerError(FlintlockError):
    """A client-chosen trigger id is already in use."""

    def __init__(self, trigger_id: str) -> None:
        super().__init__(trigger_id)
        self.trigger_id = trigger_id

    def __str__(self) -> str:
        return f"trigger id {self.trigger_id!r} is already in use"


class SavepointAbandonedError(FlintlockError):
    """The job ended before the savepoint was taken."""


@dataclass(frozen=True, slots=True)
class TriggerStatus:
    """One poll's answer: ``location`` when completed, ``failure`` when it failed."""

    trigger_id: str
    state: TriggerState
    location: str | None = None
    failure: BaseException | None = None


class SavepointTriggers:
    """The savepoint operations triggered through one endpoint."""

    def __init__(self, new_trigger_id: Callable[[], str]) -> None:
        self._new_trigger_id = new_trigger_id
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._futures: dict[str, Future[str]] = {}  # guarded by _lock
        self._fetched: set[str] = set()  # ids whose final outcome a client has read

    def add(self, future: Future[str], trigger_id: str | None = None) -> str:
        """Registers ``future`` under ``trigger_id`` (or a new id); returns the id."""
        with self._lock:
            trigger_id = trigger_id or self._new_trigger_id()
            if trigger_id in self._futures:
                raise DuplicateTriggerError(trigger_id)
            self._futures[trigger_id] = future
        future.add_done_callback(self._on_done)
        return trigger_id

    def _on_done(self, _: Future[str]) -> None:
        with self._lock:
            self._changed.notify_all()

    def status(self, trigger_id: str) -> TriggerStatus:
        """The trigger's state; a final answer counts as fetched."""
        with self._lock:
            future = self._futures.get(trigger_id)
            if future is None:
                raise UnknownTriggerError(trigger_id)
            if not future.done():
                return TriggerStatus(trigger_id, TriggerState.IN_PROGRESS)
            self._fetched.add(trigger_id)
            self._changed.notify_all()
        error = future.exception()
        if error is not None:
            return TriggerStatus(trigger_id, TriggerState.COMPLETED, failure=error)
        return TriggerStatus(trigger_id, TriggerState.COMPLETED, location=future.result())

    def fail_in_progress(self, reason: str) -> None:
        """Fails every trigger still in progress (the job has ended)."""
        with self._lock:
            pending = [f for f in self._futures.values() if not f.done()]
        for future in pending:
            try:
                future.set_exception(SavepointAbandonedError(reason))
            except InvalidStateError:  # completed concurrently: its own answer stands
                continue

    def unfetched(self) -> list[str]:
        with self._lock:
            return self._unfetched()

    def _unfetched(self) -> list[str]:
        return sorted(tid for tid, f in self._futures.items()
                      if f.done() and tid not in self._fetched)

    def wait_until_fetched(self, timeout_s: float) -> bool:
        """Waits (at most ``timeout_s``) until every known outcome has been fetched."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while self._unfetched():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._changed.wait(remaining)
            return True
