"""The contract between a stream task and the operators of its chain.

Records move through a chain in **batches** (Python lists), never one wrapper object per
record: the deserializer yields one list per pickled chunk, each operator turns its input list
into an output list and hands it to the next operator by a direct call. This is what keeps the
per-record framework cost near a list comprehension (DESIGN.md §4, performance budget).

Life cycle, all on the task thread (the mailbox makes sure of that):
``setup`` → ``initialize_state`` → ``open`` → (``process_batch`` | ``process_watermark`` |
``process_watermark_status`` | timers | ``snapshot_state`` | ``notify_checkpoint_complete`` |
``notify_checkpoint_aborted``)* → ``end_input`` (bounded input finished) → ``close``.

Event time (``runtime.network.event_time``): a batch whose records carry timestamps is a
``TimestampedBatch`` (a list of values plus a parallel ``timestamps`` list); an operator
keeps each output's timestamp that of the record it came from, as Flink does. Watermarks
reach an operator through ``process_watermark`` in order with the batches; the default
forwards them (and watermark status changes) to the operator's outputs, side outputs
included.

An operator never sees barriers: the task handles them, asks every operator of the chain to
``snapshot_state`` in chain order, and then forwards the barrier downstream.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from flintlock.runtime.metrics.groups import SubtaskMetricGroups


class Output(Protocol):
    """Where an operator sends its results: the next chained operator or a record writer."""

    def collect_batch(self, records: list[Any]) -> None: ...

    def emit_watermark(self, timestamp: int) -> None: ...

    def emit_watermark_status(self, idle: bool) -> None: ...


class TimerScheduler(Protocol):
    """Processing-time timers; ``callback(timestamp_ms)`` runs on the task thread."""

    def now_ms(self) -> int: ...

    def schedule(self, timestamp_ms: int, callback: Callable[[int], None]) -> object: ...


class TaskMailboxAccess(Protocol):
    """How an operator's helper thread gets work onto the task thread, and how the operator
    waits for that work inside a batch (async I/O; see ``mailbox``)."""

    def execute(self, action: Callable[[], None], description: str) -> bool:
        """Any thread: run ``action`` on the task thread; False if the task has ended."""
        ...

    def wake(self) -> None:
        """Any thread: end the task thread's ``wait_for_wake``."""
        ...

    def wait_for_wake(self) -> None:
        """Task thread: block until ``wake()`` or new mail; raises if the task was cancelled."""
        ...


CollectSend = Callable[[str, "tuple[int, int] | None", list[Any]], None]
"""Sends one batch of ``execute_and_collect`` records: (collect id, token, records)."""


def _no_collect(collect_id: str, token: tuple[int, int] | None, records: list[Any]) -> None:
    raise RuntimeError("execute_and_collect needs a TaskManager: this operator runs outside one")


@dataclass(frozen=True, slots=True)
class TaskEnvironment:
    """What the TaskManager hands every operator of a subtask, the same for all of them (the
    typed successor of an untyped ``extra`` dict)."""

    collect_send: CollectSend = _no_collect
    """Where ``execute_and_collect`` batches go (the TaskManager's RPC to the JobManager)."""
    batch: bool = False
    """The job runs in batch execution mode."""
    checkpointing: bool = False
    """Periodic checkpoints are on (sinks then commit on checkpoints only)."""
    job_parameters: Mapping[str, str] = field(default_factory=dict)
    """``pipeline.global-job-parameters`` (``RuntimeContext.get_job_parameter``)."""
    auto_watermark_interval_ms: int = 200
    """``pipeline.auto-watermark-interval``."""
    bundle_time_ms: int = 1000
    """``python.fn-execution.bundle.time`` (``timer_service.InternalTimerService``)."""
    bundle_size: int = 100_000
    """``python.fn-execution.bundle.size`` (``bundle_process_operator``)."""
    metric_groups: SubtaskMetricGroups = field(default_factory=SubtaskMetricGroups)
    """The subtask's metric groups (outside a TaskManager: ones nobody reports)."""


@dataclass(slots=True)
class OperatorContext:
    """What an operator may know about where it runs."""

    task_name: str
    operator_name: str
    operator_id: str
    subtask_index: int
    parallelism: int
    max_parallelism: int
    attempt_number: int
    timers: TimerScheduler
    keyed_backend: Any = None
    """The subtask's keyed state backend, or None when the operator is not keyed."""
    operator_backend: Any = None
    """The operator state backend (list / union list state)."""
    key_selector: Callable[[Any], Any] | None = None
    key_selectors: tuple[Any, ...] = ()
    """Per input of the operator, the key selector of a keyed input (None: not keyed)."""
    environment: TaskEnvironment = field(default_factory=TaskEnvironment)
    side_outputs: dict[str, Output] = field(default_factory=dict)
    """Where ``ctx.output(tag, value)`` goes, by tag id (tags nobody reads are absent)."""
    mailbox: TaskMailboxAccess | None = None
    """The task's mailbox, for operators with a helper thread (None outside a stream task)."""


class StreamOperator:
    """Base class with do-nothing life-cycle hooks; subclasses override what they need."""

    output: Output
    context: OperatorContext

    def setup(self, context: OperatorContext, output: Output) -> None:
        self.context = context
        self.output = output

    def initialize_state(self, restored: Any) -> None:
        """``restored`` is this operator's state from the checkpoint being restored, or None."""

    def open(self) -> None:
        pass

    def process_batch(self, records: list[Any]) -> None:
        raise NotImplementedError(f"{type(self).__name__} takes no input")

    def process_batch2(self, records: list[Any]) -> None:
        """Second input of a two-input operator."""
        raise NotImplementedError(f"{type(self).__name__} has no second input")

    def process_watermark(self, timestamp: int) -> None:
        """Event time advanced to ``timestamp`` (never called with a smaller one)."""
        self.emit_watermark(timestamp)

    def process_watermark_status(self, idle: bool) -> None:
        self.output.emit_watermark_status(idle)
        for side in self.context.side_outputs.values():
            side.emit_watermark_status(idle)

    def emit_watermark(self, timestamp: int) -> None:
        """Forward a watermark to the main output and every side output."""
        self.output.emit_watermark(timestamp)
        for side in self.context.side_outputs.values():
            side.emit_watermark(timestamp)

    def end_input(self, input_index: int = 0) -> None:
        pass

    def snapshot_state(self, checkpoint_id: int) -> Any:
        """Synchronous part of this operator's snapshot; None when it has no own state."""
        return None

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        pass

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        pass

    def close(self) -> None:
        pass
