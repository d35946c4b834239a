"""Barrier handling for a subtask's input gate: the entry point (DESIGN.md §5).

``create_barrier_handler`` picks the handler for the checkpointing mode, as Flink does:

=================================  ==========================================================
mode / flags                        handler
=================================  ==========================================================
AT_LEAST_ONCE                       ``BarrierTracker`` (never blocks)
EXACTLY_ONCE                        ``BarrierAligner`` with ``AlignmentPolicy.ALIGNED``
EXACTLY_ONCE, unaligned             ``BarrierAligner`` with ``AlignmentPolicy.UNALIGNED``
EXACTLY_ONCE, unaligned, timeout>0  ``BarrierAligner`` with ``AlignmentPolicy.ALTERNATING``
=================================  ==========================================================

Savepoints are aligned under every exactly-once policy. The handlers are I/O-free: the task's
input loop feeds them what it consumed and carries out the returned actions (see
``actions``). This module re-exports everything a caller needs, so callers import only it.
"""

from __future__ import annotations

from flintlock.common.checkpointing import CheckpointingMode
from flintlock.common.clock import SYSTEM_CLOCK, Clock
from flintlock.common.errors import InvalidConfigValueError
from flintlock.runtime.checkpoint.actions import (
    AbortCheckpoint,
    Action,
    BarrierHandler,
    BarrierHandlerStatistics,
    BlockChannel,
    CheckpointMetrics,
    PersistInflight,
    ResumeChannel,
    TriggerCheckpoint,
    UnknownChannelError,
    buffer_size,
)
from flintlock.runtime.checkpoint.aligner import (
    AlignmentPolicy,
    BarrierAligner,
    IllegalPhaseTransitionError,
    Phase,
)
from flintlock.runtime.checkpoint.failure import (
    CheckpointError,
    CheckpointFailureReason,
    StreamCorruptedError,
)
from flintlock.runtime.checkpoint.tracker import MAX_PENDING_CHECKPOINTS, BarrierTracker
from flintlock.runtime.network.barriers import (
    END_OF_PARTITION,
    AlignmentType,
    CancelCheckpointMarker,
    CheckpointBarrier,
    CheckpointOptions,
    CheckpointType,
    EndOfPartitionEvent,
)

__all__ = [
    "END_OF_PARTITION",
    "MAX_PENDING_CHECKPOINTS",
    "AbortCheckpoint",
    "Action",
    "AlignmentPolicy",
    "AlignmentType",
    "BarrierAligner",
    "BarrierHandler",
    "BarrierHandlerStatistics",
    "BarrierTracker",
    "BlockChannel",
    "CancelCheckpointMarker",
    "CheckpointBarrier",
    "CheckpointError",
    "CheckpointFailureReason",
    "CheckpointMetrics",
    "CheckpointOptions",
    "CheckpointType",
    "CheckpointingMode",
    "EndOfPartitionEvent",
    "IllegalPhaseTransitionError",
    "PersistInflight",
    "Phase",
    "ResumeChannel",
    "StreamCorruptedError",
    "TriggerCheckpoint",
    "UnknownChannelError",
    "buffer_size",
    "create_barrier_handler",
]

_UNALIGNED_KEY = "execution.checkpointing.unaligned.enabled"
_TIMEOUT_KEY = "execution.checkpointing.aligned-checkpoint-timeout"


def create_barrier_handler(
    num_channels: int,
    mode: CheckpointingMode,
    *,
    unaligned: bool = False,
    aligned_timeout_ms: float | None = None,
    clock: Clock | None = None,
) -> BarrierTracker | BarrierAligner:
    """The handler for a gate of ``num_channels`` channels under ``mode``.

    ``aligned_timeout_ms`` only matters with ``unaligned``: None or 0 means unaligned from
    the first barrier, a positive value means aligned first, unaligned after that long.
    """
    clock = clock or SYSTEM_CLOCK
    if aligned_timeout_ms is not None and aligned_timeout_ms < 0:
        raise InvalidConfigValueError(_TIMEOUT_KEY, aligned_timeout_ms, "a duration >= 0")
    if mode is CheckpointingMode.AT_LEAST_ONCE:
        if unaligned:
            raise InvalidConfigValueError(
                _UNALIGNED_KEY, True, "false: unaligned checkpoints need EXACTLY_ONCE mode"
            )
        return BarrierTracker(num_channels, clock)
    if not unaligned:
        return BarrierAligner(num_channels, AlignmentPolicy.ALIGNED, clock=clock)
    if not aligned_timeout_ms:
        return BarrierAligner(num_channels, AlignmentPolicy.UNALIGNED, clock=clock)
    return BarrierAligner(
        num_channels,
        AlignmentPolicy.ALTERNATING,
        alignment_timeout_ms=aligned_timeout_ms,
        clock=clock,
    )
