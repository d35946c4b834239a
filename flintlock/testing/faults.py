"""Failures on cue, for tests of recovery (users' and flintlock's own).

Each is a map function that passes records through and fails once, the first time it sees
``trigger``. "Once" must hold across restarts and processes, so it is remembered in a marker
file (a path every TaskManager can see): the restarted job passes the same record unharmed.

* ``RaiseOnce`` raises ``InjectedFailure`` (the task fails; the TaskManager reports it);
* ``ExitOnce`` ends the whole TaskManager process with ``os._exit`` (a crash: no report);
* ``FreezeOnce`` stops the TaskManager process with SIGSTOP (no thread runs, no heartbeat
  leaves: what a hung machine looks like to the JobManager).

They are module-level classes, so they pickle by reference and work the same with
TaskManagers hosted as threads and on Spark. No state beyond the marker file.
"""

from __future__ import annotations

import os
import signal
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
            with open(self.marker, "w"):
                pass
            self.fail()
        return value

    def fail(self) -> None:
        raise NotImplementedError


class RaiseOnce(_Once):
    def fail(self) -> None:
        raise InjectedFailure("injected failure")


class ExitOnce(_Once):
    def fail(self) -> None:
        os._exit(3)


class FreezeOnce(_Once):
    def fail(self) -> None:
        os.kill(os.getpid(), signal.SIGSTOP)
