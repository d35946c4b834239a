"""The stream task: the main loop of one subtask (DESIGN.md §3, §5).

One thread runs ``StreamTask.run()``: it restores state, opens the operator chain, then
alternates between mail (checkpoint triggers, notifications, timers, cancel — see ``mailbox``)
and input — the source's next batch, or the next buffer from the input gate, deserialised
into a batch for the chain's head. Events from the gate go to the barrier handler of the
checkpointing mode, whose actions the task carries out: block or resume a channel, trigger a
checkpoint, abort one, persist an in-flight buffer.

A checkpoint, on the task thread: each operator's ``snapshot_state`` hook and the
synchronous part of every state backend's snapshot, then the barrier to every output, then
the asynchronous part is handed to the TaskManager's snapshot executor, which writes the files
and acknowledges to the JobManager. Barriers and snapshot happen between two batches, so
nothing is half-processed.

Unaligned checkpoints (``channel_state_io``): a priority barrier's trigger opens the
checkpoint's channel state with each input deserializer's leftover bytes, the barrier's
broadcast adds the output buffers it overtook, ``PersistInflight`` actions and the buffers a
priority barrier overtook in a remote channel add input buffers; the asynchronous part is
submitted once the handler stops capturing (``is_capturing``), the task processing on
meanwhile. A restored task re-emits its output channel state before anything else and replays
its input channel state before reading new input. With an alignment timeout
(alternating checkpoints) a timer mail calls the handler's ``on_timer`` at its deadline.

Ending, with checkpointing on (Flink's final checkpoint): a source that reached its end keeps
running until a checkpoint it took after its last record has completed, and only then sends
end of partition; every other task ends once all its inputs ended and the checkpoint of the
last barrier it saw has completed. So the tail of a bounded job is committed by two-phase
sinks before the job finishes. Without checkpointing tasks end as soon as their input does.

Thread ownership: everything is owned by the task thread except the methods documented as
callable from other threads (``trigger_checkpoint``, ``notify_*``, ``cancel``), which only put
mail.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from flintlock.common.checkpointing import CheckpointingMode
from flintlock.common.clock import SYSTEM_CLOCK, Clock
from flintlock.common.config import Configuration
from flintlock.common.errors import FlintlockError
from flintlock.common.ids import ChannelIndex, CheckpointId, IntermediateDataSetId
from flintlock.graph.job_graph import JobVertex
from flintlock.runtime.checkpoint import alignment
from flintlock.runtime.checkpoint.barriers import (
    CancelCheckpointMarker,
    CheckpointBarrier,
    CheckpointOptions,
    EndOfPartitionEvent,
)
from flintlock.runtime.checkpoint.channel_state import ChannelStateSnapshot, RecoveredInput
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason
from flintlock.runtime.checkpoint.finished import FINISHED_TASK
from flintlock.runtime.execution_state import ExecutionState
from flintlock.runtime.network.buffer import BufferPoolDestroyedError, DataType, LocalBufferPool
from flintlock.runtime.network.event_time import Watermark, WatermarkStatus
from flintlock.runtime.network.events import decode_event
from flintlock.runtime.network.gate import SingleInputGate, UnionInputGate
from flintlock.runtime.network.partition import ResultPartition
from flintlock.runtime.network.writer import RecordWriter
from flintlock.runtime.state.operator_snapshot import OperatorSnapshotInProgress
from flintlock.runtime.state.snapshots import (
    OperatorId,
    OperatorSubtaskState,
    ReadState,
    StateWriter,
    TaskStateSnapshot,
)
from flintlock.runtime.tasks.chain import ChainEnvironment, OperatorChain
from flintlock.runtime.tasks.channel_state_io import (
    ChannelStateCapture,
    CheckpointableDeserializer,
    collect_overtaken,
    read_channel_state,
    reemit_outputs,
    write_channel_state,
)
from flintlock.runtime.tasks.mailbox import Mailbox
from flintlock.runtime.tasks.sources import InputStatus, SourceOperator
from flintlock.runtime.tasks.time_meter import TaskTimeMeter, TaskTimeStatistics
from flintlock.runtime.tasks.timeoutable import (
    ReceivedBarriers,
    TimeoutableBarriers,
    is_timeoutable,
)
from flintlock.runtime.tasks.timer_service import TaskTimerService, TimerHandle
from flintlock.runtime.tasks.watermark_valve import WatermarkValve, carry_out

log = logging.getLogger(__name__)

IDLE_POLL_S = 0.05
MAX_BATCH = 4096
BATCH_TARGET_S = 0.02
"""A batch should take about this long, so mail (checkpoints, timers, cancel) waits little."""


class AdaptiveBatch:
    """How many records to hand the chain at once: doubles while a batch takes less than
    ``BATCH_TARGET_S``; one that took more than twice that scales the size down in
    proportion (a batch stalled by backpressure shrinks at once, so mail and checkpoint
    triggers wait for about one target time; task thread only)."""

    __slots__ = ("size",)

    def __init__(self) -> None:
        self.size = 64

    def observe(self, seconds: float) -> None:
        if seconds < BATCH_TARGET_S and self.size < MAX_BATCH:
            self.size *= 2
        elif seconds > 2 * BATCH_TARGET_S and self.size > 1:
            self.size = max(1, int(self.size * BATCH_TARGET_S / seconds))


class TaskCancelledError(FlintlockError):
    """Raised inside the task thread to unwind it after ``cancel()``."""


class TaskCallbacks(Protocol):
    """How a task reports to its TaskManager (which forwards to the JobManager)."""

    def task_state_changed(
        self, task: StreamTask, state: ExecutionState, error: BaseException | None
    ) -> None: ...

    def acknowledge_checkpoint(
        self, task: StreamTask, checkpoint_id: int, state: Any, metrics: Mapping[str, float]
    ) -> None: ...

    def decline_checkpoint(
        self, task: StreamTask, checkpoint_id: int, reason: CheckpointFailureReason,
        error: BaseException | None,
    ) -> None: ...


class SnapshotWriting(Protocol):
    """Where a checkpoint's files go and how the asynchronous part runs."""

    def state_writer(self, checkpoint_id: int, is_savepoint: bool) -> StateWriter: ...

    def submit(self, work: Callable[[], None]) -> None: ...


