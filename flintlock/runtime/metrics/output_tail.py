"""Bounded tails of what a TaskManager's process logs and prints, for the dashboard's
TaskManager log and stdout views (Flink's ``/taskmanagers/:id/log`` and ``/stdout``; issue 30).

On the TaskManager side, ``attach()`` starts capturing this process's output the first time
and returns a ``TailReader`` for one TaskManager: its log records (a ``logging.Handler`` on
the root logger: what passes the loggers' levels, formatted as ``time level name: message``,
with the traceback of a logged exception) and the lines written to ``sys.stdout`` (which
is wrapped by a tee that writes through unchanged: the print sink and the user's ``print``).
The tee only queues each write (a deque append, safe from any thread without a lock); the
heartbeat thread splits the queue into lines when it takes them, so a print costs the
printing thread one more method call and append.
Each heartbeat carries the lines added since the previous one (``TailReader.take``: at most
``MAX_LINES_PER_TAKE``; a reader that fell behind more than the tail holds skips to it and
says how many lines it missed). ``detach`` ends the capture when the last TaskManager of the
process has ended: the tee is taken out if it is still ``sys.stdout``; if something wrapped it
meanwhile (a progress line's wrapper) it stays, writing through only, and the next capture
wraps what it wraps.

On the JobManager side, ``TaskManagerOutputs`` keeps the newest ``KEPT_LINES`` lines of each
stream of each TaskManager (by its index; an attempt's TaskManagers append to the same
tails, after a line naming the attempt), which the REST API serves and the archive keeps.

Capture is per process: TaskManagers hosted as threads of one process (the test kit) share
one log and one stdout, so each of them shows the process's. Lines are cut at
``MAX_LINE_CHARS``.

Thread ownership: the process tails are appended to by any thread that logs or prints and
read by the heartbeat threads, under one lock each; ``TaskManagerOutputs`` is appended to on
the JobManager thread and read by REST workers, under its lock.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections import deque
from typing import Any, Final, TextIO

TAIL_LINES: Final = 2000
"""Lines a process keeps of each stream until its TaskManagers have taken them."""
MAX_LINES_PER_TAKE: Final = 500
KEPT_LINES: Final = 1000
"""Lines the JobManager keeps of each stream of each TaskManager."""
MAX_LINE_CHARS: Final = 2000
RAW_WRITES: Final = 20_000
"""Writes to ``sys.stdout`` queued between two heartbeats at most (``print`` makes two)."""
STREAMS: Final = ("log", "stdout")


class _Tail:
    """A bounded list of lines with a running count, so a reader can say where it was."""

    def __init__(self, size: int = TAIL_LINES) -> None:
        self._lines: deque[str] = deque(maxlen=size)
        self._count = 0
        self._lock = threading.Lock()

    def append(self, line: str) -> None:
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + " …"
        with self._lock:
            self._lines.append(line)
            self._count += 1

    def extend(self, lines: list[str]) -> None:
        lines = [line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " …"
                 for line in lines]
        with self._lock:
            self._lines.extend(lines)
            self._count += len(lines)

    def since(self, cursor: int, limit: int) -> tuple[list[str], int]:
        """Lines after ``cursor`` (at most ``limit``) and the new cursor; a note first when
        lines were dropped before they could be read."""
        with self._lock:
            oldest = self._count - len(self._lines)
            notes = [f"[{oldest - cursor} lines dropped]"] if cursor < oldest else []
            start = max(cursor, oldest)
            end = min(self._count, start + limit)
            lines = [self._lines[i - oldest] for i in range(start, end)]
            return notes + lines, end

    @property
    def count(self) -> int:
        with self._lock:
            return self._count


class _LogHandler(logging.Handler):
    def __init__(self, tail: _Tail) -> None:
        super().__init__(logging.NOTSET)
        self.tail = tail
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            for line in self.format(record).splitlines():
                self.tail.append(line)
        except Exception:  # logging must never fail the caller
            self.handleError(record)


class _StdoutTee:
    """``sys.stdout`` written through; what is written is also queued in ``raw`` (one deque
    append: no lock, no splitting on the writer's thread) until ``lines`` takes it."""

    def __init__(self, target: TextIO) -> None:
        self.target = target
        self.raw: deque[str] = deque(maxlen=RAW_WRITES)
        self.active = True  # False once its capture ended: it only writes through
        self._partial = ""  # a line not ended yet; the reader's (under the capture's lock)

    def write(self, text: str) -> int:
        written = self.target.write(text)
        if self.active:
            self.raw.append(text)
        return written

    def lines(self) -> list[str]:
        """The complete lines written since the last call (the capture's lock held)."""
        pieces = []
        while self.raw:
            pieces.append(self.raw.popleft())
        if not pieces:
            return []
        lines = (self._partial + "".join(pieces)).split("\n")
        self._partial = lines.pop()
        return lines

    def flush(self) -> None:
        self.target.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.target, name)


