"""Carrying out a subtask's checkpoint commands: the thin, I/O side of
``checkpointing.machine`` (STYLE.md §2: the machine decides, this module does).

``CheckpointCommands.feed(event)`` hands one event to the task's ``SubtaskCheckpointMachine``
and carries out the commands it returns, in order, in the one exhaustive ``match`` of
``carry_out``: input channels blocked and resumed through the gate, channel state collected in
a ``ChannelStateWriter`` (input leftovers and overtaken buffers from the input side, overtaken
output buffers from the result partitions), the chain's synchronous snapshot held until its
asynchronous part is submitted to the snapshot executor (``async_checkpoint``) or cancelled,
barriers and cancellation markers broadcast, acknowledgements and declines sent to the
TaskManager, timers set on the task's timer service (which feed their event back as mail).

Threads: everything on the task thread. ``_running`` is also pruned by the snapshot executor's
thread when a run ends (one ``dict.pop``, atomic under the GIL).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, assert_never

from flintlock.common.clock import Clock
from flintlock.common.ids import ChannelIndex, CheckpointId
from flintlock.runtime.checkpoint.channel_state import ChannelStateWriter
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason
from flintlock.runtime.checkpoint.finished import FINISHED_TASK
from flintlock.runtime.checkpoint.pending import SubtaskState
from flintlock.runtime.network.barriers import CancelCheckpointMarker, CheckpointBarrier
from flintlock.runtime.network.input_channel import InputChannel
from flintlock.runtime.state.operator_snapshot import OperatorSnapshotInProgress
from flintlock.runtime.tasks.async_checkpoint import AsyncCheckpointRun, AsyncPartInputs
from flintlock.runtime.tasks.channel_state_io import collect_overtaken
from flintlock.runtime.tasks.checkpointing import commands as cmd
from flintlock.runtime.tasks.checkpointing import events as ev
from flintlock.runtime.tasks.checkpointing.actions import (
    BlockChannel,
    PersistInflight,
    ResumeChannel,
)
from flintlock.runtime.tasks.checkpointing.machine import SubtaskCheckpointMachine

if TYPE_CHECKING:
    from flintlock.runtime.tasks.chain import OperatorChain
    from flintlock.runtime.tasks.stream_task import SnapshotWriting, StreamTask, TaskCallbacks
    from flintlock.runtime.tasks.timer_service import TaskTimerService

log = logging.getLogger(__name__)


class InputSide(Protocol):
    """What the commands need of the task's input processor."""

    @property
    def channels(self) -> Sequence[InputChannel]: ...

    def block_channel(self, channel: int) -> None: ...

    def resume_channel(self, channel: int) -> None: ...

    def leftovers(self) -> dict[int, bytes]: ...

    def take_overtaken(self, channel: int) -> tuple[bytes, ...]: ...


