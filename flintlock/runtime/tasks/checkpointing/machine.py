"""One subtask's part of every checkpoint, as one I/O-free state machine (Flink's
``SubtaskCheckpointCoordinator`` with its ``CheckpointBarrierHandler``; STYLE.md §2).

``SubtaskCheckpointMachine.handle(event) -> list[Command]`` is the whole interface: the task
feeds what happened (``events``) and carries out what it is told (``commands``), in order,
before it feeds the next event. No sockets, threads, timers or files here: tested with lists
of events and the exact commands expected.

Design note — the life of checkpoint n in one subtask, and which part of this machine owns it.

1. Start. A source is triggered from the mailbox (``TriggerReceived``): an id not newer than
   its last barrier is declined at once (downstream would ignore it); an id the coordinator
   already aborted emits a ``CancelCheckpointMarker`` instead of the barrier. A task with
   inputs starts when its barrier handler (``aligner`` / ``tracker``, held here) triggers.
2. Take (``_take``). The synchronous snapshot of the chain, then the barrier to every output.
   An aligned checkpoint submits its asynchronous part at once. An unaligned one first opens
   its channel state (the input leftovers, what the priority barrier overtook on its channel)
   and afterwards captures what its barrier overtook in the outputs; its asynchronous part
   waits (``_Waiting``) until the handler stops capturing in-flight input. A timeoutable
   aligned barrier (alternating checkpoints) waits for its outputs instead: the machine polls
   them until no subpartition queues the barrier (submitted as aligned) or the deadline
   passed (the queued barriers are converted to priority ones, then submitted). On the
   receiving side, a timeoutable barrier announced by a remote channel gets a deadline timer
   too, at which the channels still queueing it convert it.
3. End. The coordinator's completion is passed to the chain (sinks commit) and remembered
   (``completed_up_to``, the final checkpoint of a finished source). An abort, whichever way
   it comes — a cancellation marker or newer barrier (the handler's abort: the machine
   declines and forwards a marker), or the coordinator's notification (no decline: the
   coordinator decided it; the alignment in progress is released, a marker goes downstream,
   and an id not triggered yet is remembered, so its trigger becomes a marker) — cancels
   n's asynchronous part, held or running.

Stop with a savepoint (synchronous savepoints, Flink's ``SavepointType`` SUSPEND / TERMINATE):
the task that takes it is ``suspended`` — a source emits nothing more — until the savepoint
completes (``stopped``: the task finishes, without ending its operators' input unless the
savepoint drains) or is aborted (the task goes on). A draining stop first ends the source's
input (``DrainInput``), so ``MAX_WATERMARK`` fires every window and timer before the barrier.

Thread ownership: the task thread, which is the only caller.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import assert_never

from flintlock.common.clock import Clock
from flintlock.common.ids import ChannelIndex, CheckpointId
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason
from flintlock.runtime.network.barriers import AlignmentType, CheckpointBarrier
from flintlock.runtime.tasks.checkpointing import commands as cmd
from flintlock.runtime.tasks.checkpointing import events as ev
from flintlock.runtime.tasks.checkpointing.actions import (
    AbortCheckpoint,
    Action,
    BarrierHandler,
    CheckpointMetrics,
    TriggerCheckpoint,
)

CHECK_INTERVAL_MS = 10.0
"""How often a timeoutable barrier's outputs are polled before its deadline."""
MAX_REMEMBERED_ABORTS = 64
"""Aborted ids kept for triggers still to come (Flink keeps a bounded set too)."""

_SUBSUMED = CheckpointFailureReason.CHECKPOINT_DECLINED_SUBSUMED
_NOTIFIED = CheckpointFailureReason.CHECKPOINT_DECLINED
"""Reason the handler is given for the coordinator's abort (never sent: nothing is declined)."""
_NONE: list[cmd.Command] = []


@dataclass(frozen=True, slots=True)
class MachineSettings:
    """What the machine needs to know of its subtask, fixed at deployment."""

    unaligned: bool = False
    """Unaligned checkpoints are enabled (a timeoutable barrier may need output state)."""
    pipelined_outputs: bool = False
    """Some output is pipelined (only there can a barrier wait behind queued data)."""
    finished_on_restore: bool = False
    """Restored as finished: it acknowledges every checkpoint as a finished task."""


