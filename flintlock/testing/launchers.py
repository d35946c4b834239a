"""A launcher that runs TaskManagers as threads of the current process.

The same ``TaskManager`` code as on Spark, with real RPC and TCP data connections between the
TaskManagers, but no Spark: integration tests of the JobManager and the runtime start in
milliseconds instead of seconds. ``fail_tm`` lets a test kill one TaskManager's connections
abruptly (as a dying process would).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from flintlock.runtime.messages import TaskManagerPayload
from flintlock.runtime.taskmanager import TaskManager


class ThreadAttempt:
    """The TaskManager threads of one attempt."""

    def __init__(self, payloads: list[TaskManagerPayload],
                 on_start: Callable[[TaskManager], None] | None) -> None:
        self.task_managers = [TaskManager(p) for p in payloads]
        self._errors: list[BaseException] = []
        self._threads = [
            threading.Thread(target=self._run, args=(tm,), daemon=True,
                             name=f"flintlock-test-tm{tm.payload.tm_index}")
            for tm in self.task_managers
        ]
        for tm in self.task_managers:
            if on_start is not None:
                on_start(tm)
        for thread in self._threads:
            thread.start()

    def _run(self, tm: TaskManager) -> None:
        try:
            tm.run()
        except BaseException as exc:  # reported through failure()
            self._errors.append(exc)

    def failure(self) -> BaseException | None:
        return self._errors[0] if self._errors else None

    def done(self) -> bool:
        return not any(thread.is_alive() for thread in self._threads)

    def cancel(self) -> None:
        for tm in self.task_managers:
            tm._cancel_all()

    def wait(self, timeout_s: float) -> bool:
        for thread in self._threads:
            thread.join(timeout_s)
        return self.done()


class ThreadLauncher:
    """``Launcher`` for tests: every attempt's TaskManagers run as threads here. The code is
    already here, so the job's modules are not shipped by value (``ships_code``)."""

    ships_code = False

    def __init__(self, slots: int | None = None,
                 on_start: Callable[[TaskManager], None] | None = None) -> None:
        self.slots = slots
        self.attempts: list[ThreadAttempt] = []
        self._on_start = on_start

    def available_slots(self) -> int | None:
        return self.slots

    def launch(self, payloads: list[TaskManagerPayload], description: str) -> ThreadAttempt:
        attempt = ThreadAttempt(payloads, self._on_start)
        self.attempts.append(attempt)
        return attempt
