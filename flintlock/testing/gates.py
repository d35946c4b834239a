"""Gates that hold a running job at a point the test chooses until the test releases it, so a
test that needs a job mid-stream never relies on a slowdown that a loaded machine can outrun.

A ``FileGate`` is two marker files in a directory every TaskManager can see (threads of the
test process or Spark workers on the same machine): the job marks that it has *arrived* at the
gate, the test *opens* it. Files, not ``threading.Event``s, so a gate pickles by value and works
the same in every process. Both sides only poll, bounded (``flintlock.testing.waiting``).

Ways for a job to wait at a gate (or at a limit):

* ``GatedSource`` — any source connector (files, Redis, Kafka…) whose readers each emit about
  ``before_gate`` records (at most one poll more, as the reader cuts its batches) and then
  report *nothing available* until the gate opens. The source task stays idle, not blocked: it
  still takes mail, so checkpoints complete, savepoints and stop-with-savepoint go through, and
  the job is exactly where the test left it. ``GatedNumberSequenceSource`` is the number
  sequence held so, to the number.
* ``MeteredNumberSequenceSource`` — a number sequence read only below a ``FileLimit`` the test
  raises step by step (by position: a restored reader holds at the same number), for a
  schedule of faults, each meeting a job that is surely still running.
* ``HoldAt`` — a map function that blocks the task thread at one record until the gate opens.
  Nothing passes that task meanwhile, barriers included: for tests that need a task busy
  (cancellation, a stuck task, metrics of a running job), not for checkpoints.

``open_when(gate, condition)`` opens a gate from a thread of the test once a condition holds
(checkpoints completed), for jobs that run in the test's foreground.

Threads: a gate has no memory but its files; ``arrive``/``wait_open`` run on task threads,
``open``/``wait_arrived`` on the test's thread. A reader of the gated source belongs to its
source task's thread, like every source reader.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

from flintlock.common.watermark_strategy import WatermarkStrategy
from flintlock.datastream.connectors.base import Source
from flintlock.datastream.connectors.number_seq import NumberSequenceReader, NumberSequenceSource
from flintlock.testing.waiting import DEFAULT_TIMEOUT_S, poll_until, wait_until

__all__ = [
    "FileGate",
    "FileLimit",
    "GatedNumberSequenceSource",
    "GatedSource",
    "HoldAt",
    "MeteredNumberSequenceSource",
    "gated_numbers",
    "gated_records",
    "open_when",
]

ARRIVED = "arrived"
OPENED = "opened"


class FileGate:
    """A latch in ``directory`` (created if missing): a job arrives, the test opens."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = os.fspath(directory)
        os.makedirs(self.directory, exist_ok=True)

    def _mark(self, name: str) -> None:
        with open(os.path.join(self.directory, name), "w"):
            pass

    def _marked(self, name: str) -> bool:
        return os.path.exists(os.path.join(self.directory, name))

    # -- the job's side ------------------------------------------------------------------

    def arrive(self) -> None:
        """Tells the test that the job is waiting at this gate (idempotent)."""
        if not self._marked(ARRIVED):
            self._mark(ARRIVED)

    def is_open(self) -> bool:
        return self._marked(OPENED)

    def wait_open(self, timeout_s: float) -> bool:
        """Waits until the test opens the gate; False if it did not within ``timeout_s``."""
        return poll_until(self.is_open, timeout_s)

    # -- the test's side -----------------------------------------------------------------

    def open(self) -> None:
        """Releases everything waiting at the gate, now and later (idempotent)."""
        self._mark(OPENED)

    def has_arrived(self) -> bool:
        return self._marked(ARRIVED)

    def wait_arrived(self, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        """Waits until the job has reached the gate; ``AssertionError`` after ``timeout_s``."""
        wait_until(self.has_arrived, timeout_s, f"the job never reached the gate {self.directory}")

    def __repr__(self) -> str:
        return f"FileGate({self.directory!r})"


class _GatedReader:
    """Passes on what ``reader`` polls, asking it for at most ``before_gate`` records in all
    before its gate opens; anything else is the wrapped reader's (the source task's thread)."""

    def __init__(self, reader: Any, gate: FileGate, before_gate: int) -> None:
        self._reader = reader
        self._gate = gate
        self._left = before_gate  # records it may still ask for before the gate opens
        self._open = False  # the gate was seen open: never asked again

    def poll(self, max_records: int) -> tuple[Any, bool]:
        if not self._open and self._gate.is_open():
            self._open = True
        if self._open:
            return self._reader.poll(max_records)  # type: ignore[no-any-return]
        if self._left <= 0:
            self._gate.arrive()
            return [], False
        records, finished = self._reader.poll(min(max_records, self._left))
        self._left -= len(records)
        return records, finished

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._reader, name)


