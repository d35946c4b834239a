"""Split enumeration shared by flintlock's connectors: a round-robin dealer in the JobManager
and a split-queue reader in each source subtask (FLIP-27 style, see
``flintlock.runtime.enumerators`` for the runtime side).

**Dealer** (``SplitDealer``, I/O-free): splits are dealt round robin into one pending list per
subtask, in discovery order; a subtask's pending splits are handed over (``take``) once its
reader runs. Each split goes to exactly one subtask. Its state is the pending lists and the
cursor; restored at another parallelism, the pending splits are dealt again from the start.

**Enumerator** (``DealingEnumerator``): runs on the JobManager thread. A fresh start asks the
connector's ``SplitDiscovery`` for its ``initial()`` splits; a continuous source also asks for
``discover()`` every interval (without an interval, the initial splits are all there is, but
the readers never hear "no more splits"). ``add_reader(i)`` (after every (re)start of reader
i) assigns i's pending splits and, for a bounded source, signals no more splits.
``add_splits_back(splits, i)`` (Flink's ``addSplitsBack``) takes back the splits reader i held
when it failed and its region restarts without a checkpoint (BATCH region failover): they
are pending for i again, first, and go out at its next ``add_reader``. Splits
assigned before a snapshot are in the readers' snapshots (the runtime guarantees it), so the
enumerator's snapshot only keeps what is not assigned yet, plus the discovery's own state
(e.g. the files seen so far).

**Reader** (``SplitQueueReader``): owned by the task thread. Holds its splits in order, each
carrying its own position (splits are immutable values; reading returns the advanced split).
Its snapshot is the list of unfinished splits with their positions; ``restore`` takes such a
list back (redistributed by even split when the parallelism changed: a split is never in two
readers). It is finished only after ``notify_no_more_splits`` and once every split is read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


class EnumeratorContext(Protocol):
    """What the runtime gives ``start`` (``flintlock.runtime.enumerators.EnumeratorContext``)."""

    @property
    def parallelism(self) -> int: ...

    def assign_splits(self, subtask: int, splits: list[Any]) -> None: ...

    def signal_no_more_splits(self, subtask: int) -> None: ...

    def call_periodically(self, interval_ms: int, callback: Callable[[], None]) -> None: ...


class SplitDiscovery(Protocol):
    """A connector's way of finding splits, called on the JobManager thread."""

    def initial(self) -> list[Any]:
        """The splits that exist at a fresh start (not called after a restore)."""
        ...

    def discover(self) -> list[Any]:
        """Splits that appeared since the last call (continuous sources only)."""
        ...

    def snapshot(self) -> Any:
        """Picklable state the discovery is re-created from after a restore."""
        ...


class FixedSplits:
    """The discovery of a bounded source whose splits are all known when the job is built
    (number ranges, a table's partitions): all at the start, none later, no state."""

    def __init__(self, splits: list[Any]) -> None:
        self._splits = list(splits)

    def initial(self) -> list[Any]:
        return list(self._splits)

    def discover(self) -> list[Any]:
        return []

    def snapshot(self) -> Any:
        return None


@dataclass(frozen=True, slots=True)
class DealerState:
    pending: tuple[tuple[Any, ...], ...]
    cursor: int


@dataclass(frozen=True, slots=True)
class EnumeratorSnapshot:
    """What a ``DealingEnumerator`` checkpoints: unassigned splits and discovery state."""

    dealer: DealerState
    discovery: Any


class SplitDealer:
    """Round-robin dealing of splits into per-subtask pending lists."""

    def __init__(self, parallelism: int, restored: DealerState | None = None) -> None:
        if parallelism < 1:
            raise ValueError(f"parallelism must be at least 1, got {parallelism}")
        self._pending: list[list[Any]] = [[] for _ in range(parallelism)]
        self._cursor = 0
        if restored is not None:
            self._restore(restored)

    def _restore(self, restored: DealerState) -> None:
        if len(restored.pending) == len(self._pending):
            self._pending = [list(p) for p in restored.pending]
            self._cursor = restored.cursor
        else:
            self.deal([split for pending in restored.pending for split in pending])

    def deal(self, splits: Sequence[Any]) -> None:
        parallelism = len(self._pending)
        for split in splits:
            self._pending[self._cursor % parallelism].append(split)
            self._cursor += 1

    def give_back(self, subtask: int, splits: Sequence[Any]) -> None:
        """Splits ``subtask`` held go back to the head of its pending list."""
        self._pending[subtask] = [*splits, *self._pending[subtask]]

    def take(self, subtask: int) -> list[Any]:
        taken, self._pending[subtask] = self._pending[subtask], []
        return taken

    def pending(self, subtask: int) -> list[Any]:
        return list(self._pending[subtask])

    def state(self) -> DealerState:
        return DealerState(tuple(tuple(p) for p in self._pending), self._cursor)


