"""Builders of the barrier handlers' inputs and expected actions, and the exactly-once
handlers themselves, shared by the aligner, unaligned and alternating tests (a support module:
it holds no tests)."""

from __future__ import annotations

from flintlock.runtime.checkpoint.alignment import (
    AbortCheckpoint,
    AlignmentType,
    BarrierAligner,
    BlockChannel,
    CancelCheckpointMarker,
    CheckpointBarrier,
    CheckpointFailureReason,
    CheckpointingMode,
    CheckpointMetrics,
    CheckpointOptions,
    CheckpointType,
    PersistInflight,
    ResumeChannel,
    TriggerCheckpoint,
    create_barrier_handler,
)
from flintlock.testing.clock import ManualClock

SUBSUMED = CheckpointFailureReason.CHECKPOINT_DECLINED_SUBSUMED
CANCELLED = CheckpointFailureReason.CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER
ALIGNED = CheckpointOptions()
UNALIGNED = CheckpointOptions(alignment=AlignmentType.UNALIGNED)
SAVEPOINT = CheckpointOptions(CheckpointType.SAVEPOINT, AlignmentType.FORCED_ALIGNED)


def barrier(checkpoint_id: int, options: CheckpointOptions | None = None,
            timestamp: int = 0) -> CheckpointBarrier:
    return CheckpointBarrier(checkpoint_id, timestamp, options or ALIGNED)  # type: ignore[arg-type]


def trigger(checkpoint_id: int, options: CheckpointOptions | None = None,
            alignment: float = 0.0, delay: float = 0.0, processed: int = 0) -> TriggerCheckpoint:
    metrics = CheckpointMetrics(alignment, delay, processed)
    return TriggerCheckpoint(checkpoint_id, barrier(checkpoint_id, options), metrics)  # type: ignore[arg-type]


def abort(checkpoint_id: int, reason: CheckpointFailureReason) -> AbortCheckpoint:
    return AbortCheckpoint(checkpoint_id, reason)  # type: ignore[arg-type]


def cancel(checkpoint_id: int) -> CancelCheckpointMarker:
    return CancelCheckpointMarker(checkpoint_id)  # type: ignore[arg-type]


def block(channel: int) -> BlockChannel:
    return BlockChannel(channel)  # type: ignore[arg-type]


def resume(channel: int) -> ResumeChannel:
    return ResumeChannel(channel)  # type: ignore[arg-type]


def persist(checkpoint_id: int, channel: int, buffer: bytes) -> PersistInflight:
    return PersistInflight(checkpoint_id, channel, buffer)  # type: ignore[arg-type]


def exactly_once(num_channels: int, clock: ManualClock | None = None, unaligned: bool = False,
                 aligned_timeout_ms: float | None = None) -> BarrierAligner:
    """The handler of an exactly-once subtask: aligned, unaligned, or alternating (unaligned
    with an alignment timeout)."""
    handler = create_barrier_handler(
        num_channels, CheckpointingMode.EXACTLY_ONCE, unaligned=unaligned,
        aligned_timeout_ms=aligned_timeout_ms, clock=clock or ManualClock(0))
    assert isinstance(handler, BarrierAligner)
    return handler


def blocked(handler: BarrierAligner) -> set[int]:
    return {ch for ch in range(handler._channels.num_channels) if handler.is_blocked(ch)}  # type: ignore[arg-type]