class GatedSource(Source):
    """``source`` whose every reader holds after about ``before_gate`` records, marks ``gate``
    arrived, and goes on once the gate is open (see the module docstring). Enumeration, splits
    and state are ``source``'s, so a savepoint of it restores into ``source`` and back."""

    def __init__(self, source: Any, gate: FileGate, before_gate: int) -> None:
        if before_gate < 0:
            raise ValueError(f"before_gate must not be negative, got {before_gate}")
        self.source = source
        self.gate = gate
        self.before_gate = before_gate

    def is_bounded(self) -> bool:
        return bool(self.source.is_bounded())

    def create_enumerator(self, parallelism: int, restored_state: Any) -> Any:
        return self.source.create_enumerator(parallelism, restored_state)

    def create_reader(self, subtask_index: int, parallelism: int) -> _GatedReader:
        reader = self.source.create_reader(subtask_index, parallelism)
        return _GatedReader(reader, self.gate, self.before_gate)

    def __repr__(self) -> str:
        return f"GatedSource({self.source!r}, {self.gate!r}, before_gate={self.before_gate})"


class GatedNumberSequenceSource(NumberSequenceSource):
    """``NumberSequenceSource(start, end)`` whose every reader stops after ``before_gate``
    numbers, marks ``gate`` arrived, and goes on once the gate is open (see the module
    docstring). Its state is the sequence source's, so a savepoint of it restores into either."""

    def __init__(self, start: int, end: int, gate: FileGate, before_gate: int) -> None:
        super().__init__(start, end)
        if before_gate < 0:
            raise ValueError(f"before_gate must not be negative, got {before_gate}")
        self._gate = gate
        self._before_gate = before_gate

    def create_reader(self, subtask_index: int, parallelism: int) -> Any:
        return _GatedReader(NumberSequenceReader(), self._gate, self._before_gate)

    def __repr__(self) -> str:
        return (f"GatedNumberSequenceSource({self.get_start()}, {self.get_end()}, "
                f"{self._gate!r}, before_gate={self._before_gate})")


class FileLimit:
    """A number in a file (``path``, ``initial`` if it does not exist yet): the test ``set``s
    it, a job reads its ``value``. Replaced atomically, so a reader never sees half a number;
    pickles by value like a ``FileGate``."""

    def __init__(self, path: str | os.PathLike[str], initial: int = 0) -> None:
        self.path = os.fspath(path)
        if not os.path.exists(self.path):
            self.set(initial)

    def set(self, limit: int) -> None:
        draft = f"{self.path}.{os.getpid()}.{threading.get_ident()}"
        with open(draft, "w", encoding="ascii") as f:
            f.write(str(limit))
        os.replace(draft, self.path)

    def value(self) -> int:
        with open(self.path, encoding="ascii") as f:
            return int(f.read())

    def __repr__(self) -> str:
        return f"FileLimit({self.path!r})"


class _MeteredReader(NumberSequenceReader):
    """Reads a split only below the limit; idle (nothing available) at it (task thread)."""

    def __init__(self, limit: FileLimit) -> None:
        super().__init__()
        self._limit = limit

    def read_split(self, split: Any, budget: int, out: list[Any]) -> tuple[Any, bool]:
        allowed = min(budget, self._limit.value() - split.current)
        if allowed <= 0:
            return split, False
        return super().read_split(split, allowed, out)


