"""What a subtask's checkpoint machine tells its task to do: the commands, as imperatives
(STYLE.md §4).

``SubtaskCheckpointMachine.handle`` returns a list of these; the task carries them out in list
order, each completely, before it feeds the next event (``tasks/checkpoint_commands``). The
three of the barrier handler (``BlockChannel``, ``ResumeChannel``, ``PersistInflight``) pass
through unchanged; the rest are the machine's own. Every value is immutable; ``metrics`` are
read-only mappings.

Order within one list, for one checkpoint n: ``OpenChannelState`` (and the input a priority
barrier overtook) before ``SnapshotChain``; ``SnapshotChain`` before ``ForwardBarrier``;
``CaptureOutputState`` after ``ForwardBarrier`` (what the priority barrier overtook in the
outputs exists only once it was broadcast); ``SubmitAsyncPart`` last. A ``Decline`` follows
the ``ForwardCancellationMarker`` of the same checkpoint.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from flintlock.common.ids import ChannelIndex, CheckpointId
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason
from flintlock.runtime.network.barriers import CheckpointBarrier
from flintlock.runtime.tasks.checkpointing.actions import (
    BlockChannel,
    PersistInflight,
    ResumeChannel,
)
from flintlock.runtime.tasks.checkpointing.events import Event


@dataclass(frozen=True, slots=True)
class OpenChannelState:
    """Start collecting ``checkpoint_id``'s channel state; ``with_leftovers``: first each input
    channel's unprocessed bytes (an unaligned trigger stops processing mid-stream)."""

    checkpoint_id: CheckpointId
    with_leftovers: bool


@dataclass(frozen=True, slots=True)
class CaptureOvertakenInput:
    """Add what the priority barrier just received on ``channel`` overtook in that channel's
    queue to ``checkpoint_id``'s input channel state."""

    checkpoint_id: CheckpointId
    channel: ChannelIndex


@dataclass(frozen=True, slots=True)
class CaptureOutputState:
    """Add what the priority barrier of ``checkpoint_id`` overtook in the output
    subpartitions to its output channel state."""

    checkpoint_id: CheckpointId


@dataclass(frozen=True, slots=True)
class SnapshotChain:
    """Take the synchronous part of every operator's snapshot for ``barrier``; hold the parts
    until ``SubmitAsyncPart`` or ``CancelAsyncPart``."""

    barrier: CheckpointBarrier


@dataclass(frozen=True, slots=True)
class ForwardBarrier:
    """Broadcast ``barrier`` to every output."""

    barrier: CheckpointBarrier


@dataclass(frozen=True, slots=True)
class ForwardCancellationMarker:
    """Broadcast a ``CancelCheckpointMarker`` of ``checkpoint_id`` to every output (skipped
    once the outputs are finished)."""

    checkpoint_id: CheckpointId


@dataclass(frozen=True, slots=True)
class SubmitAsyncPart:
    """Hand the held snapshot parts (and, with ``channel_state``, the collected channel
    state) to the snapshot executor, which writes them and acknowledges with ``metrics``."""

    checkpoint_id: CheckpointId
    metrics: Mapping[str, float]
    channel_state: bool
    savepoint: bool = False
    """The files go to the savepoint's own directory."""


@dataclass(frozen=True, slots=True)
class CancelAsyncPart:
    """``checkpoint_id`` is aborted: release its held parts and channel state, or, if its
    asynchronous part runs already, stop it before it acknowledges and delete what it wrote."""

    checkpoint_id: CheckpointId


@dataclass(frozen=True, slots=True)
class AcknowledgeFinished:
    """Acknowledge ``checkpoint_id`` as a finished task (no state of its own)."""

    checkpoint_id: CheckpointId
    metrics: Mapping[str, float]


@dataclass(frozen=True, slots=True)
class Decline:
    checkpoint_id: CheckpointId
    reason: CheckpointFailureReason


@dataclass(frozen=True, slots=True)
class PollOutputBarriers:
    """After ``delay_s`` (0: now), look whether an output subpartition still queues the
    barrier of ``checkpoint_id`` and feed the answer back as ``OutputBarriersPolled``."""

    checkpoint_id: CheckpointId
    delay_s: float


@dataclass(frozen=True, slots=True)
class ConvertQueuedBarriers:
    """Replace ``barrier``'s aligned form still queued in the output subpartitions by this
    (unaligned) form at their head; what it overtakes is output channel state."""

    barrier: CheckpointBarrier


@dataclass(frozen=True, slots=True)
class ConvertReceivedBarriers:
    """Replace ``barrier``'s aligned form still queued in remote input channels by this
    (unaligned) form at their priority head."""

    barrier: CheckpointBarrier


@dataclass(frozen=True, slots=True)
class ScheduleEvent:
    """Feed ``event`` back to the machine after ``delay_s`` seconds (as mail)."""

    delay_s: float
    event: Event


@dataclass(frozen=True, slots=True)
class NotifyChain:
    """Tell the operator chain that ``checkpoint_id`` completed (``completed``) or was
    aborted: two-phase-commit sinks commit or roll back."""

    checkpoint_id: CheckpointId
    completed: bool


@dataclass(frozen=True, slots=True)
class DrainInput:
    """Stop with a savepoint and drain (a source task): advance to the end of event time —
    end the source's input, so ``MAX_WATERMARK`` fires every window and timer — before the
    savepoint's barrier."""


Command = (
    BlockChannel
    | ResumeChannel
    | PersistInflight
    | OpenChannelState
    | CaptureOvertakenInput
    | CaptureOutputState
    | SnapshotChain
    | ForwardBarrier
    | ForwardCancellationMarker
    | SubmitAsyncPart
    | CancelAsyncPart
    | AcknowledgeFinished
    | Decline
    | PollOutputBarriers
    | ConvertQueuedBarriers
    | ConvertReceivedBarriers
    | ScheduleEvent
    | NotifyChain
    | DrainInput
)