@dataclass(slots=True)
class _Waiting:
    """A checkpoint taken whose asynchronous part waits for its channel state."""

    barrier: CheckpointBarrier
    metrics: dict[str, float]
    for_outputs: bool
    """Timeoutable: until its outputs no longer queue the barrier (else: until the handler
    stops capturing input)."""


@dataclass(slots=True)
class _Stop:
    """A synchronous savepoint this task took."""

    checkpoint_id: CheckpointId
    drain: bool
    completed: bool = False


@dataclass(slots=True)
class _Sequence:
    """Which checkpoints this subtask saw, took, finished (all ids, -1 before any)."""

    last_barrier: int = -1
    """Newest barrier emitted (source) or received (other tasks)."""
    last_taken: int = -1
    completed_up_to: int = -1
    final_checkpoint: CheckpointId | None = None
    final_checkpoint_done: bool = False
    aborted: set[CheckpointId] = field(default_factory=set)
    """Notified aborted before this task took them."""


def _metrics(metrics: CheckpointMetrics) -> dict[str, float]:
    return {"alignment_duration_ms": float(metrics.alignment_duration_ms),
            "start_delay_ms": float(metrics.start_delay_ms),
            "bytes_processed_during_alignment": float(metrics.bytes_processed_during_alignment)}


def is_timeoutable(barrier: CheckpointBarrier) -> bool:
    """An aligned checkpoint barrier that may turn unaligned after its timeout."""
    options = barrier.options
    return (options.alignment is AlignmentType.ALIGNED and not options.is_savepoint
            and options.alignment_timeout_ms is not None)


def _unaligned_form(barrier: CheckpointBarrier) -> CheckpointBarrier:
    return barrier.with_options(barrier.options.to_unaligned())


def _deadline(barrier: CheckpointBarrier) -> float:
    """Wall-clock ms at which a timeoutable barrier turns unaligned."""
    timeout = barrier.options.alignment_timeout_ms
    assert timeout is not None
    return float(barrier.timestamp + timeout)


