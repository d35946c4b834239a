"""What every data transport must do; run against the TCP and the in-memory transport alike."""

from __future__ import annotations

import threading

import pytest

from flintlock.runtime.auth import AuthenticationError
from flintlock.runtime.network.buffer import BufferRequestTimeoutError, DataType, unpooled_buffer
from flintlock.runtime.network.events import decode_event
from flintlock.runtime.network.input_channel import InputChannelError, ProducerFailedError
from flintlock.runtime.network.partition import PartitionNotFoundError
from flintlock.testing.exchange import read_one, write
from flintlock.testing.waiting import wait_until
from tests.conformance.conftest import Cluster, remote


class Boom(Exception):
    pass


def read_all(gate, limit: int = 100_000) -> dict[int, list[bytes]]:  # type: ignore[no-untyped-def]
    """Data payloads per channel until every channel ended (events other than EOP kept)."""
    got: dict[int, list[bytes]] = {}
    for _ in range(limit):
        item = gate.get_next(timeout_s=10)
        if item is None:
            break
        channel, buffer = item
        if buffer.data_type is DataType.DATA_BUFFER:
            got.setdefault(channel, []).append(bytes(buffer.view()))
        buffer.recycle()
    assert gate.is_finished
    return got


def test_every_buffer_arrives_once_in_order_per_channel(cluster: Cluster) -> None:
    producer, consumer = cluster.node(), cluster.node()
    partition = producer.partition("ordered", 3)
    gate = consumer.gate(producer, partition.partition_id, [0, 1, 2])
    sent: dict[int, list[bytes]] = {0: [], 1: [], 2: []}

    def produce() -> None:
        for i in range(600):
            sub = (i * 7) % 3
            payload = i.to_bytes(4, "big") * (1 + i % 900)
            sent[sub].append(payload)
            write(partition, sub, payload)
        partition.finish()

    thread = threading.Thread(target=produce)
    thread.start()
    got = read_all(gate)
    thread.join(10)
    assert got == sent
    gate.close()
    wait_until(lambda: consumer.pool.statistics().exclusive_segments == 0)


def test_a_consumer_that_does_not_read_stalls_its_producer_with_bounded_buffers(
    cluster: Cluster,
) -> None:
    producer = cluster.node()
    consumer = cluster.node(**{"taskmanager.network.memory.buffers-per-channel": 2})
    partition = producer.partition("stalled", 1)
    floating = 3
    gate = consumer.gate(producer, partition.partition_id, [0], floating=floating)
    gate.request_partitions()
    written = 0
    with pytest.raises(BufferRequestTimeoutError):
        for written in range(1000):  # noqa: B007 — the count is checked below
            write(partition, 0, b"x" * 100, timeout_s=0.5)
    sender_pool = partition.buffer_pool.max_buffers
    assert written <= sender_pool + 2 + floating  # sender pool + receiver credit, no more
    channel = remote(gate, 0)
    assert channel.queued_buffers() <= 2 + floating
    statistics = channel.credit_statistics()
    assert statistics.empty_exclusive + statistics.empty_floating >= 0
    partition.finish()
    got = read_all(gate)
    assert len(got[0]) == written


def test_events_need_no_credit_and_priority_events_overtake_data(cluster: Cluster) -> None:
    producer = cluster.node()
    consumer = cluster.node(**{"taskmanager.network.memory.buffers-per-channel": 0})
    partition = producer.partition("events", 1)
    gate = consumer.gate(producer, partition.partition_id, [0], floating=0)
    partition.add_event(0, "first marker")
    item = gate.get_next(timeout_s=10)
    assert item is not None and decode_event(item[1]) == "first marker"
    item[1].recycle()
    write(partition, 0, b"data that has no credit")
    priority = unpooled_buffer(b"\x77urgent", DataType.PRIORITY_EVENT_BUFFER)
    partition.add_buffer(0, priority)
    item = gate.get_next(timeout_s=10)
    assert item is not None and item[1].data_type is DataType.PRIORITY_EVENT_BUFFER
    assert bytes(item[1].view()) == b"\x77urgent"
    item[1].recycle()
    gate.close()


def test_partition_not_found_is_retried_until_the_producer_registers(cluster: Cluster) -> None:
    producer, consumer = cluster.node(), cluster.node()
    partition = producer.partition("late", 1, register=False)
    gate = consumer.gate(producer, partition.partition_id, [0])
    gate.request_partitions()
    channel = remote(gate, 0)
    wait_until(lambda: channel.partition_requests >= 2)
    producer.partitions.register(partition)
    write(partition, 0, b"finally")
    partition.finish()
    assert read_all(gate) == {0: [b"finally"]}


