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
import threading
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


class RaiseRepeatedly:
    """Raises ``InjectedFailure`` up to ``times`` times in all, each time only once a
    checkpoint newer than the one seen at the previous failure has completed, so the job makes
    progress between failures; the first one waits for a checkpoint newer than
    ``first_after``. Checked every ``every`` records (sleeping ``delay_s`` then).

    Failure *n* is claimed by creating ``<marker>.<n>`` exclusively, already holding the newest
    completed checkpoint id, so parallel subtasks never fail for the same *n* nor twice in one
    attempt, and a restarted job knows how many failures happened.
    """

    def __init__(self, marker: str | os.PathLike[str], checkpoint_dir: str | os.PathLike[str],
                 times: int, every: int = 1, delay_s: float = 0.0, first_after: int = 0) -> None:
        self.marker = os.fspath(marker)
        self.first_after = first_after
        self.pattern = os.path.join(os.fspath(checkpoint_dir), "*", "chk-*", "_metadata")
        self.times = times
        self.every = every
        self.delay_s = delay_s
        self.seen = 0

    def __call__(self, value: Any) -> Any:
        self.seen += 1
        if self.seen % self.every == 0:
            if self.delay_s:
                time.sleep(self.delay_s)
            self._maybe_fail()
        return value

    def map(self, value: Any) -> Any:
        return self(value)

    def failures(self) -> int:
        """How many failures happened so far."""
        return sum(1 for n in range(1, self.times + 1) if os.path.exists(f"{self.marker}.{n}"))

    def due(self) -> bool:
        """Whether the next check fails: a failure is still to come and a checkpoint newer
        than the one seen at the previous failure (``first_after`` for the first) completed.
        A source may wait for it (any thread: it reads files only)."""
        done = self.failures()
        return done < self.times and self._newest() > self._previous(done)

    def _newest(self) -> int:
        return max((_checkpoint_id(path) for path in glob.glob(self.pattern)), default=0)

    def _previous(self, done: int) -> int:
        """The newest checkpoint seen at failure ``done`` (``first_after`` before the first)."""
        if not done:
            return self.first_after
        with open(f"{self.marker}.{done}", encoding="ascii") as f:
            return int(f.read() or 0)

    def _maybe_fail(self) -> None:
        done = self.failures()
        if done >= self.times:
            return
        newest = self._newest()
        if newest <= self._previous(done):
            return
        # Claimed with its content in one step (a hard link to a written file), so another
        # subtask never reads a claimed marker before it says which checkpoint it saw.
        draft = f"{self.marker}.{done + 1}.{os.getpid()}.{threading.get_ident()}"
        with open(draft, "w", encoding="ascii") as f:
            f.write(str(newest))
        try:
            os.link(draft, f"{self.marker}.{done + 1}")
        except FileExistsError:
            return  # another subtask claimed this failure
        finally:
            os.unlink(draft)
        raise InjectedFailure(f"injected failure {done + 1} of {self.times}")


def _checkpoint_id(metadata_path: str) -> int:
    name = os.path.basename(os.path.dirname(metadata_path))  # chk-<n>
    try:
        return int(name.rpartition("-")[2])
    except ValueError:
        return 0
