"""How a job or one of its attempts ends other than by finishing. Stateless: exception types
and formatters.

``JobFailedError`` prints, under its one-line summary, the traceback of the failure on the
TaskManager (the ``RemoteTraceback`` in its cause chain) with the user's frames first and the
runtime's frames (flintlock, installed packages, the standard library) folded into a count:
what PyFlink users read first is where their function raised (issue 30). The full chain stays
in ``__cause__`` for ``traceback.print_exception``.
"""

from __future__ import annotations

import os
import re
import sysconfig
import traceback
from typing import Any

from flintlock.common.errors import FlintlockError
from flintlock.runtime.rpc.errors import RemoteTraceback

_FRAME = re.compile(r'^  File "(?P<file>[^"]*)", line \d+, in .*$')
_RUNTIME_PARTS = ("site-packages", "dist-packages")
_CHAIN_DEPTH = 16


class JobFailedError(FlintlockError):
    """The job failed for good; ``__cause__`` is the failure that ended its last attempt."""

    def __init__(self, job_name: str, detail: str) -> None:
        super().__init__(job_name, detail)
        self.job_name = job_name
        self.detail = detail

    @property
    def remote_traceback(self) -> str | None:
        """The TaskManager's traceback text of the failure, if it travelled with it."""
        return find_remote_traceback(self.__cause__)

    def __str__(self) -> str:
        summary = f"job {self.job_name!r} failed: {self.detail}"
        notes = getattr(self.__cause__, "__notes__", None) or []
        if notes:
            summary += "\n" + "\n".join(str(note) for note in notes)
        remote = self.remote_traceback
        if remote is None:
            return summary
        return f"{summary}\n{fold_runtime_frames(remote)}"


class JobNotPicklableError(FlintlockError):
    """The job graph could not be pickled for the TaskManagers (with its own modules)."""

    def __init__(self, job_name: str, detail: str) -> None:
        super().__init__(job_name, detail)
        self.job_name = job_name
        self.detail = detail

    def __str__(self) -> str:
        return (f"job {self.job_name!r} cannot be shipped to the TaskManagers: {self.detail}; "
                "hint: create unpicklable resources (locks, connections, files) in a function's "
                "open(), or set classloader.resolve-order: parent-first and install the job's "
                "modules on the cluster")


class AttemptFailedError(FlintlockError):
    """One attempt of the job failed (a task, a TaskManager, or the Spark job)."""


class TaskManagerLostError(AttemptFailedError):
    """A TaskManager of the attempt sent no heartbeat for ``heartbeat.timeout``."""

    def __init__(self, tm_index: int, timeout_ms: float) -> None:
        super().__init__(tm_index, timeout_ms)
        self.tm_index = tm_index
        self.timeout_ms = timeout_ms

    def __str__(self) -> str:
        return (f"TaskManager {self.tm_index} sent no heartbeat for {self.timeout_ms:g} ms "
                "(heartbeat.timeout)")


class JobCancelledError(FlintlockError):
    """The job was cancelled before it finished."""


def describe(error: BaseException) -> str:
    """``Type: message``, for logs and ``JobFailedError``."""
    return f"{type(error).__name__}: {error}"


def find_remote_traceback(error: BaseException | None) -> str | None:
    """The text of the first ``RemoteTraceback`` in ``error``'s cause/context chain."""
    seen = 0
    while error is not None and seen < _CHAIN_DEPTH:
        if isinstance(error, RemoteTraceback):
            return error.text
        error = error.__cause__ or error.__context__
        seen += 1
    return None


def failure_traceback(error: BaseException) -> str:
    """The traceback to show for ``error``: the TaskManager's where it travelled with it,
    else this process's (the exception history keeps it, issue 30)."""
    remote = find_remote_traceback(error)
    if remote is not None:
        return remote
    return "".join(traceback.format_exception(type(error), error, error.__traceback__))


def _runtime_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {os.path.abspath(paths[key]) + os.sep
             for key in ("stdlib", "platstdlib") if key in paths}
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return tuple(sorted(roots | {package + os.sep}))


