"""What the checkpoint coordinator is configured with: its tasks and its options.

``CheckpointTaskSets`` says which subtasks a checkpoint triggers (the sources), which must
acknowledge it and which are told of its outcome. ``CoordinatorSettings`` holds the
``execution.checkpointing.*`` options the coordinator reads, parsed once, and derives the
``CheckpointOptions`` (checkpoint or savepoint; at-least-once, aligned, aligned with a timeout,
unaligned) the barriers of a new checkpoint carry. Immutable; built by the JobManager.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from flintlock.common.checkpointing import CheckpointingMode
from flintlock.common.config import Configuration
from flintlock.common.options import checkpointing as opts
from flintlock.runtime.checkpoint.completed import CheckpointProperties, retention_from_config
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.network.barriers import AlignmentType, CheckpointOptions, CheckpointType


@dataclass(frozen=True, slots=True)
class CheckpointTaskSets:
    """Which subtasks are triggered (sources), must acknowledge, and are notified."""

    to_trigger: frozenset[TaskId]
    to_ack: frozenset[TaskId]
    to_commit: frozenset[TaskId]

    @staticmethod
    def for_job(sources: Iterable[TaskId], all_tasks: Iterable[TaskId]) -> CheckpointTaskSets:
        everyone = frozenset(all_tasks)
        return CheckpointTaskSets(frozenset(sources), everyone, everyone)

    def __post_init__(self) -> None:
        if not self.to_trigger or not self.to_ack:
            raise ValueError("a checkpoint needs tasks to trigger and tasks to acknowledge")


@dataclass(frozen=True, slots=True)
class CoordinatorSettings:
    """The checkpointing options the coordinator reads, parsed once."""

    interval_ms: int
    timeout_ms: int
    min_pause_ms: int
    max_concurrent: int
    tolerable_failures: int
    exactly_once: bool
    unaligned: bool
    aligned_timeout_ms: int
    properties: CheckpointProperties

    @property
    def periodic(self) -> bool:
        return self.interval_ms > 0

    @staticmethod
    def from_config(config: Configuration) -> CoordinatorSettings:
        mode = CheckpointingMode.from_config(config.get(opts.MODE))
        return CoordinatorSettings(
            interval_ms=config.get(opts.INTERVAL),
            timeout_ms=config.get(opts.TIMEOUT),
            min_pause_ms=config.get(opts.MIN_PAUSE),
            max_concurrent=config.get(opts.MAX_CONCURRENT),
            tolerable_failures=config.get(opts.TOLERABLE_FAILURES),
            exactly_once=mode is CheckpointingMode.EXACTLY_ONCE,
            unaligned=config.get(opts.UNALIGNED),
            aligned_timeout_ms=config.get(opts.ALIGNED_TIMEOUT),
            properties=CheckpointProperties.for_checkpoint(
                retention_from_config(config.get(opts.EXTERNALIZED))
            ),
        )

    def options_for(self, kind: CheckpointType) -> CheckpointOptions:
        """The options of a checkpoint or savepoint of ``kind`` (savepoints always align)."""
        savepoint = kind.is_savepoint
        if not self.exactly_once:
            return CheckpointOptions(kind, AlignmentType.AT_LEAST_ONCE)
        if savepoint or not self.unaligned:
            return CheckpointOptions(kind, AlignmentType.ALIGNED)
        if self.aligned_timeout_ms > 0:
            return CheckpointOptions(kind, AlignmentType.ALIGNED, self.aligned_timeout_ms)
        return CheckpointOptions(kind, AlignmentType.UNALIGNED)