class MeteredNumberSequenceSource(NumberSequenceSource):
    """``NumberSequenceSource(start, end)`` whose readers emit only numbers below
    ``limit.value()``, idle at it (checkpoints go on) until the test raises it. By position,
    so a restored reader holds at the same number; its state is the sequence source's."""

    def __init__(self, start: int, end: int, limit: FileLimit) -> None:
        super().__init__(start, end)
        self._limit = limit

    def create_reader(self, subtask_index: int, parallelism: int) -> Any:
        return _MeteredReader(self._limit)

    def __repr__(self) -> str:
        return f"MeteredNumberSequenceSource({self.get_start()}, {self.get_end()}, {self._limit!r})"


class HoldAt:
    """A map function that passes records through and, at the first record equal to ``value``,
    marks ``gate`` arrived and blocks until it opens (at most ``timeout_s``; then it raises
    ``TimeoutError`` so a forgotten gate fails the job instead of hanging it)."""

    def __init__(self, gate: FileGate, value: Any, timeout_s: float = 120.0) -> None:
        self.gate = gate
        self.value = value
        self.timeout_s = timeout_s

    def __call__(self, record: Any) -> Any:
        if record == self.value and not self.gate.is_open():
            self.gate.arrive()
            if not self.gate.wait_open(self.timeout_s):
                raise TimeoutError(f"{self.gate!r} stayed closed for {self.timeout_s:g} s")
        return record

    def map(self, record: Any) -> Any:
        return self(record)


def gated_numbers(env: Any, gate: FileGate, count: int, before_gate: int = 1,
                  name: str = "numbers") -> Any:
    """The numbers ``0..count-1`` of a ``GatedNumberSequenceSource`` in ``env`` (a
    ``StreamExecutionEnvironment``): a job that stays mid-stream, idle but taking checkpoints,
    until the test opens ``gate``."""
    source = GatedNumberSequenceSource(0, count - 1, gate, before_gate)
    return env.from_source(source, WatermarkStrategy.no_watermarks(), name)


class _RecordAt:
    """Index i → ``records[i]`` (a map function; ``records`` travel with the job)."""

    def __init__(self, records: list[Any]) -> None:
        self.records = records

    def __call__(self, index: int) -> Any:
        return self.records[index]


def gated_records(env: Any, gate: FileGate, records: list[Any], before_gate: int,
                  name: str = "records", *,
                  then: Sequence[tuple[FileGate, int]] = ()) -> Any:
    """``records`` in their order from one gated source reader (``from_collection`` that
    holds after ``before_gate`` records until ``gate`` opens), at parallelism 1. Each of
    ``then`` (gate, before_gate) is one more hold, after the previous one, before_gate counted
    from the first record: the job stops where the test wants it, step by step."""
    source: Source = GatedNumberSequenceSource(0, len(records) - 1, gate, before_gate)
    for later_gate, later_before in then:
        if later_before <= before_gate:
            raise ValueError(f"holds must come in order: {later_before} after {before_gate}")
        source, before_gate = GatedSource(source, later_gate, later_before), later_before
    indices = env.from_source(source, WatermarkStrategy.no_watermarks(), name)
    return indices.set_parallelism(1).map(_RecordAt(list(records))).set_parallelism(1)


def open_when(gate: FileGate, condition: Callable[[], object],
              timeout_s: float = DEFAULT_TIMEOUT_S * 6) -> threading.Thread:
    """Starts a thread that opens ``gate`` once ``condition()`` holds (polled, bounded): a
    test whose job runs in the foreground (``execute_and_collect``) releases it this way, e.g.
    once checkpoints completed. After ``timeout_s`` the gate opens anyway, so the job ends and
    the test's assertions tell what was missing; join the thread at the end."""

    def run() -> None:
        try:
            poll_until(condition, timeout_s)
        finally:
            gate.open()

    opener = threading.Thread(target=run, name=f"open-{os.path.basename(gate.directory)}",
                              daemon=True)
    opener.start()
    return opener
