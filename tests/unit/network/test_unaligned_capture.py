"""Which buffers a priority (unaligned) barrier overtakes, on the sender side (the
subpartition queue) and on the receiver side (a remote channel's queue): exactly those queued
ahead of it when it arrived, copied, and still delivered after the barrier."""

from __future__ import annotations

from flintlock.common.ids import CheckpointId
from flintlock.runtime.network.barriers import (
    AlignmentType,
    CheckpointBarrier,
    CheckpointOptions,
)
from flintlock.runtime.network.buffer import DataType, NetworkBufferPool
from flintlock.runtime.network.events import encode_event, event_bytes
from flintlock.testing.exchange import (
    CountingListener,
    deliver,
    detached_remote_gate,
    local_gate,
    new_partition,
    write,
)


def unaligned(checkpoint_id: int) -> CheckpointBarrier:
    options = CheckpointOptions(alignment=AlignmentType.UNALIGNED)
    return CheckpointBarrier(CheckpointId(checkpoint_id), 0, options)


ALIGNED = CheckpointBarrier(CheckpointId(5), 0)


def one_remote_channel(credit: int):  # type: ignore[no-untyped-def]
    """(gate, channel): one requested remote channel, 4 floating buffers, no network."""
    wired = detached_remote_gate(credit=credit, floating=4)
    return wired.gate, wired.channels[0]


def drain(view):  # type: ignore[no-untyped-def]
    out = []
    while (item := view.poll_next()) is not None:
        out.append(item.buffer)
    return out


# -- sender side -------------------------------------------------------------------------


def test_priority_barrier_returns_copies_of_the_queued_data_buffers_per_subpartition() -> None:
    network = NetworkBufferPool(32, 64)
    partition = new_partition(network, 3)
    views = [partition.create_subpartition_view(i, CountingListener()) for i in range(3)]
    write(partition, 0, b"a0")
    write(partition, 0, b"a1")
    partition.add_event(0, ALIGNED)  # an ordinary event is overtaken but is no channel state
    write(partition, 0, b"a2")
    write(partition, 2, b"c0")
    partition.broadcast_event(unaligned(7))
    assert partition.take_overtaken(7) == {0: (b"a0", b"a1", b"a2"), 2: (b"c0",)}
    assert partition.take_overtaken(7) == {}  # taken once
    first = drain(views[0])
    assert [b.data_type for b in first] == [
        DataType.PRIORITY_EVENT_BUFFER, DataType.DATA_BUFFER, DataType.DATA_BUFFER,
        DataType.EVENT_BUFFER, DataType.DATA_BUFFER,
    ]
    assert [bytes(b.view()) for b in first if not b.is_event] == [b"a0", b"a1", b"a2"]
    assert [b.data_type for b in drain(views[1])] == [DataType.PRIORITY_EVENT_BUFFER]


def test_buffers_already_polled_or_added_after_the_barrier_are_not_overtaken() -> None:
    network = NetworkBufferPool(32, 64)
    partition = new_partition(network, 1)
    view = partition.create_subpartition_view(0, CountingListener())
    write(partition, 0, b"sent")
    polled = view.poll_next()
    assert polled is not None
    write(partition, 0, b"queued")
    partition.broadcast_event(unaligned(1))
    write(partition, 0, b"after")
    assert partition.take_overtaken(1) == {0: (b"queued",)}
    polled.buffer.recycle()
    for buffer in drain(view):
        buffer.recycle()


def test_copies_survive_the_consumer_recycling_the_originals() -> None:
    network = NetworkBufferPool(32, 64)
    partition = new_partition(network, 1)
    view = partition.create_subpartition_view(0, CountingListener())
    write(partition, 0, b"data")
    partition.broadcast_event(unaligned(3))
    for buffer in drain(view):
        buffer.segment[:4] = b"XXXX"
        buffer.recycle()
    assert partition.take_overtaken(3) == {0: (b"data",)}


