"""A million records between two OS processes over TCP: key-group hash and broadcast.

The producer TaskManager is a spawned process: a TCP transport, a result partition with two
subpartitions and a ``RecordWriter``. This process is the consumer TaskManager: one gate with
two remote channels. Every record must arrive exactly once, on the channel its pattern picks,
in the order it was emitted.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.connection import Connection
from typing import Any

import pytest

from flintlock.common.config import Configuration
from flintlock.runtime.auth import new_job_secret
from flintlock.runtime.network.buffer import NetworkBufferPool
from flintlock.runtime.network.channel_selector import BroadcastSelector, KeyGroupSelector
from flintlock.runtime.network.partition import ResultPartitionManager
from flintlock.runtime.network.serialization import RecordDeserializer
from flintlock.runtime.network.transport import TcpTransport
from flintlock.runtime.network.writer import RecordWriter
from flintlock.testing.exchange import new_partition, partition_id, remote_gate

pytestmark = pytest.mark.slow

RECORDS = 1_000_000
KEYS = 997
MAX_PARALLELISM = 128
PID = partition_id("exchange")


def key_of(record: tuple[int, int]) -> int:
    return record[0]


def producer_main(secret: bytes, pipe: Connection, pattern: str, records: int) -> None:
    """The producer TaskManager (runs in a spawned process)."""
    config = Configuration()
    pool = NetworkBufferPool.from_memory(8 * 1024 * 1024, 32 * 1024)
    partitions = ResultPartitionManager()
    partition = new_partition(pool, 2, config=config, name="exchange", manager=partitions)
    with TcpTransport(config, secret, partitions, pool, "producer").start() as transport:
        pipe.send(transport.address)
        selector: Any = (
            KeyGroupSelector(key_of, MAX_PARALLELISM) if pattern == "hash" else BroadcastSelector()
        )
        writer = RecordWriter(partition, selector, buffer_timeout_ms=-1)
        for seq in range(records):
            writer.emit((seq % KEYS, seq))
        writer.close()
        partition.finish()
        pipe.recv()  # the consumer has everything: now the transport may close


def consume(address: tuple[str, int], secret: bytes) -> dict[int, list[Any]]:
    config = Configuration()
    pool = NetworkBufferPool.from_memory(8 * 1024 * 1024, 32 * 1024)
    with TcpTransport(config, secret, ResultPartitionManager(), pool, "consumer").start() as tm:
        gate = remote_gate(tm, address, [(PID, i) for i in (0, 1)], floating=8)
        deserializers = [RecordDeserializer(), RecordDeserializer()]
        received: dict[int, list[Any]] = {0: [], 1: []}
        while (item := gate.get_next(timeout_s=60)) is not None:
            channel, buffer = item
            if not buffer.is_event:
                received[channel].extend(deserializers[channel].deserialize(buffer.view()))
            buffer.recycle()
        assert gate.is_finished
        gate.close()
    # the I/O thread is joined now: every segment must be home
    assert pool.statistics().free_segments == pool.total_segments
    return received


def exchange(pattern: str) -> dict[int, list[Any]]:
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    secret = new_job_secret()
    process = context.Process(target=producer_main, args=(secret, child, pattern, RECORDS))
    process.start()
    try:
        assert parent.poll(60), "the producer did not start"
        received = consume(parent.recv(), secret)
        parent.send("done")
        process.join(60)
        assert process.exitcode == 0
        return received
    finally:
        if process.is_alive():
            process.kill()
            process.join(10)


def test_key_group_hash_exchange_delivers_each_record_once_in_order() -> None:
    received = exchange("hash")
    selector = KeyGroupSelector(key_of, MAX_PARALLELISM)
    selector.setup(2)
    channel_of_key = [selector.channel_for_key(key) for key in range(KEYS)]
    expected: dict[int, list[tuple[int, int]]] = {0: [], 1: []}
    for seq in range(RECORDS):
        expected[channel_of_key[seq % KEYS]].append((seq % KEYS, seq))
    assert expected[0] and expected[1]
    assert received == expected


def test_broadcast_exchange_delivers_every_record_to_every_channel_in_order() -> None:
    received = exchange("broadcast")
    expected = [(seq % KEYS, seq) for seq in range(RECORDS)]
    assert received[0] == expected
    assert received[1] == expected
