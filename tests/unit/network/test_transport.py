"""TCP-specific transport behaviour: shared connections, water marks, clean shutdown."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import psutil
import pytest

from flintlock.runtime.network.frame_decoder import FrameDecoder
from flintlock.runtime.network.protocol import HEADER_SIZE
from flintlock.runtime.network.transport import ConnectFailedError, TransportClosedError
from flintlock.testing.exchange import read_one, write
from tests.conformance.conftest import (
    SEGMENT,
    Cluster,
    raw_connection,
    request_frame,
)


@pytest.fixture
def tcp() -> Iterator[Cluster]:
    cluster = Cluster("tcp")
    yield cluster
    cluster.close()


def test_all_channels_between_two_task_managers_share_one_connection(tcp: Cluster) -> None:
    producer, consumer = tcp.node(), tcp.node()
    first = producer.partition("first", 2)
    second = producer.partition("second", 1)
    gates = [
        consumer.gate(producer, first.partition_id, [0, 1]),
        consumer.gate(producer, second.partition_id, [0]),
    ]
    for gate in gates:
        gate.request_partitions()
    write(first, 1, b"hello")
    item = gates[0].get_next(timeout_s=10)
    assert item is not None and bytes(item[1].view()) == b"hello"
    item[1].recycle()
    serving = [c for c in producer.transport.statistics().connections if c.serving]
    clients = [c for c in consumer.transport.statistics().connections if not c.serving]
    assert len(serving) == 1 and len(clients) == 1
    for gate in gates:
        gate.close()


def test_a_slow_socket_stops_the_server_polling_above_the_high_water_mark(tcp: Cluster) -> None:
    high, low = 64 * 1024, 16 * 1024
    producer = tcp.node(segments=4096, **{
        "flintlock.network.write-buffer.high-water-mark": high,
        "flintlock.network.write-buffer.low-water-mark": low,
        "taskmanager.network.memory.buffers-per-channel": 4000,
        "taskmanager.network.memory.max-buffers-per-channel": 4000,
    })
    partition = producer.partition("slow", 1)
    reader = raw_connection(producer.transport.address, rcvbuf=4096)
    reader.sendall(request_frame(partition.partition_id, 0, 7, credit=1_000_000))
    written = 3000  # 12 MiB: far more than the socket buffers and the water mark
    for _ in range(written):
        write(partition, 0, b"z" * SEGMENT, timeout_s=10)
    [served] = [c for c in producer.transport.statistics().connections if c.serving]
    frame = HEADER_SIZE + 21 + SEGMENT
    assert served.max_queued_bytes <= high + frame  # never more than one frame past the mark
    assert partition.statistics().subpartitions[0].queued_buffers > 0  # the rest waits queued
    # the reader catches up: everything written arrives, in order, once
    decoder = FrameDecoder(1 << 20)
    received = 0
    while received < written:
        received += len(decoder.feed(reader.recv(1 << 16)))
    assert received == written
    reader.close()


def test_closing_leaves_no_thread_and_no_socket_behind() -> None:
    before_threads = set(threading.enumerate())
    before_fds = psutil.Process().num_fds()
    cluster = Cluster("tcp")
    producer, consumer, partition, gate = cluster.one_channel("p")
    write(partition, 0, b"x")
    read_one(gate)
    cluster.close()
    gate.close()
    assert set(threading.enumerate()) <= before_threads
    assert psutil.Process().num_fds() <= before_fds
    with pytest.raises(TransportClosedError):
        consumer.transport.client_for(producer.transport.address)


def test_connecting_to_nothing_is_a_typed_error(tcp: Cluster) -> None:
    node = tcp.node(**{"taskmanager.network.netty.client.connectTimeoutSec": "2 s"})
    with pytest.raises(ConnectFailedError):
        node.transport.client_for(("127.0.0.1", 1))


def test_data_server_binds_loopback_and_picks_a_port(tcp: Cluster) -> None:
    node = tcp.node()
    host, port = node.transport.address
    assert host == "127.0.0.1" and port > 0


def test_the_in_memory_transport_opens_no_file_descriptor() -> None:
    before = psutil.Process().num_fds()
    cluster = Cluster("memory")
    _, _, partition, gate = cluster.one_channel("p")
    write(partition, 0, b"x")
    item = gate.get_next(timeout_s=10)
    assert item is not None
    assert psutil.Process().num_fds() == before
    item[1].recycle()
    gate.close()
    cluster.close()