class SubtaskCheckpointMachine:
    """The checkpoint state machine of one subtask (see the module docstring). ``handler``
    is the barrier handler of its input gate (None: a source task)."""

    def __init__(self, settings: MachineSettings, handler: BarrierHandler | None,
                 clock: Clock) -> None:
        self._settings = settings
        self._handler = handler
        self._clock = clock
        # All fields: task thread.
        self._seq = _Sequence()
        self._waiting: dict[CheckpointId, _Waiting] = {}
        self._submitted: set[CheckpointId] = set()  # async part handed over, not completed
        self._stop: _Stop | None = None
        self._alignment_deadline: float | None = None
        self._armed_up_to = -1  # receiver side: newest announced barrier with a timer
        self._priority_channel: tuple[CheckpointId, int] | None = None

    def handle(self, event: ev.Event) -> list[cmd.Command]:  # one case per event
        """What to do about ``event``, in order (see ``commands``)."""
        match event:
            case ev.BufferReceived(channel=channel, buffer=buffer):
                return self.on_buffer(channel, buffer)
            case ev.BarrierReceived():
                return self._on_barrier(event)
            case ev.BarrierAnnounced():
                return self._on_announced(event)
            case ev.CancellationMarkerReceived():
                return self._on_marker(event)
            case ev.EndOfPartitionReceived():
                return self._on_end_of_partition(event)
            case ev.AlignmentTimerFired():
                return self._on_alignment_timer()
            case ev.TriggerReceived():
                return self._on_trigger(event)
            case ev.CheckpointCompleted():
                return self._on_completed(event)
            case ev.CheckpointAborted():
                return self._on_aborted(event)
            case ev.OutputBarriersPolled():
                return self._on_outputs_polled(event)
            case ev.ReceivedBarrierTimedOut():
                return self._on_received_timeout(event)
            case _:
                assert_never(event)

    # -- queries (task thread) ------------------------------------------------------------

    @property
    def completed_up_to(self) -> int:
        return self._seq.completed_up_to

    @property
    def last_barrier(self) -> int:
        return self._seq.last_barrier

    @property
    def final_checkpoint_done(self) -> bool:
        """A checkpoint taken after the source's input ended completed (with no in-flight
        data to be processed after it)."""
        return self._seq.final_checkpoint_done

    @property
    def suspended(self) -> bool:
        """A stop-with-savepoint was taken here and has not completed or failed: a source
        emits nothing."""
        return self._stop is not None and not self._stop.completed

    @property
    def stopped(self) -> bool:
        """The stop-with-savepoint completed: the task finishes."""
        return self._stop is not None and self._stop.completed

    @property
    def stops_without_draining(self) -> bool:
        """A non-draining stop-with-savepoint was taken: the end of input that follows it
        must not end the operators' input (nothing may be emitted after the savepoint)."""
        return self._stop is not None and not self._stop.drain

    @property
    def waiting(self) -> list[CheckpointId]:
        """Checkpoints taken whose asynchronous part waits for their channel state."""
        return sorted(self._waiting)

    # -- input events --------------------------------------------------------------------

    def _on_barrier(self, event: ev.BarrierReceived) -> list[cmd.Command]:
        barrier = event.barrier
        self._seq.last_barrier = max(self._seq.last_barrier, barrier.checkpoint_id)
        if barrier.is_priority:
            self._priority_channel = (barrier.checkpoint_id, event.channel)
        try:
            commands = self._from_handler(self._input().on_barrier(event.channel, barrier))
            late = self._priority_channel
            if late is not None and late[0] in self._waiting:
                commands.append(cmd.CaptureOvertakenInput(late[0], event.channel))
        finally:
            self._priority_channel = None
        return commands + self._submit_ready() + self._alignment_timer()

    def _on_announced(self, event: ev.BarrierAnnounced) -> list[cmd.Command]:
        barrier = event.barrier
        if not is_timeoutable(barrier) or barrier.checkpoint_id <= self._armed_up_to:
            return _NONE
        self._armed_up_to = barrier.checkpoint_id
        delay_ms = max(0.0, _deadline(barrier) - self._clock.wall_ms())
        return [cmd.ScheduleEvent(delay_ms / 1000.0, ev.ReceivedBarrierTimedOut(barrier))]

    def _on_received_timeout(self, event: ev.ReceivedBarrierTimedOut) -> list[cmd.Command]:
        return [cmd.ConvertReceivedBarriers(_unaligned_form(event.barrier))]

    def _on_marker(self, event: ev.CancellationMarkerReceived) -> list[cmd.Command]:
        actions = self._input().on_cancellation_marker(event.channel, event.marker)
        return self._from_handler(actions) + self._alignment_timer()

    def _on_end_of_partition(self, event: ev.EndOfPartitionReceived) -> list[cmd.Command]:
        commands = self._from_handler(self._input().on_end_of_partition(event.channel))
        return commands + self._submit_ready() + self._alignment_timer()

    def on_buffer(self, channel: ChannelIndex, buffer: object) -> list[cmd.Command]:
        """``handle(BufferReceived(channel, buffer))`` without the event object: the one event
        of the per-buffer path (nothing to do unless a checkpoint is aligning or capturing)."""
        actions = (self._handler or self._input()).on_buffer(channel, buffer)
        if not actions:
            return _NONE
        return self._from_handler(actions) + self._submit_ready() + self._alignment_timer()

    def _on_alignment_timer(self) -> list[cmd.Command]:
        self._alignment_deadline = None
        commands = self._from_handler(self._input().on_timer())
        return commands + self._submit_ready() + self._alignment_timer()

    def _input(self) -> BarrierHandler:
        if self._handler is None:
            raise TypeError("a source task's checkpoint machine has no input gate")
        return self._handler

    def _from_handler(self, actions: list[Action]) -> list[cmd.Command]:
        """The handler's actions as commands: a trigger takes the checkpoint, an abort
        declines it; channel and in-flight actions pass through."""
        commands: list[cmd.Command] = []
        for action in actions:
            if isinstance(action, TriggerCheckpoint):
                commands += self._take(action.barrier, _metrics(action.metrics))
            elif isinstance(action, AbortCheckpoint):
                commands += self._decline(action.checkpoint_id, action.reason)
            else:
                commands.append(action)
        return commands

    # -- mailbox events ------------------------------------------------------------------

    def _on_trigger(self, event: ev.TriggerReceived) -> list[cmd.Command]:
        barrier, seq = event.barrier, self._seq
        checkpoint_id = barrier.checkpoint_id
        if checkpoint_id <= seq.last_barrier:
            return [cmd.Decline(checkpoint_id, _SUBSUMED)]
        seq.last_barrier = checkpoint_id
        commands: list[cmd.Command] = []
        if barrier.options.checkpoint_type.should_drain and not event.input_ended:
            commands.append(cmd.DrainInput())
        if (event.input_ended or commands) and seq.final_checkpoint is None:
            seq.final_checkpoint = checkpoint_id
        return commands + self._take(barrier, {})

    def _on_completed(self, event: ev.CheckpointCompleted) -> list[cmd.Command]:
        checkpoint_id, seq = event.checkpoint_id, self._seq
        if checkpoint_id <= seq.completed_up_to:
            return _NONE
        seq.completed_up_to = checkpoint_id
        final = seq.final_checkpoint
        if final is not None and checkpoint_id >= final and not event.in_flight_data:
            seq.final_checkpoint_done = True
        if self._stop is not None and checkpoint_id >= self._stop.checkpoint_id:
            self._stop.completed = True
        self._submitted = {c for c in self._submitted if c > checkpoint_id}
        seq.aborted = {c for c in seq.aborted if c > checkpoint_id}
        return [cmd.NotifyChain(checkpoint_id, True)]

    def _on_aborted(self, event: ev.CheckpointAborted) -> list[cmd.Command]:
        """The coordinator's abort: release an alignment of it, tell downstream, cancel its
        asynchronous part, remember it if not taken yet (see the module docstring)."""
        checkpoint_id, seq = event.checkpoint_id, self._seq
        commands: list[cmd.Command] = []
        if self._handler is not None:
            for action in self._handler.abort(checkpoint_id, _NOTIFIED):
                if isinstance(action, AbortCheckpoint):
                    if action.checkpoint_id != checkpoint_id:  # an older one, subsumed
                        commands += self._decline(action.checkpoint_id, _SUBSUMED)
                else:
                    commands.append(action)  # type: ignore[arg-type]
        commands += self._cancel(checkpoint_id)
        if checkpoint_id <= seq.last_barrier:
            commands.append(cmd.ForwardCancellationMarker(checkpoint_id))
        if checkpoint_id > seq.last_taken:
            self._remember_abort(checkpoint_id)
        if self._stop is not None and self._stop.checkpoint_id == checkpoint_id:
            self._stop = None  # the stop failed: the task goes on
        commands.append(cmd.NotifyChain(checkpoint_id, False))
        return commands + self._alignment_timer()

    def _remember_abort(self, checkpoint_id: CheckpointId) -> None:
        aborted = self._seq.aborted
        aborted.add(checkpoint_id)
        while len(aborted) > MAX_REMEMBERED_ABORTS:
            aborted.discard(min(aborted))

    # -- taking a checkpoint -------------------------------------------------------------

    def _take(self, barrier: CheckpointBarrier, metrics: dict[str, float]) -> list[cmd.Command]:
        checkpoint_id = barrier.checkpoint_id
        if self._settings.finished_on_restore:
            return [cmd.ForwardBarrier(barrier), cmd.AcknowledgeFinished(checkpoint_id, metrics)]
        if checkpoint_id in self._seq.aborted:
            self._seq.aborted.discard(checkpoint_id)
            return [cmd.ForwardCancellationMarker(checkpoint_id)]
        self._seq.last_taken = max(self._seq.last_taken, checkpoint_id)
        options = barrier.options
        if options.checkpoint_type.is_synchronous:
            self._stop = _Stop(checkpoint_id, options.checkpoint_type.should_drain)
        unaligned = barrier.is_priority
        timeoutable = not unaligned and self._may_time_out(barrier)
        if not unaligned and not timeoutable:
            return [cmd.SnapshotChain(barrier), cmd.ForwardBarrier(barrier),
                    self._submit(barrier, metrics, channel_state=False)]
        commands: list[cmd.Command] = [cmd.OpenChannelState(checkpoint_id, unaligned)]
        priority = self._priority_channel
        if priority is not None and priority[0] == checkpoint_id:
            commands.append(cmd.CaptureOvertakenInput(checkpoint_id, priority[1]))  # type: ignore[arg-type]
            self._priority_channel = None
        commands += [cmd.SnapshotChain(barrier), cmd.ForwardBarrier(barrier)]
        if unaligned:
            commands.append(cmd.CaptureOutputState(checkpoint_id))
            metrics["unaligned"] = 1.0
        if timeoutable:
            self._waiting[checkpoint_id] = _Waiting(barrier, metrics, for_outputs=True)
            return [*commands, cmd.PollOutputBarriers(checkpoint_id, 0.0)]
        if self._handler is not None and self._handler.is_capturing(checkpoint_id):
            self._waiting[checkpoint_id] = _Waiting(barrier, metrics, for_outputs=False)
            return commands
        return [*commands, self._submit(barrier, metrics, channel_state=True)]

    def _may_time_out(self, barrier: CheckpointBarrier) -> bool:
        settings = self._settings
        return settings.unaligned and settings.pipelined_outputs and is_timeoutable(barrier)

    def _submit(self, barrier: CheckpointBarrier, metrics: dict[str, float],
                channel_state: bool) -> cmd.SubmitAsyncPart:
        self._submitted.add(barrier.checkpoint_id)
        return cmd.SubmitAsyncPart(barrier.checkpoint_id, dict(metrics), channel_state,
                                   barrier.options.is_savepoint)

    def _submit_ready(self) -> list[cmd.Command]:
        """Submit every checkpoint whose in-flight input capture is over."""
        if not self._waiting or self._handler is None:
            return _NONE
        commands: list[cmd.Command] = []
        for checkpoint_id in sorted(self._waiting):
            waiting = self._waiting[checkpoint_id]
            if not waiting.for_outputs and not self._handler.is_capturing(checkpoint_id):
                del self._waiting[checkpoint_id]
                commands.append(self._submit(waiting.barrier, waiting.metrics, True))
        return commands

    def _on_outputs_polled(self, event: ev.OutputBarriersPolled) -> list[cmd.Command]:
        checkpoint_id = event.checkpoint_id
        waiting = self._waiting.get(checkpoint_id)
        if waiting is None:
            return _NONE  # aborted meanwhile
        deadline = _deadline(waiting.barrier)
        if event.still_queued and event.wall_ms < deadline:
            delay_ms = min(CHECK_INTERVAL_MS, deadline - event.wall_ms)
            return [cmd.PollOutputBarriers(checkpoint_id, delay_ms / 1000.0)]
        del self._waiting[checkpoint_id]
        if not event.still_queued:
            return [self._submit(waiting.barrier, waiting.metrics, True)]
        waiting.metrics["unaligned"] = 1.0
        return [cmd.ConvertQueuedBarriers(_unaligned_form(waiting.barrier)),
                self._submit(waiting.barrier, waiting.metrics, True)]

    # -- giving a checkpoint up ----------------------------------------------------------

    def _decline(self, checkpoint_id: CheckpointId,
                 reason: CheckpointFailureReason) -> list[cmd.Command]:
        """The handler gave ``checkpoint_id`` up: tell downstream and the coordinator."""
        return [*self._cancel(checkpoint_id), cmd.ForwardCancellationMarker(checkpoint_id),
                cmd.Decline(checkpoint_id, reason)]

    def _cancel(self, checkpoint_id: CheckpointId) -> list[cmd.Command]:
        if self._waiting.pop(checkpoint_id, None) is not None:
            return [cmd.CancelAsyncPart(checkpoint_id)]
        if checkpoint_id in self._submitted:
            self._submitted.discard(checkpoint_id)
            return [cmd.CancelAsyncPart(checkpoint_id)]
        return _NONE

    def _alignment_timer(self) -> list[cmd.Command]:
        """A timer for the handler's alignment deadline, whenever it changes."""
        if self._handler is None:
            return _NONE
        deadline = self._handler.alignment_deadline_ms()
        if deadline == self._alignment_deadline:
            return _NONE
        self._alignment_deadline = deadline
        if deadline is None:
            return _NONE
        delay_s = max(0.0, (deadline - self._clock.now_ms()) / 1000.0)
        return [cmd.ScheduleEvent(delay_s, ev.AlignmentTimerFired())]