class DealingEnumerator:
    """A split enumerator that deals splits round robin; see the module docstring."""

    def __init__(self, parallelism: int, restored: EnumeratorSnapshot | None,
                 discovery: SplitDiscovery, *, bounded: bool,
                 discovery_interval_ms: int | None = None) -> None:
        self._dealer = SplitDealer(parallelism, restored.dealer if restored else None)
        self._fresh = restored is None
        self._discovery = discovery
        self._bounded = bounded
        self._interval_ms = discovery_interval_ms
        self._running: set[int] = set()
        self._context: EnumeratorContext | None = None

    def start(self, context: EnumeratorContext) -> None:
        self._context = context
        if self._fresh:
            self._dealer.deal(self._discovery.initial())
        if not self._bounded and self._interval_ms:
            context.call_periodically(self._interval_ms, self.discover_now)

    def discover_now(self) -> None:
        """One discovery round (the periodic callback); new splits go to running readers."""
        self._dealer.deal(self._discovery.discover())
        for subtask in sorted(self._running):
            self._assign(subtask)

    def add_reader(self, subtask: int) -> None:
        self._running.add(subtask)
        self._assign(subtask)
        if self._bounded:
            self._require_context().signal_no_more_splits(subtask)

    def add_splits_back(self, splits: list[Any], subtask: int) -> None:
        """Reader ``subtask`` failed and will be restarted: the splits it was given (as
        assigned: a restarted reader starts each from its beginning) are its again."""
        self._running.discard(subtask)
        self._dealer.give_back(subtask, splits)

    def snapshot_state(self, checkpoint_id: int) -> EnumeratorSnapshot:
        return EnumeratorSnapshot(self._dealer.state(), self._discovery.snapshot())

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Nothing to do: assignments are final once made."""

    def close(self) -> None:
        self._running.clear()

    def _assign(self, subtask: int) -> None:
        splits = self._dealer.take(subtask)
        if splits:
            self._require_context().assign_splits(subtask, splits)

    def _require_context(self) -> EnumeratorContext:
        if self._context is None:
            raise RuntimeError("the enumerator was not started")
        return self._context


class SplitQueueReader:
    """Base of readers that work through their splits in order; subclasses read one split."""

    def __init__(self) -> None:
        self._splits: list[Any] = []  # unfinished splits with positions; task thread
        self._no_more_splits = False

    def restore(self, state: list[Any]) -> None:
        self._splits.extend(state)

    def add_splits(self, splits: list[Any]) -> None:
        self._splits.extend(splits)

    def notify_no_more_splits(self) -> None:
        self._no_more_splits = True

    def poll(self, max_records: int) -> tuple[list[Any], bool]:
        records: list[Any] = []
        while self._splits and len(records) < max_records:
            head = self._splits[0]
            before = len(records)
            advanced, done = self.read_split(head, max_records - before, records)
            if done:
                self._splits.pop(0)
                self.split_finished(head)
                continue
            self._splits[0] = advanced
            if len(records) == before:
                break
        return records, self._no_more_splits and not self._splits

    def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        return list(self._splits)

    def close(self) -> None:
        """Release what reading the splits holds open (nothing by default)."""

    def read_split(self, split: Any, budget: int, out: list[Any]) -> tuple[Any, bool]:
        """Append at most ``budget`` records of ``split`` to ``out``; return the advanced split
        and whether it is exhausted."""
        raise NotImplementedError

    def split_finished(self, split: Any) -> None:
        """Called once a split is exhausted (e.g. to close its file)."""