def test_an_aligned_barrier_overtakes_nothing() -> None:
    network = NetworkBufferPool(32, 64)
    partition = new_partition(network, 1)
    partition.create_subpartition_view(0, CountingListener())
    write(partition, 0, b"data")
    partition.broadcast_event(ALIGNED)
    assert partition.take_overtaken(ALIGNED.checkpoint_id) == {}


def test_taking_a_newer_checkpoint_drops_older_unclaimed_copies() -> None:
    network = NetworkBufferPool(32, 64)
    partition = new_partition(network, 1)
    partition.create_subpartition_view(0, CountingListener())
    write(partition, 0, b"x")
    partition.broadcast_event(unaligned(1))
    partition.broadcast_event(unaligned(2))
    assert partition.take_overtaken(2) == {0: (b"x",)}
    assert partition.take_overtaken(1) == {}


def test_restored_output_is_queued_as_data_buffers_in_order() -> None:
    network = NetworkBufferPool(32, 64)
    partition = new_partition(network, 2)
    view = partition.create_subpartition_view(1, CountingListener())
    partition.restore_buffer(1, b"r0")
    partition.restore_buffer(1, b"r1")
    write(partition, 1, b"new")
    items = drain(view)
    assert [bytes(b.view()) for b in items] == [b"r0", b"r1", b"new"]
    assert all(b.data_type is DataType.DATA_BUFFER for b in items)


# -- receiver side -----------------------------------------------------------------------


def deliver_event(channel, sequence: int, event: object):  # type: ignore[no-untyped-def]
    return deliver(channel, sequence, event_bytes(event), data_type=encode_event(event).data_type)


def test_remote_priority_barrier_overtakes_exactly_the_buffers_queued_at_its_arrival() -> None:
    gate, channel = one_remote_channel(credit=4)
    deliver(channel, 0, b"consumed")
    item = gate.poll_next()
    assert item is not None and bytes(item[1].view()) == b"consumed"
    item[1].recycle()
    deliver(channel, 1, b"q1")
    deliver(channel, 2, b"q2")
    deliver_event(channel, 3, unaligned(4))
    deliver(channel, 4, b"after")  # arrives after the barrier: not in-flight data of 4
    first = gate.poll_next()
    assert first is not None and first[1].data_type is DataType.PRIORITY_EVENT_BUFFER
    assert channel.take_overtaken() == (b"q1", b"q2")
    assert channel.take_overtaken() == ()
    rest = []
    while (item := gate.poll_next()) is not None:
        rest.append(bytes(item[1].view()))
        item[1].recycle()
    assert rest == [b"q1", b"q2", b"after"]


def test_remote_priority_barrier_on_an_empty_queue_overtakes_nothing() -> None:
    gate, channel = one_remote_channel(credit=2)
    deliver_event(channel, 0, unaligned(1))
    item = gate.poll_next()
    assert item is not None and item[1].data_type is DataType.PRIORITY_EVENT_BUFFER
    assert channel.take_overtaken() == ()


def test_two_priority_barriers_keep_their_order_and_their_own_counts() -> None:
    gate, channel = one_remote_channel(credit=4)
    deliver(channel, 0, b"a")
    deliver_event(channel, 1, unaligned(1))
    deliver(channel, 2, b"b")
    deliver_event(channel, 3, unaligned(2))
    first = gate.poll_next()
    assert first is not None and first[1].data_type is DataType.PRIORITY_EVENT_BUFFER
    assert channel.take_overtaken() == (b"a",)
    second = gate.poll_next()
    assert second is not None and second[1].data_type is DataType.PRIORITY_EVENT_BUFFER
    assert channel.take_overtaken() == (b"a", b"b")