class _Capture:
    def __init__(self) -> None:
        self.log = _Tail()
        self.stdout = _Tail()
        self.handler = _LogHandler(self.log)
        target = sys.stdout
        while isinstance(target, _StdoutTee) and not target.active:
            target = target.target  # an ended capture's tee, left wrapped by another wrapper
        self.tee = _StdoutTee(target)
        self._lock = threading.Lock()
        logging.getLogger().addHandler(self.handler)
        sys.stdout = self.tee

    def collect(self) -> None:
        """Moves what was printed into the stdout tail, line by line (a reader's thread)."""
        with self._lock:
            self.stdout.extend(self.tee.lines())

    def close(self) -> None:
        logging.getLogger().removeHandler(self.handler)
        self.tee.active = False
        if sys.stdout is self.tee:
            sys.stdout = self.tee.target


_lock = threading.Lock()
_state: dict[str, Any] = {"capture": None, "readers": 0}
"""The process's one capture and how many TaskManagers read it (sys.stdout and the root
logger are the process's, so their capture is too)."""


class TailReader:
    """One TaskManager's position in its process's tails."""

    def __init__(self, capture: _Capture) -> None:
        self._capture = capture
        self._log = capture.log.count
        self._stdout = capture.stdout.count

    def take(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(log lines, stdout lines) added since the previous take."""
        self._capture.collect()
        logs, self._log = self._capture.log.since(self._log, MAX_LINES_PER_TAKE)
        out, self._stdout = self._capture.stdout.since(self._stdout, MAX_LINES_PER_TAKE)
        return tuple(logs), tuple(out)


def attach() -> TailReader:
    """Starts capturing this process's output (the first TaskManager) and returns a reader
    from now on."""
    with _lock:
        if _state["capture"] is None:
            _state["capture"] = _Capture()
        _state["readers"] += 1
        return TailReader(_state["capture"])


def detach(reader: TailReader) -> None:
    """A TaskManager ended; the last one ends the capture."""
    with _lock:
        _state["readers"] -= 1
        if _state["readers"] <= 0 and _state["capture"] is not None:
            _state["capture"].close()
            _state["capture"] = None
            _state["readers"] = 0


class TaskManagerOutputs:
    """The JobManager's tails of every TaskManager's log and stdout (see the module
    docstring)."""

    def __init__(self, kept: int = KEPT_LINES) -> None:
        self._kept = kept
        self._tails: dict[tuple[int, str], deque[str]] = {}
        self._attempts: dict[int, int] = {}
        self._lock = threading.Lock()

    def add(self, attempt: int, tm_index: int, logs: tuple[str, ...],
            stdout: tuple[str, ...]) -> None:
        with self._lock:
            first = self._attempts.get(tm_index)
            self._attempts[tm_index] = attempt
            for stream, lines in (("log", logs), ("stdout", stdout)):
                tail = self._tails.setdefault((tm_index, stream), deque(maxlen=self._kept))
                if first is not None and first != attempt:
                    tail.append(f"--- attempt {attempt} ---")
                tail.extend(lines)

    def tail(self, tm_index: int, stream: str) -> tuple[str, ...] | None:
        """The kept lines, or None for a TaskManager never heard from or an unknown
        stream."""
        if stream not in STREAMS:
            return None
        with self._lock:
            if tm_index not in self._attempts:
                return None
            return tuple(self._tails.get((tm_index, stream), ()))
