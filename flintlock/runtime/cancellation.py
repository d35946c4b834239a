"""Waiting for cancelled task threads, and what to do about one that never ends.

A Python thread cannot be interrupted: a task thread inside user code that blocks (a long
sleep, a call to a service that never answers) or loops sees its cancellation only when it
returns to the task's mailbox. ``await_task_threads`` is the TaskManager's watchdog for that
case, after Flink's ``task.cancellation.interval`` / ``task.cancellation.timeout``:

- every *interval* it cancels the stuck tasks again and logs where each stuck thread is (its
  current stack), so the user sees which function does not return;
- after the *timeout* (0: wait for ever) it gives up and calls ``on_timeout`` with the threads
  still alive. A TaskManager alone in its process (a Spark barrier task) ends the process
  there (``exit_process``): returning normally would hand the Spark worker back for reuse with
  the stuck thread still running in it, holding memory and CPU of later jobs. TaskManager
  threads of the test launcher only log.

No state of its own: everything lives in the caller's frame (the TaskManager's main thread).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence

log = logging.getLogger(__name__)

EXIT_CODE_STUCK_TASK = 71
"""Exit status of a TaskManager process ended because a task thread outlived
``task.cancellation.timeout`` (EX_OSERR-like: the process could not stop its own thread)."""


def thread_stack(thread: threading.Thread) -> str:
    """Where ``thread`` is now, innermost call last (empty if it has ended)."""
    frame = sys._current_frames().get(thread.ident or -1)
    if frame is None:
        return ""
    return "".join(traceback.format_stack(frame))


def await_task_threads(
    threads: Sequence[threading.Thread],
    *,
    interval_s: float,
    timeout_s: float,
    cancel_again: Callable[[], None],
    on_timeout: Callable[[list[threading.Thread]], None],
) -> bool:
    """Joins ``threads``; True when all ended. While some run: every ``interval_s`` calls
    ``cancel_again`` and logs each stuck thread's stack; after ``timeout_s`` (> 0) calls
    ``on_timeout(alive)`` and returns False. Real time throughout: ``Thread.join`` waits in
    it."""
    clock = time.monotonic
    started = clock()
    deadline = started + timeout_s if timeout_s > 0 else None
    while True:
        next_report = clock() + interval_s
        if deadline is not None:
            next_report = min(next_report, deadline)
        for thread in threads:
            thread.join(max(0.0, next_report - clock()))
        alive = [t for t in threads if t.is_alive()]
        if not alive:
            return True
        waited = clock() - started
        if deadline is not None and clock() >= deadline:
            on_timeout(alive)
            return False
        for thread in alive:
            log.warning("task thread %s has not ended %.0f s after its cancellation; it is "
                        "at:\n%s", thread.name, waited, thread_stack(thread))
        cancel_again()


def exit_process(alive: list[threading.Thread], timeout_s: float) -> None:
    """Ends this process at once (no cleanup can run: a thread of it is stuck), after logging
    where every stuck thread is."""
    for thread in alive:
        log.error("task thread %s did not end within task.cancellation.timeout (%.0f s); "
                  "ending the TaskManager process. It is at:\n%s",
                  thread.name, timeout_s, thread_stack(thread))
    logging.shutdown()
    sys.stderr.flush()
    os._exit(EXIT_CODE_STUCK_TASK)