def test_priority_barrier_moves_its_channel_to_the_head_of_the_gate() -> None:
    wired = detached_remote_gate(channels=2, credit=4, floating=4)
    gate, (first, second) = wired.gate, wired.channels
    deliver(first, 0, b"other")
    deliver_event(second, 0, unaligned(1))
    item = gate.poll_next()
    assert item is not None and item[0] == 1
    assert item[1].data_type is DataType.PRIORITY_EVENT_BUFFER


def test_poll_priority_takes_only_a_priority_event_at_the_head() -> None:
    from flintlock.runtime.network.partition import ResultPartitionManager


    network = NetworkBufferPool(32, 64)
    manager = ResultPartitionManager()
    partition = new_partition(network, 1)
    manager.register(partition)
    gate = local_gate(manager, [partition.partition_id], 0)
    gate.request_partitions()
    write(partition, 0, b"data")
    assert gate.poll_priority() is None  # data is there, but no priority event
    partition.broadcast_event(unaligned(1))
    gate.block_channel(0)
    assert gate.poll_priority() is None  # a blocked channel keeps even its priority events
    gate.resume_channel(0)
    item = gate.poll_priority()
    assert item is not None and item[1].data_type is DataType.PRIORITY_EVENT_BUFFER
    assert gate.poll_priority() is None
    rest = gate.poll_next()
    assert rest is not None and bytes(rest[1].view()) == b"data"


# -- timeoutable aligned barriers ---------------------------------------------------------


def aligned_with_timeout(checkpoint_id: int) -> CheckpointBarrier:
    options = CheckpointOptions(alignment=AlignmentType.ALIGNED, alignment_timeout_ms=10)
    return CheckpointBarrier(CheckpointId(checkpoint_id), 0, options)


def test_a_queued_aligned_barrier_converts_to_priority_and_overtakes_what_was_ahead() -> None:
    network = NetworkBufferPool(32, 64)
    partition = new_partition(network, 2)
    views = [partition.create_subpartition_view(i, CountingListener()) for i in range(2)]
    write(partition, 0, b"a0")
    write(partition, 0, b"a1")
    barrier = aligned_with_timeout(3)
    partition.broadcast_event(barrier)
    write(partition, 0, b"after")
    assert partition.has_queued_barrier(3)
    sent = drain(views[1])  # subpartition 1 already sent its barrier
    assert [b.data_type for b in sent] == [DataType.EVENT_BUFFER]
    unaligned_form = barrier.with_options(barrier.options.to_unaligned())
    assert partition.convert_barrier_to_priority(unaligned_form) == {0: (b"a0", b"a1")}
    assert not partition.has_queued_barrier(3)
    first = drain(views[0])
    assert [b.data_type for b in first] == [
        DataType.PRIORITY_EVENT_BUFFER, DataType.DATA_BUFFER, DataType.DATA_BUFFER,
        DataType.DATA_BUFFER,
    ]
    from flintlock.runtime.network.events import decode_event

    assert decode_event(first[0]) == unaligned_form
    assert [bytes(b.view()) for b in first[1:]] == [b"a0", b"a1", b"after"]


def test_a_barrier_already_sent_is_not_converted() -> None:
    network = NetworkBufferPool(32, 64)
    partition = new_partition(network, 1)
    view = partition.create_subpartition_view(0, CountingListener())
    barrier = aligned_with_timeout(1)
    partition.broadcast_event(barrier)
    drain(view)
    assert partition.convert_barrier_to_priority(
        barrier.with_options(barrier.options.to_unaligned())) == {}


# -- receiver-side conversion of a timed-out aligned barrier -------------------------------


def timeoutable(checkpoint_id: int, timestamp: int = 1000) -> CheckpointBarrier:
    options = CheckpointOptions(alignment=AlignmentType.ALIGNED, alignment_timeout_ms=200)
    return CheckpointBarrier(CheckpointId(checkpoint_id), timestamp, options)


