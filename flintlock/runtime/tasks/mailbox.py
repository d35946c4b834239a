"""The mailbox of one subtask: how other threads get work done on the task thread.

A subtask's operators, state and record writers are touched by exactly one thread, the task
thread (DESIGN.md §3). Everything that must happen "inside" the task but is caused elsewhere —
a checkpoint trigger from the JobManager, a notify-complete, a processing-time timer firing,
a cancel — is put into the mailbox as a ``Mail`` and run by the task thread between two
batches of input. This is what makes a snapshot consistent: no record is half-processed when
a mail runs.

The same condition variable also carries the "input is available" signal, so an idle task
waits on exactly one thing: ``wait(timeout)`` returns when a mail arrives, when input became
available (``signal_input()``), or when the timeout passes. Nothing polls.

An operator that must wait inside a batch for work finished by another thread (async I/O
waiting for a free slot, ``runtime.tasks.async_operator``) blocks in ``wait_for_wake``: it
returns on ``wake()``, on newly put mail (a cancel) or on close, but mail that was already
queued neither ends that wait nor runs, so a checkpoint trigger never runs in the middle of a
batch.

Thread ownership: ``put``/``signal_input``/``wake``/``close`` from any thread;
``take_all``/``wait``/``wait_for_wake`` from the task thread only. All fields are guarded by
``_cond``.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from flintlock.common.errors import FlintlockError


class MailboxClosedError(FlintlockError):
    """Mail was put into a mailbox whose task already ended."""


@dataclass(frozen=True, slots=True)
class Mail:
    """An action to run on the task thread; ``urgent`` mail runs before ordinary mail."""

    action: Callable[[], None]
    description: str
    urgent: bool = False


class Mailbox:
    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._urgent: deque[Mail] = deque()  # first in, first out, before any ordinary mail
        self._mails: deque[Mail] = deque()
        self._input_signalled = False
        self._woken = False
        self._puts = 0  # mails put so far: a wait for wake ends when it changes
        self._closed = False

    def put(self, action: Callable[[], None], description: str, *, urgent: bool = False) -> None:
        mail = Mail(action, description, urgent)
        with self._cond:
            if self._closed:
                raise MailboxClosedError(f"mailbox closed; dropped {description!r}")
            (self._urgent if urgent else self._mails).append(mail)
            self._puts += 1
            self._cond.notify()

    def offer(self, action: Callable[[], None], description: str, *, urgent: bool = False) -> bool:
        """Like ``put``, but a closed mailbox (the task ended) drops the mail: returns False."""
        try:
            self.put(action, description, urgent=urgent)
        except MailboxClosedError:
            return False
        return True

    def signal_input(self) -> None:
        """Input became available (called by the input gate's availability listener)."""
        with self._cond:
            self._input_signalled = True
            self._cond.notify()

    def wake(self) -> None:
        """Ends a ``wait_for_wake`` of the task thread (called by an operator's helper thread)."""
        with self._cond:
            self._woken = True
            self._cond.notify()

    def wait_for_wake(self, timeout_s: float | None) -> None:
        """Block until ``wake()``, new mail, close or the timeout; clears the wake flag. Mail
        already queued is left for the task loop (the caller is in the middle of a batch)."""
        with self._cond:
            puts = self._puts
            if not self._woken and not self._closed:
                self._cond.wait_for(
                    lambda: self._woken or self._closed or self._puts != puts, timeout_s)
            self._woken = False

    def has_mail(self) -> bool:
        return bool(self._urgent or self._mails)

    def take_all(self) -> list[Mail]:
        """Every mail queued now: urgent mail first, each kind in the order it was put."""
        with self._cond:
            mails = [*self._urgent, *self._mails]
            self._urgent.clear()
            self._mails.clear()
        return mails

    def wait(self, timeout_s: float | None) -> None:
        """Block until mail or an input signal arrives (or the timeout passes); clears the
        input signal, so the caller must look at its inputs after every return."""
        with self._cond:
            if not self.has_mail() and not self._input_signalled and not self._closed:
                self._cond.wait(timeout_s)
            self._input_signalled = False

    def close(self) -> list[Mail]:
        """Refuse further mail; returns what was still queued (for the caller to log)."""
        with self._cond:
            self._closed = True
            left = [*self._urgent, *self._mails]
            self._urgent.clear()
            self._mails.clear()
            self._cond.notify_all()
        return left

    @property
    def closed(self) -> bool:
        return self._closed
