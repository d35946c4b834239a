"""Sink operators: print, collect (``execute_and_collect``) and connector sinks.

**Print** writes Flink's print format to the TaskManager's stdout, which the TaskManager
forwards to the driver's console.

**Collect** is exactly once across restarts when checkpointing is on, by a two-phase commit
towards the JobManager: records are held back until the checkpoint that covers them completes.
At ``snapshot_state(n)`` the records since the last checkpoint are staged under ``n`` and the
staged batches are written to operator state; at ``notify_checkpoint_complete(n)`` every
staged batch up to ``n`` is sent with the token (collect id, producing subtask, checkpoint id).
A restored subtask re-sends the batches in its restored state — they belong to a completed
checkpoint — and the JobManager drops a token it has already delivered. In BATCH execution
(no checkpoints) a subtask sends its whole output once, at the end of its input, with the
token (subtask, ``WHOLE_RUN``): a subtask that runs again after a failure (its pipelined
region restarted, or the whole job) produces the same output, which the JobManager drops, and
one that failed before the end sent nothing (issue 29). The output of one subtask must then
fit one RPC frame (64 MiB). Otherwise, without checkpointing, batches are sent as they come (a
restart may then repeat records, as in Flink).

**Connector sinks** (``sink_to``) implement this contract with the runtime:
``sink.create_writer(subtask_index, parallelism) -> SinkWriter`` and on the writer ``restore(state:
list)``, ``write(records: list)``, ``snapshot_state(checkpoint_id) -> list`` (pre-commit: e.g.
close the in-progress file and remember it as pending), ``commit(checkpoint_id)`` (on
notify-complete: publish what was pending up to that checkpoint), ``end_input()``, ``close()``;
optionally ``set_checkpointing(enabled)``, called right after ``create_writer``: with
checkpointing on, a final checkpoint follows ``end_input`` and its commit publishes the tail;
optionally ``set_input_type(type_info)``: the stream's declared type (None if undeclared);
a writer with ``takes_timestamps = True`` gets batches of records that have event timestamps
as they are (a list with a ``timestamps`` attribute), others always a plain list; optionally
``set_output(collect_batch)``: a sink with operators after it (the filesystem table's writers
feeding their partition committer) sends records downstream through it, and
``process_watermark(timestamp)``: told each watermark (which the operator forwards).

All of it belongs to the task thread; ``send`` hands batches to the TaskManager's RPC client.
"""

from __future__ import annotations

import sys
from typing import Any

from flintlock.common.operator_spec import CollectSink, OperatorSpec, PrintSink
from flintlock.common.state import ListStateDescriptor
from flintlock.runtime.network.event_time import TimestampedBatch
from flintlock.runtime.tasks.operator import CollectSend, OperatorContext, Output, StreamOperator

COLLECT_STATE = ListStateDescriptor("_flintlock_collect_staged", None)
SINK_STATE = ListStateDescriptor("_flintlock_sink_writer", None)
WHOLE_RUN = -1
"""The checkpoint-id part of the token of a BATCH subtask's whole output."""

"""``send(collect_id, token, records)``; token = (producing subtask, checkpoint id) or None."""


class PrintSinkOperator(StreamOperator):
    def __init__(self, sink: PrintSink, output_type: Any) -> None:
        self._sink = sink
        self._output_type = output_type

    def process_batch(self, records: list[Any]) -> None:
        ctx = self.context
        fmt, index, parallelism = self._sink.format, ctx.subtask_index, ctx.parallelism
        text = "".join(
            fmt(r, index, parallelism, self._output_type) + "\n" for r in records)
        stream = sys.stderr if self._sink.to_stderr else sys.stdout
        stream.write(text)

    def end_input(self, input_index: int = 0) -> None:
        (sys.stderr if self._sink.to_stderr else sys.stdout).flush()


