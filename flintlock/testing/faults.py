"""Failures on cue, for tests of recovery (users' and flintlock's own).

Each is a map function that passes records through and fails once, the first time it sees
``trigger``. "Once" must hold across restarts and processes, so it is remembered in a marker
file (a path every TaskManager can see): the restarted job passes the same record unharmed.

* ``RaiseOnce`` raises ``InjectedFailure`` (the task fails; the TaskManager reports it);
* ``ExitOnce`` ends the whole TaskManager process with ``os._exit`` (a crash: no report);
* ``FreezeOnce`` stops the TaskManager process with SIGSTOP (no thread runs, no heartbeat
  leaves: what a hung machine looks like to the JobManager).

``RaiseOnceAfter`` and ``ExitOnceAfter`` fail instead at the first check after a file
matching a glob ``pattern`` exists (a completed checkpoint's ``_metadata``, committed output),
slowing records down a little until then, so the failure lands in the middle of a job and
never before its first checkpoint.

They are module-level classes, so they pickle by reference and work the same with
TaskManagers hosted as threads and on Spark. No state beyond the marker file.
"""

from __future__ import annotations

import glob
import os
import signal
import time
from typing import Any

from flintlock.common.errors import FlintlockError


class InjectedFailure(FlintlockError, RuntimeError):
    """The failure a test asked for."""


class _Once:
    def __init__(self, marker: str | os.PathLike[str], trigger: Any) -> None:
        self.marker = os.fspath(marker)
        self.trigger = trigger

    def __call__(self, value: Any) -> Any:
        if value == self.trigger and not os.path.exists(self.marker):
            self._fire()
        return value

    # A map function's method too: ``ds.map(RaiseOnce(...))`` and ``.map(f.map)`` both work.
    def map(self, value: Any) -> Any:
        return self(value)

    def _fire(self) -> None:
        with open(self.marker, "w"):
            pass
        self.fail()

    def fail(self) -> None:
        raise NotImplementedError


class _OnceAfter(_Once):
    """Checks every ``every`` records (sleeping ``delay_s`` each time) whether a file matches
    ``pattern``; the first time one does, fails once."""

    def __init__(self, marker: str | os.PathLike[str], pattern: str | os.PathLike[str],
                 every: int = 1, delay_s: float = 0.002) -> None:
        super().__init__(marker, None)
        self.pattern = os.fspath(pattern)
        self.every = every
        self.delay_s = delay_s
        self.seen = 0

    def __call__(self, value: Any) -> Any:
        self.seen += 1
        if self.seen % self.every == 0 and not os.path.exists(self.marker):
            time.sleep(self.delay_s)
            if glob.glob(self.pattern):
                self._fire()
        return value


class RaiseOnce(_Once):
    def fail(self) -> None:
        raise InjectedFailure("injected failure")


class ExitOnce(_Once):
    def fail(self) -> None:
        os._exit(3)


class FreezeOnce(_Once):
    def fail(self) -> None:
        os.kill(os.getpid(), signal.SIGSTOP)


class RaiseOnceAfter(_OnceAfter, RaiseOnce):
    """Raises ``InjectedFailure`` once, after a file matching the pattern appeared."""


class ExitOnceAfter(_OnceAfter, ExitOnce):
    """Ends the process with ``os._exit`` once, after a file matching the pattern appeared."""
