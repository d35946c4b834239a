"""The operator chain of one subtask: its operators, wired by direct calls.

Built from a job vertex's ``ChainedOperator`` tree (head first, topological order): each
operator's output calls its chained successors' ``process_batch`` directly and feeds its
non-chained outputs' record writers, so records cross a chain without being serialised.
Records are handed on by reference: an operator must not modify a record after emitting it,
nor one it received (documented in docs/decisions.md).

The chain owns one operator state backend per operator and one keyed state backend per keyed
operator; ``snapshot`` takes their synchronous parts (after each operator's own
``snapshot_state`` hook) and returns what the asynchronous part writes.

Everything belongs to the task thread.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flintlock.common.config import Configuration
from flintlock.common.ids import CheckpointId, IntermediateDataSetId
from flintlock.common.operator_spec import OperatorKind
from flintlock.graph.job_graph import ChainedOperator, JobVertex
from flintlock.runtime.metrics.report import INPUT_WATERMARK, NUM_RECORDS_IN, OUTPUT_WATERMARK
from flintlock.runtime.network.event_time import (
    MAX_WATERMARK,
    MIN_WATERMARK,
    TimestampedBatch,
    Watermark,
    WatermarkStatus,
)
from flintlock.runtime.network.writer import RecordWriter
from flintlock.runtime.state.backend import KeyedStateBackend
from flintlock.runtime.state.factory import create_keyed_state_backend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.operator import OperatorStateBackend
from flintlock.runtime.state.operator_snapshot import (
    OperatorSnapshotInProgress,
    snapshot_operator,
)
from flintlock.runtime.state.snapshots import OperatorSubtaskState, ReadState
from flintlock.runtime.tasks.operator import (
    OperatorContext,
    Output,
    StreamOperator,
    TaskEnvironment,
    TaskMailboxAccess,
    TimerScheduler,
)
from flintlock.runtime.tasks.operator_io import OperatorRecordCounts
from flintlock.runtime.tasks.typed_edges import typed_edge


class _NoOutput:
    __slots__ = ()

    def collect_batch(self, records: list[Any]) -> None:
        pass

    def emit_watermark(self, timestamp: int) -> None:
        pass

    def emit_watermark_status(self, idle: bool) -> None:
        pass


class _WriterOutput:
    """Sends a batch through a record writer (selector, pending lists); timestamped batches
    and watermarks as ``event_time`` describes."""

    __slots__ = ("_emit", "_writer", "watermark")

    def __init__(self, writer: RecordWriter) -> None:
        self._writer = writer
        self._emit = writer.emit_batch
        self.watermark = MIN_WATERMARK  # the last one sent (read by the metrics reporter)

    def collect_batch(self, records: list[Any]) -> None:
        if type(records) is TimestampedBatch:
            self._writer.emit_stamped_batch(records, records.timestamps)
        else:
            self._emit(records)

    def emit_watermark(self, timestamp: int) -> None:
        self.watermark = timestamp
        self._writer.broadcast_event(Watermark(timestamp))

    def emit_watermark_status(self, idle: bool) -> None:
        self._writer.broadcast_event(WatermarkStatus(idle))


class _FanOut:
    __slots__ = ("_outputs",)

    def __init__(self, outputs: Sequence[Output]) -> None:
        self._outputs = tuple(outputs)

    def collect_batch(self, records: list[Any]) -> None:
        for output in self._outputs:
            output.collect_batch(records)

    def emit_watermark(self, timestamp: int) -> None:
        for output in self._outputs:
            output.emit_watermark(timestamp)

    def emit_watermark_status(self, idle: bool) -> None:
        for output in self._outputs:
            output.emit_watermark_status(idle)


def _combine(outputs: list[Output]) -> Output:
    if not outputs:
        return _NoOutput()
    return outputs[0] if len(outputs) == 1 else _FanOut(outputs)


@dataclass(slots=True)
class ChainMember:
    spec: ChainedOperator
    operator: StreamOperator
    operator_backend: OperatorStateBackend
    keyed_backend: KeyedStateBackend | None


@dataclass(frozen=True, slots=True)
class ChainEnvironment:
    """What the chain needs from its task to create its operators."""

    task_name: str
    subtask_index: int
    attempt_number: int
    configuration: Configuration
    timers: TimerScheduler
    environment: TaskEnvironment
    mailbox: TaskMailboxAccess | None = None


class OperatorChain:
    def __init__(
        self,
        vertex: JobVertex,
        writers: Mapping[IntermediateDataSetId, RecordWriter],
        env: ChainEnvironment,
        create_operator: Callable[[Any], StreamOperator],
    ) -> None:
        self.vertex = vertex
        self._env = env
        self._by_node: dict[int, ChainMember] = {}
        self._writer_outputs: list[_WriterOutput] = []
        self._counts = OperatorRecordCounts()  # operator-level numRecordsIn/Out (operator_io)
        for spec in reversed(vertex.operators):  # successors exist before their predecessors
            self._by_node[spec.node_id] = self._build(spec, writers, create_operator)
        self.members: list[ChainMember] = [self._by_node[s.node_id] for s in vertex.operators]
        self.head = self.members[0].operator
        self._ended_inputs: set[int] = set()
        self._watermark = MIN_WATERMARK  # the last watermark handed to the head
        groups = env.environment.metric_groups
        self.records_in = groups.task.counter(NUM_RECORDS_IN)
        """Records handed to the head from the inputs (the input processor counts per batch)."""
        # Flink's task watermark gauges, read on the heartbeat thread
        groups.task.gauge(INPUT_WATERMARK, lambda: self._watermark)
        groups.task.gauge(OUTPUT_WATERMARK, self._output_watermark)
        self._counts.register(groups, [(m.spec.node_id, m.spec.operator_id, m.spec.name)
                                       for m in self.members], self.records_in,
                              getattr(self.head, "is_source", False))

    def _output_watermark(self) -> int:
        """The lowest watermark sent downstream; a chain without outputs (ending in a sink)
        reports its input watermark, as a sink's operator does in Flink."""
        sent = [o.watermark for o in self._writer_outputs]
        return min(sent) if sent else self._watermark

    def _build(
        self, spec: ChainedOperator, writers: Mapping[IntermediateDataSetId, RecordWriter],
        create_operator: Callable[[Any], StreamOperator],
    ) -> ChainMember:
        by_tag = self._outputs_by_tag(spec, writers)
        outputs = by_tag.pop(None, [])
        side_outputs = {tag: _combine(targets) for tag, targets in by_tag.items() if tag}
        operator = create_operator(spec.operator)
        keyed = any(selector is not None for selector in spec.key_selectors) or bool(
            getattr(spec.operator, "keyed", False))
        vertex, env = self.vertex, self._env
        keyed_backend = None
        if keyed:
            key_groups = KeyGroupRange.for_subtask(
                vertex.max_parallelism, vertex.parallelism, env.subtask_index)
            keyed_backend = create_keyed_state_backend(
                env.configuration, key_groups, vertex.max_parallelism)
        operator_backend = OperatorStateBackend()
        context = OperatorContext(
            task_name=vertex.name, operator_name=spec.name, operator_id=spec.operator_id,
            subtask_index=env.subtask_index, parallelism=vertex.parallelism,
            max_parallelism=vertex.max_parallelism, attempt_number=env.attempt_number,
            timers=env.timers, keyed_backend=keyed_backend, operator_backend=operator_backend,
            key_selectors=spec.key_selectors, environment=env.environment,
            side_outputs=side_outputs, mailbox=env.mailbox,
        )
        operator.setup(context, _combine(outputs))
        return ChainMember(spec, operator, operator_backend, keyed_backend)

    def _outputs_by_tag(self, spec: ChainedOperator,
                        writers: Mapping[IntermediateDataSetId, RecordWriter],
                        ) -> dict[str | None, list[Output]]:
        """The operator's outputs (chained successors, record writers) by output tag."""
        by_tag: dict[str | None, list[Output]] = {}
        for chained in spec.chained_outputs:
            target = self._by_node[chained.target_node_id]
            output: Output = self._counts.chained(spec.node_id, chained.output_tag,
                                                  target.operator, chained.target_node_id)
            if chained.output_tag is None:
                into_sink = getattr(target.spec.operator, "kind", None) is OperatorKind.SINK
                output = typed_edge(output, spec.output_type, spec.name, into_sink)
            by_tag.setdefault(chained.output_tag, []).append(output)
        for out in spec.non_chained_outputs:
            writer_output = _WriterOutput(writers[out.data_set])
            self._counts.written(spec.node_id, out.output_tag, writers[out.data_set])
            self._writer_outputs.append(writer_output)
            by_tag.setdefault(out.output_tag, []).append(writer_output)
        return by_tag

    # -- life cycle ----------------------------------------------------------------------

    def initialize(self, restored: Mapping[str, OperatorSubtaskState], read: ReadState) -> None:
        for member in self.members:
            state = restored.get(member.spec.operator_id)
            if state is not None:
                if member.keyed_backend is not None and state.managed_keyed_state:
                    member.keyed_backend.restore(state.managed_keyed_state, read)
                if state.managed_operator_state:
                    member.operator_backend.restore(state.managed_operator_state, read)
            member.operator.initialize_state(state is not None)

    def open(self) -> None:
        for member in reversed(self.members):  # successors are ready before data reaches them
            member.operator.open()

    def process_watermark(self, timestamp: int) -> None:
        """The task's event time advanced (from its valve, or its end of input)."""
        if timestamp > self._watermark:
            self._watermark = timestamp
            self.head.process_watermark(timestamp)

    def process_watermark_status(self, idle: bool) -> None:
        self.head.process_watermark_status(idle)

    def end_input(self, input_index: int = 0) -> None:
        """The head's input ``input_index`` ended; chained operators end after their input.
        Once every input ended, event time ends too: the head gets the maximum watermark
        (unless it has it already), so every event-time timer fires, as in Flink."""
        all_ended = len(self._ended_inputs | {input_index}) == max(1, self.vertex.head.num_inputs)
        if all_ended:
            self.process_watermark(MAX_WATERMARK)
        self.head.end_input(input_index)
        self._ended_inputs.add(input_index)
        if all_ended:
            for member in self.members[1:]:
                member.operator.end_input(0)

    def close(self) -> list[BaseException]:
        """Closes every operator and disposes the backends; returns (does not raise) errors."""
        errors: list[BaseException] = []
        for member in self.members:
            steps = [member.operator.close, member.operator_backend.dispose]
            if member.keyed_backend is not None:
                steps.append(member.keyed_backend.dispose)
            for step in steps:
                try:
                    step()
                except Exception as exc:  # collected and reported by the task
                    errors.append(exc)
        return errors

    # -- checkpoints ---------------------------------------------------------------------

    def snapshot(self, checkpoint_id: CheckpointId) -> dict[str, OperatorSnapshotInProgress]:
        """Synchronous part of every operator's snapshot, by operator id."""
        parts: dict[str, OperatorSnapshotInProgress] = {}
        for member in self.members:
            member.operator.snapshot_state(checkpoint_id)
            parts[member.spec.operator_id] = snapshot_operator(
                member.keyed_backend, member.operator_backend, checkpoint_id)
        return parts

    def notify_checkpoint_complete(self, checkpoint_id: CheckpointId) -> None:
        for member in self.members:
            if member.keyed_backend is not None:
                member.keyed_backend.notify_checkpoint_complete(checkpoint_id)
            member.operator.notify_checkpoint_complete(checkpoint_id)

    def notify_checkpoint_aborted(self, checkpoint_id: CheckpointId) -> None:
        for member in self.members:
            if member.keyed_backend is not None:
                member.keyed_backend.notify_checkpoint_aborted(checkpoint_id)
            member.operator.notify_checkpoint_aborted(checkpoint_id)
