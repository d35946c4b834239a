"""Channel state of unaligned checkpoints inside a stream task: capture, write, restore
(Flink's ChannelStateWriter as used by the SubtaskCheckpointCoordinator, and the recovered
channel state replay of a restored task; docs/internals/unaligned.md).

Design note — which buffer ends up where. Take an unaligned checkpoint n of a subtask:

* Output side. Broadcasting the priority barrier puts it at the head of every pipelined
  subpartition; the data buffers it overtook were produced before the snapshot but will be
  consumed after it, so they are copied into the *output* channel state (indexed by a global
  subpartition number: the partition's offset in the task's partition list plus the
  subpartition index) and still delivered as usual.
* Input side, per channel c, in replay order: (1) the bytes c still holds at the trigger:
  the records of its current buffer not yet processed when a priority barrier was taken
  mid-buffer (re-serialised), then the first part of a chunk spanning buffers that its
  deserializer holds; (2) the buffers the handler marks
  ``PersistInflight`` — consumed after the trigger, before c's barrier; (3) for a remote
  channel whose queue a priority barrier jumped, the buffers queued ahead of it at its
  arrival (``InputChannel.take_overtaken``). A local channel's queue is the producer's
  subpartition, whose buffers the producer already stored: nothing is stored twice, because a
  buffer is either behind a barrier on its channel (someone else's state or the next
  checkpoint's) or ahead of it (this list).

Which buffers to collect and when capture of n is over is decided by the subtask's checkpoint
machine (``checkpointing.machine``) and carried out by ``checkpoint_commands`` into a
``ChannelStateWriter``. Writing happens in the asynchronous part of the snapshot, once capture
of n is over: the operator state parts wait meanwhile while the task keeps processing. Input
and output state become two blobs attached to the head operator's ``OperatorSubtaskState``
(``input_channel_state`` / ``result_subpartition_state``), which the state assignment keeps
with the subtask (same parallelism only).

Restore: the output state is re-emitted into the subpartitions before any new output; the
input state is replayed per channel through the channel's deserializer before any new input.

Threads: ``CheckpointableDeserializer`` belongs to the task thread;
``write_channel_state`` runs on the snapshot executor thread (it only reads an immutable
snapshot).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from flintlock.common.ids import CheckpointId
from flintlock.runtime.checkpoint.channel_state import ChannelStateSnapshot
from flintlock.runtime.network.event_time import (
    RunDetectingSerializer,
    as_wire_records,
    expand_runs,
)
from flintlock.runtime.network.partition import ResultPartition
from flintlock.runtime.network.serialization import CHUNK_HEADER, RecordDeserializer
from flintlock.runtime.state.handles import StateHandle
from flintlock.runtime.state.snapshots import (
    OperatorSubtaskState,
    ReadState,
    StateWriter,
    read_blob,
)

SubmitSnapshot = Callable[[ChannelStateSnapshot], None]


class CheckpointableDeserializer(RecordDeserializer):
    """A record deserializer that can tell which bytes it holds of an unfinished chunk, and
    that hands timestamped records on as one ``TimestampedBatch`` (``event_time``)."""

    __slots__ = ("_runs",)

    def __init__(self, runs: RunDetectingSerializer | None = None) -> None:
        self._runs = runs if runs is not None else RunDetectingSerializer()
        super().__init__(self._runs)

    def deserialize(self, data: memoryview | bytes | bytearray) -> list[Any]:
        records = super().deserialize(data)
        if self._runs.saw_runs:
            self._runs.saw_runs = False
            return expand_runs(records)
        return records

    def leftover(self) -> bytes:
        """The received bytes of the chunk begun but not finished (with its header), so a
        fresh deserializer fed these and then the rest continues exactly here."""
        partial = self._partial
        if partial is None:
            return b""
        return CHUNK_HEADER.pack(len(partial)) + bytes(partial[: self._filled])

    def encode(self, records: list[Any]) -> bytes:
        """``records`` as one chunk this deserializer (or a fresh one) reads back."""
        if not records:
            return b""
        data = bytes(self._serializer.dumps(as_wire_records(records)))
        return CHUNK_HEADER.pack(len(data)) + data


def write_channel_state(
    snapshot: ChannelStateSnapshot, writer: StateWriter, name: str
) -> tuple[tuple[StateHandle, ...], tuple[StateHandle, ...]]:
    """Writes the input and the output part as one blob each; (input handles, output handles)."""
    empty: Mapping[int, tuple[bytes, ...]] = MappingProxyType({})
    inputs: tuple[StateHandle, ...] = ()
    outputs: tuple[StateHandle, ...] = ()
    if any(snapshot.inputs.values()):
        part = ChannelStateSnapshot(snapshot.checkpoint_id, snapshot.inputs, empty)
        inputs = (writer.write_state(f"{name}-input-channels", part.to_bytes()),)
    if any(snapshot.outputs.values()):
        part = ChannelStateSnapshot(snapshot.checkpoint_id, empty, snapshot.outputs)
        outputs = (writer.write_state(f"{name}-output-channels", part.to_bytes()),)
    return inputs, outputs


def read_channel_state(
    state: OperatorSubtaskState | None, read: ReadState
) -> ChannelStateSnapshot | None:
    """The channel state a restored head operator carries, merged; None if it has none."""
    if state is None or not state.has_channel_state:
        return None
    inputs: dict[int, tuple[bytes, ...]] = {}
    outputs: dict[int, tuple[bytes, ...]] = {}
    checkpoint_id = CheckpointId(-1)
    for handle in (*state.input_channel_state, *state.result_subpartition_state):
        uri = getattr(handle, "uri", "<inline channel state>")
        part = ChannelStateSnapshot.from_bytes(read_blob(handle, read), uri)
        checkpoint_id = part.checkpoint_id
        for channel, buffers in part.inputs.items():
            inputs[channel] = inputs.get(channel, ()) + buffers
        for index, buffers in part.outputs.items():
            outputs[index] = outputs.get(index, ()) + buffers
    return ChannelStateSnapshot(
        checkpoint_id, MappingProxyType(inputs), MappingProxyType(outputs)
    )


def output_index(
    partitions: Sequence[ResultPartition],
) -> Iterator[tuple[int, ResultPartition, int]]:
    """(global subpartition number, partition, subpartition) for every subpartition."""
    offset = 0
    for partition in partitions:
        for sub in range(partition.num_subpartitions):
            yield offset + sub, partition, sub
        offset += partition.num_subpartitions


def collect_overtaken(
    partitions: Sequence[ResultPartition], checkpoint_id: CheckpointId
) -> dict[int, tuple[bytes, ...]]:
    """What the priority barrier of ``checkpoint_id`` overtook in every pipelined
    subpartition, by global subpartition number."""
    found: dict[int, tuple[bytes, ...]] = {}
    offset = 0
    for partition in partitions:
        for sub, buffers in partition.take_overtaken(checkpoint_id).items():
            found[offset + sub] = buffers
        offset += partition.num_subpartitions
    return found


def reemit_outputs(snapshot: ChannelStateSnapshot, partitions: Sequence[ResultPartition]) -> int:
    """Puts the restored output buffers back into their subpartitions, in order; returns how
    many. Blocks while a subpartition's pool is full (its consumer drains it)."""
    count = 0
    for index, partition, sub in output_index(partitions):
        for data in snapshot.outputs.get(index, ()):
            partition.restore_buffer(sub, data)
            count += 1
    return count
