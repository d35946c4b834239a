"""Split enumeration in the JobManager: one ``SourceCoordinator`` per source operator whose
source has ``create_enumerator`` (FLIP-27's split enumerator, DESIGN.md §5).

The enumerator runs on the JobManager thread. It learns that a reader runs (``add_reader``,
after every (re)start, when the source subtask reports RUNNING) and hands out splits with
``context.assign_splits(subtask, splits)`` / ``context.signal_no_more_splits(subtask)``; the
JobManager carries them to the reader's TaskManager over RPC, where they are put into the
source task's mailbox. ``call_periodically`` serves continuous discovery (new files).

Checkpoints: the enumerator's state takes part in every checkpoint as a *coordinator task*
``TaskId(vertex, -1)``, which the checkpoint coordinator waits for like any subtask. The
JobManager snapshots the enumerator and acknowledges for it right before it sends the
checkpoint's first trigger. Splits assigned before that moment reached the readers' mailboxes
before the trigger (one RPC connection per TaskManager is FIFO), so they are in the readers'
snapshots too; splits assigned after it are in neither — the enumerator still holds them after
a restore. A restart creates the enumerator again from the restored state.

Threads: everything here runs on the JobManager thread.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flintlock.common.ids import CheckpointId, JobVertexId, SubtaskIndex
from flintlock.graph.job_graph import JobGraph
from flintlock.runtime.checkpoint.enumerator_state import EnumeratorState as EnumeratorState
from flintlock.runtime.checkpoint.pending import TaskId

COORDINATOR_SUBTASK = SubtaskIndex(-1)


def coordinator_task(vertex: JobVertexId) -> TaskId:
    """The pseudo task under which a source coordinator's state is checkpointed."""
    return TaskId(vertex, COORDINATOR_SUBTASK)


def is_coordinator_task(task: TaskId) -> bool:
    return task.subtask == COORDINATOR_SUBTASK


@dataclass(frozen=True, slots=True)
class SplitAssignment:
    """What the JobManager sends: splits (or no more splits) for one source subtask."""

    vertex: JobVertexId
    subtask: int
    operator_id: str
    splits: tuple[Any, ...] = ()
    no_more_splits: bool = False


class EnumeratorContext:
    """What an enumerator may do (``SplitEnumerator.start(context)``)."""

    def __init__(self, coordinator: SourceCoordinator) -> None:
        self._coordinator = coordinator

    @property
    def parallelism(self) -> int:
        return self._coordinator.parallelism

    def assign_splits(self, subtask: int, splits: list[Any]) -> None:
        if not 0 <= subtask < self.parallelism:
            raise ValueError(f"no source subtask {subtask} (parallelism {self.parallelism})")
        if splits:
            self._coordinator.send(SplitAssignment(
                self._coordinator.vertex, subtask, self._coordinator.operator_id,
                tuple(splits)))

    def signal_no_more_splits(self, subtask: int) -> None:
        self._coordinator.send(SplitAssignment(
            self._coordinator.vertex, subtask, self._coordinator.operator_id,
            no_more_splits=True))

    def call_periodically(self, interval_ms: int, callback: Callable[[], None]) -> None:
        self._coordinator.schedule_periodic(max(1, int(interval_ms)), callback)


class SourceCoordinator:
    def __init__(
        self, vertex: JobVertexId, operator_id: str, source: Any, parallelism: int,
        send: Callable[[SplitAssignment], None],
        schedule: Callable[[float, Callable[[], None]], None], now_ms: Callable[[], float],
    ) -> None:
        self.vertex = vertex
        self.operator_id = operator_id
        self.source = source
        self.parallelism = parallelism
        self.send = self._recording(send)
        self._assigned: dict[int, list[Any]] = {}  # splits sent to each reader, in order
        self._schedule = schedule
        self._now_ms = now_ms
        self._enumerator: Any = None
        self._closed = False

    @property
    def task(self) -> TaskId:
        return coordinator_task(self.vertex)

    def start(self, restored: EnumeratorState | None) -> None:
        state = restored.load() if restored is not None else None
        self._enumerator = self.source.create_enumerator(self.parallelism, state)
        self._enumerator.start(EnumeratorContext(self))

    def add_reader(self, subtask: int) -> None:
        self._enumerator.add_reader(subtask)

    @property
    def can_take_splits_back(self) -> bool:
        """Whether its enumerator takes a failed reader's splits back (``add_splits_back``)."""
        return hasattr(self._enumerator, "add_splits_back")

    def reader_failed(self, subtask: int) -> None:
        """Reader ``subtask`` restarts without a checkpoint (BATCH region failover): the
        splits it was sent go back to the enumerator, which sends them again once it runs."""
        splits = self._assigned.pop(subtask, [])
        self._enumerator.add_splits_back(splits, subtask)

    def _recording(self, send: Callable[[SplitAssignment], None]
                   ) -> Callable[[SplitAssignment], None]:
        def recorded(assignment: SplitAssignment) -> None:
            self._assigned.setdefault(assignment.subtask, []).extend(assignment.splits)
            send(assignment)
        return recorded

    def snapshot(self, checkpoint_id: CheckpointId) -> EnumeratorState:
        state = self._enumerator.snapshot_state(checkpoint_id)
        return EnumeratorState(self.operator_id, pickle.dumps(state, protocol=5))

    def notify_checkpoint_complete(self, checkpoint_id: CheckpointId) -> None:
        notify = getattr(self._enumerator, "notify_checkpoint_complete", None)
        if notify is not None:
            notify(checkpoint_id)

    def schedule_periodic(self, interval_ms: int, callback: Callable[[], None]) -> None:
        def tick() -> None:
            if self._closed:
                return
            callback()
            self._schedule(self._now_ms() + interval_ms, tick)

        self._schedule(self._now_ms() + interval_ms, tick)

    def close(self) -> None:
        self._closed = True
        close = getattr(self._enumerator, "close", None)
        if close is not None:
            close()


def enumerated_sources(job_graph: JobGraph) -> list[tuple[JobVertexId, str, Any, int]]:
    """(vertex, operator id, source, parallelism) of every source with an enumerator."""
    found = []
    for vertex in job_graph.vertices:
        for operator in vertex.operators:
            source = getattr(operator.operator, "source", None)
            if source is not None and hasattr(source, "create_enumerator"):
                found.append((vertex.id, operator.operator_id, source, vertex.parallelism))
    return found
