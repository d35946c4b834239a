"""The task side of unaligned checkpoints without threads or sockets: which bytes go into a
checkpoint's channel state, in which order, when its asynchronous part is released, and that
restoring replays exactly what was captured."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common.ids import CheckpointId
from flintlock.runtime.checkpoint.channel_state import ChannelStateSnapshot
from flintlock.runtime.network.barriers import (
    AlignmentType,
    CheckpointBarrier,
    CheckpointOptions,
)
from flintlock.runtime.network.buffer import NetworkBufferPool
from flintlock.runtime.network.serialization import PickleBatchSerializer, write_chunk
from flintlock.runtime.state.snapshots import OperatorSubtaskState
from flintlock.runtime.tasks.channel_state_io import (
    CheckpointableDeserializer,
    collect_overtaken,
    read_channel_state,
    reemit_outputs,
    write_channel_state,
)
from flintlock.testing.exchange import CountingListener, filled_buffer, new_partition
from flintlock.testing.operators import MemoryStateWriter

C1 = CheckpointId(1)
C2 = CheckpointId(2)


def chunks(records: list[object], segment: int) -> list[bytes]:
    """The buffers a writer fills with ``records`` serialised as one chunk."""
    filled: list[bytes] = []
    network = NetworkBufferPool(256, segment)
    pool = network.create_buffer_pool(1, 256)

    def emit(buffer):  # type: ignore[no-untyped-def]
        filled.append(bytes(buffer.view()))
        buffer.recycle()

    data = PickleBatchSerializer().dumps(records)
    last = write_chunk(data, None, pool.request_buffer_blocking, emit)
    if last is not None:
        emit(last)
    return filled


# -- deserializer leftovers -------------------------------------------------------------


def test_no_leftover_between_chunks() -> None:
    deserializer = CheckpointableDeserializer()
    [buffer] = chunks([1, 2, 3], 4096)
    assert deserializer.deserialize(buffer) == [1, 2, 3]
    assert not deserializer.has_partial_chunk and deserializer.leftover() == b""


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(max_size=60), min_size=1, max_size=80), st.data())
def test_leftover_plus_the_rest_gives_a_fresh_deserializer_the_same_records(records, data):  # type: ignore[no-untyped-def]
    """Cutting a chunk's buffers anywhere: a restored deserializer fed the leftover and then
    the remaining buffers yields exactly the records the live one still had to yield."""
    buffers = chunks(records, 256)
    cut = data.draw(st.integers(1, len(buffers)))
    live = CheckpointableDeserializer()
    before = [r for b in buffers[:cut] for r in live.deserialize(b)]
    restored = CheckpointableDeserializer()
    after = list(restored.deserialize(live.leftover())) if live.has_partial_chunk else []
    after += [r for b in buffers[cut:] for r in restored.deserialize(b)]
    assert before + after == records


# -- writing, reading, re-emitting ------------------------------------------------------


def test_written_state_reads_back_merged_and_empty_parts_are_not_written() -> None:
    writer = MemoryStateWriter()
    collected = ChannelStateSnapshot(C1, {2: (b"L",)}, {0: (b"a", b"b")})
    inputs, outputs = write_channel_state(collected, writer, "t")
    assert len(inputs) == 1 and len(outputs) == 1 and len(writer.files) == 2
    state = OperatorSubtaskState(input_channel_state=inputs, result_subpartition_state=outputs)
    restored = read_channel_state(state, writer.read)  # type: ignore[arg-type]
    assert restored is not None
    assert dict(restored.inputs) == {2: (b"L",)} and dict(restored.outputs) == {0: (b"a", b"b")}
    only_inputs = ChannelStateSnapshot(C2, {1: (b"x",)})
    assert write_channel_state(only_inputs, writer, "u")[1] == ()
    assert read_channel_state(OperatorSubtaskState(), writer.read) is None  # type: ignore[arg-type]


def test_overtaken_output_is_numbered_across_partitions_and_reemitted_in_place() -> None:
    network = NetworkBufferPool(64, 64)
    first = new_partition(network, 2, name="a")
    second = new_partition(network, 2, name="b")
    views = [partition.create_subpartition_view(i, CountingListener())
             for partition in (first, second) for i in (0, 1)]
    first.add_buffer(1, filled_buffer(first, 1, b"a1"))
    second.add_buffer(0, filled_buffer(second, 0, b"b0"))
    barrier = CheckpointBarrier(C1, 0, CheckpointOptions(alignment=AlignmentType.UNALIGNED))
    first.broadcast_event(barrier)
    second.broadcast_event(barrier)
    overtaken = collect_overtaken([first, second], C1)
    assert overtaken == {1: (b"a1",), 2: (b"b0",)}
    for view in views:
        while (item := view.poll_next()) is not None:
            item.buffer.recycle()
    restored = ChannelStateSnapshot(C1, outputs=overtaken)
    assert reemit_outputs(restored, [first, second]) == 2
    got = [(i, bytes(item.buffer.view())) for i, view in enumerate(views)
           if (item := view.poll_next()) is not None]
    assert got == [(1, b"a1"), (2, b"b0")]


def test_unprocessed_rest_of_a_buffer_then_the_leftover_replays_in_order() -> None:
    """A priority barrier taken mid-buffer: the records not yet processed are re-encoded
    ahead of the chunk the deserializer has begun; replay yields both, in order."""
    first = chunks(list(range(10)), 4096)[0]
    second = chunks(["tail", "end"], 4096)[0]
    stream = first + second
    cut = len(first) + 12  # the second chunk begins in the first buffer
    live = CheckpointableDeserializer()
    records = live.deserialize(stream[:cut])
    assert records == list(range(10)) and live.has_partial_chunk
    processed = 3
    saved = live.encode(records[processed:]) + live.leftover()
    restored = CheckpointableDeserializer()
    replayed = restored.deserialize(saved) + restored.deserialize(stream[cut:])
    assert replayed == [*range(3, 10), "tail", "end"]
    assert live.encode([]) == b""