class CheckpointCommands:
    """The task's side of its checkpoint machine (see the module docstring)."""

    def __init__(self, task: StreamTask, machine: SubtaskCheckpointMachine,
                 callbacks: TaskCallbacks, snapshots: SnapshotWriting,
                 timers: TaskTimerService, clock: Clock, drain: Callable[[], None]) -> None:
        self._task = task
        self.machine = machine
        self._callbacks = callbacks
        self._snapshots = snapshots
        self._timers = timers
        self._clock = clock
        self._drain = drain
        self._io = task.io
        self.chain: OperatorChain | None = None
        self.inputs: InputSide | None = None
        self._channel_state = ChannelStateWriter()
        self._parts: dict[CheckpointId, dict[str, OperatorSnapshotInProgress]] = {}
        self._running: dict[CheckpointId, AsyncCheckpointRun] = {}

    def feed(self, event: ev.Event) -> None:
        """One event to the machine; its commands carried out (task thread)."""
        commands = self.machine.handle(event)
        if commands:
            self.carry_out(commands)

    def on_buffer(self, channel: ChannelIndex, buffer: object) -> None:
        """``feed(BufferReceived(channel, buffer))`` for the per-buffer path, unboxed."""
        commands = self.machine.on_buffer(channel, buffer)
        if commands:
            self.carry_out(commands)

    def carry_out(self, commands: list[cmd.Command]) -> None:
        for command in commands:
            self._do(command)

    def _do(self, command: cmd.Command) -> None:  # one case per command, nothing else
        match command:
            case BlockChannel(channel=channel):
                self._input().block_channel(channel)
            case ResumeChannel(channel=channel):
                self._input().resume_channel(channel)
            case PersistInflight(checkpoint_id=checkpoint_id, channel=channel, buffer=buffer):
                self._add_input(checkpoint_id, channel, (buffer,))
            case cmd.OpenChannelState(checkpoint_id=checkpoint_id, with_leftovers=leftovers):
                self._open_channel_state(checkpoint_id, leftovers)
            case cmd.CaptureOvertakenInput(checkpoint_id=checkpoint_id, channel=channel):
                self._add_input(checkpoint_id, channel, self._input().take_overtaken(channel))
            case cmd.CaptureOutputState(checkpoint_id=checkpoint_id):
                self._capture_outputs(checkpoint_id)
            case cmd.SnapshotChain(barrier=barrier):
                self._snapshot_chain(barrier.checkpoint_id)
            case cmd.ForwardBarrier() | cmd.ForwardCancellationMarker():
                self._forward(command)
            case cmd.SubmitAsyncPart():
                self._submit(command)
            case cmd.CancelAsyncPart(checkpoint_id=checkpoint_id):
                self._cancel(checkpoint_id)
            case cmd.AcknowledgeFinished(checkpoint_id=checkpoint_id, metrics=metrics):
                self._acknowledge(checkpoint_id, FINISHED_TASK, metrics)
            case cmd.Decline(checkpoint_id=checkpoint_id, reason=reason):
                self._callbacks.decline_checkpoint(self._task, checkpoint_id, reason, None)
            case cmd.PollOutputBarriers(checkpoint_id=checkpoint_id, delay_s=delay_s):
                self._poll_outputs(checkpoint_id, delay_s)
            case cmd.ConvertQueuedBarriers(barrier=barrier):
                self._convert_outputs(barrier)
            case cmd.ConvertReceivedBarriers(barrier=barrier):
                self._convert_inputs(barrier)
            case cmd.ScheduleEvent(delay_s=delay_s, event=event):
                self._schedule(delay_s, event)
            case cmd.NotifyChain(checkpoint_id=checkpoint_id, completed=completed):
                self._notify_chain(checkpoint_id, completed)
            case cmd.DrainInput():
                self._drain()
            case _:
                assert_never(command)

    def close(self) -> None:
        """The task ends: release what no asynchronous part will use (running parts go on:
        a final checkpoint's acknowledgement may still be on its way)."""
        for checkpoint_id in list(self._parts):
            self._release(checkpoint_id)
        for checkpoint_id in self._channel_state.open_checkpoints:
            self._channel_state.abort(checkpoint_id)

    @property
    def running(self) -> list[CheckpointId]:
        """Checkpoints whose asynchronous part runs (statistics, tests)."""
        return sorted(self._running)

    # -- channel state -------------------------------------------------------------------

    def _open_channel_state(self, checkpoint_id: CheckpointId, with_leftovers: bool) -> None:
        self._channel_state.start(checkpoint_id)
        if with_leftovers and self.inputs is not None:
            for channel, data in sorted(self.inputs.leftovers().items()):
                self._add_input(checkpoint_id, channel, (data,))

    def _add_input(self, checkpoint_id: CheckpointId, channel: int,
                   buffers: Sequence[object]) -> None:
        if checkpoint_id not in self._channel_state.open_checkpoints:
            return  # a task restored as finished captures nothing
        for data in buffers:
            if data:
                self._channel_state.add_input(checkpoint_id, channel, data)

    def _capture_outputs(self, checkpoint_id: CheckpointId) -> None:
        self._add_outputs(checkpoint_id, collect_overtaken(self._io.partitions, checkpoint_id))

    def _add_outputs(self, checkpoint_id: CheckpointId,
                     outputs: Mapping[int, Sequence[bytes]]) -> None:
        for index, buffers in sorted(outputs.items()):
            for data in buffers:
                self._channel_state.add_output(checkpoint_id, index, data)

    def _poll_outputs(self, checkpoint_id: CheckpointId, delay_s: float) -> None:
        def poll() -> None:
            queued = any(p.has_queued_barrier(checkpoint_id) for p in self._io.partitions)
            self.feed(ev.OutputBarriersPolled(checkpoint_id, queued, self._clock.wall_ms()))

        if delay_s <= 0:
            poll()
        else:
            self._timers.schedule_after(delay_s, poll, "timeoutable barrier check")

    def _convert_inputs(self, barrier: CheckpointBarrier) -> int:
        """How many input channels converted ``barrier``."""
        converted = 0
        for channel in self._input().channels:
            if channel.convert_barrier_to_priority(barrier):
                converted += 1
                log.debug("checkpoint %d: aligned barrier converted in input channel %d",
                          barrier.checkpoint_id, channel.channel_index)
        return converted

    def _convert_outputs(self, barrier: CheckpointBarrier) -> None:
        offset = 0
        converted: dict[int, tuple[bytes, ...]] = {}
        for partition in self._io.partitions:
            for sub, copies in partition.convert_barrier_to_priority(barrier).items():
                converted[offset + sub] = copies
            offset += partition.num_subpartitions
        self._add_outputs(barrier.checkpoint_id, converted)

    # -- the snapshot's parts ------------------------------------------------------------

    def _snapshot_chain(self, checkpoint_id: CheckpointId) -> None:
        self._parts[checkpoint_id] = self._chain().snapshot(checkpoint_id)

    def _submit(self, command: cmd.SubmitAsyncPart) -> None:
        checkpoint_id = command.checkpoint_id
        spec = self._task.spec
        metrics = dict(command.metrics)
        channels = None
        if command.channel_state:
            channels = self._channel_state.finish(checkpoint_id)
            metrics["channel_state_bytes"] = float(channels.size)
        inputs = AsyncPartInputs(
            checkpoint_id, self._parts.pop(checkpoint_id), spec.vertex.operators[0].operator_id,
            self._snapshots.state_writer(checkpoint_id, command.savepoint),
            f"{spec.vertex.id[:8]}-{spec.subtask_index}", metrics, channels)
        run = AsyncCheckpointRun(inputs, self._acknowledge, self._decline_async, self._done)
        self._running[checkpoint_id] = run
        self._snapshots.submit(run.run)

    def _done(self, checkpoint_id: CheckpointId) -> None:
        """A run ended (snapshot executor thread)."""
        self._running.pop(checkpoint_id, None)

    def _cancel(self, checkpoint_id: CheckpointId) -> None:
        self._release(checkpoint_id)
        self._channel_state.abort(checkpoint_id)
        run = self._running.get(checkpoint_id)
        if run is not None:
            run.cancel()

    def _release(self, checkpoint_id: CheckpointId) -> None:
        for part in self._parts.pop(checkpoint_id, {}).values():
            part.release()

    def _acknowledge(self, checkpoint_id: CheckpointId, state: SubtaskState,
                     metrics: Mapping[str, float]) -> None:
        self._callbacks.acknowledge_checkpoint(self._task, checkpoint_id, state, metrics)

    def _decline_async(self, checkpoint_id: CheckpointId, reason: CheckpointFailureReason,
                       error: BaseException) -> None:
        self._callbacks.decline_checkpoint(self._task, checkpoint_id, reason, error)

    # -- the rest ------------------------------------------------------------------------

    def _forward(self, command: cmd.ForwardBarrier | cmd.ForwardCancellationMarker) -> None:
        """The barrier, or a cancellation marker, to every output."""
        event = (command.barrier if isinstance(command, cmd.ForwardBarrier)
                 else CancelCheckpointMarker(command.checkpoint_id))
        for writer in self._io.writers.values():
            writer.broadcast_event(event)

    def _schedule(self, delay_s: float, event: ev.Event) -> None:
        self._timers.schedule_after(delay_s, lambda: self.feed(event),
                                    f"checkpoint event {type(event).__name__}")

    def _notify_chain(self, checkpoint_id: CheckpointId, completed: bool) -> None:
        if completed:
            self._chain().notify_checkpoint_complete(checkpoint_id)
        else:
            self._chain().notify_checkpoint_aborted(checkpoint_id)

    def _chain(self) -> OperatorChain:
        assert self.chain is not None, "checkpoint commands before the chain was created"
        return self.chain

    def _input(self) -> InputSide:
        assert self.inputs is not None, "an input command in a task without inputs"
        return self.inputs
