"""The stream task: the main loop of one subtask (DESIGN.md §3, §5).

One thread runs ``StreamTask.run()``: it restores state, opens the operator chain, then
alternates between mail (checkpoint triggers, notifications, timers, cancel — see ``mailbox``)
and input — the source's next batch, or the next buffer or event from the input gate. The
parts, along Flink's own seams:

- ``StreamTask`` (here): the lifecycle (initialize, run, finish, clean up), the mailbox loop of
  a source and of a task with inputs, backpressure (a full output holds the loop, not a
  batch), and the entry points other threads call, which only put mail;
- ``input_processor.StreamInputProcessor``: the gate's buffers deserialised into batches, its
  watermarks to the watermark valve, checkpoint events to the checkpoint machine, restored
  input replayed;
- ``checkpointing.SubtaskCheckpointMachine``: the subtask's part of every checkpoint, as one
  I/O-free state machine (barrier alignment, channel-state bookkeeping, snapshot sequencing,
  aborts, stop-with-savepoint); ``checkpoint_commands.CheckpointCommands`` feeds it the
  task's events and carries out its commands;
- ``timer_service.TaskTimerService``: the task's one wall-clock timer service.

Ending, with checkpointing on (Flink's final checkpoint): a source that reached its end keeps
running until a checkpoint it took after its last record has completed, and only then sends
end of partition; every other task ends once all its inputs ended and the checkpoint of the
last barrier it saw has completed. So the tail of a bounded job is committed by two-phase
sinks before the job finishes. Without checkpointing tasks end as soon as their input does.

Stopping with a savepoint (synchronous savepoints): a source that took one emits nothing more
and, once it completed, ends without ending its operators' input (with drain it ended its
input before the barrier, so windows and timers fired into the savepoint); every other task
ends after the end of partition that follows the savepoint's barrier, again without ending
its operators' input unless the savepoint drained.

Thread ownership: everything is owned by the task thread except the methods documented as
callable from other threads (``trigger_checkpoint``, ``notify_*``, ``cancel``), which only put
mail, and ``time_statistics`` (the heartbeat thread).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from flintlock.common.checkpointing import CheckpointingMode
from flintlock.common.clock import SYSTEM_CLOCK, Clock
from flintlock.common.config import Configuration
from flintlock.common.errors import FlintlockError
from flintlock.common.ids import CheckpointId, IntermediateDataSetId
from flintlock.graph.job_graph import JobVertex
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason
from flintlock.runtime.checkpoint.pending import SubtaskState
from flintlock.runtime.execution_state import ExecutionState
from flintlock.runtime.network.barriers import (
    CheckpointBarrier,
    CheckpointOptions,
)
from flintlock.runtime.network.buffer import BufferPoolDestroyedError, LocalBufferPool
from flintlock.runtime.network.gate import SingleInputGate
from flintlock.runtime.network.partition import ResultPartition
from flintlock.runtime.network.writer import RecordWriter
from flintlock.runtime.state.snapshots import (
    OperatorSubtaskState,
    ReadState,
    StateWriter,
)
from flintlock.runtime.tasks.adaptive_batch import BATCH_TARGET_S as BATCH_TARGET_S
from flintlock.runtime.tasks.adaptive_batch import MAX_BATCH as MAX_BATCH
from flintlock.runtime.tasks.adaptive_batch import AdaptiveBatch
from flintlock.runtime.tasks.chain import ChainEnvironment, OperatorChain
from flintlock.runtime.tasks.channel_state_io import (
    read_channel_state,
    reemit_outputs,
)
from flintlock.runtime.tasks.checkpoint_commands import CheckpointCommands
from flintlock.runtime.tasks.checkpointing import events as ev
from flintlock.runtime.tasks.checkpointing.handlers import create_barrier_handler
from flintlock.runtime.tasks.checkpointing.machine import MachineSettings, SubtaskCheckpointMachine
from flintlock.runtime.tasks.input_processor import StreamInputProcessor
from flintlock.runtime.tasks.mailbox import Mailbox
from flintlock.runtime.tasks.operator import TaskEnvironment
from flintlock.runtime.tasks.sources import InputStatus, SourceOperator
from flintlock.runtime.tasks.time_meter import TaskTimeMeter, TaskTimeStatistics
from flintlock.runtime.tasks.timer_service import TaskTimerService

log = logging.getLogger(__name__)

IDLE_POLL_S = 0.05
class TaskCancelledError(FlintlockError):
    """Raised inside the task thread to unwind it after ``cancel()``."""


class TaskCallbacks(Protocol):
    """How a task reports to its TaskManager (which forwards to the JobManager)."""

    def task_state_changed(
        self, task: StreamTask, state: ExecutionState, error: BaseException | None
    ) -> None: ...

    def acknowledge_checkpoint(
        self, task: StreamTask, checkpoint_id: CheckpointId, state: SubtaskState,
        metrics: Mapping[str, float],
    ) -> None: ...

    def decline_checkpoint(
        self, task: StreamTask, checkpoint_id: CheckpointId, reason: CheckpointFailureReason,
        error: BaseException | None,
    ) -> None: ...


class SnapshotWriting(Protocol):
    """Where a checkpoint's files go and how the asynchronous part runs."""

    def state_writer(self, checkpoint_id: CheckpointId, is_savepoint: bool) -> StateWriter: ...

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
    environment: TaskEnvironment = field(default_factory=TaskEnvironment)
    """What every operator of the subtask is handed (``checkpointing`` follows
    ``checkpointing.enabled``)."""
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
        self._inputs: StreamInputProcessor | None = None
        self._input_ended = False
        self._batch = AdaptiveBatch()
        self._backpressured_ms = 0.0  # task thread writes, heartbeat thread reads
        self._meter = TaskTimeMeter(self._backpressured_total_ms, clock)
        self._checkpoints = CheckpointCommands(
            self, _checkpoint_machine(spec, io, clock), callbacks, snapshots, self._timers,
            clock, lambda: self._end_input(0))

    # -- other threads -------------------------------------------------------------------

    def trigger_checkpoint(self, checkpoint_id: CheckpointId, timestamp: int,
                           options: CheckpointOptions) -> None:
        """A source task's checkpoint trigger from the JobManager."""
        barrier = CheckpointBarrier(checkpoint_id, timestamp, options)
        self.mailbox.offer(
            lambda: self._checkpoints.feed(ev.TriggerReceived(barrier, self._input_ended)),
            f"trigger {checkpoint_id}", urgent=True)

    def assign_splits(self, operator_id: str, splits: list[Any], no_more_splits: bool) -> None:
        """Splits for a source operator of this task, from its enumerator in the JobManager.

        Urgent like checkpoint triggers, so the two keep the order they were sent in: the
        enumerator's snapshot counts a split as assigned when it was sent before the trigger,
        so the reader must have it before it snapshots (else a restore loses the split)."""
        self.mailbox.offer(lambda: self._on_splits(operator_id, splits, no_more_splits),
                           f"splits for {operator_id}", urgent=True)

    def notify_checkpoint_complete(self, checkpoint_id: CheckpointId,
                                   in_flight_data: bool = False) -> None:
        event = ev.CheckpointCompleted(checkpoint_id, in_flight_data)
        self.mailbox.offer(lambda: self._checkpoints.feed(event), f"complete {checkpoint_id}")

    def notify_checkpoint_aborted(self, checkpoint_id: CheckpointId) -> None:
        event = ev.CheckpointAborted(checkpoint_id)
        self.mailbox.offer(lambda: self._checkpoints.feed(event), f"aborted {checkpoint_id}")

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
            environment=replace(spec.environment, checkpointing=spec.checkpointing.enabled),
            mailbox=_OperatorMailbox(self.mailbox, lambda: self._cancelled, self.name),
        )
        chain = self._chain = OperatorChain(spec.vertex, self.io.writers, env,
                                            self._create_operator)
        self._checkpoints.chain = chain
        restored = {} if spec.finished_on_restore else spec.restored
        chain.initialize(restored, self._read_state)
        head_id = spec.vertex.operators[0].operator_id
        restored_channels = read_channel_state(restored.get(head_id), self._read_state)
        if restored_channels is not None:
            reemit_outputs(restored_channels, self.io.partitions)
        self._enable_overdraft()
        chain.open()
        if self.io.gates:
            inputs = self._inputs = StreamInputProcessor(
                self.name, self.io, chain, self._checkpoints, self._batch, self.mailbox,
                self._run_mail, self._end_of_inputs)
            self._checkpoints.inputs = inputs
            inputs.replay(restored_channels)

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
        machine = self._checkpoints.machine
        while True:
            self._run_mail()
            if machine.stopped and not self._input_ended:
                return  # stopped with a savepoint: ends without ending its input
            if self._input_ended or machine.suspended:
                if self._input_ended and self._may_finish_source():
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
        """Backpressure without blocking inside a step (Flink's output availability): if an
        output pool is unavailable, restart the batch at one record and wait for mail or the
        pool's availability, so checkpoint triggers and unaligned barriers are not held up
        behind a full output. True if it waited."""
        pool = self._unavailable_output()
        if pool is None:
            return False
        self._batch.size = 1  # grows back by doubling once batches are quick again
        try:
            pool.add_availability_listener(self.mailbox.signal_input)
        except BufferPoolDestroyedError:
            return False
        self._wait(IDLE_POLL_S, backpressured=True)
        return True

    def _unavailable_output(self) -> LocalBufferPool | None:
        """An output pool a step must not start on (checked between steps, never per record):
        it has no free buffer, a subpartition at its cap, or overdraft out. What a step needs
        beyond the one buffer this guarantees it takes as overdraft (``_enable_overdraft``)."""
        for partition in self.io.partitions:
            pool = partition.buffer_pool
            if not pool.is_available:
                return pool
        return None

    def _enable_overdraft(self) -> None:
        """From now on the loop checks output availability between steps, so a step may
        finish on overdraft buffers instead of blocking inside it (buffer.py)."""
        for partition in self.io.partitions:
            partition.buffer_pool.enable_overdraft()

    def _may_finish_source(self) -> bool:
        if not self.spec.checkpointing.enabled or self.spec.finished_on_restore:
            return True  # restored as finished: nothing of it is left to commit
        machine = self._checkpoints.machine
        return machine.final_checkpoint_done or machine.stopped

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

    # -- inputs --------------------------------------------------------------------------

    def _run_inputs(self) -> None:
        inputs = self._inputs
        assert inputs is not None
        while True:
            self._run_mail()
            if self._input_ended:
                if self._may_finish_after_input():
                    return
                self._wait(None)
                continue
            full = self._unavailable_output() is not None
            if inputs.process_next(priority_only=full):
                continue
            if full:
                self._wait_for_output()
            else:
                self._wait(IDLE_POLL_S)

    def _end_of_inputs(self) -> None:
        """Every input channel ended (the input processor's end of partition)."""
        self._input_ended = True
        self._flush_outputs()

    def _may_finish_after_input(self) -> bool:
        machine = self._checkpoints.machine
        if not self.spec.checkpointing.enabled or machine.last_barrier < 0:
            return True
        return machine.completed_up_to >= machine.last_barrier

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
        self._checkpoints.close()
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


def _checkpoint_machine(spec: TaskSpec, io: TaskIO, clock: Clock) -> SubtaskCheckpointMachine:
    """The subtask's checkpoint machine, with the barrier handler of its checkpointing mode
    for its input gates (none for a source)."""
    cp = spec.checkpointing
    handler = None
    if io.gates:
        handler = create_barrier_handler(
            sum(gate.num_channels for gate in io.gates),
            cp.mode if cp.enabled else CheckpointingMode.AT_LEAST_ONCE,
            unaligned=cp.unaligned, aligned_timeout_ms=cp.aligned_timeout_ms, clock=clock)
    settings = MachineSettings(
        unaligned=cp.unaligned,
        pipelined_outputs=any(p.partition_type.is_pipelined for p in io.partitions),
        finished_on_restore=spec.finished_on_restore)
    return SubtaskCheckpointMachine(settings, handler, clock)
