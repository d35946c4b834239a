"""Backpressure across processes: a slow consumer slows its producer, and memory stays bounded.

Two spawned processes (producer TaskManager, consumer TaskManager) exchange ~1 KB records over
TCP with little network memory; the consumer sleeps 2 ms per buffer, about ten times slower
than the producer can write. This process samples both: records produced minus records
consumed (what is in flight) and each process's RSS. Asserted are bounds, never timings:

- in flight <= the buffers credit-based flow control allows to exist (producer pool +
  receiver's exclusive and floating buffers + the writer's and reader's current buffer), so the
  producer's rate has dropped to the consumer's;
- RSS <= the process's RSS before its network stack existed + configured network memory +
  ``RSS_CONSTANT`` (interpreter, modules, socket buffers, transient pickles; see
  docs/internals/transport.md).

At the end every record has arrived exactly once, in order.
"""

from __future__ import annotations

import multiprocessing
import time
from multiprocessing.connection import Connection
from multiprocessing.sharedctypes import Synchronized
from typing import Any

import psutil
import pytest

from flintlock.common.config import Configuration
from flintlock.runtime.auth import new_job_secret
from flintlock.runtime.network.buffer import NetworkBufferPool
from flintlock.runtime.network.channel_selector import ForwardSelector
from flintlock.runtime.network.partition import ResultPartitionManager
from flintlock.runtime.network.serialization import RecordDeserializer
from flintlock.runtime.network.transport import TcpTransport
from flintlock.runtime.network.writer import RecordWriter
from flintlock.testing.exchange import new_partition, partition_id, remote_gate

pytestmark = pytest.mark.slow

PID = partition_id("backpressure")
SEGMENT = 32 * 1024
NETWORK_MEMORY = 2 * 1024 * 1024
RECORD_SIZE = 1000
RECORDS_PER_BUFFER = SEGMENT // RECORD_SIZE + 1
RSS_CONSTANT = 16 * 1024 * 1024
RUN_LENGTH = 10  # the run lasts until this many times the in-flight bound were consumed
RUN_BOUND_S = 120.0
CONSUMER_SLEEP_PER_BUFFER_S = 0.002
PUBLISH_EVERY = 100


def network_config() -> Configuration:
    config = Configuration()
    config.set_string("taskmanager.memory.segment-size", str(SEGMENT))
    config.set_string("taskmanager.memory.network.max", str(NETWORK_MEMORY))
    config.set_string("flintlock.network.write-buffer.high-water-mark", "256 kb")
    config.set_string("flintlock.network.write-buffer.low-water-mark", "64 kb")
    return config


def payload(seq: int) -> bytes:
    """A distinct 1000-byte object per record (pickle would share identical objects)."""
    return seq.to_bytes(8, "little") * (RECORD_SIZE // 8)


def rss() -> int:
    return int(psutil.Process().memory_info().rss)


def producer_main(secret: bytes, pipe: Connection, produced: Synchronized[int],
                  stop: Synchronized[int]) -> None:
    pipe.send(rss())
    config = network_config()
    pool = NetworkBufferPool.from_memory(NETWORK_MEMORY, SEGMENT)
    partitions = ResultPartitionManager()
    partition = new_partition(pool, 1, config=config, name="backpressure", manager=partitions)
    with TcpTransport(config, secret, partitions, pool, "producer").start() as transport:
        pipe.send((transport.address, partition.buffer_pool.max_buffers))
        writer = RecordWriter(partition, ForwardSelector(), buffer_timeout_ms=-1)
        seq = 0
        while not stop.value:
            for _ in range(PUBLISH_EVERY):
                writer.emit((seq, payload(seq)))
                seq += 1
            produced.value = seq
        writer.close()
        partition.finish()
        pipe.send(seq)
        pipe.recv()


def consumer_main(secret: bytes, address: tuple[str, int], pipe: Connection,
                  consumed: Synchronized[int]) -> None:
    pipe.send(rss())
    config = network_config()
    pool = NetworkBufferPool.from_memory(NETWORK_MEMORY, SEGMENT)
    with TcpTransport(config, secret, ResultPartitionManager(), pool, "consumer").start() as tm:
        gate = remote_gate(tm, address, [(PID, 0)], floating=8)
        deserializer = RecordDeserializer()
        expected, in_order = 0, True
        while (item := gate.get_next(timeout_s=60)) is not None:
            _, buffer = item
            if not buffer.is_event:
                for seq, data in deserializer.deserialize(buffer.view()):
                    in_order = in_order and seq == expected and data == payload(seq)
                    expected += 1
                consumed.value = expected
                time.sleep(CONSUMER_SLEEP_PER_BUFFER_S)  # the slow consumer under test
            buffer.recycle()
        gate.close()
        pipe.send((expected, in_order))


def test_a_slow_consumer_bounds_the_producer_and_the_memory_of_both() -> None:
    context = multiprocessing.get_context("spawn")
    secret = new_job_secret()
    produced, consumed, stop = context.Value("q", 0), context.Value("q", 0), context.Value("i", 0)
    producer_pipe, producer_end = context.Pipe()
    consumer_pipe, consumer_end = context.Pipe()
    producer = context.Process(target=producer_main, args=(secret, producer_end, produced, stop))
    producer.start()
    processes = [producer]
    try:
        assert producer_pipe.poll(60)
        base = {producer.pid: producer_pipe.recv()}
        address, producer_pool = producer_pipe.recv()
        consumer = context.Process(
            target=consumer_main, args=(secret, address, consumer_end, consumed)
        )
        consumer.start()
        processes.append(consumer)
        assert consumer_pipe.poll(60)
        base[consumer.pid] = consumer_pipe.recv()
        bound = in_flight_bound(producer_pool)
        samples = sample(processes, produced, consumed, RUN_LENGTH * bound)
        stop.value = 1
        assert producer_pipe.poll(60)
        total = producer_pipe.recv()
        assert consumer_pipe.poll(60)
        received, in_order = consumer_pipe.recv()
        producer_pipe.send("done")
        for process in processes:
            process.join(30)
            assert process.exitcode == 0
    finally:
        for process in processes:
            if process.is_alive():
                process.kill()
                process.join(10)
    assert received == total and in_order  # exactly once, in order
    assert max(s["in_flight"] for s in samples) <= bound
    assert total >= RUN_LENGTH * bound  # the run was long enough for the bound to matter
    for pid, baseline in base.items():
        assert max(s[pid] for s in samples) <= baseline + NETWORK_MEMORY + RSS_CONSTANT


def in_flight_bound(producer_pool: int) -> int:
    """The most records credit-based flow control lets exist between the two processes."""
    in_flight_buffers = producer_pool + 2 + 8 + 2  # producer pool, receiver credit, current
    return in_flight_buffers * RECORDS_PER_BUFFER + PUBLISH_EVERY


def sample(processes: list[Any], produced: Synchronized[int], consumed: Synchronized[int],
           until: int) -> list[dict[Any, int]]:
    """Samples in-flight records and RSS until ``until`` records were consumed (the length
    of the run, however fast the machine), at most RUN_BOUND_S."""
    handles = {p.pid: psutil.Process(p.pid) for p in processes}
    samples = []
    deadline = time.monotonic() + RUN_BOUND_S
    while consumed.value < until and time.monotonic() < deadline:
        done = consumed.value
        entry: dict[Any, int] = {"in_flight": produced.value - done}
        for pid, handle in handles.items():
            entry[pid] = handle.memory_info().rss
        samples.append(entry)
        time.sleep(0.02)  # the sampling period
    return samples