@dataclass(frozen=True, slots=True)
class CheckpointingSettings:
    enabled: bool = False
    mode: CheckpointingMode = CheckpointingMode.EXACTLY_ONCE
    unaligned: bool = False
    aligned_timeout_ms: int | None = None


@dataclass(slots=True)
class TaskIO:
    """The network side of one subtask, created by the TaskManager."""

    gates: Sequence[SingleInputGate]
    gate_inputs: Sequence[int]
    """For each gate, the head's input index it feeds (0 or 1)."""
    writers: Mapping[IntermediateDataSetId, RecordWriter]
    partitions: Sequence[ResultPartition]


@dataclass(slots=True)
class TaskSpec:
    vertex: JobVertex
    subtask_index: int
    attempt_number: int
    configuration: Configuration
    checkpointing: CheckpointingSettings
    restored: Mapping[str, OperatorSubtaskState] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)
    finished_on_restore: bool = False
    """The restored checkpoint recorded this subtask as finished (see checkpoint.finished):
    it takes no state and ends at once (a source emits nothing)."""


class _OperatorMailbox:
    """``TaskMailboxAccess`` for the operators of one task (see ``mailbox.wait_for_wake``)."""

    def __init__(self, mailbox: Mailbox, cancelled: Callable[[], bool], name: str) -> None:
        self._mailbox = mailbox
        self._cancelled = cancelled
        self._name = name

    def execute(self, action: Callable[[], None], description: str) -> bool:
        return self._mailbox.offer(action, description)

    def wake(self) -> None:
        self._mailbox.wake()

    def wait_for_wake(self) -> None:
        self._mailbox.wait_for_wake(IDLE_POLL_S)
        if self._cancelled():
            raise TaskCancelledError(self._name)


