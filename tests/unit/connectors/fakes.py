"""Test doubles for connector unit tests: an enumerator context that records what the
enumerator did, and a helper that drains a reader."""

from __future__ import annotations

from typing import Any


class FakeEnumeratorContext:
    """Records assignments and no-more-splits signals; periodic callbacks run on ``tick()``."""

    def __init__(self, parallelism: int) -> None:
        self.parallelism = parallelism
        self.assigned: dict[int, list[Any]] = {i: [] for i in range(parallelism)}
        self.no_more: set[int] = set()
        self.actions: list[tuple[str, int, tuple[Any, ...]]] = []
        self.periodic: list[tuple[int, Any]] = []

    def assign_splits(self, subtask: int, splits: list[Any]) -> None:
        assert 0 <= subtask < self.parallelism
        assert splits, "an empty assignment is pointless"
        self.assigned[subtask].extend(splits)
        self.actions.append(("assign", subtask, tuple(splits)))

    def signal_no_more_splits(self, subtask: int) -> None:
        self.no_more.add(subtask)
        self.actions.append(("no_more", subtask, ()))

    def call_periodically(self, interval_ms: int, callback: Any) -> None:
        self.periodic.append((interval_ms, callback))

    def tick(self) -> None:
        for _, callback in self.periodic:
            callback()


def drain(reader: Any, max_records: int = 7, limit: int = 100_000) -> list[Any]:
    """Polls until the reader is finished; fails if it never finishes."""
    out: list[Any] = []
    for _ in range(limit):
        records, finished = reader.poll(max_records)
        out.extend(records)
        if finished:
            return out
    raise AssertionError("the reader never finished")


def redistribute(states: list[list[Any]], parallelism: int) -> list[list[Any]]:
    """Operator list state as the runtime hands it back: each subtask its own list at the same
    parallelism, otherwise all entries concatenated and cut into even contiguous runs."""
    if len(states) == parallelism:
        return [list(s) for s in states]
    entries = [e for s in states for e in s]
    base, extra = divmod(len(entries), parallelism)
    out, start = [], 0
    for index in range(parallelism):
        size = base + (1 if index < extra else 0)
        out.append(entries[start:start + size])
        start += size
    return out


class SourceHarness:
    """Runs a source with an enumerator the way the runtime does, without threads: enumerator
    first, then readers that register; checkpoints snapshot the enumerator before the readers;
    a crash drops the output since the restored checkpoint."""

    def __init__(self, source: Any, parallelism: int) -> None:
        self.source = source
        self.committed: list[Any] = []
        self.uncommitted: list[Any] = []
        self._start(parallelism, None, [[] for _ in range(parallelism)])

    def _start(self, parallelism: int, enum_state: Any, reader_states: list[list[Any]]) -> None:
        self.context = FakeEnumeratorContext(parallelism)
        self.context.assign_splits = self._deliver  # type: ignore[method-assign]
        self.context.signal_no_more_splits = self._end  # type: ignore[method-assign]
        self.enumerator = self.source.create_enumerator(parallelism, enum_state)
        self.readers = [self.source.create_reader(i, parallelism) for i in range(parallelism)]
        self.finished = [False] * parallelism
        for reader, state in zip(self.readers, reader_states, strict=True):
            reader.restore(state)
        self.enumerator.start(self.context)
        for index in range(parallelism):
            self.enumerator.add_reader(index)

    def _deliver(self, subtask: int, splits: list[Any]) -> None:
        self.readers[subtask].add_splits(list(splits))

    def _end(self, subtask: int) -> None:
        self.readers[subtask].notify_no_more_splits()

    def poll(self, subtask: int, max_records: int) -> None:
        if self.finished[subtask]:
            return
        records, finished = self.readers[subtask].poll(max_records)
        self.uncommitted.extend(records)
        self.finished[subtask] = finished

    def checkpoint(self, checkpoint_id: int) -> tuple[Any, list[list[Any]]]:
        enum_state = self.enumerator.snapshot_state(checkpoint_id)
        states = [list(r.snapshot_state(checkpoint_id)) for r in self.readers]
        self.committed.extend(self.uncommitted)
        self.uncommitted = []
        return enum_state, states

    def restore(self, snapshot: tuple[Any, list[list[Any]]] | None, parallelism: int) -> None:
        for reader in self.readers:
            reader.close()
        self.uncommitted = []
        enum_state, states = snapshot if snapshot else (None, [[]])
        if snapshot is None:
            self.committed = []
        self._start(parallelism, enum_state, redistribute(states, parallelism))

    def run_to_end(self, max_records: int = 5, limit: int = 100_000) -> list[Any]:
        for _ in range(limit):
            if all(self.finished):
                self.checkpoint(-1)
                return self.committed
            for index in range(len(self.readers)):
                self.poll(index, max_records)
        raise AssertionError("the source never finished")
