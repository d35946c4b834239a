"""What a barrier handler tells its task to do: the actions, the metrics they carry, and the
handler protocol (DESIGN.md §2 "I/O-free cores", STYLE.md §2, §4).

A handler (``tracker``, ``aligner``) is a pure decision core. The task's input loop feeds it
what it consumed from the input gate (``on_barrier``, ``on_cancellation_marker``,
``on_end_of_partition``, ``on_buffer``) and carries out the returned actions in order, before
it consumes the next element:

- ``TriggerCheckpoint``: snapshot the operator chain now and forward the barrier downstream;
- ``AbortCheckpoint``: decline the checkpoint to the coordinator, send a cancellation marker;
- ``PersistInflight``: add this buffer to the checkpoint's channel state (unaligned only);
  the buffer is *also* processed as usual afterwards;
- ``BlockChannel`` / ``ResumeChannel``: tell the input gate to hold back / release a channel.

Within one returned list the decision comes first (trigger or abort), then the channels it
releases (ascending index), then the channels it blocks. All values here are immutable; they
are created on the task thread and may be handed to any thread.
"""

from __future__ import annotations

from collections.abc import Sized
from dataclasses import dataclass
from typing import Protocol

from flintlock.common.errors import FlintlockError
from flintlock.common.ids import ChannelIndex, CheckpointId
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason
from flintlock.runtime.network.barriers import CancelCheckpointMarker, CheckpointBarrier


@dataclass(frozen=True, slots=True)
class CheckpointMetrics:
    """What a subtask reports about how its barriers arrived, with its ack.

    ``alignment_duration_ms``: from the first barrier to the trigger while channels were held
    back (0 when nothing was aligned: tracker, unaligned, a single open channel).
    ``start_delay_ms``: wall-clock now minus the barrier's creation timestamp, taken at the
    first barrier of the checkpoint this subtask saw (never negative).
    ``bytes_processed_during_alignment``: bytes of the buffers consumed from unblocked channels
    between the first barrier and the trigger.
    """

    alignment_duration_ms: float = 0.0
    start_delay_ms: float = 0.0
    bytes_processed_during_alignment: int = 0


@dataclass(frozen=True, slots=True)
class TriggerCheckpoint:
    """Snapshot now. ``barrier`` is what to forward downstream (its options say whether the
    checkpoint ended up aligned or unaligned)."""

    checkpoint_id: CheckpointId
    barrier: CheckpointBarrier
    metrics: CheckpointMetrics


@dataclass(frozen=True, slots=True)
class AbortCheckpoint:
    """Decline ``checkpoint_id``; discard anything already captured for it."""

    checkpoint_id: CheckpointId
    reason: CheckpointFailureReason


@dataclass(frozen=True, slots=True)
class PersistInflight:
    """``buffer`` came from ``channel`` before that channel's barrier but after the (unaligned)
    trigger: it belongs to the checkpoint's channel state. Process it as usual too."""

    checkpoint_id: CheckpointId
    channel: ChannelIndex
    buffer: object


@dataclass(frozen=True, slots=True)
class BlockChannel:
    """Stop returning data from ``channel``; it stays queued in the channel."""

    channel: ChannelIndex


@dataclass(frozen=True, slots=True)
class ResumeChannel:
    """Return data from ``channel`` again, starting with what was queued while blocked."""

    channel: ChannelIndex


@dataclass(frozen=True, slots=True)
class BarrierHandlerStatistics:
    """A handler's state as data, for logs, metrics and the REST API."""

    latest_checkpoint_id: CheckpointId
    """The newest checkpoint id seen in a barrier or marker (-1 before any)."""
    in_progress: tuple[int, ...]
    """Checkpoints still collecting barriers (tracker: pending and not aborted; aligner: at
    most one)."""
    blocked_channels: tuple[int, ...]
    finished_channels: tuple[int, ...]


Action = TriggerCheckpoint | AbortCheckpoint | PersistInflight | BlockChannel | ResumeChannel


class UnknownChannelError(FlintlockError, IndexError):
    """A channel index outside ``0 .. num_channels - 1``."""

    def __init__(self, channel: int, num_channels: int) -> None:
        super().__init__(channel, num_channels)
        self.channel = channel
        self.num_channels = num_channels

    def __str__(self) -> str:
        return f"channel {self.channel} does not exist (the gate has {self.num_channels})"


class BarrierHandler(Protocol):
    """What the task's input loop calls. Every ``on_*`` returns the actions to carry out."""

    def on_barrier(self, channel: ChannelIndex, barrier: CheckpointBarrier) -> list[Action]: ...

    def on_barrier_announced(
        self, channel: ChannelIndex, barrier: CheckpointBarrier
    ) -> list[Action]: ...

    def on_cancellation_marker(
        self, channel: ChannelIndex, marker: CancelCheckpointMarker
    ) -> list[Action]: ...

    def on_end_of_partition(self, channel: ChannelIndex) -> list[Action]: ...

    def abort(
        self, checkpoint_id: CheckpointId, reason: CheckpointFailureReason
    ) -> list[Action]: ...

    def on_buffer(self, channel: ChannelIndex, buffer: object) -> list[Action]: ...

    def on_timer(self) -> list[Action]: ...

    def is_blocked(self, channel: ChannelIndex) -> bool: ...

    def alignment_deadline_ms(self) -> float | None: ...

    def is_capturing(self, checkpoint_id: CheckpointId) -> bool: ...

    def statistics(self) -> BarrierHandlerStatistics: ...


def buffer_size(buffer: object) -> int:
    """Bytes in ``buffer``: ``len(buffer)`` if it has a length, else its ``size`` attribute."""
    if isinstance(buffer, Sized):
        return len(buffer)
    size = getattr(buffer, "size", None)
    if isinstance(size, int):
        return size
    raise TypeError(f"cannot tell the size of a {type(buffer).__name__}: no __len__ or .size")
