import threading

import pytest

from flintlock.common.ids import ChannelIndex
from flintlock.runtime.network.barriers import END_OF_PARTITION
from flintlock.runtime.network.buffer import BufferRequestTimeoutError, NetworkBufferPool
from flintlock.runtime.network.events import decode_event
from flintlock.runtime.network.gate import InputGateClosedError, UnionInputGate
from flintlock.runtime.network.input_channel import InputChannelError, ProducerFailedError
from flintlock.runtime.network.partition import PartitionNotFoundError, ResultPartitionManager
from flintlock.testing.exchange import (
    local_exchange,
    local_gate,
    new_partition,
    partition_id,
    timer_scheduler,
    write,
)


class ManualScheduler:
    def __init__(self) -> None:
        self.pending: list[tuple[float, object]] = []

    def __call__(self, delay_s, callback):
        handle = _Handle(callback)
        self.pending.append((delay_s, handle))
        return handle

    def run_next(self) -> float:
        delay, handle = self.pending.pop(0)
        handle.callback()
        return delay


class _Handle:
    def __init__(self, callback) -> None:
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


def read_all(gate):
    out = []
    while (item := gate.get_next(timeout_s=5)) is not None:
        channel, buffer = item
        out.append((channel, bytes(buffer.view()) if not buffer.is_event else decode_event(buffer)))
        buffer.recycle()
    return out


def test_local_exchange_delivers_in_order_and_finishes():
    exchange = local_exchange(producers=2)
    network, producers, gate = exchange.network, exchange.partitions, exchange.gates[0]
    for index in range(3):
        for number, producer in enumerate(producers):
            write(producer, 0, f"{number}:{index}".encode())
    for producer in producers:
        producer.finish()
    out = read_all(gate)
    for channel in (0, 1):
        mine = [payload for c, payload in out if c == channel]
        assert mine == [f"{channel}:{i}".encode() for i in range(3)] + [END_OF_PARTITION]
    assert gate.is_finished and gate.get_next() is None and gate.poll_next() is None
    assert exchange.manager.partition_ids == []
    assert network.statistics().free_segments == 16


def test_poll_next_returns_none_without_data():
    exchange = local_exchange(producers=2)
    gate = exchange.gates[0]
    assert gate.poll_next() is None and not gate.is_finished
    assert gate.get_next(timeout_s=0.001) is None
    gate.close()


def test_blocked_channel_keeps_its_data_until_resumed():
    exchange = local_exchange(producers=2)
    producers, gate = exchange.partitions, exchange.gates[0]
    gate.block_channel(0)
    write(producers[0], 0, b"held")
    write(producers[1], 0, b"free")
    channel, buffer = gate.poll_next()
    assert (channel, bytes(buffer.view())) == (1, b"free")
    buffer.recycle()
    assert gate.poll_next() is None
    assert gate.statistics().blocked_channels == (0,)
    gate.resume_channel(0)
    channel, buffer = gate.poll_next()
    assert (channel, bytes(buffer.view())) == (0, b"held")
    buffer.recycle()
    gate.close()


def test_producer_failure_is_raised_with_its_cause():
    exchange = local_exchange(producers=2)
    network, producers, gate = exchange.network, exchange.partitions, exchange.gates[0]
    assert gate.poll_next() is None
    cause = RuntimeError("producer exploded")
    producers[1].fail(cause)
    with pytest.raises(ProducerFailedError) as info:
        gate.get_next(timeout_s=5)
    assert info.value.channel_index == 1 and info.value.__cause__ is cause
    gate.close()
    assert all(p.is_released for p in producers)
    assert network.statistics().free_segments == 16


def test_set_error_surfaces_even_on_a_blocked_channel():
    exchange = local_exchange(producers=2)
    gate = exchange.gates[0]
    gate.poll_next()
    gate.block_channel(0)
    cause = OSError("disk gone")
    gate.channels[0].set_error(cause)
    with pytest.raises(InputChannelError) as info:
        gate.poll_next()
    assert info.value.__cause__ is cause and "disk gone" in str(info.value)


def test_partition_not_found_is_retried_with_backoff_then_succeeds():
    network = NetworkBufferPool(16, 64)
    manager = ResultPartitionManager()
    scheduler = ManualScheduler()
    gate = local_gate(manager, [partition_id("late")], 0, backoff_initial_ms=100,
                      backoff_max_ms=1000, scheduler=scheduler)
    assert gate.poll_next() is None
    assert scheduler.run_next() == 0.1
    assert scheduler.run_next() == 0.2
    producer = new_partition(network, 1, name="late", manager=manager)
    write(producer, 0, b"hello")
    assert scheduler.run_next() == 0.4
    _, buffer = gate.get_next(timeout_s=5)
    assert bytes(buffer.view()) == b"hello"
    buffer.recycle()
    assert scheduler.pending == []
    gate.close()


def test_partition_not_found_fails_after_the_maximum_backoff():
    scheduler = ManualScheduler()
    gate = local_gate(ResultPartitionManager(), [partition_id("never")], 0, backoff_initial_ms=100,
                      backoff_max_ms=300, scheduler=scheduler)
    gate.poll_next()
    delays = []
    while scheduler.pending:
        delays.append(scheduler.run_next())
    assert delays == [0.1, 0.2, 0.3]
    with pytest.raises(InputChannelError) as info:
        gate.poll_next()
    assert isinstance(info.value.__cause__, PartitionNotFoundError)


