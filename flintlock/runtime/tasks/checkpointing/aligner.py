"""The single-checkpoint barrier handler: aligned, unaligned and alternating exactly-once
checkpoints (Flink's CheckpointBarrierAligner, CheckpointBarrierUnaligner and
AlternatingCheckpointBarrierHandler as one state machine, like Flink's later
SingleCheckpointBarrierHandler).

Design note. Exactly one checkpoint is in progress at a time; its id is ``latest_id``. Each
checkpoint is handled in one of two ways, fixed when its first barrier arrives (see
``AlignmentPolicy``):

- aligned: a channel that delivered barrier n is blocked until every open channel has; then
  the handler triggers and releases them. Nothing behind a barrier is processed before the
  snapshot, so no in-flight data needs saving.
- unaligned: the first barrier triggers at once and nothing is blocked. A buffer consumed from
  a channel that has not delivered barrier n yet was sent *before* the barrier, yet is
  processed *after* the snapshot: it is captured (``PersistInflight``) so a restore replays
  it. Capture of n ends when every open channel delivered barrier n or ended.

An alternating checkpoint starts aligned and switches to unaligned when its alignment has
lasted the timeout (checked against the clock at the start of every call and by
``on_timer``), or when a barrier arrives already marked unaligned (an upstream task switched).
On the switch the handler triggers with the barrier's unaligned form and releases every
blocked channel. What is queued in a blocked channel came *after* its barrier, so it is not
in-flight data of n and is never persisted; the in-flight data are the buffers still to come
on channels without the barrier, captured as above. Savepoints and forced-aligned barriers
never switch.

A barrier may also be *announced* (``on_barrier_announced``): a priority copy overtook the
buffers queued ahead of it in the channel, and the barrier itself follows in order. For an
unaligned checkpoint the announcement triggers; the overtaken buffers, consumed before the
barrier itself, are then captured like any other in-flight buffer.

Anything newer (barrier or cancellation marker of a higher id, or an abort notification)
aborts the checkpoint in progress with CHECKPOINT_DECLINED_SUBSUMED; a marker for the current
id aborts it with CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER; barriers and markers of older
or already finished checkpoints are ignored. A second barrier of one checkpoint on one channel is a
``StreamCorruptedError``.

Single-threaded: all state belongs to the task thread that calls the ``on_*`` methods.
"""

from __future__ import annotations

import enum

from flintlock.common.clock import SYSTEM_CLOCK, Clock
from flintlock.common.errors import FlintlockError
from flintlock.common.ids import NOT_A_CHECKPOINT, ChannelIndex, CheckpointId
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason, StreamCorruptedError
from flintlock.runtime.network.barriers import (
    AlignmentType,
    CancelCheckpointMarker,
    CheckpointBarrier,
)
from flintlock.runtime.tasks.checkpointing.actions import (
    AbortCheckpoint,
    Action,
    BarrierHandlerStatistics,
    BlockChannel,
    CheckpointMetrics,
    PersistInflight,
    ResumeChannel,
    TriggerCheckpoint,
    buffer_size,
)
from flintlock.runtime.tasks.checkpointing.channels import InputChannels

_SUBSUMED = CheckpointFailureReason.CHECKPOINT_DECLINED_SUBSUMED
_CANCELLED = CheckpointFailureReason.CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER


class AlignmentPolicy(enum.Enum):
    """How the handler takes each checkpoint."""

    ALIGNED = 0
    """Every checkpoint aligned (exactly-once, unaligned checkpoints disabled)."""
    UNALIGNED = 1
    """Checkpoints unaligned from the first barrier; savepoints aligned."""
    ALTERNATING = 2
    """Checkpoints aligned until the alignment timeout, then unaligned; savepoints aligned."""


