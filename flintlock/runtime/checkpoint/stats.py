"""Per-checkpoint statistics, as data (STYLE.md §9).

The coordinator reports each trigger, ack, completion, failure and pre-flight refusal to a
``CheckpointStatsTracker``; ``snapshot()`` returns frozen dataclasses — the numbers a REST API,
the logs and benchmarks show. Durations are measured on the coordinator's monotonic clock
(milliseconds since the trigger); ``trigger_timestamp`` is wall-clock time.

Per checkpoint: trigger time, end-to-end duration (trigger → last ack), state size, the
largest alignment duration and start delay any subtask reported, and every subtask's ack
time. The history keeps the newest ``history_size`` finished checkpoints (and all in-progress
ones); counters cover the whole run.

Thread ownership: owned by the coordinator's thread; snapshots are immutable and may be
handed to any thread.
"""

from __future__ import annotations

import collections
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from flintlock.common.ids import CheckpointId
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason
from flintlock.runtime.checkpoint.pending import TaskId


@dataclass(frozen=True, slots=True)
class SubtaskCheckpointMetrics:
    """What a task reports with its ack (all durations in milliseconds)."""

    sync_duration_ms: float = 0.0
    async_duration_ms: float = 0.0
    alignment_duration_ms: float = 0.0
    start_delay_ms: float = 0.0
    """From the trigger timestamp to the first barrier arriving at the task."""
    bytes_persisted_during_alignment: int = 0
    unaligned: bool = False


def subtask_metrics(figures: Mapping[str, float]) -> SubtaskCheckpointMetrics:
    """The metrics of an ack from the figures a task gathered while taking the checkpoint:
    the aligner's ``CheckpointMetrics`` fields, plus ``unaligned`` and
    ``channel_state_bytes`` (the in-flight data persisted) when the checkpoint was or became
    unaligned. Built on the TaskManager: the message to the JobManager is typed."""
    return SubtaskCheckpointMetrics(
        alignment_duration_ms=float(figures.get("alignment_duration_ms", 0.0)),
        start_delay_ms=float(figures.get("start_delay_ms", 0.0)),
        bytes_persisted_during_alignment=int(figures.get(
            "channel_state_bytes", figures.get("bytes_processed_during_alignment", 0))),
        unaligned=bool(figures.get("unaligned", 0.0)),
    )


NO_METRICS = SubtaskCheckpointMetrics()
DEFAULT_STATS_HISTORY = 10


class CheckpointStatus(enum.Enum):
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class SubtaskAckStats:
    task: TaskId
    ack_ms: float
    """Milliseconds from the trigger to this task's ack arriving at the coordinator."""
    state_size: int
    metrics: SubtaskCheckpointMetrics
    checkpointed_size: int | None = None
    """Bytes this checkpoint wrote (incremental checkpoints: less than ``state_size``);
    None when the same as ``state_size``."""


@dataclass(frozen=True, slots=True)
class CheckpointStats:
    checkpoint_id: CheckpointId
    is_savepoint: bool
    status: CheckpointStatus
    trigger_timestamp: int
    num_subtasks: int
    num_acknowledged: int
    state_size: int
    end_to_end_duration_ms: float | None
    """Trigger → completion or failure; None while in progress."""
    alignment_duration_ms: float
    start_delay_ms: float
    subtask_acks: tuple[SubtaskAckStats, ...]
    failure_reason: CheckpointFailureReason | None = None
    failure_message: str = ""
    external_path: str | None = None
    checkpointed_size: int | None = None
    """Bytes written by this checkpoint (incremental: new shared files and private ones)."""


@dataclass(frozen=True, slots=True)
class CheckpointStatistics:
    """A snapshot of every counter and the bounded history (newest first)."""

    num_triggered: int
    num_in_progress: int
    num_completed: int
    num_failed: int
    refused: dict[CheckpointFailureReason, int] = field(default_factory=dict)
    history: tuple[CheckpointStats, ...] = ()
    latest_completed: CheckpointStats | None = None
    latest_failed: CheckpointStats | None = None
    restored_checkpoint_id: CheckpointId | None = None


