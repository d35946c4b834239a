"""In-band checkpoint events: barriers, cancellation markers, end of partition (DESIGN.md §5).

These travel through result partitions and input channels in order with the records (an
unaligned barrier as a priority event that overtakes queued buffers). They are immutable
values; the network layer encodes them into event buffers and the barrier handlers in
``alignment`` consume them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from flintlock.common.ids import CheckpointId


class CheckpointType(enum.Enum):
    CHECKPOINT = 0
    SAVEPOINT = 1
    """A user-triggered snapshot: always aligned, never subsumed."""
    SAVEPOINT_SUSPEND = 2
    """Stop with a savepoint (synchronous): the savepoint's barrier is the last element of
    every stream; tasks finish once it completes, without ending their operators' input."""
    SAVEPOINT_TERMINATE = 3
    """Stop with a savepoint and drain: sources end their input first (``MAX_WATERMARK``
    fires every window and timer), then the savepoint is taken as for SAVEPOINT_SUSPEND."""

    @property
    def is_savepoint(self) -> bool:
        return self is not CheckpointType.CHECKPOINT

    @property
    def is_synchronous(self) -> bool:
        """A stop-with-savepoint: nothing is processed after its barrier."""
        return self in (CheckpointType.SAVEPOINT_SUSPEND, CheckpointType.SAVEPOINT_TERMINATE)

    @property
    def should_drain(self) -> bool:
        return self is CheckpointType.SAVEPOINT_TERMINATE


class AlignmentType(enum.Enum):
    ALIGNED = 0
    UNALIGNED = 1
    AT_LEAST_ONCE = 2
    """Barriers are only tracked, never aligned."""
    FORCED_ALIGNED = 3
    """Unaligned was asked for, but this checkpoint must align (e.g. a savepoint)."""


@dataclass(frozen=True, slots=True)
class CheckpointOptions:
    """How one checkpoint is taken.

    ``alignment_timeout_ms``: with ALIGNED and unaligned checkpoints enabled, switch this
    checkpoint to unaligned once alignment has taken this long (None: never switch).
    """

    checkpoint_type: CheckpointType = CheckpointType.CHECKPOINT
    alignment: AlignmentType = AlignmentType.ALIGNED
    alignment_timeout_ms: int | None = None

    @property
    def is_savepoint(self) -> bool:
        return self.checkpoint_type.is_savepoint

    @property
    def is_unaligned(self) -> bool:
        return self.alignment is AlignmentType.UNALIGNED

    @property
    def is_exactly_once(self) -> bool:
        return self.alignment is not AlignmentType.AT_LEAST_ONCE

    def to_unaligned(self) -> CheckpointOptions:
        """The same checkpoint, switched to unaligned (alignment timed out)."""
        return CheckpointOptions(self.checkpoint_type, AlignmentType.UNALIGNED, None)


@dataclass(frozen=True, slots=True)
class CheckpointBarrier:
    """Splits a stream into what belongs to checkpoint ``checkpoint_id`` and what follows it."""

    checkpoint_id: CheckpointId
    timestamp: int
    options: CheckpointOptions = CheckpointOptions()

    @property
    def is_priority(self) -> bool:
        """An unaligned barrier overtakes the buffers queued before it."""
        return self.options.is_unaligned

    def with_options(self, options: CheckpointOptions) -> CheckpointBarrier:
        return CheckpointBarrier(self.checkpoint_id, self.timestamp, options)


@dataclass(frozen=True, slots=True)
class CancelCheckpointMarker:
    """Tells downstream subtasks that checkpoint ``checkpoint_id`` was aborted upstream."""

    checkpoint_id: CheckpointId


@dataclass(frozen=True, slots=True)
class EndOfPartitionEvent:
    """The last element of a subpartition: its producer finished."""


END_OF_PARTITION = EndOfPartitionEvent()
