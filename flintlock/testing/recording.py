"""What a job's functions saw, recorded for the test that runs the job with its TaskManagers as
threads of the test process (``flintlock.testing.executor``).

A ``Recording`` is a named, thread-safe list. A test module declares one at module level
(``FIRED = Recording("keyed.fired")``) and the job's functions append to it — from a timer, an
``open``, a ``close`` or a ``CollectingSink``. It pickles by name: a function object shipped to
a TaskManager thread (pickled by value) still appends to the one recording of this process.
``Recording.clear_all()`` empties every recording of the process; the integration tests'
``executor`` fixture calls it, so no module needs its own fixture to reset its lists.
``HoldUntilRecorded(recording, count)`` is a map that holds its records until the recording
has ``count`` items (an end-of-input record waiting for timers to fire).

``CollectingSink(recording)`` is a sink connector (``DataStream.sink_to``) appending every
record it is given to ``recording`` at once: at-least-once, like any non-transactional sink
(a restarted job may append a record twice); ``execute_and_collect`` is the exactly-once way
to read a job's output.

A recording lives in one process: with TaskManagers on Spark, functions run in other
processes and their recordings stay there. Threads: any thread may append, read, wait or clear;
a condition guards each list, a lock the registry.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any, ClassVar

from flintlock.datastream.connectors.base import Sink

__all__ = ["CollectingSink", "HoldUntilRecorded", "Recording"]


class Recording:
    """A named list of what a job's functions recorded (see the module docstring)."""

    _registry: ClassVar[dict[str, Recording]] = {}  # every recording of the process, by name
    _registry_lock: ClassVar[threading.Lock] = threading.Lock()

    def __new__(cls, name: str) -> Recording:
        with cls._registry_lock:
            existing = cls._registry.get(name)
            if existing is not None:
                return existing
            recording = super().__new__(cls)
            recording.name = name
            recording._changed = threading.Condition(threading.Lock())
            recording._items = []
            cls._registry[name] = recording
            return recording

    name: str
    _changed: threading.Condition  # notified at every append
    _items: list[Any]  # guarded by _changed

    def __reduce__(self) -> tuple[type[Recording], tuple[str]]:
        return (Recording, (self.name,))

    def append(self, item: Any) -> None:
        with self._changed:
            self._items.append(item)
            self._changed.notify_all()

    def extend(self, items: Any) -> None:
        with self._changed:
            self._items.extend(items)
            self._changed.notify_all()

    def items(self) -> list[Any]:
        """A copy of what was recorded, in the order it was."""
        with self._changed:
            return list(self._items)

    def clear(self) -> None:
        with self._changed:
            self._items.clear()

    def wait_for_length(self, count: int, timeout_s: float) -> bool:
        """Waits until at least ``count`` items were recorded; False after ``timeout_s``."""
        with self._changed:
            return self._changed.wait_for(lambda: len(self._items) >= count, timeout_s)

    def __len__(self) -> int:
        with self._changed:
            return len(self._items)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.items())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Recording):
            return self is other
        if isinstance(other, list):
            return self.items() == other
        return NotImplemented

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"Recording({self.name!r}, {self.items()!r})"

    @classmethod
    def clear_all(cls) -> None:
        """Empties every recording of this process (a test's clean start)."""
        with cls._registry_lock:
            recordings = list(cls._registry.values())
        for recording in recordings:
            recording.clear()


class HoldUntilRecorded:
    """A map function that holds each record (only the one equal to ``at``, if given) until
    ``recording`` has ``count`` items (at most ``timeout_s``; the record then passes anyway and
    the test's assertions tell): keeps a job's input open while timers it waits for are due."""

    def __init__(self, recording: Recording, count: int, timeout_s: float = 30.0,
                 at: Any = None) -> None:
        self.recording = recording
        self.count = count
        self.timeout_s = timeout_s
        self.at = at

    def __call__(self, record: Any) -> Any:
        if self.at is None or record == self.at:
            self.recording.wait_for_length(self.count, self.timeout_s)
        return record

    def map(self, record: Any) -> Any:
        return self(record)


class _CollectingWriter:
    """Appends each written batch to the recording (the sink task's thread)."""

    def __init__(self, recording: Recording) -> None:
        self._recording = recording

    def restore(self, state: list[Any]) -> None:
        pass

    def write(self, records: list[Any]) -> None:
        self._recording.extend(records)

    def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        return []

    def commit(self, checkpoint_id: int) -> None:
        pass

    def end_input(self) -> None:
        pass

    def close(self) -> None:
        pass


class CollectingSink(Sink):
    """A sink connector that appends every record to ``recording`` (at-least-once)."""

    def __init__(self, recording: Recording) -> None:
        self.recording = recording

    def create_writer(self, subtask_index: int, parallelism: int) -> _CollectingWriter:
        return _CollectingWriter(self.recording)

    def __repr__(self) -> str:
        return f"CollectingSink({self.recording.name!r})"