def test_a_queued_aligned_barrier_converted_at_the_receiver_overtakes_the_data_ahead() -> None:
    gate, channel = one_remote_channel(credit=4)
    announced = []
    gate.set_barrier_listener(lambda index, barrier: announced.append((index, barrier)))
    deliver(channel, 0, b"q1")
    deliver(channel, 1, b"q2")
    deliver_event(channel, 2, timeoutable(7))
    deliver(channel, 3, b"after")
    assert announced == [(0, timeoutable(7))]
    barrier = timeoutable(7)
    converted = barrier.with_options(barrier.options.to_unaligned())
    assert channel.convert_barrier_to_priority(converted)
    assert not channel.convert_barrier_to_priority(converted)  # nothing left to convert
    first = gate.poll_next()
    assert first is not None and first[1].data_type is DataType.PRIORITY_EVENT_BUFFER
    from flintlock.runtime.network.events import decode_event
    assert decode_event(first[1]) == converted
    assert channel.take_overtaken() == (b"q1", b"q2")
    rest = []
    while (item := gate.poll_next()) is not None:
        rest.append(bytes(item[1].view()))
        item[1].recycle()
    assert rest == [b"q1", b"q2", b"after"]


def test_only_the_barrier_of_that_checkpoint_is_converted() -> None:
    gate, channel = one_remote_channel(credit=4)
    deliver(channel, 0, b"q1")
    deliver_event(channel, 1, timeoutable(3))
    other = timeoutable(4)
    assert not channel.convert_barrier_to_priority(other.with_options(other.options.to_unaligned()))
    items = []
    while (item := gate.poll_next()) is not None:
        items.append(item[1].data_type)
        item[1].recycle()
    assert items == [DataType.DATA_BUFFER, DataType.EVENT_BUFFER]


def test_received_barriers_convert_queued_barriers_at_the_deadline() -> None:
    """The channel's announcements go to the task's checkpoint machine, which arms one timer
    per checkpoint and, when it fires, has the channels convert the barrier (issue 29)."""
    from flintlock.common.checkpointing import CheckpointingMode
    from flintlock.common.ids import ChannelIndex
    from flintlock.runtime.tasks.checkpointing import commands as cmd
    from flintlock.runtime.tasks.checkpointing import events as ev
    from flintlock.runtime.tasks.checkpointing.handlers import create_barrier_handler
    from flintlock.runtime.tasks.checkpointing.machine import (
        MachineSettings,
        SubtaskCheckpointMachine,
    )
    from flintlock.testing.clock import ManualClock

    gate, channel = one_remote_channel(credit=4)
    clock = ManualClock(5000.0)
    handler = create_barrier_handler(1, CheckpointingMode.EXACTLY_ONCE, unaligned=True,
                                     aligned_timeout_ms=200, clock=clock)
    machine = SubtaskCheckpointMachine(MachineSettings(unaligned=True), handler, clock)
    announced: list[ev.BarrierAnnounced] = []
    gate.set_barrier_listener(
        lambda index, barrier: announced.append(ev.BarrierAnnounced(ChannelIndex(index), barrier)))
    deliver(channel, 0, b"q1")
    deliver_event(channel, 1, timeoutable(9, timestamp=int(clock.wall_ms())))
    deliver_event(channel, 2, timeoutable(9, timestamp=int(clock.wall_ms())))  # duplicate
    assert len(announced) == 2
    commands = [c for event in announced for c in machine.handle(event)]
    timer = cmd.ScheduleEvent(0.2, ev.ReceivedBarrierTimedOut(timeoutable(9, 5000)))
    assert commands == [timer]  # one timer, 200 ms ahead
    converted = timeoutable(9, 5000).with_options(timeoutable(9).options.to_unaligned())
    assert machine.handle(timer.event) == [cmd.ConvertReceivedBarriers(converted)]
    assert channel.convert_barrier_to_priority(converted)
    first = gate.poll_next()
    assert first is not None and first[1].data_type is DataType.PRIORITY_EVENT_BUFFER
