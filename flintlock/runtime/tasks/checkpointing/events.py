"""What a subtask's checkpoint machine is told: the events, as past-tense facts (STYLE.md §4).

The stream task feeds each one to ``SubtaskCheckpointMachine.handle`` on its task thread, in
the order it learnt them: what the input gate delivered (a barrier, its announcement, a
cancellation marker, the end of a partition, a data buffer), what the mailbox brought (a
source's trigger, the coordinator's completion and abort notifications), and what a timer the
machine asked for found (an alignment deadline, the state of the output queues, a received
barrier's deadline). Every value is immutable.
"""

from __future__ import annotations

from dataclasses import dataclass

from flintlock.common.ids import ChannelIndex, CheckpointId
from flintlock.runtime.network.barriers import CancelCheckpointMarker, CheckpointBarrier


@dataclass(frozen=True, slots=True)
class BarrierReceived:
    """The gate delivered ``barrier`` on ``channel`` (in order, or as a priority event)."""

    channel: ChannelIndex
    barrier: CheckpointBarrier


@dataclass(frozen=True, slots=True)
class BarrierAnnounced:
    """A remote channel queued ``barrier`` behind data the task has not read yet (announced
    on the network thread, fed as mail); the barrier itself follows in order."""

    channel: ChannelIndex
    barrier: CheckpointBarrier


@dataclass(frozen=True, slots=True)
class CancellationMarkerReceived:
    channel: ChannelIndex
    marker: CancelCheckpointMarker


@dataclass(frozen=True, slots=True)
class EndOfPartitionReceived:
    channel: ChannelIndex


@dataclass(frozen=True, slots=True)
class BufferReceived:
    """A data buffer from ``channel``, about to be processed."""

    channel: ChannelIndex
    buffer: object


@dataclass(frozen=True, slots=True)
class AlignmentTimerFired:
    """The timer of a ``ScheduleEvent`` for an alignment deadline went off."""


@dataclass(frozen=True, slots=True)
class TriggerReceived:
    """A source task's trigger from the JobManager; ``input_ended``: the source already
    reached the end of its input (this may be its final checkpoint)."""

    barrier: CheckpointBarrier
    input_ended: bool = False


@dataclass(frozen=True, slots=True)
class CheckpointCompleted:
    """The coordinator's notification; ``in_flight_data``: some snapshot held channel state."""

    checkpoint_id: CheckpointId
    in_flight_data: bool = False


@dataclass(frozen=True, slots=True)
class CheckpointAborted:
    """The coordinator's notification that ``checkpoint_id`` was aborted (expired, declined
    elsewhere, subsumed): it can never complete."""

    checkpoint_id: CheckpointId


@dataclass(frozen=True, slots=True)
class OutputBarriersPolled:
    """What a ``PollOutputBarriers`` found: whether an output subpartition still queues the
    barrier of ``checkpoint_id``, at wall-clock ``wall_ms``."""

    checkpoint_id: CheckpointId
    still_queued: bool
    wall_ms: float


@dataclass(frozen=True, slots=True)
class ReceivedBarrierTimedOut:
    """The alignment deadline of an announced timeoutable ``barrier`` passed."""

    barrier: CheckpointBarrier


Event = (
    BarrierReceived
    | BarrierAnnounced
    | CancellationMarkerReceived
    | EndOfPartitionReceived
    | BufferReceived
    | AlignmentTimerFired
    | TriggerReceived
    | CheckpointCompleted
    | CheckpointAborted
    | OutputBarriersPolled
    | ReceivedBarrierTimedOut
)
