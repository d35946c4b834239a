"""Barrier handling for a subtask's input gate: the public entry point of the handlers
(DESIGN.md §5), kept where callers have always imported it.

The handlers themselves are the input half of the subtask's checkpoint machine and live with
it in ``flintlock.runtime.tasks.checkpointing`` (issue 29: the worker side of a checkpoint in
one place; ``runtime/checkpoint`` keeps the driver side and the storage formats). This module
only re-exports them, so ``create_barrier_handler`` and the action types keep their import
path. It is the one module of ``runtime/checkpoint`` that imports from ``runtime/tasks``
(docs/internals/layers.md).
"""

from __future__ import annotations

from flintlock.common.checkpointing import CheckpointingMode
from flintlock.runtime.checkpoint.failure import (
    CheckpointError,
    CheckpointFailureReason,
    StreamCorruptedError,
)
from flintlock.runtime.network.barriers import (
    END_OF_PARTITION,
    AlignmentType,
    CancelCheckpointMarker,
    CheckpointBarrier,
    CheckpointOptions,
    CheckpointType,
    EndOfPartitionEvent,
)
from flintlock.runtime.tasks.checkpointing.actions import (
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
from flintlock.runtime.tasks.checkpointing.aligner import (
    AlignmentPolicy,
    BarrierAligner,
    IllegalPhaseTransitionError,
    Phase,
)
from flintlock.runtime.tasks.checkpointing.handlers import create_barrier_handler
from flintlock.runtime.tasks.checkpointing.tracker import MAX_PENDING_CHECKPOINTS, BarrierTracker

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
