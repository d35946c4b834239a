"""One subtask's part of checkpoints (Flink's ``SubtaskCheckpointCoordinator``): taking the
snapshot, capturing channel state for unaligned and timed-out checkpoints, acknowledging or
declining, and tracking which checkpoints completed (the final checkpoint of a bounded input).

A checkpoint, on the task thread (``perform``): each operator's ``snapshot_state`` hook and
the synchronous part of every state backend's snapshot, then the barrier to every output, then
the asynchronous part goes to the TaskManager's snapshot executor, which writes the files and
acknowledges to the JobManager. Barriers and snapshots happen between two batches, so nothing
is half-processed.

Unaligned checkpoints (``channel_state_io``): a priority barrier opens the checkpoint's channel
state with each input deserializer's leftover bytes (``leftovers``, from the input processor),
the barrier's broadcast adds the output buffers it overtook; the input processor adds the
input buffers the handler persists or the barrier overtook. The asynchronous part is submitted
once the barrier handler stops capturing, the task processing on meanwhile. An aligned barrier
with an alignment timeout (``timeoutable``) is captured the same way and may turn unaligned
at its deadline.

Thread ownership: the task thread, except ``_write_snapshot``, which runs on the snapshot
executor and touches only what ``perform`` handed it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any, Protocol

from flintlock.common.clock import Clock
from flintlock.common.ids import CheckpointId
from flintlock.runtime.checkpoint.channel_state import ChannelStateSnapshot
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason
from flintlock.runtime.checkpoint.finished import FINISHED_TASK
from flintlock.runtime.network.barriers import CancelCheckpointMarker, CheckpointBarrier
from flintlock.runtime.state.operator_snapshot import OperatorSnapshotInProgress
from flintlock.runtime.state.snapshots import OperatorId, StateWriter, TaskStateSnapshot
from flintlock.runtime.tasks.channel_state_io import (
    ChannelStateCapture,
    collect_overtaken,
    write_channel_state,
)
from flintlock.runtime.tasks.timeoutable import TimeoutableBarriers, is_timeoutable

if TYPE_CHECKING:
    from flintlock.runtime.tasks.chain import OperatorChain
    from flintlock.runtime.tasks.stream_task import (
        SnapshotWriting,
        StreamTask,
        TaskCallbacks,
        TaskIO,
        TaskSpec,
    )


class CaptureSource(Protocol):
    """What the input side tells the checkpointer (``input_processor``)."""

    def leftovers(self) -> dict[int, bytes]: ...

    def add_overtaken_input(self) -> None: ...

    def is_capturing(self, checkpoint_id: int) -> bool: ...


class SubtaskCheckpointer:
    def __init__(self, task: StreamTask, spec: TaskSpec, io: TaskIO, callbacks: TaskCallbacks,
                 snapshots: SnapshotWriting, clock: Clock,
                 schedule: Callable[[float, Callable[[], None]], None]) -> None:
        self._task = task
        self._spec = spec
        self._io = io
        self._callbacks = callbacks
        self._snapshots = snapshots
        self.capture = ChannelStateCapture()
        self._timeoutable = TimeoutableBarriers(io.partitions, self.capture, clock, schedule)
        self.chain: OperatorChain | None = None
        self.inputs: CaptureSource | None = None
        self.completed_up_to = -1
        self._final_checkpoint: int | None = None  # the first trigger after the input ended
        self.final_checkpoint_done = False  # a checkpoint since then completed clean
        self._last_source_barrier = 0  # the newest barrier this source emitted

    # -- triggers ------------------------------------------------------------------------

    def on_source_trigger(self, barrier: CheckpointBarrier, input_ended: bool) -> None:
        """A source task's trigger from the JobManager."""
        if barrier.checkpoint_id <= self._last_source_barrier:
            # Downstream would ignore an older barrier and the checkpoint would wait for its
            # timeout: decline it at once instead.
            self._callbacks.decline_checkpoint(
                self._task, barrier.checkpoint_id,
                CheckpointFailureReason.CHECKPOINT_DECLINED_SUBSUMED, None)
            return
        self._last_source_barrier = barrier.checkpoint_id
        if input_ended and self._final_checkpoint is None:
            self._final_checkpoint = barrier.checkpoint_id
        self.perform(barrier, {})

    def perform(self, barrier: CheckpointBarrier, metrics: dict[str, float]) -> None:
        """Takes the checkpoint ``barrier`` starts (see the module doc)."""
        chain = self.chain
        assert chain is not None
        checkpoint_id = barrier.checkpoint_id
        if self._spec.finished_on_restore:
            # Deployed as finished: its operators were never restored, so their fresh state
            # must not be recorded as this task's (a restore from it would run the task again
            # from the start); it acknowledges as a finished task does.
            for writer in self._io.writers.values():
                writer.broadcast_event(barrier)
            self._callbacks.acknowledge_checkpoint(self._task, checkpoint_id, FINISHED_TASK,
                                                   metrics)
            return
        unaligned = barrier.is_priority
        timeoutable = not unaligned and self._may_time_out(barrier)
        if unaligned or timeoutable:
            inputs = self.inputs
            self.capture.start(checkpoint_id, inputs.leftovers() if unaligned and inputs else {})
            if inputs is not None:
                inputs.add_overtaken_input()
        parts = chain.snapshot(checkpoint_id)
        for writer in self._io.writers.values():
            writer.broadcast_event(barrier)
        writer_target = self._snapshots.state_writer(
            checkpoint_id, barrier.options.is_savepoint)
        prefix = f"{self._spec.vertex.id[:8]}-{self._spec.subtask_index}"
        if not unaligned and not timeoutable:
            self._snapshots.submit(lambda: self._write_snapshot(
                checkpoint_id, parts, writer_target, prefix, metrics, None))
            return
        self._capture_channels(barrier, parts, writer_target, prefix, dict(metrics),
                               timeoutable)

    def _capture_channels(
        self, barrier: CheckpointBarrier, parts: dict[str, OperatorSnapshotInProgress],
        writer_target: StateWriter, prefix: str, metrics: MutableMapping[str, float],
        timeoutable: bool,
    ) -> None:
        """The asynchronous part waits for the checkpoint's channel state."""
        checkpoint_id = barrier.checkpoint_id
        if barrier.is_priority:
            self.capture.add_outputs(checkpoint_id, collect_overtaken(self._io.partitions,
                                                                      checkpoint_id))
            metrics["unaligned"] = 1.0

        def submit(channels: ChannelStateSnapshot) -> None:
            metrics["channel_state_bytes"] = float(channels.size)
            self._snapshots.submit(lambda: self._write_snapshot(
                checkpoint_id, parts, writer_target, prefix, dict(metrics), channels))

        def release() -> None:
            for part in parts.values():
                part.release()

        if timeoutable:
            self.capture.defer(checkpoint_id, submit, release, by_handler=False)
            self._timeoutable.watch(barrier, metrics)
        elif self.inputs is not None and self.inputs.is_capturing(checkpoint_id):
            self.capture.defer(checkpoint_id, submit, release)
        else:
            submit(self.capture.finish(checkpoint_id))

    def _may_time_out(self, barrier: CheckpointBarrier) -> bool:
        """An aligned barrier with an alignment timeout, sent into pipelined outputs."""
        return (self._spec.checkpointing.unaligned and is_timeoutable(barrier)
                and any(p.partition_type.is_pipelined for p in self._io.partitions))

    def _write_snapshot(
        self, checkpoint_id: int, parts: dict[str, OperatorSnapshotInProgress],
        writer: StateWriter, prefix: str, metrics: Mapping[str, float],
        channels: ChannelStateSnapshot | None,
    ) -> None:
        """The asynchronous part (snapshot executor thread): write, then acknowledge."""
        try:
            if channels is not None and not channels.is_empty:
                head = parts[self._spec.vertex.operators[0].operator_id]
                head.input_channel_state, head.result_subpartition_state = (
                    write_channel_state(channels, writer, f"{prefix}-channels"))
            states = {
                OperatorId(operator_id): part.run(writer, f"{prefix}-{operator_id[:8]}")
                for operator_id, part in parts.items()
            }
        except Exception as exc:
            for part in parts.values():
                part.release()
            self._callbacks.decline_checkpoint(
                self._task, checkpoint_id, CheckpointFailureReason.CHECKPOINT_ASYNC_EXCEPTION,
                exc)
            return
        self._callbacks.acknowledge_checkpoint(
            self._task, checkpoint_id, TaskStateSnapshot(states), metrics)

    def abort(self, checkpoint_id: int, reason: CheckpointFailureReason) -> None:
        """The barrier handler gave the checkpoint up: tell downstream and the JobManager."""
        self.capture.abort(checkpoint_id)
        for writer in self._io.writers.values():
            writer.broadcast_event(CancelCheckpointMarker(CheckpointId(checkpoint_id)))
        self._callbacks.decline_checkpoint(self._task, checkpoint_id, reason, None)

    # -- notifications -------------------------------------------------------------------

    def on_complete(self, checkpoint_id: int, in_flight_data: bool = False) -> None:
        if checkpoint_id <= self.completed_up_to:
            return
        self.completed_up_to = checkpoint_id
        final = self._final_checkpoint
        if final is not None and checkpoint_id >= final and not in_flight_data:
            self.final_checkpoint_done = True
        assert self.chain is not None
        self.chain.notify_checkpoint_complete(checkpoint_id)

    def on_aborted(self, checkpoint_id: int) -> None:
        self.capture.abort(checkpoint_id)
        assert self.chain is not None
        self.chain.notify_checkpoint_aborted(checkpoint_id)


def metrics_of(action_metrics: Any) -> dict[str, float]:
    """The numeric fields of the barrier handler's ``CheckpointMetrics``."""
    if action_metrics is None:
        return {}
    fields = getattr(action_metrics, "__dataclass_fields__", {})
    return {name: float(getattr(action_metrics, name)) for name in fields
            if isinstance(getattr(action_metrics, name), (int, float))}