class _InProgress:
    __slots__ = ("acks", "checkpoint_id", "is_savepoint", "num_subtasks", "trigger_ms",
                 "trigger_timestamp")

    def __init__(
        self, checkpoint_id: CheckpointId, is_savepoint: bool, trigger_timestamp: int,
        trigger_ms: float, num_subtasks: int,
    ) -> None:
        self.checkpoint_id = checkpoint_id
        self.is_savepoint = is_savepoint
        self.trigger_timestamp = trigger_timestamp
        self.trigger_ms = trigger_ms
        self.num_subtasks = num_subtasks
        self.acks: dict[TaskId, SubtaskAckStats] = {}

    def freeze(
        self, status: CheckpointStatus, end_ms: float | None,
        reason: CheckpointFailureReason | None = None, message: str = "",
        external_path: str | None = None,
    ) -> CheckpointStats:
        acks = tuple(sorted(self.acks.values(), key=lambda a: a.task))
        return CheckpointStats(
            checkpoint_id=self.checkpoint_id,
            is_savepoint=self.is_savepoint,
            status=status,
            trigger_timestamp=self.trigger_timestamp,
            num_subtasks=self.num_subtasks,
            num_acknowledged=len(acks),
            state_size=sum(a.state_size for a in acks),
            end_to_end_duration_ms=None if end_ms is None else end_ms - self.trigger_ms,
            alignment_duration_ms=max((a.metrics.alignment_duration_ms for a in acks), default=0),
            start_delay_ms=max((a.metrics.start_delay_ms for a in acks), default=0),
            subtask_acks=acks,
            failure_reason=reason,
            failure_message=message,
            external_path=external_path,
            checkpointed_size=sum(
                a.state_size if a.checkpointed_size is None else a.checkpointed_size
                for a in acks),
        )


class CheckpointStatsTracker:
    """Collects what the coordinator reports; ``snapshot()`` freezes it."""

    def __init__(self, history_size: int = DEFAULT_STATS_HISTORY) -> None:
        self._history: collections.deque[CheckpointStats] = collections.deque(
            maxlen=max(history_size, 1)
        )
        self._in_progress: dict[CheckpointId, _InProgress] = {}
        self._refused: collections.Counter[CheckpointFailureReason] = collections.Counter()
        self._counts = {"triggered": 0, "completed": 0, "failed": 0}
        self._latest_completed: CheckpointStats | None = None
        self._latest_failed: CheckpointStats | None = None
        self._restored: CheckpointId | None = None

    def report_triggered(
        self, checkpoint_id: CheckpointId, is_savepoint: bool, trigger_timestamp: int,
        trigger_ms: float, num_subtasks: int,
    ) -> None:
        self._counts["triggered"] += 1
        self._in_progress[checkpoint_id] = _InProgress(
            checkpoint_id, is_savepoint, trigger_timestamp, trigger_ms, num_subtasks
        )

    def report_ack(
        self, checkpoint_id: CheckpointId, task: TaskId, now_ms: float, state_size: int,
        metrics: SubtaskCheckpointMetrics, checkpointed_size: int | None = None,
    ) -> None:
        entry = self._in_progress.get(checkpoint_id)
        if entry is not None:
            entry.acks[task] = SubtaskAckStats(
                task, now_ms - entry.trigger_ms, state_size, metrics, checkpointed_size)

    def report_completed(
        self, checkpoint_id: CheckpointId, now_ms: float, external_path: str
    ) -> None:
        entry = self._in_progress.pop(checkpoint_id, None)
        if entry is not None:
            self._counts["completed"] += 1
            stats = entry.freeze(CheckpointStatus.COMPLETED, now_ms, external_path=external_path)
            self._latest_completed = stats
            self._history.appendleft(stats)

    def report_failed(
        self, checkpoint_id: CheckpointId, now_ms: float, reason: CheckpointFailureReason,
        message: str = "",
    ) -> None:
        entry = self._in_progress.pop(checkpoint_id, None)
        if entry is not None:
            self._counts["failed"] += 1
            stats = entry.freeze(CheckpointStatus.FAILED, now_ms, reason, message)
            self._latest_failed = stats
            self._history.appendleft(stats)

    def report_refused(self, reason: CheckpointFailureReason) -> None:
        self._refused[reason] += 1

    def report_restored(self, checkpoint_id: CheckpointId) -> None:
        self._restored = checkpoint_id

    def snapshot(self) -> CheckpointStatistics:
        in_progress = tuple(
            entry.freeze(CheckpointStatus.IN_PROGRESS, None)
            for entry in sorted(self._in_progress.values(), key=lambda e: -e.checkpoint_id)
        )
        return CheckpointStatistics(
            num_triggered=self._counts["triggered"],
            num_in_progress=len(self._in_progress),
            num_completed=self._counts["completed"],
            num_failed=self._counts["failed"],
            refused=dict(self._refused),
            history=in_progress + tuple(self._history),
            latest_completed=self._latest_completed,
            latest_failed=self._latest_failed,
            restored_checkpoint_id=self._restored,
        )