class StreamTask:
    def __init__(
        self, spec: TaskSpec, io: TaskIO, callbacks: TaskCallbacks, snapshots: SnapshotWriting,
        read_state: ReadState, create_operator: Callable[[Any], Any], clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.spec = spec
        self.io = io
        self.name = f"{spec.vertex.name} ({spec.subtask_index + 1}/{spec.vertex.parallelism})"
        self._callbacks = callbacks
        self._snapshots = snapshots
        self._read_state = read_state
        self._create_operator = create_operator
        self._clock = clock
        self.mailbox = Mailbox()
        self._timers = TaskTimerService(self.mailbox, clock, self.name)
        self.state = ExecutionState.CREATED
        self._cancelled = False
        self._chain: OperatorChain | None = None
        self._input_ended = False
        self._last_barrier: int | None = None
        self._completed_up_to = -1
        self._final_checkpoint: int | None = None  # the first trigger after the input ended
        self._final_checkpoint_done = False  # a checkpoint since then completed clean
        self._batch = AdaptiveBatch()
        self._last_source_barrier = 0  # task thread: the newest barrier this source emitted
        self._backpressured_ms = 0.0  # task thread writes, heartbeat thread reads
        self._meter = TaskTimeMeter(self._backpressured_total_ms, clock)
        self._capture = ChannelStateCapture()
        self._timeoutable = TimeoutableBarriers(
            io.partitions, self._capture, clock, self._schedule_mail)
        self._restored_channels: ChannelStateSnapshot | None = None
        self._alignment_timer: TimerHandle | None = None
        self._alignment_deadline: float | None = None
        self._remainder: tuple[int, list[Any], int] | None = None
        """While a priority event is handled mid-buffer: (channel, records, first unprocessed)."""
        self._overtaken_by_barrier: tuple[int, int, tuple[bytes, ...]] | None = None
        """(checkpoint id, channel, copies) for the priority barrier being handled."""

    # -- other threads -------------------------------------------------------------------

    def trigger_checkpoint(self, checkpoint_id: int, timestamp: int,
                           options: CheckpointOptions) -> None:
        """A source task's checkpoint trigger from the JobManager."""
        barrier = CheckpointBarrier(CheckpointId(checkpoint_id), timestamp, options)
        self.mailbox.offer(lambda: self._on_source_trigger(barrier), f"trigger {checkpoint_id}",
                           urgent=True)

    def assign_splits(self, operator_id: str, splits: list[Any], no_more_splits: bool) -> None:
        """Splits for a source operator of this task, from its enumerator in the JobManager.

        Urgent like checkpoint triggers, so the two keep the order they were sent in: the
        enumerator's snapshot counts a split as assigned when it was sent before the trigger,
        so the reader must have it before it snapshots (else a restore loses the split)."""
        self.mailbox.offer(lambda: self._on_splits(operator_id, splits, no_more_splits),
                           f"splits for {operator_id}", urgent=True)

    def notify_checkpoint_complete(self, checkpoint_id: int, in_flight_data: bool = False) -> None:
        self.mailbox.offer(lambda: self._on_complete(checkpoint_id, in_flight_data),
                           f"complete {checkpoint_id}")

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        self.mailbox.offer(lambda: self._on_aborted(checkpoint_id), f"aborted {checkpoint_id}")

    def cancel(self) -> None:
        """Stops the task: mail for the loop, and failing its partitions wakes a task thread
        blocked on a full output (backpressure) — Python threads cannot be interrupted."""
        self._cancelled = True
        self.mailbox.offer(self._raise_cancelled, "cancel", urgent=True)
        if not self.state.is_terminal:
            for partition in self.io.partitions:
                partition.fail(TaskCancelledError(self.name))

    # -- the task thread -----------------------------------------------------------------

    def run(self) -> None:
        error: BaseException | None = None
        final = ExecutionState.FINISHED
        try:
            self._transition(ExecutionState.INITIALIZING)
            self._initialize()
            self._transition(ExecutionState.RUNNING)
            if self._is_source:
                self._run_source()
            else:
                self._run_inputs()
            self._finish()
        except TaskCancelledError:
            final = ExecutionState.CANCELED
        except BaseException as exc:  # reported to the JobManager, never swallowed
            if self._cancelled:
                final = ExecutionState.CANCELED
            else:
                final, error = ExecutionState.FAILED, exc
        finally:
            close_errors = self._cleanup(error)
            if error is None and close_errors and final is ExecutionState.FINISHED:
                final, error = ExecutionState.FAILED, close_errors[0]
        self._transition(final, error)

    @property
    def _is_source(self) -> bool:
        return self._chain is not None and isinstance(self._chain.head, SourceOperator)

    def _transition(self, state: ExecutionState, error: BaseException | None = None) -> None:
        self.state = state
        self._callbacks.task_state_changed(self, state, error)

    def _initialize(self) -> None:
        spec = self.spec
        env = ChainEnvironment(
            task_name=spec.vertex.name, subtask_index=spec.subtask_index,
            attempt_number=spec.attempt_number, configuration=spec.configuration,
            timers=self._timers,
            extra={**spec.extra, "checkpointing": spec.checkpointing.enabled},
            mailbox=_OperatorMailbox(self.mailbox, lambda: self._cancelled, self.name),
        )
        self._chain = OperatorChain(spec.vertex, self.io.writers, env, self._create_operator)
        restored = {} if spec.finished_on_restore else spec.restored
        self._chain.initialize(restored, self._read_state)
        head_id = spec.vertex.operators[0].operator_id
        self._restored_channels = read_channel_state(restored.get(head_id), self._read_state)
        if self._restored_channels is not None:
            reemit_outputs(self._restored_channels, self.io.partitions)
        self._chain.open()
        if self.io.gates:
            self._setup_inputs()
            self._replay_restored_input()

    def _raise_cancelled(self) -> None:
        raise TaskCancelledError(self.name)

    def _run_mail(self) -> None:
        for mail in self.mailbox.take_all():
            mail.action()

    def _wait(self, timeout_s: float | None, backpressured: bool = False) -> None:
        """Waits for mail or input, counting the time as idle or as backpressured."""
        started = time.perf_counter()
        self.mailbox.wait(timeout_s)
        waited_ms = (time.perf_counter() - started) * 1000.0
        if backpressured:
            self._backpressured_ms += waited_ms
        else:
            self._meter.add_idle(waited_ms)

    def _backpressured_total_ms(self) -> float:
        """Waiting for a free output buffer: in this loop, and inside the record writers."""
        return self._backpressured_ms + sum(
            writer.backpressured_ms() for writer in self.io.writers.values())

    def time_statistics(self) -> TaskTimeStatistics:
        """Busy / backpressured / idle milliseconds per second since the previous call
        (called by the TaskManager's heartbeat thread)."""
        return self._meter.sample()

    # -- sources -------------------------------------------------------------------------

    def _run_source(self) -> None:
        head = self._chain.head  # type: ignore[union-attr]
        assert isinstance(head, SourceOperator)
        if self.spec.finished_on_restore:
            self._end_input(0)
        while True:
            self._run_mail()
            if self._input_ended:
                if self._may_finish_source():
                    return
                self._wait(None)
                continue
            if self._wait_for_output():
                continue
            started = time.perf_counter()
            status = head.emit_next(self._batch.size)
            self._batch.observe(time.perf_counter() - started)
            if status is InputStatus.END_OF_INPUT:
                self._end_input(0)
            elif status is InputStatus.NOTHING_AVAILABLE:
                self._wait(IDLE_POLL_S)

    def _wait_for_output(self) -> bool:
        """Backpressure without blocking inside a batch (Flink's output availability): if an
        output pool has no free buffer, restart the batch at one record and wait for mail or a
        free buffer, so checkpoint triggers and unaligned barriers are not held up behind a
        full output. True if it waited."""
        pool = self._exhausted_output()
        if pool is None:
            return False
        self._batch.size = 1  # grows back by doubling once batches are quick again
        try:
            pool.add_availability_listener(self.mailbox.signal_input)
        except BufferPoolDestroyedError:
            return False
        self._wait(IDLE_POLL_S, backpressured=True)
        return True

    def _exhausted_output(self) -> LocalBufferPool | None:
        for partition in self.io.partitions:
            pool = partition.buffer_pool
            if not pool.is_destroyed and not pool.num_available:
                return pool
        return None

    def _may_finish_source(self) -> bool:
        if not self.spec.checkpointing.enabled or self.spec.finished_on_restore:
            return True  # restored as finished: nothing of it is left to commit
        return self._final_checkpoint_done

    def _on_splits(self, operator_id: str, splits: list[Any], no_more_splits: bool) -> None:
        chain = self._chain
        assert chain is not None
        member = next(m for m in chain.members if m.spec.operator_id == operator_id)
        operator = member.operator
        if not isinstance(operator, SourceOperator):
            raise FlintlockError(f"{self.name}: splits for {operator_id}, which is no source")
        if splits:
            operator.add_splits(splits)
        if no_more_splits:
            operator.notify_no_more_splits()

    def _on_source_trigger(self, barrier: CheckpointBarrier) -> None:
        if barrier.checkpoint_id <= self._last_source_barrier:
            # Downstream would ignore an older barrier and the checkpoint would wait for its
            # timeout: decline it at once instead.
            self._callbacks.decline_checkpoint(
                self, barrier.checkpoint_id,
                CheckpointFailureReason.CHECKPOINT_DECLINED_SUBSUMED, None)
            return
        self._last_source_barrier = barrier.checkpoint_id
        if self._input_ended and self._final_checkpoint is None:
            self._final_checkpoint = barrier.checkpoint_id
        self._perform_checkpoint(barrier, {})

    # -- inputs --------------------------------------------------------------------------

    def _setup_inputs(self) -> None:
        gates = list(self.io.gates)
        self._gate: SingleInputGate | UnionInputGate = (
            gates[0] if len(gates) == 1 else UnionInputGate(gates))
        self._channel_input: list[int] = []
        self._input_open_channels: dict[int, int] = {}
        for gate, input_index in zip(gates, self.io.gate_inputs, strict=True):
            self._channel_input += [input_index] * gate.num_channels
            self._input_open_channels[input_index] = (
                self._input_open_channels.get(input_index, 0) + gate.num_channels)
        self._deserializers = [CheckpointableDeserializer() for _ in self._channel_input]
        self._valve = WatermarkValve(len(self._channel_input))
        self._input_channels = self._gate.channels
        head = self._chain.head  # type: ignore[union-attr]
        self._process = (head.process_batch, head.process_batch2)
        cp = self.spec.checkpointing
        mode = cp.mode if cp.enabled else CheckpointingMode.AT_LEAST_ONCE
        self._handler = alignment.create_barrier_handler(
            len(self._channel_input), mode, unaligned=cp.unaligned,
            aligned_timeout_ms=cp.aligned_timeout_ms, clock=self._clock)
        self._received_barriers = ReceivedBarriers(
            self._input_channels, self._clock, self._schedule_mail,
            lambda action: self.mailbox.offer(action, "barrier announced"))
        for gate in gates:
            gate.set_availability_listener(self.mailbox.signal_input)
            gate.set_barrier_listener(self._received_barriers.on_announced)
        for gate in gates:
            gate.request_partitions()

    def _replay_restored_input(self) -> None:
        """Restored in-flight input, per channel through its deserializer, before any new
        input (the channels were requested, but nothing is read before this returns)."""
        snapshot = self._restored_channels
        if snapshot is None:
            return
        recovered = RecoveredInput(snapshot)
        for channel in recovered.pending_channels:
            process = self._process[self._channel_input[channel]]
            for data in recovered.drain(channel):
                records = self._deserializers[channel].deserialize(data)
                if records:
                    self._process_sliced(process, records)
        self._restored_channels = None

    def _run_inputs(self) -> None:
        poll = self._gate.poll_next
        while True:
            self._run_mail()
            if self._input_ended:
                if self._may_finish_after_input():
                    return
                self._wait(None)
                continue
            if self._exhausted_output() is not None:
                item = self._gate.poll_priority()
                if item is None:
                    self._wait_for_output()
                    continue
            else:
                item = poll()
            if item is None:
                self._wait(IDLE_POLL_S)
                continue
            self._dispatch(*item)

    def _dispatch(self, channel: int, buffer: Any) -> None:
        if buffer.data_type is DataType.DATA_BUFFER:
            self._on_data(channel, buffer)
        else:
            event = decode_event(buffer)
            buffer.recycle()
            self._on_event(channel, event)

    def _on_data(self, channel: int, buffer: Any) -> None:
        try:
            actions = self._handler.on_buffer(ChannelIndex(channel), buffer)
            if actions:
                self._execute(actions)
            records = self._deserializers[channel].deserialize(buffer.view())
        finally:
            buffer.recycle()
        if records:
            self._process_sliced(self._process[self._channel_input[channel]], records, channel)

    def _process_sliced(
        self, process: Callable[[list[Any]], None], records: list[Any], channel: int = -1,
    ) -> None:
        """Hands ``records`` to the chain in slices of the adaptive batch size, running mail
        between slices (a buffer of small records can hold thousands); with the ``channel``
        they came from, priority events (unaligned barriers) are taken between slices too,
        the records still to process counting as that channel's in-flight data."""
        size = self._batch.size
        if len(records) <= size:
            started = time.perf_counter()
            process(records)
            self._batch.observe(time.perf_counter() - started)
            return
        for start in range(0, len(records), size):
            began = time.perf_counter()
            process(records[start:start + size])
            self._batch.observe(time.perf_counter() - began)
            if self.mailbox.has_mail():
                self._run_mail()
            if channel >= 0 and start + size < len(records):
                self._take_priority_events(channel, records, start + size)

    def _take_priority_events(self, channel: int, records: list[Any], position: int) -> None:
        """Unaligned barriers waiting in the gate, handled in the middle of a buffer: a
        checkpoint they trigger stores ``records[position:]`` as ``channel``'s first
        in-flight data (Flink snapshots the unconsumed part of the current buffer)."""
        while (item := self._gate.poll_priority()) is not None:
            self._remainder = (channel, records, position)
            try:
                self._dispatch(*item)
            finally:
                self._remainder = None

    def _on_event(self, channel: int, event: object) -> None:
        index = ChannelIndex(channel)
        if isinstance(event, (Watermark, WatermarkStatus)):
            carry_out(self._valve.on_event(channel, event), self._chain)  # type: ignore[arg-type]
        elif isinstance(event, CheckpointBarrier):
            self._last_barrier = max(self._last_barrier or 0, event.checkpoint_id)
            if event.is_priority:
                # Taken before the handler runs: if this barrier triggers the checkpoint and
                # completes its capture at once (a task with one input channel), the capture
                # is finished inside the trigger, so the data this barrier overtook must be
                # added there (``_perform_checkpoint``), or it would be lost.
                self._overtaken_by_barrier = (event.checkpoint_id, channel,
                                              self._input_channels[channel].take_overtaken())
            self._execute(self._handler.on_barrier(index, event))
            self._add_overtaken_input()
            self._capture.finish_ready(self._handler.is_capturing)
        elif isinstance(event, CancelCheckpointMarker):
            self._execute(self._handler.on_cancellation_marker(index, event))
        elif isinstance(event, EndOfPartitionEvent):
            self._deserializers[channel].check_complete()
            self._execute(self._handler.on_end_of_partition(index))
            self._capture.finish_ready(self._handler.is_capturing)
            carry_out(self._valve.on_finished(channel), self._chain)  # type: ignore[arg-type]
            input_index = self._channel_input[channel]
            self._input_open_channels[input_index] -= 1
            if self._input_open_channels[input_index] == 0:
                self._chain.end_input(input_index)  # type: ignore[union-attr]
            if not any(self._input_open_channels.values()):
                self._input_ended = True
                self._flush_outputs()
        else:
            raise FlintlockError(f"{self.name}: unexpected event {event!r} on channel {channel}")

    def _add_overtaken_input(self) -> None:
        """The data buffers the priority barrier being handled overtook in its channel's
        queue, as in-flight input of its checkpoint (after the channel's leftover, if any)."""
        overtaken, self._overtaken_by_barrier = self._overtaken_by_barrier, None
        if overtaken is not None:
            checkpoint_id, channel, buffers = overtaken
            self._capture.add_overtaken_input(CheckpointId(checkpoint_id), channel, buffers)

    def _may_finish_after_input(self) -> bool:
        if not self.spec.checkpointing.enabled or self._last_barrier is None:
            return True
        return self._completed_up_to >= self._last_barrier

    def _execute(self, actions: list[Any]) -> None:
        for action in actions:
            if isinstance(action, alignment.BlockChannel):
                self._gate.block_channel(action.channel)
            elif isinstance(action, alignment.ResumeChannel):
                self._gate.resume_channel(action.channel)
            elif isinstance(action, alignment.TriggerCheckpoint):
                self._perform_checkpoint(action.barrier, _metrics_dict(action.metrics))
            elif isinstance(action, alignment.AbortCheckpoint):
                self._abort_checkpoint(action.checkpoint_id, action.reason)
            elif isinstance(action, alignment.PersistInflight):
                self._capture.add_input(action.checkpoint_id, action.channel, action.buffer)
        self._arm_alignment_timer()

    def _arm_alignment_timer(self) -> None:
        """Alternating checkpoints: a mail calls ``on_timer`` at the alignment deadline."""
        deadline = self._handler.alignment_deadline_ms()
        if deadline == self._alignment_deadline:
            return
        if self._alignment_timer is not None:
            self._alignment_timer.cancel()
            self._alignment_timer = None
        self._alignment_deadline = deadline
        if deadline is None:
            return
        delay_s = max(0.0, (deadline - self._clock.now_ms()) / 1000.0)
        self._alignment_timer = self._timers.schedule_after(
            delay_s, self._on_alignment_timer, "alignment timeout")

    def _on_alignment_timer(self) -> None:
        self._alignment_deadline = None
        self._alignment_timer = None
        self._execute(self._handler.on_timer())
        self._capture.finish_ready(self._handler.is_capturing)

    # -- checkpoints ---------------------------------------------------------------------

    def _perform_checkpoint(self, barrier: CheckpointBarrier, metrics: dict[str, float]) -> None:
        chain = self._chain
        assert chain is not None
        checkpoint_id = barrier.checkpoint_id
        if self.spec.finished_on_restore:
            # Deployed as finished: its operators were never restored, so their fresh state
            # must not be recorded as this task's (a restore from it would run the task again
            # from the start); it acknowledges as a finished task does.
            for writer in self.io.writers.values():
                writer.broadcast_event(barrier)
            self._callbacks.acknowledge_checkpoint(self, checkpoint_id, FINISHED_TASK, metrics)
            return
        unaligned = barrier.is_priority
        timeoutable = not unaligned and self._may_time_out(barrier)
        if unaligned or timeoutable:
            self._capture.start(checkpoint_id, self._leftovers() if unaligned else {})
            self._add_overtaken_input()
        parts = chain.snapshot(checkpoint_id)
        for writer in self.io.writers.values():
            writer.broadcast_event(barrier)
        writer_target = self._snapshots.state_writer(
            checkpoint_id, barrier.options.is_savepoint)
        prefix = f"{self.spec.vertex.id[:8]}-{self.spec.subtask_index}"
        if not unaligned and not timeoutable:
            self._snapshots.submit(lambda: self._write_snapshot(
                checkpoint_id, parts, writer_target, prefix, metrics, None))
            return
        metrics = dict(metrics)
        if unaligned:
            self._capture.add_outputs(checkpoint_id, collect_overtaken(self.io.partitions,
                                                                       checkpoint_id))
            metrics["unaligned"] = 1.0

        def submit(channels: ChannelStateSnapshot) -> None:
            metrics["channel_state_bytes"] = float(channels.size)
            self._snapshots.submit(lambda: self._write_snapshot(
                checkpoint_id, parts, writer_target, prefix, metrics, channels))

        def release() -> None:
            for part in parts.values():
                part.release()

        if timeoutable:
            self._capture.defer(checkpoint_id, submit, release, by_handler=False)
            self._timeoutable.watch(barrier, metrics)
            return
        handler = getattr(self, "_handler", None)
        if handler is not None and handler.is_capturing(checkpoint_id):
            self._capture.defer(checkpoint_id, submit, release)
        else:
            submit(self._capture.finish(checkpoint_id))

    def _may_time_out(self, barrier: CheckpointBarrier) -> bool:
        """An aligned barrier with an alignment timeout, sent into pipelined outputs."""
        return (self.spec.checkpointing.unaligned and is_timeoutable(barrier)
                and any(p.partition_type.is_pipelined for p in self.io.partitions))

    def _schedule_mail(self, delay_s: float, action: Callable[[], None]) -> None:
        self._timers.schedule_after(delay_s, action, "timeoutable barrier check")

    def _leftovers(self) -> dict[int, bytes]:
        """Each input channel's unprocessed bytes at a trigger: the rest of the buffer being
        processed (re-serialised), then the chunk its deserializer has begun."""
        deserializers = getattr(self, "_deserializers", ())
        found = {ch: d.leftover() for ch, d in enumerate(deserializers) if d.has_partial_chunk}
        if self._remainder is not None:
            channel, records, position = self._remainder
            rest = deserializers[channel].encode(records[position:])
            found[channel] = rest + found.get(channel, b"")
        return found

    def _write_snapshot(
        self, checkpoint_id: int, parts: dict[str, OperatorSnapshotInProgress],
        writer: StateWriter, prefix: str, metrics: dict[str, float],
        channels: ChannelStateSnapshot | None,
    ) -> None:
        """The asynchronous part (snapshot executor thread): write, then acknowledge."""
        try:
            if channels is not None and not channels.is_empty:
                head = parts[self.spec.vertex.operators[0].operator_id]
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
                self, checkpoint_id, CheckpointFailureReason.CHECKPOINT_ASYNC_EXCEPTION, exc)
            return
        self._callbacks.acknowledge_checkpoint(
            self, checkpoint_id, TaskStateSnapshot(states), metrics)

    def _abort_checkpoint(self, checkpoint_id: int, reason: CheckpointFailureReason) -> None:
        self._capture.abort(checkpoint_id)
        for writer in self.io.writers.values():
            writer.broadcast_event(CancelCheckpointMarker(CheckpointId(checkpoint_id)))
        self._callbacks.decline_checkpoint(self, checkpoint_id, reason, None)

    def _on_complete(self, checkpoint_id: int, in_flight_data: bool = False) -> None:
        if checkpoint_id <= self._completed_up_to:
            return
        self._completed_up_to = checkpoint_id
        final = self._final_checkpoint
        if final is not None and checkpoint_id >= final and not in_flight_data:
            self._final_checkpoint_done = True
        self._chain.notify_checkpoint_complete(checkpoint_id)  # type: ignore[union-attr]

    def _on_aborted(self, checkpoint_id: int) -> None:
        self._capture.abort(checkpoint_id)
        self._chain.notify_checkpoint_aborted(checkpoint_id)  # type: ignore[union-attr]

    # -- ending --------------------------------------------------------------------------

    def _end_input(self, input_index: int) -> None:
        self._chain.end_input(input_index)  # type: ignore[union-attr]
        self._input_ended = True
        self._flush_outputs()

    def _flush_outputs(self) -> None:
        for writer in self.io.writers.values():
            writer.flush_all()

    def _finish(self) -> None:
        for writer in self.io.writers.values():
            writer.close(flush=True)
        for partition in self.io.partitions:
            partition.finish()

    def _cleanup(self, error: BaseException | None) -> list[BaseException]:
        self._timers.close()
        self._capture.abort_all()
        self.mailbox.close()
        errors: list[BaseException] = []
        if self._chain is not None:
            errors = self._chain.close()
        if error is not None or self._cancelled:
            for writer in self.io.writers.values():
                writer.close(flush=False)
            for partition in self.io.partitions:
                partition.fail(error or TaskCancelledError(self.name))
        for gate in self.io.gates:
            gate.close()
        for exc in errors:
            log.warning("%s: error while closing: %r", self.name, exc)
        return errors


def _metrics_dict(metrics: Any) -> dict[str, float]:
    if metrics is None:
        return {}
    fields = getattr(metrics, "__dataclass_fields__", {})
    return {name: float(getattr(metrics, name)) for name in fields
            if isinstance(getattr(metrics, name), (int, float))}