class Phase(enum.Enum):
    """Where the handler is with the checkpoint ``latest_id``."""

    IDLE = 0
    """No checkpoint in progress (none yet, or the latest one triggered-and-done or aborted)."""
    ALIGNING = 1
    """Aligned checkpoint: channels that delivered the barrier are blocked; not triggered."""
    CAPTURING = 2
    """Unaligned checkpoint: triggered; capturing in-flight buffers of channels still missing
    the barrier."""


_TRANSITIONS: dict[Phase, frozenset[Phase]] = {
    Phase.IDLE: frozenset({Phase.ALIGNING, Phase.CAPTURING}),
    Phase.ALIGNING: frozenset({Phase.IDLE, Phase.CAPTURING}),
    Phase.CAPTURING: frozenset({Phase.IDLE}),
}


_IDLE = Phase.IDLE  # on_buffer runs once per buffer: skip the enum class lookup


class IllegalPhaseTransitionError(FlintlockError):
    """The handler tried a move its state machine forbids (a bug in the handler)."""

    def __init__(self, source: Phase, target: Phase) -> None:
        super().__init__(source, target)
        self.source = source
        self.target = target

    def __str__(self) -> str:
        return f"barrier handler cannot move from {self.source.name} to {self.target.name}"


class BarrierAligner:
    """Exactly-once barrier handling for a gate of ``num_channels`` channels.

    ``alignment_timeout_ms`` is the default timeout of ALTERNATING checkpoints (a barrier's
    own ``options.alignment_timeout_ms`` overrides it); other policies ignore it.
    """

    def __init__(
        self,
        num_channels: int,
        policy: AlignmentPolicy = AlignmentPolicy.ALIGNED,
        *,
        alignment_timeout_ms: float | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._channels = InputChannels(num_channels)
        self._policy = policy
        self._default_timeout_ms = alignment_timeout_ms
        self._clock = clock
        # All fields below: task thread.
        self._phase = Phase.IDLE
        self._latest_id = NOT_A_CHECKPOINT
        self._barrier: CheckpointBarrier | None = None
        self._delivered: set[ChannelIndex] = set()
        self._blocked: set[ChannelIndex] = set()
        self._start_ms = 0.0
        self._start_delay_ms = 0.0
        self._bytes = 0
        self._timeout_ms: float | None = None

    # -- events -------------------------------------------------------------------------

    def on_barrier(self, channel: ChannelIndex, barrier: CheckpointBarrier) -> list[Action]:
        self._channels.check_open(channel)
        actions = self._check_timeout()
        checkpoint_id = barrier.checkpoint_id
        if checkpoint_id > self._latest_id:
            actions += self._abort_in_progress(_SUBSUMED)
            actions += self._begin(barrier, channel)
        elif checkpoint_id == self._latest_id:
            actions += self._on_current_barrier(channel, barrier)
        return actions

    def on_barrier_announced(
        self, channel: ChannelIndex, barrier: CheckpointBarrier
    ) -> list[Action]:
        """A priority copy of ``barrier`` overtook the buffers queued ahead of it on
        ``channel``; ``on_barrier`` follows once those buffers were consumed."""
        self._channels.check_open(channel)
        actions = self._check_timeout()
        if barrier.checkpoint_id > self._latest_id and self._is_unaligned(barrier):
            actions += self._abort_in_progress(_SUBSUMED)
            actions += self._begin(barrier, None)
        return actions

    def on_cancellation_marker(
        self, channel: ChannelIndex, marker: CancelCheckpointMarker
    ) -> list[Action]:
        self._channels.check_open(channel)
        actions = self._check_timeout()
        cancelled = marker.checkpoint_id
        if cancelled > self._latest_id:
            actions += self._abort_in_progress(_SUBSUMED)
            self._latest_id = cancelled
            self._delivered = set()
            actions.append(AbortCheckpoint(cancelled, _CANCELLED))
        elif cancelled == self._latest_id and self._phase is not Phase.IDLE:
            actions += self._abort_in_progress(_CANCELLED)
        return actions

    def abort(
        self, checkpoint_id: CheckpointId, reason: CheckpointFailureReason
    ) -> list[Action]:
        """The coordinator aborted ``checkpoint_id`` (a notification, not an in-band marker):
        an alignment or capture of it stops and its channels are released; an id not seen yet
        becomes the latest, so its barriers are ignored when they come (nothing is blocked
        for a checkpoint that can no longer complete)."""
        if checkpoint_id > self._latest_id:
            actions = self._abort_in_progress(_SUBSUMED)
            self._latest_id = checkpoint_id
            self._delivered = set()
            return [*actions, AbortCheckpoint(checkpoint_id, reason)]
        if checkpoint_id == self._latest_id and self._phase is not Phase.IDLE:
            return self._abort_in_progress(reason)
        return []

    def on_end_of_partition(self, channel: ChannelIndex) -> list[Action]:
        self._channels.check_open(channel)
        actions = self._check_timeout()
        self._channels.finish(channel)
        if channel in self._blocked:
            self._blocked.discard(channel)
            actions.append(ResumeChannel(channel))
        if self._phase is not Phase.IDLE and self._channels.all_delivered(self._delivered):
            actions += self._complete()
        return actions

    def on_buffer(self, channel: ChannelIndex, buffer: object) -> list[Action]:
        if self._phase is _IDLE:
            return []
        actions = self._check_timeout()
        if self._phase is Phase.ALIGNING:
            self._bytes += buffer_size(buffer)
        elif channel not in self._delivered:
            actions.append(PersistInflight(self._latest_id, channel, buffer))
        return actions

    def on_timer(self) -> list[Action]:
        """Switch to unaligned if the alignment timeout passed (the driver calls this at
        ``alignment_deadline_ms()`` when no input arrives)."""
        return self._check_timeout()

    check_alignment_timeout = on_timer

    # -- queries ------------------------------------------------------------------------

    def is_blocked(self, channel: ChannelIndex) -> bool:
        self._channels.check_exists(channel)
        return channel in self._blocked

    def alignment_deadline_ms(self) -> float | None:
        """``clock.now_ms()`` value at which the current alignment times out, if it can."""
        if self._phase is not Phase.ALIGNING or self._timeout_ms is None:
            return None
        return self._start_ms + self._timeout_ms

    def is_capturing(self, checkpoint_id: CheckpointId) -> bool:
        """Whether in-flight buffers of ``checkpoint_id`` may still come: its channel state
        is complete once this turns false (without an abort)."""
        return self._phase is Phase.CAPTURING and checkpoint_id == self._latest_id

    def statistics(self) -> BarrierHandlerStatistics:
        in_progress = () if self._phase is Phase.IDLE else (self._latest_id,)
        return BarrierHandlerStatistics(
            self._latest_id, in_progress, tuple(sorted(self._blocked)), self._channels.finished
        )

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def latest_checkpoint_id(self) -> int:
        """The newest checkpoint id seen in a barrier or marker (-1 before any)."""
        return self._latest_id

    # -- transitions --------------------------------------------------------------------

    def _move(self, target: Phase) -> None:
        if target not in _TRANSITIONS[self._phase]:
            raise IllegalPhaseTransitionError(self._phase, target)
        self._phase = target

    def _begin(self, barrier: CheckpointBarrier, channel: ChannelIndex | None) -> list[Action]:
        """Start checkpoint ``barrier.checkpoint_id`` (phase is IDLE); ``channel`` delivered
        its barrier (None: only announced)."""
        self._latest_id = barrier.checkpoint_id
        self._barrier = barrier
        self._delivered = set() if channel is None else {channel}
        self._start_ms = self._clock.now_ms()
        self._start_delay_ms = max(0.0, float(self._clock.wall_ms() - barrier.timestamp))
        self._bytes = 0
        self._timeout_ms = self._timeout_for(barrier)
        complete = self._channels.all_delivered(self._delivered)
        if self._is_unaligned(barrier):
            if not complete:
                self._move(Phase.CAPTURING)
            return [self._trigger(barrier, 0.0)]
        if complete:
            return [self._trigger(barrier, 0.0)]
        self._move(Phase.ALIGNING)
        assert channel is not None, "an aligned checkpoint starts with a delivered barrier"
        self._blocked.add(channel)
        return [BlockChannel(channel)]

    def _on_current_barrier(
        self, channel: ChannelIndex, barrier: CheckpointBarrier
    ) -> list[Action]:
        if channel in self._delivered:
            raise StreamCorruptedError(
                f"second barrier of checkpoint {barrier.checkpoint_id} on channel {channel}"
            )
        self._delivered.add(channel)
        if self._phase is Phase.IDLE:
            return []
        actions: list[Action] = []
        if self._phase is Phase.ALIGNING and barrier.options.is_unaligned and self._switchable:
            actions += self._switch_to_unaligned()
        if self._channels.all_delivered(self._delivered):
            return actions + self._complete()
        if self._phase is Phase.ALIGNING:
            self._blocked.add(channel)
            actions.append(BlockChannel(channel))
        return actions

    def _complete(self) -> list[Action]:
        """Every open channel delivered the barrier: trigger (aligned) or stop capturing."""
        if self._phase is Phase.CAPTURING:
            self._move(Phase.IDLE)
            return []
        assert self._barrier is not None
        elapsed = self._clock.now_ms() - self._start_ms
        actions: list[Action] = [self._trigger(self._barrier, elapsed)]
        actions += self._release_all()
        self._move(Phase.IDLE)
        return actions

    def _check_timeout(self) -> list[Action]:
        deadline = self.alignment_deadline_ms()
        if deadline is None or self._clock.now_ms() < deadline:
            return []
        return self._switch_to_unaligned()

    def _switch_to_unaligned(self) -> list[Action]:
        assert self._barrier is not None
        barrier = self._barrier.with_options(self._barrier.options.to_unaligned())
        self._barrier = barrier
        elapsed = self._clock.now_ms() - self._start_ms
        actions: list[Action] = [self._trigger(barrier, elapsed)]
        actions += self._release_all()
        self._move(Phase.CAPTURING)
        return actions

    def _abort_in_progress(self, reason: CheckpointFailureReason) -> list[Action]:
        if self._phase is Phase.IDLE:
            return []
        actions: list[Action] = [AbortCheckpoint(self._latest_id, reason)]
        actions += self._release_all()
        self._move(Phase.IDLE)
        return actions

    # -- helpers ------------------------------------------------------------------------

    def _trigger(self, barrier: CheckpointBarrier, alignment_ms: float) -> TriggerCheckpoint:
        metrics = CheckpointMetrics(alignment_ms, self._start_delay_ms, self._bytes)
        return TriggerCheckpoint(barrier.checkpoint_id, barrier, metrics)

    def _release_all(self) -> list[Action]:
        released: list[Action] = [ResumeChannel(ch) for ch in sorted(self._blocked)]
        self._blocked.clear()
        return released

    @property
    def _switchable(self) -> bool:
        return self._policy is AlignmentPolicy.ALTERNATING and self._barrier is not None and (
            _may_be_unaligned(self._barrier)
        )

    def _is_unaligned(self, barrier: CheckpointBarrier) -> bool:
        if not _may_be_unaligned(barrier):
            return False
        if self._policy is AlignmentPolicy.UNALIGNED:
            return True
        return self._policy is AlignmentPolicy.ALTERNATING and barrier.options.is_unaligned

    def _timeout_for(self, barrier: CheckpointBarrier) -> float | None:
        if self._policy is not AlignmentPolicy.ALTERNATING or not _may_be_unaligned(barrier):
            return None
        own = barrier.options.alignment_timeout_ms
        return float(own) if own is not None else self._default_timeout_ms


def _may_be_unaligned(barrier: CheckpointBarrier) -> bool:
    """Savepoints and forced-aligned checkpoints must align."""
    options = barrier.options
    return not options.is_savepoint and options.alignment is not AlignmentType.FORCED_ALIGNED