def test_partition_never_found_fails_the_channel(cluster: Cluster) -> None:
    producer = cluster.node()
    consumer = cluster.node(**{
        "taskmanager.network.request-backoff.initial": "1 ms",
        "taskmanager.network.request-backoff.max": "4 ms",
    })
    partition = producer.partition("missing", 1, register=False)
    gate = consumer.gate(producer, partition.partition_id, [0])
    with pytest.raises(InputChannelError) as info:
        gate.get_next(timeout_s=10)
    assert isinstance(info.value.__cause__, PartitionNotFoundError)
    assert remote(gate, 0).partition_requests == 4  # 1 ms, 2 ms, 4 ms, then give up
    gate.close()


def test_producer_failure_fails_the_consumer_with_the_producers_cause(cluster: Cluster) -> None:
    producer, consumer = cluster.node(), cluster.node()
    partition = producer.partition("failing", 2)
    gate = consumer.gate(producer, partition.partition_id, [0, 1])
    for sub in (0, 1):  # once both views exist and delivered, the producer fails
        write(partition, sub, b"before the failure")
    for _ in range(2):
        read_one(gate)
    partition.fail(Boom("producer died"))
    with pytest.raises(ProducerFailedError) as info:
        for _ in range(10):
            read_one(gate)
    cause = info.value.__cause__
    assert isinstance(cause, Boom) and cause.args == ("producer died",)
    gate.close()


def test_releasing_the_consumer_cancels_the_request_and_frees_the_producer(
    cluster: Cluster,
) -> None:
    producer, consumer, partition, gate = cluster.one_channel("cancelled")
    write(partition, 0, b"one")
    read_one(gate)
    for _ in range(3):
        write(partition, 0, b"more")
    gate.close()
    wait_until(lambda: partition.is_released)  # its only view was released by the cancel
    wait_until(lambda: producer.pool.statistics().free_segments == 256)
    wait_until(lambda: consumer.pool.statistics().free_segments == 256)


def test_closing_a_transport_fails_remote_readers_and_releases_served_views(
    cluster: Cluster,
) -> None:
    producer, consumer, partition, gate = cluster.one_channel("closing")
    write(partition, 0, b"one")
    read_one(gate)
    producer.transport.close()
    with pytest.raises(InputChannelError):
        gate.get_next(timeout_s=10)
    wait_until(lambda: partition.is_released)
    gate.close()
    wait_until(lambda: consumer.pool.statistics().free_segments == 256)


def test_a_wrong_secret_is_refused(cluster: Cluster) -> None:
    producer = cluster.node()
    intruder = cluster.node(secret=b"another-secret-0123456789abcdefg")
    partition = producer.partition("guarded", 1)
    gate = intruder.gate(producer, partition.partition_id, [0])
    with pytest.raises(AuthenticationError):
        gate.request_partitions()
    gate.close()


def test_a_channel_without_exclusive_buffers_borrows_floating_ones(cluster: Cluster) -> None:
    producer = cluster.node()
    consumer = cluster.node(**{"taskmanager.network.memory.buffers-per-channel": 0})
    partition = producer.partition("floating only", 2)
    gate = consumer.gate(producer, partition.partition_id, [0, 1], floating=3)
    sent = {0: [bytes([i]) * 50 for i in range(40)], 1: [bytes([i]) * 70 for i in range(40)]}

    def produce() -> None:
        for i in range(40):
            for sub in (0, 1):
                write(partition, sub, sent[sub][i])
        partition.finish()

    thread = threading.Thread(target=produce)
    thread.start()
    assert read_all(gate) == sent
    thread.join(10)
    gate.close()


def test_a_retry_due_after_release_is_not_sent(cluster: Cluster) -> None:
    producer = cluster.node()
    consumer = cluster.node(**{
        "taskmanager.network.request-backoff.initial": "50 ms",
        "taskmanager.network.request-backoff.max": "50 ms",
    })
    partition = producer.partition("released while waiting", 1, register=False)
    gate = consumer.gate(producer, partition.partition_id, [0])
    gate.request_partitions()
    channel = remote(gate, 0)
    wait_until(lambda: channel.retries_scheduled == 1)
    producer.partitions.register(partition)
    gate.close()  # the retry timer is already set; it must not request for a released channel
    done = threading.Event()
    consumer.transport.io.call_later(0.2, done.set)  # after the retry would have fired
    assert done.wait(10)
    assert channel.partition_requests == 1
    assert not partition.is_released  # nobody holds a view onto it
    partition.release()
