"""The input side of a non-source subtask (Flink's ``StreamInputProcessor`` with its
``CheckpointedInputGate``): buffers from the input gate are deserialised into batches for the
chain's head; watermarks go to the watermark valve, and every checkpoint event (barrier,
cancellation marker, end of partition, each data buffer, a barrier a remote channel announced)
to the task's checkpoint machine (``checkpointing.machine``, through ``checkpoint_commands``),
which decides what follows: block or resume a channel, take or decline a checkpoint, capture
in-flight data. This class only answers what the commands ask of the input side: block and
resume, the leftovers of each deserializer, the buffers a priority barrier overtook.

A restored subtask replays its input channel state, per channel through its deserializer,
before it reads new input. A buffer of many small records is handed to the chain in slices of
the task's adaptive batch size, with mail run and priority events (unaligned barriers) taken
between slices: the records still to process then count as that channel's in-flight data.

Thread ownership: the task thread; the gates' listeners only signal the task's mailbox.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from flintlock.common.errors import FlintlockError
from flintlock.common.ids import ChannelIndex
from flintlock.runtime.checkpoint.channel_state import ChannelStateSnapshot, RecoveredInput
from flintlock.runtime.network.barriers import (
    CancelCheckpointMarker,
    CheckpointBarrier,
    EndOfPartitionEvent,
)
from flintlock.runtime.network.buffer import DataType
from flintlock.runtime.network.changelog_serializer import ColumnDecodingSerializer
from flintlock.runtime.network.event_time import Watermark, WatermarkStatus
from flintlock.runtime.network.events import decode_event
from flintlock.runtime.network.gate import SingleInputGate, UnionInputGate
from flintlock.runtime.network.input_channel import InputChannel
from flintlock.runtime.tasks.channel_state_io import CheckpointableDeserializer
from flintlock.runtime.tasks.checkpointing import events as ev
from flintlock.runtime.tasks.watermark_valve import WatermarkValve, carry_out

if TYPE_CHECKING:
    from flintlock.runtime.tasks.adaptive_batch import AdaptiveBatch
    from flintlock.runtime.tasks.chain import OperatorChain
    from flintlock.runtime.tasks.checkpoint_commands import CheckpointCommands
    from flintlock.runtime.tasks.mailbox import Mailbox
    from flintlock.runtime.tasks.stream_task import TaskIO


class StreamInputProcessor:
    def __init__(self, name: str, io: TaskIO, chain: OperatorChain,
                 checkpoints: CheckpointCommands, batch: AdaptiveBatch, mailbox: Mailbox,
                 run_mail: Callable[[], None], on_input_ended: Callable[[], None]) -> None:
        self._name = name
        self._chain = chain
        self._checkpoints = checkpoints
        self._batch = batch
        self._mailbox = mailbox
        self._run_mail = run_mail
        self._on_input_ended = on_input_ended
        gates = list(io.gates)
        self.gate: SingleInputGate | UnionInputGate = (
            gates[0] if len(gates) == 1 else UnionInputGate(gates))
        self._channel_input, self._open_channels = _channel_inputs(gates, io.gate_inputs)
        columns = getattr(chain.head, "takes_column_batches", False)  # issue 28
        self._deserializers = [CheckpointableDeserializer(
            ColumnDecodingSerializer() if columns else None) for _ in self._channel_input]
        self._valve = WatermarkValve(len(self._channel_input))
        self._channels = self.gate.channels
        head = chain.head
        self._process = (head.process_batch, head.process_batch2)
        self._records_in = chain.records_in  # numRecordsIn, counted per batch
        self._remainder: tuple[int, list[Any], int] | None = None
        """While a priority event is handled mid-buffer: (channel, records, first unprocessed)."""
        self._overtaken: tuple[int, tuple[bytes, ...]] | None = None
        """(channel, copies) for the priority barrier being handled."""
        self._listen(gates)

    def _listen(self, gates: list[SingleInputGate]) -> None:
        """The gates signal the mailbox on input, and announce barriers queued in remote
        channels (as mail: timeoutable ones may be converted there); then their partitions
        are requested."""
        mailbox = self._mailbox
        for gate in gates:
            gate.set_availability_listener(mailbox.signal_input)
            gate.set_barrier_listener(self._on_announced)
        for gate in gates:
            gate.request_partitions()

    def _on_announced(self, channel: int, barrier: object) -> None:
        """A remote channel queued ``barrier`` (network I/O thread: only puts mail)."""
        if isinstance(barrier, CheckpointBarrier):
            event = ev.BarrierAnnounced(ChannelIndex(channel), barrier)
            self._mailbox.offer(lambda: self._checkpoints.feed(event), "barrier announced")

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
            self._checkpoints.on_buffer(ChannelIndex(channel), buffer)
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
            if event.is_priority:
                # Taken before the machine runs: the buffers this barrier overtook in its
                # channel's queue, captured if the machine says so (CaptureOvertakenInput).
                self._overtaken = (channel, self._channels[channel].take_overtaken())
            try:
                self._checkpoints.feed(ev.BarrierReceived(index, event))
            finally:
                self._overtaken = None
        elif isinstance(event, CancelCheckpointMarker):
            self._checkpoints.feed(ev.CancellationMarkerReceived(index, event))
        elif isinstance(event, EndOfPartitionEvent):
            self._on_end_of_partition(channel)
        else:
            raise FlintlockError(f"{self._name}: unexpected event {event!r} on channel {channel}")

    def _on_end_of_partition(self, channel: int) -> None:
        self._deserializers[channel].check_complete()
        self._checkpoints.feed(ev.EndOfPartitionReceived(ChannelIndex(channel)))
        carry_out(self._valve.on_finished(channel), self._chain)
        input_index = self._channel_input[channel]
        self._open_channels[input_index] -= 1
        if self._open_channels[input_index] == 0 and not self._stops_without_draining():
            self._chain.end_input(input_index)
        if not any(self._open_channels.values()):
            self._on_input_ended()

    def _stops_without_draining(self) -> bool:
        """After a stop-with-savepoint without drain the operators' input does not end:
        nothing they would emit at its end may follow the savepoint."""
        return self._checkpoints.machine.stops_without_draining

    # -- what the checkpoint commands ask of the input side -------------------------------

    @property
    def channels(self) -> Sequence[InputChannel]:
        return self._channels

    def block_channel(self, channel: int) -> None:
        self.gate.block_channel(channel)

    def resume_channel(self, channel: int) -> None:
        self.gate.resume_channel(channel)

    def take_overtaken(self, channel: int) -> tuple[bytes, ...]:
        """The data buffers the priority barrier being handled on ``channel`` overtook in its
        channel's queue (once)."""
        overtaken, self._overtaken = self._overtaken, None
        if overtaken is None or overtaken[0] != channel:
            return ()
        return overtaken[1]

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
