"""The job's status, and waiting for it (or for what the attempt reports) to change.

``JobStatusBoard`` holds the job's ``JobStatus`` behind one condition. The JobManager thread
changes the status (``set``) and, under the same lock, the task states its waiters look at
(``changing()``); both wake every waiter. Any thread reads the status (``current``) or waits
until a condition holds (``wait_for``, ``wait_for_status``): the driver's caller, the REST
API, tests.

Threads: written by the JobManager thread only; read from any thread; all under the lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager

from flintlock.common.job_status import JobStatus


class JobStatusBoard:
    """The job's status and a condition notified when it, or what waiters watch, changes."""

    def __init__(self, status: JobStatus = JobStatus.CREATED) -> None:
        self._changed = threading.Condition(threading.Lock())
        self._status = status  # under _changed

    @property
    def current(self) -> JobStatus:
        with self._changed:
            return self._status

    def set(self, status: JobStatus) -> None:
        """JobManager thread: the job is now ``status``."""
        with self._changed:
            self._status = status
            self._changed.notify_all()

    @contextmanager
    def changing(self) -> Iterator[None]:
        """JobManager thread: change what waiters watch under the lock, then wake them."""
        with self._changed:
            yield
            self._changed.notify_all()

    def wait_for(self, condition: Callable[[], bool], timeout_s: float) -> bool:
        """Waits until ``condition()`` (called under the lock) holds; False on timeout."""
        with self._changed:
            return self._changed.wait_for(condition, timeout_s)

    def wait_for_status(self, wanted: Collection[JobStatus], timeout_s: float) -> bool:
        return self.wait_for(lambda: self._status in wanted, timeout_s)
