"""The barrier tracker: at-least-once checkpoints without alignment (Flink's
CheckpointBarrierTracker).

The tracker never blocks a channel. It counts, per checkpoint, which channels delivered its
barrier; once every open channel has, it triggers. Records that arrive on a channel after its
barrier are processed before the snapshot, so after a restore they are replayed once more:
at least once, never lost.

Invariants:
- checkpoints are assumed to start in id order; a barrier whose id is not newer than the
  latest one seen and that has no pending entry can never complete and is ignored;
- a checkpoint triggers at most once; triggering n drops every older pending entry silently
  (n subsumes them);
- at most ``MAX_PENDING_CHECKPOINTS`` entries are kept; the oldest is dropped first;
- a cancellation marker for n (or the coordinator's abort of n, ``abort``) aborts n and every
  older pending entry, once each; the aborted entry is kept only to swallow n's trailing
  barriers and markers.

Single-threaded: all state is owned by the task thread that calls the ``on_*`` methods.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from flintlock.common.clock import SYSTEM_CLOCK, Clock
from flintlock.common.ids import NOT_A_CHECKPOINT, ChannelIndex, CheckpointId
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason, StreamCorruptedError
from flintlock.runtime.network.barriers import CancelCheckpointMarker, CheckpointBarrier
from flintlock.runtime.tasks.checkpointing.actions import (
    AbortCheckpoint,
    Action,
    BarrierHandlerStatistics,
    CheckpointMetrics,
    TriggerCheckpoint,
)
from flintlock.runtime.tasks.checkpointing.channels import InputChannels

MAX_PENDING_CHECKPOINTS = 50
"""How many incomplete checkpoints the tracker remembers (Flink's limit too)."""

_CANCELLED = CheckpointFailureReason.CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER


@dataclass(slots=True)
class _Pending:
    """One checkpoint the tracker has seen barriers or markers of but not yet completed."""

    checkpoint_id: CheckpointId
    barrier: CheckpointBarrier | None
    start_delay_ms: float
    seen: set[ChannelIndex] = field(default_factory=set)
    aborted: bool = False


class BarrierTracker:
    """At-least-once barrier handling for a gate of ``num_channels`` channels."""

    def __init__(self, num_channels: int, clock: Clock = SYSTEM_CLOCK) -> None:
        self._channels = InputChannels(num_channels)
        self._clock = clock
        self._pending: deque[_Pending] = deque()  # ascending ids; task thread
        self._latest_id = NOT_A_CHECKPOINT  # newest id seen in a barrier or marker

    # -- events -------------------------------------------------------------------------

    def on_barrier(self, channel: ChannelIndex, barrier: CheckpointBarrier) -> list[Action]:
        self._channels.check_open(channel)
        entry = self._find(barrier.checkpoint_id)
        if entry is None:
            if barrier.checkpoint_id <= self._latest_id:
                return []
            entry = self._start(barrier)
        elif channel in entry.seen:
            raise StreamCorruptedError(
                f"second barrier of checkpoint {barrier.checkpoint_id} on channel {channel}"
            )
        if entry.barrier is None:
            entry.barrier = barrier
        entry.seen.add(channel)
        return self._complete_newest()

    def on_barrier_announced(
        self, channel: ChannelIndex, barrier: CheckpointBarrier
    ) -> list[Action]:
        """Announcements only matter to unaligned checkpoints; the tracker waits for the
        barrier itself."""
        self._channels.check_open(channel)
        return []

    def on_cancellation_marker(
        self, channel: ChannelIndex, marker: CancelCheckpointMarker
    ) -> list[Action]:
        self._channels.check_open(channel)
        cancelled = marker.checkpoint_id
        actions: list[Action] = []
        while self._pending and self._pending[0].checkpoint_id < cancelled:
            actions += self._abort(self._pending.popleft())
        entry = self._find(cancelled)
        if entry is None and cancelled > self._latest_id:
            self._latest_id = cancelled
            entry = _Pending(cancelled, None, 0.0)
            self._pending.appendleft(entry)
        if entry is not None:
            actions += self._abort(entry)
            entry.seen.add(channel)
            if self._channels.all_delivered(entry.seen):
                self._pending.remove(entry)
        return actions

    def abort(
        self, checkpoint_id: CheckpointId, reason: CheckpointFailureReason
    ) -> list[Action]:
        """The coordinator aborted ``checkpoint_id``: like a cancellation marker that came on
        no channel (it and every older pending entry abort once each; an id not seen yet is
        remembered, aborted, to swallow its barriers)."""
        actions: list[Action] = []
        while self._pending and self._pending[0].checkpoint_id < checkpoint_id:
            actions += self._abort(self._pending.popleft(), reason)
        entry = self._find(checkpoint_id)
        if entry is None and checkpoint_id > self._latest_id:
            self._latest_id = checkpoint_id
            entry = _Pending(checkpoint_id, None, 0.0)
            self._pending.appendleft(entry)
        if entry is not None:
            actions += self._abort(entry, reason)
        return actions

    def on_end_of_partition(self, channel: ChannelIndex) -> list[Action]:
        self._channels.finish(channel)
        actions = self._complete_newest()
        if self._channels.all_finished:
            self._pending.clear()
        return actions

    def on_buffer(self, channel: ChannelIndex, buffer: object) -> list[Action]:
        return []

    def on_timer(self) -> list[Action]:
        return []

    # -- queries ------------------------------------------------------------------------

    def is_blocked(self, channel: ChannelIndex) -> bool:
        self._channels.check_exists(channel)
        return False

    def alignment_deadline_ms(self) -> float | None:
        return None

    def is_capturing(self, checkpoint_id: CheckpointId) -> bool:
        return False

    def statistics(self) -> BarrierHandlerStatistics:
        counting = tuple(entry.checkpoint_id for entry in self._pending if not entry.aborted)
        return BarrierHandlerStatistics(self._latest_id, counting, (), self._channels.finished)

    @property
    def pending_checkpoint_ids(self) -> list[CheckpointId]:
        """Ids of the checkpoints still being counted, oldest first."""
        return [entry.checkpoint_id for entry in self._pending]

    # -- internals ----------------------------------------------------------------------

    def _find(self, checkpoint_id: CheckpointId) -> _Pending | None:
        for entry in self._pending:
            if entry.checkpoint_id == checkpoint_id:
                return entry
        return None

    def _start(self, barrier: CheckpointBarrier) -> _Pending:
        self._latest_id = barrier.checkpoint_id
        delay = max(0.0, float(self._clock.wall_ms() - barrier.timestamp))
        entry = _Pending(barrier.checkpoint_id, barrier, delay)
        self._pending.append(entry)
        if len(self._pending) > MAX_PENDING_CHECKPOINTS:
            self._pending.popleft()
        return entry

    def _complete_newest(self) -> list[Action]:
        """Trigger the newest complete entry (unless aborted), dropping it and all older."""
        for index in range(len(self._pending) - 1, -1, -1):
            entry = self._pending[index]
            if self._channels.all_delivered(entry.seen):
                for _ in range(index + 1):
                    self._pending.popleft()
                return [] if entry.aborted else [self._trigger(entry)]
        return []

    def _trigger(self, entry: _Pending) -> TriggerCheckpoint:
        assert entry.barrier is not None, "a non-aborted entry always holds its barrier"
        metrics = CheckpointMetrics(0.0, entry.start_delay_ms, 0)
        return TriggerCheckpoint(entry.checkpoint_id, entry.barrier, metrics)

    @staticmethod
    def _abort(entry: _Pending, reason: CheckpointFailureReason = _CANCELLED) -> list[Action]:
        if entry.aborted:
            return []
        entry.aborted = True
        return [AbortCheckpoint(entry.checkpoint_id, reason)]