class CollectSinkOperator(StreamOperator):
    def __init__(self, sink: CollectSink) -> None:
        self._collect_id = sink.collect_id
        self._pending: list[Any] = []
        self._staged: dict[int, list[Any]] = {}

    def setup(self, context: OperatorContext, output: Output) -> None:
        super().setup(context, output)
        self._send: CollectSend = context.environment.collect_send
        self._exactly_once = context.environment.checkpointing
        self._whole_run = context.environment.batch and not self._exactly_once

    def initialize_state(self, restored: Any) -> None:
        self._state = self.context.operator_backend.get_list_state(COLLECT_STATE)
        for origin, checkpoint_id, records in self._state.get():
            self._send(self._collect_id, (origin, checkpoint_id), list(records))
        self._state.update([])

    def process_batch(self, records: list[Any]) -> None:
        if self._exactly_once or self._whole_run:
            self._pending.extend(records)
        else:
            self._send(self._collect_id, None, list(records))

    def snapshot_state(self, checkpoint_id: int) -> Any:
        if self._pending:
            self._staged[checkpoint_id] = self._pending
            self._pending = []
        origin = self.context.subtask_index
        self._state.update([(origin, cid, batch) for cid, batch in self._staged.items()])
        return None

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        origin = self.context.subtask_index
        for cid in sorted(c for c in self._staged if c <= checkpoint_id):
            self._send(self._collect_id, (origin, cid), self._staged.pop(cid))

    def end_input(self, input_index: int = 0) -> None:
        if self._whole_run:
            self._send(self._collect_id, (self.context.subtask_index, WHOLE_RUN), self._pending)
            self._pending = []


class WriterSinkOperator(StreamOperator):
    """``sink_to(sink)``: drives the connector's ``SinkWriter``."""

    def __init__(self, sink: Any, input_type: Any = None) -> None:
        self._sink = sink
        self._input_type = input_type
        self._writer: Any = None

    def initialize_state(self, restored: Any) -> None:
        ctx = self.context
        self._writer = self._sink.create_writer(ctx.subtask_index, ctx.parallelism)
        self._takes_timestamps = bool(getattr(self._writer, "takes_timestamps", False))
        set_checkpointing = getattr(self._writer, "set_checkpointing", None)
        if set_checkpointing is not None:
            set_checkpointing(ctx.environment.checkpointing)
        set_input_type = getattr(self._writer, "set_input_type", None)
        if set_input_type is not None:
            set_input_type(self._input_type)
        set_output = getattr(self._writer, "set_output", None)
        if set_output is not None:
            set_output(self.output.collect_batch)
        self._on_watermark = getattr(self._writer, "process_watermark", None)
        self._state = ctx.operator_backend.get_list_state(SINK_STATE)
        self._writer.restore(list(self._state.get()))

    def process_batch(self, records: list[Any]) -> None:
        if type(records) is not list and not (self._takes_timestamps
                                              and isinstance(records, TimestampedBatch)):
            records = list(records)
        self._writer.write(records)

    def process_watermark(self, timestamp: int) -> None:
        if self._on_watermark is not None:
            self._on_watermark(timestamp)
        self.emit_watermark(timestamp)

    def snapshot_state(self, checkpoint_id: int) -> Any:
        self._state.update(list(self._writer.snapshot_state(checkpoint_id)))
        return None

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        self._writer.commit(checkpoint_id)

    def end_input(self, input_index: int = 0) -> None:
        self._writer.end_input()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


def create_sink_operator(spec: OperatorSpec) -> StreamOperator:
    sink = spec.sink
    if isinstance(sink, PrintSink):
        return PrintSinkOperator(sink, spec.output_type)
    if isinstance(sink, CollectSink):
        return CollectSinkOperator(sink)
    if not hasattr(sink, "create_writer"):
        raise TypeError(f"{type(sink).__name__} is not a sink flintlock can run: it has no "
                        "create_writer(subtask_index, parallelism)")
    return WriterSinkOperator(sink, spec.output_type)
