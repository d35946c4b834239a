"""The input side of a non-source subtask (Flink's ``StreamInputProcessor`` with its
``CheckpointedInputGate``): buffers from the input gate are deserialised into batches for the
chain's head; events go to the watermark valve and to the barrier handler of the checkpointing
mode, whose actions it carries out: block or resume a channel, trigger a checkpoint, abort
one, persist an in-flight buffer.

A restored subtask replays its input channel state, per channel through its deserializer,
before it reads new input. A buffer of many small records is handed to the chain in slices of
the task's adaptive batch size, with mail run and priority events (unaligned barriers) taken
between slices: the records still to process then count as that channel's in-flight data.
With an alignment timeout (alternating checkpoints), a timer calls the handler's ``on_timer``
at its deadline.

Thread ownership: the task thread; the gates' listeners only signal the task's mailbox.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from flintlock.common.checkpointing import CheckpointingMode
from flintlock.common.clock import Clock
from flintlock.common.errors import FlintlockError
from flintlock.common.ids import ChannelIndex, CheckpointId
from flintlock.runtime.checkpoint import alignment
from flintlock.runtime.checkpoint.channel_state import ChannelStateSnapshot, RecoveredInput
from flintlock.runtime.network.barriers import (
    CancelCheckpointMarker,
    CheckpointBarrier,
    EndOfPartitionEvent,
)
from flintlock.runtime.network.buffer import DataType
from flintlock.runtime.network.event_time import Watermark, WatermarkStatus
from flintlock.runtime.network.events import decode_event
from flintlock.runtime.network.gate import SingleInputGate, UnionInputGate
from flintlock.runtime.tasks.channel_state_io import CheckpointableDeserializer
from flintlock.runtime.tasks.subtask_checkpointer import SubtaskCheckpointer, metrics_of
from flintlock.runtime.tasks.timeoutable import ReceivedBarriers
from flintlock.runtime.tasks.timer_service import TaskTimerService, TimerHandle
from flintlock.runtime.tasks.watermark_valve import WatermarkValve, carry_out

if TYPE_CHECKING:
    from flintlock.runtime.tasks.chain import OperatorChain
    from flintlock.runtime.tasks.mailbox import Mailbox
    from flintlock.runtime.tasks.stream_task import AdaptiveBatch, CheckpointingSettings, TaskIO


class StreamInputProcessor:
    def __init__(self, name: str, io: TaskIO, chain: OperatorChain,
                 checkpointing: CheckpointingSettings, checkpointer: SubtaskCheckpointer,
                 batch: AdaptiveBatch, mailbox: Mailbox, timers: TaskTimerService, clock: Clock,
                 run_mail: Callable[[], None], on_input_ended: Callable[[], None]) -> None:
        self._name = name
        self._chain = chain
        self._checkpointer = checkpointer
        self._capture = checkpointer.capture
        self._batch = batch
        self._mailbox = mailbox
        self._timers = timers
        self._clock = clock
        self._run_mail = run_mail
        self._on_input_ended = on_input_ended
        gates = list(io.gates)
        self.gate: SingleInputGate | UnionInputGate = (
            gates[0] if len(gates) == 1 else UnionInputGate(gates))
        self._channel_input, self._open_channels = _channel_inputs(gates, io.gate_inputs)
        self._deserializers = [CheckpointableDeserializer() for _ in self._channel_input]
        self._valve = WatermarkValve(len(self._channel_input))
        self._channels = self.gate.channels
        head = chain.head
        self._process = (head.process_batch, head.process_batch2)
        self._records_in = chain.records_in  # numRecordsIn, counted per batch
        cp = checkpointing
        self._handler = alignment.create_barrier_handler(
            len(self._channel_input),
            cp.mode if cp.enabled else CheckpointingMode.AT_LEAST_ONCE,
            unaligned=cp.unaligned, aligned_timeout_ms=cp.aligned_timeout_ms, clock=clock)
        self._alignment_timer: TimerHandle | None = None
        self._alignment_deadline: float | None = None
        self._remainder: tuple[int, list[Any], int] | None = None
        """While a priority event is handled mid-buffer: (channel, records, first unprocessed)."""
        self._overtaken_by_barrier: tuple[int, int, tuple[bytes, ...]] | None = None
        """(checkpoint id, channel, copies) for the priority barrier being handled."""
        self.last_barrier: int | None = None
        self._listen(gates)

    def _listen(self, gates: list[SingleInputGate]) -> None:
        """The gates signal the mailbox on input, and announce barriers queued in remote
        channels (timeoutable ones may be converted there); then their partitions are
        requested."""
        mailbox = self._mailbox
        self._received_barriers = ReceivedBarriers(
            self._channels, self._clock, self._schedule,
            lambda action: mailbox.offer(action, "barrier announced"))
        for gate in gates:
            gate.set_availability_listener(mailbox.signal_input)
            gate.set_barrier_listener(self._received_barriers.on_announced)
        for gate in gates:
            gate.request_partitions()

    def _schedule(self, delay_s: float, action: Callable[[], None]) -> None:
        self._timers.schedule_after(delay_s, action, "timeoutable barrier check")

    # -- reading -------------------------------------------------------------------------

    def replay(self, snapshot: ChannelStateSnapshot | None) -> None:
        """Restored in-flight input, per channel through its deserializer, before any new
        input (the channels were requested, but nothing is read before this returns)."""
        if snapshot is None:
            return
        recovered = RecoveredInput(snapshot)
        for channel in recovered.pending_channels:
            process = self._process[self._channel_input[channel]]
            for data in recovered.drain(channel):
                records = self._deserializers[channel].deserialize(data)
                if records:
                    self._process_sliced(process, records)

    def process_next(self, priority_only: bool) -> bool:
        """Processes the next buffer or event of the gate (only a priority event if
        ``priority_only``: the output is full); False if there was none."""
        item = self.gate.poll_priority() if priority_only else self.gate.poll_next()
        if item is None:
            return False
        self._dispatch(*item)
        return True

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
        between slices; with the ``channel`` they came from, priority events are taken
        between slices too (see the module doc)."""
        self._records_in.inc(len(records))
        batch = self._batch
        size = batch.size
        if len(records) <= size:
            started = time.perf_counter()
            process(records)
            batch.observe(time.perf_counter() - started, len(records))
            return
        start = 0
        while start < len(records):  # the size may change from one slice to the next
            end = start + batch.size
            began = time.perf_counter()
            process(records[start:end])
            batch.observe(time.perf_counter() - began, min(end, len(records)) - start)
            if self._mailbox.has_mail():
                self._run_mail()
            if channel >= 0 and end < len(records):
                self._take_priority_events(channel, records, end)
            start = end

    def _take_priority_events(self, channel: int, records: list[Any], position: int) -> None:
        """Unaligned barriers waiting in the gate, handled in the middle of a buffer: a
        checkpoint they trigger stores ``records[position:]`` as ``channel``'s first
        in-flight data (Flink snapshots the unconsumed part of the current buffer)."""
        while (item := self.gate.poll_priority()) is not None:
            self._remainder = (channel, records, position)
            try:
                self._dispatch(*item)
            finally:
                self._remainder = None

    # -- events --------------------------------------------------------------------------

    def _on_event(self, channel: int, event: object) -> None:
        index = ChannelIndex(channel)
        if isinstance(event, (Watermark, WatermarkStatus)):
            carry_out(self._valve.on_event(channel, event), self._chain)
        elif isinstance(event, CheckpointBarrier):
            self.last_barrier = max(self.last_barrier or 0, event.checkpoint_id)
            if event.is_priority:
                # Taken before the handler runs: if this barrier triggers the checkpoint and
                # completes its capture at once (a task with one input channel), the capture
                # is finished inside the trigger, so the data this barrier overtook must be
                # added there (``SubtaskCheckpointer.perform``), or it would be lost.
                self._overtaken_by_barrier = (event.checkpoint_id, channel,
                                              self._channels[channel].take_overtaken())
            self._execute(self._handler.on_barrier(index, event))
            self.add_overtaken_input()
            self._capture.finish_ready(self._handler.is_capturing)
        elif isinstance(event, CancelCheckpointMarker):
            self._execute(self._handler.on_cancellation_marker(index, event))
        elif isinstance(event, EndOfPartitionEvent):
            self._on_end_of_partition(channel)
        else:
            raise FlintlockError(f"{self._name}: unexpected event {event!r} on channel {channel}")

    def _on_end_of_partition(self, channel: int) -> None:
        self._deserializers[channel].check_complete()
        self._execute(self._handler.on_end_of_partition(ChannelIndex(channel)))
        self._capture.finish_ready(self._handler.is_capturing)
        carry_out(self._valve.on_finished(channel), self._chain)
        input_index = self._channel_input[channel]
        self._open_channels[input_index] -= 1
        if self._open_channels[input_index] == 0:
            self._chain.end_input(input_index)
        if not any(self._open_channels.values()):
            self._on_input_ended()

    def _execute(self, actions: list[Any]) -> None:
        for action in actions:
            if isinstance(action, alignment.BlockChannel):
                self.gate.block_channel(action.channel)
            elif isinstance(action, alignment.ResumeChannel):
                self.gate.resume_channel(action.channel)
            elif isinstance(action, alignment.TriggerCheckpoint):
                self._checkpointer.perform(action.barrier, metrics_of(action.metrics))
            elif isinstance(action, alignment.AbortCheckpoint):
                self._checkpointer.abort(action.checkpoint_id, action.reason)
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

    # -- what a checkpoint captures (SubtaskCheckpointer) --------------------------------

    def is_capturing(self, checkpoint_id: int) -> bool:
        return self._handler.is_capturing(CheckpointId(checkpoint_id))

    def add_overtaken_input(self) -> None:
        """The data buffers the priority barrier being handled overtook in its channel's
        queue, as in-flight input of its checkpoint (after the channel's leftover, if any)."""
        overtaken, self._overtaken_by_barrier = self._overtaken_by_barrier, None
        if overtaken is not None:
            checkpoint_id, channel, buffers = overtaken
            self._capture.add_overtaken_input(CheckpointId(checkpoint_id), channel, buffers)

    def leftovers(self) -> dict[int, bytes]:
        """Each input channel's unprocessed bytes at a trigger: the rest of the buffer being
        processed (re-serialised), then the chunk its deserializer has begun."""
        deserializers = self._deserializers
        found = {ch: d.leftover() for ch, d in enumerate(deserializers) if d.has_partial_chunk}
        if self._remainder is not None:
            channel, records, position = self._remainder
            rest = deserializers[channel].encode(records[position:])
            found[channel] = rest + found.get(channel, b"")
        return found


def _channel_inputs(gates: list[SingleInputGate],
                    gate_inputs: Sequence[int]) -> tuple[list[int], dict[int, int]]:
    """For each channel of the gates, in order, the head's input it feeds; and per input,
    how many channels feed it (they end one by one)."""
    channel_input: list[int] = []
    open_channels: dict[int, int] = {}
    for gate, input_index in zip(gates, gate_inputs, strict=True):
        channel_input += [input_index] * gate.num_channels
        open_channels[input_index] = open_channels.get(input_index, 0) + gate.num_channels
    return channel_input, open_channels