def is_runtime_file(filename: str, roots: tuple[str, ...] | None = None) -> bool:
    """Whether a traceback frame's file is the runtime's rather than the user's."""
    if filename.startswith("<") and filename != "<dynamic-code>":
        return True  # <frozen ...>, <string>: not the user's script
    parts = filename.split(os.sep)
    if any(part in _RUNTIME_PARTS for part in parts):
        return True
    return filename.startswith(_runtime_roots() if roots is None else roots)


def fold_runtime_frames(text: str, roots: tuple[str, ...] | None = None) -> str:
    """``text`` (a formatted traceback) with its user frames first, then a line counting the
    runtime frames left out, then the exception line(s); a traceback with no user frame keeps
    its innermost runtime frame."""
    lines = text.rstrip("\n").splitlines()
    frames: list[tuple[str, list[str]]] = []
    tail: list[str] = []
    index = 0
    while index < len(lines):
        match = _FRAME.match(lines[index])
        if match is None:
            if frames and lines[index].startswith("    "):
                frames[-1][1].append(lines[index])
            elif lines[index].strip() and not lines[index].startswith("Traceback"):
                tail.append(lines[index])
            index += 1
            continue
        frames.append((match.group("file"), [lines[index]]))
        index += 1
    user = [body for file, body in frames if not is_runtime_file(file, roots)]
    folded = len(frames) - len(user)
    if not user and frames:
        user, folded = [frames[-1][1]], folded - 1
    out = ["TaskManager traceback (most recent call last, user frames first):"]
    for body in user:
        out.extend(body)
    if folded:
        out.append(f"  ... {folded} runtime frame{'s' if folded != 1 else ''} folded "
                   "(the full traceback is the error's __cause__)")
    out.extend(tail)
    return "\n".join(out)


class DistinctFailures:
    """Remembers which failures of a job were logged with their traceback, so a job that fails
    the same way on every restart logs that traceback once (issue 30). A failure's identity is
    its type, message and traceback text; at most ``capacity`` are remembered. Owned by the
    JobManager's thread."""

    def __init__(self, capacity: int = 64) -> None:
        self._capacity = capacity
        self._seen: dict[tuple[str, str, str], None] = {}

    def traceback_if_new(self, error: BaseException) -> str | None:
        """The traceback to log for ``error`` the first time it is seen, else None."""
        remote = find_remote_traceback(error)
        if remote is None:
            text = "".join(traceback.format_exception(error)).rstrip()
        else:
            text = fold_runtime_frames(remote)
        key = (type(error).__name__, str(error), text)
        if key in self._seen:
            return None
        if len(self._seen) >= self._capacity:
            self._seen.pop(next(iter(self._seen)))
        self._seen[key] = None
        return text

    def log_suffix(self, error: BaseException) -> str:
        """What a restart's log line ends with: the traceback the first time, else a mark."""
        text = self.traceback_if_new(error)
        return f"\n{text}" if text is not None else " [same failure as before]"


def task_note(vertex_name: str, subtask: int, parallelism: int,
              operators: tuple[tuple[str, str | None], ...]) -> str:
    """The note a task's failure gets, naming where it came from: the task (its chain's
    name and subtask, as Flink's ``name (2/4)``) and its operators' names and uids."""
    described = ", ".join(f"{name!r} (uid {uid!r})" if uid else f"{name!r} (no uid)"
                          for name, uid in operators)
    return f"in task {vertex_name!r} ({subtask + 1}/{parallelism}); operators: {described}"


def note_failed_task(error: BaseException, job_graph: Any, task: Any) -> None:
    """Adds ``task_note`` to ``error`` for ``task`` (a ``TaskId``) of ``job_graph`` (read by
    attribute); nothing for a vertex the graph does not have."""
    try:
        vertex = job_graph.vertex(task.vertex)
    except KeyError:
        return
    error.add_note(task_note(vertex.name, int(task.subtask), vertex.parallelism,
                             tuple((op.name, op.uid) for op in vertex.operators)))