def test_release_cancels_a_pending_retry():
    scheduler = ManualScheduler()
    gate = local_gate(ResultPartitionManager(), [partition_id("never")], 0, scheduler=scheduler)
    gate.poll_next()
    (_, handle), = scheduler.pending
    gate.close()
    assert handle.cancelled


def test_close_wakes_a_waiting_reader_and_leaves_no_buffer_outstanding():
    exchange = local_exchange(producers=2)
    network, producers, gate = exchange.network, exchange.partitions, exchange.gates[0]
    write(producers[0], 0, b"never read")
    gate.block_channel(0)
    errors = []

    def read() -> None:
        try:
            gate.get_next(timeout_s=10)
        except InputGateClosedError as exc:
            errors.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    gate.close()
    reader.join(10)
    assert len(errors) == 1
    assert all(p.is_released for p in producers)
    assert network.statistics().free_segments == 16


def test_slow_consumer_backpressures_the_producer():
    exchange = local_exchange(producers=1, segments=64)
    producer, gate = exchange.partitions[0], exchange.gates[0]
    capacity = producer.buffer_pool.max_buffers
    for index in range(capacity):
        write(producer, 0, bytes([index]))
    with pytest.raises(BufferRequestTimeoutError):
        producer.request_buffer_blocking(0, timeout_s=0.01)
    _, buffer = gate.get_next(timeout_s=5)
    assert bytes(buffer.view()) == b"\x00"
    buffer.recycle()
    producer.request_buffer_blocking(0, timeout_s=5).recycle()
    gate.close()


def test_union_gate_uses_global_channel_indices():
    exchange = local_exchange(producers=3, segments=32, names=["u0", "u1", "u2"])
    network, producers, ids = exchange.network, exchange.partitions, exchange.partition_ids
    first = local_gate(exchange.manager, ids[:1], 0)
    second = local_gate(exchange.manager, ids[1:], 0)
    union = UnionInputGate([first, second])
    assert union.num_channels == 3
    union.block_channel(2)
    for number, producer in enumerate(producers):
        write(producer, 0, bytes([number]))
        producer.finish()
    seen = read_until_blocked(union)
    assert {(c, p) for c, p in seen if not isinstance(p, type(END_OF_PARTITION))} == {
        (0, b"\x00"), (1, b"\x01")}
    union.resume_channel(2)
    rest = read_all(union)
    assert rest == [(ChannelIndex(2), b"\x02"), (ChannelIndex(2), END_OF_PARTITION)]
    assert union.is_finished and union.get_next() is None
    assert network.statistics().free_segments == 32


def read_until_blocked(gate):
    out = []
    while (item := gate.poll_next()) is not None:
        channel, buffer = item
        out.append((channel, bytes(buffer.view()) if not buffer.is_event else decode_event(buffer)))
        buffer.recycle()
    return out


def test_local_channel_takes_its_backoff_from_the_configuration():
    from flintlock.common.config import Configuration
    from flintlock.runtime.network.gate import SingleInputGate
    from flintlock.runtime.network.local_channel import LocalInputChannel

    config = Configuration({"taskmanager.network.request-backoff.initial": "50 ms",
                            "taskmanager.network.request-backoff.max": "200 ms"})
    gate = SingleInputGate()
    channel = LocalInputChannel.from_config(
        gate, ChannelIndex(0), partition_id(), 0, ResultPartitionManager(), config,
        timer_scheduler)
    backoff = channel._backoff
    assert [backoff.next_delay_ms() for _ in range(4)] == [50, 100, 200, None]


def test_gate_counts_the_times_its_reader_waited():
    exchange = local_exchange(producers=2)
    gate = exchange.gates[0]
    assert gate.get_next(timeout_s=0.001) is None
    assert gate.statistics().idle_waits == 1
    gate.close()


def test_a_priority_event_is_served_before_other_channels_data():
    from flintlock.common.ids import CheckpointId
    from flintlock.runtime.network.barriers import (
        AlignmentType,
        CheckpointBarrier,
        CheckpointOptions,
    )

    exchange = local_exchange(producers=2)
    producers, gate = exchange.partitions, exchange.gates[0]
    gate.poll_next()
    write(producers[0], 0, b"first")
    write(producers[1], 0, b"second")
    barrier = CheckpointBarrier(CheckpointId(1), 0, CheckpointOptions(
        alignment=AlignmentType.UNALIGNED))
    producers[1].add_event(0, barrier)
    assert read_until_blocked(gate) == [(1, barrier), (0, b"first"), (1, b"second")]
    gate.close()


def test_data_announced_while_the_local_view_is_being_created_is_not_lost():
    # The consumer reads at the moment the producer's subpartition announces its data, inside
    # create_view, before the channel holds the view: that read finds nothing. The data must
    # still be delivered, although the subpartition will not announce it again.
    exchange = local_exchange(producers=1)
    producer, gate = exchange.partitions[0], exchange.gates[0]
    write(producer, 0, b"early")
    reads_during_creation = []

    def read_now():
        if not reads_during_creation:
            reads_during_creation.append(gate.poll_next())

    gate.set_availability_listener(read_now)
    gate.request_partitions()
    assert reads_during_creation == [None]
    item = gate.poll_next()
    assert item is not None and bytes(item[1].view()) == b"early"
    item[1].recycle()
    gate.close()
