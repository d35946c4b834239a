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
    ChannelStateCapture,
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


# -- capture bookkeeping ----------------------------------------------------------------


def test_input_state_is_leftover_then_inflight_then_overtaken_per_channel() -> None:
    capture = ChannelStateCapture()
    capture.start(C1, {0: b"L0", 1: b""})
    capture.add_input(C1, 1, b"b1")
    capture.add_input(C1, 0, b"b0")
    capture.add_overtaken_input(C1, 0, (b"o0", b"o1"))
    capture.add_outputs(C1, {3: (b"out",)})
    snapshot = capture.finish(C1)
    assert dict(snapshot.inputs) == {0: (b"L0", b"b0", b"o0", b"o1"), 1: (b"b1",)}
    assert dict(snapshot.outputs) == {3: (b"out",)}


def test_buffers_for_a_checkpoint_that_is_not_open_are_dropped() -> None:
    capture = ChannelStateCapture()
    capture.add_input(C1, 0, b"stale")
    capture.add_overtaken_input(C2, 0, (b"stale",))
    capture.start(C2, {})
    assert capture.finish(C2).is_empty


def test_asynchronous_part_waits_until_capture_ends() -> None:
    capture = ChannelStateCapture()
    submitted: list[ChannelStateSnapshot] = []
    capturing = {C1}
    capture.start(C1, {})
    capture.defer(C1, submitted.append, lambda: None)
    capture.add_input(C1, 0, b"x")
    capture.finish_ready(lambda cid: cid in capturing)
    assert submitted == [] and capture.waiting == [C1]
    capturing.clear()
    capture.finish_ready(lambda cid: cid in capturing)
    assert [dict(s.inputs) for s in submitted] == [{0: (b"x",)}]
    assert capture.waiting == []


def test_abort_releases_the_held_back_snapshot_and_drops_its_buffers() -> None:
    capture = ChannelStateCapture()
    released: list[int] = []
    submitted: list[ChannelStateSnapshot] = []
    capture.start(C1, {0: b"L"})
    capture.defer(C1, submitted.append, lambda: released.append(1))
    capture.abort(C1)
    capture.add_input(C1, 0, b"late")
    capture.finish_ready(lambda cid: False)
    assert released == [1] and submitted == []


# -- writing, reading, re-emitting ------------------------------------------------------


def test_written_state_reads_back_merged_and_empty_parts_are_not_written() -> None:
    writer = MemoryStateWriter()
    capture = ChannelStateCapture()
    capture.start(C1, {2: b"L"})
    capture.add_outputs(C1, {0: (b"a", b"b")})
    inputs, outputs = write_channel_state(capture.finish(C1), writer, "t")
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


# -- timeoutable barriers ---------------------------------------------------------------


def _timeoutable_setup(timeout_ms: int):  # type: ignore[no-untyped-def]
    from flintlock.runtime.tasks.timeoutable import TimeoutableBarriers
    from flintlock.testing.clock import ManualClock

    network = NetworkBufferPool(64, 64)
    partition = new_partition(network, 1)
    view = partition.create_subpartition_view(0, CountingListener())
    capture = ChannelStateCapture()
    clock = ManualClock(0)
    scheduled: list[tuple[float, object]] = []
    watcher = TimeoutableBarriers(
        [partition], capture, clock, lambda delay, action: scheduled.append((delay, action)))
    options = CheckpointOptions(alignment=AlignmentType.ALIGNED, alignment_timeout_ms=timeout_ms)
    barrier = CheckpointBarrier(C1, int(clock.wall_ms()), options)
    partition.add_buffer(0, filled_buffer(partition, 0, b"queued"))
    partition.broadcast_event(barrier)
    submitted: list[ChannelStateSnapshot] = []
    capture.start(C1, {})
    capture.defer(C1, submitted.append, lambda: None, by_handler=False)
    capture.finish_ready(lambda cid: False)  # the handler does not decide this one
    assert submitted == []
    metrics: dict[str, float] = {}
    watcher.watch(barrier, metrics)
    return view, clock, scheduled, submitted, metrics


def test_a_barrier_that_leaves_in_time_releases_an_aligned_snapshot() -> None:
    view, clock, scheduled, submitted, metrics = _timeoutable_setup(100)
    assert submitted == [] and len(scheduled) == 1
    while (item := view.poll_next()) is not None:
        item.buffer.recycle()
    clock.advance(10)
    scheduled.pop()[1]()  # type: ignore[operator]
    assert len(submitted) == 1 and submitted[0].is_empty and metrics == {}


def test_a_barrier_still_queued_at_the_deadline_is_converted_and_its_overtaken_data_kept() -> None:
    view, clock, scheduled, submitted, metrics = _timeoutable_setup(20)
    clock.advance(10)
    scheduled.pop()[1]()  # type: ignore[operator]
    assert submitted == [] and len(scheduled) == 1
    clock.advance(10)
    scheduled.pop()[1]()  # type: ignore[operator]
    assert [dict(s.outputs) for s in submitted] == [{0: (b"queued",)}]
    assert metrics == {"unaligned": 1.0} and scheduled == []
    first = view.poll_next()
    assert first is not None and first.buffer.is_event
