"""Remote exchange latency between two processes on loopback at a fixed rate.

A spawned producer TaskManager emits ``(emit time, i)`` records at a fixed rate (default
10,000 records/s, paced in 1 ms ticks) through a ``RecordWriter`` with
``execution.buffer-timeout`` 1 ms (an ``OutputFlusher`` thread flushes partly filled buffers)
over the TCP transport; this process, the consumer TaskManager, takes the time of each record
right after deserialising it. Latency = receive time - emit time (both ``time.monotonic_ns``,
one clock on one machine). Reports p50, p99, p99.9 and max after a warm-up second.

Run: ``.venv/bin/python benchmarks/exchange_latency.py [--rate R] [--seconds S]``
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from multiprocessing.connection import Connection

from flintlock.common.config import Configuration
from flintlock.common.ids import (
    ChannelIndex,
    IntermediateDataSetId,
    ResultPartitionId,
    SubtaskIndex,
)
from flintlock.runtime.auth import new_job_secret
from flintlock.runtime.network.buffer import NetworkBufferPool
from flintlock.runtime.network.channel_selector import ForwardSelector
from flintlock.runtime.network.gate import SingleInputGate
from flintlock.runtime.network.partition import (
    ResultPartition,
    ResultPartitionManager,
    ResultPartitionType,
    create_partition_pool,
)
from flintlock.runtime.network.serialization import RecordDeserializer
from flintlock.runtime.network.transport import TcpTransport
from flintlock.runtime.network.writer import RecordWriter

PID = ResultPartitionId(IntermediateDataSetId("latency"), SubtaskIndex(0))
SEGMENT = 32 * 1024
NETWORK_MEMORY = 16 * 1024 * 1024
BUFFER_TIMEOUT_MS = 1
TICK_S = 0.001


def configuration() -> Configuration:
    """Both TaskManagers know the job's buffer timeout, as in a job (it sets the GIL switch
    interval the transports use: ``transport.switch_interval_for``)."""
    return Configuration().set_string("execution.buffer-timeout", f"{BUFFER_TIMEOUT_MS} ms")


def producer(secret: bytes, pipe: Connection, rate: int, seconds: float) -> None:
    config = configuration()
    pool = NetworkBufferPool.from_memory(NETWORK_MEMORY, SEGMENT)
    partitions = ResultPartitionManager()
    kind = ResultPartitionType.PIPELINED_BOUNDED
    partition = ResultPartition(PID, kind, 1, create_partition_pool(pool, kind, 1, config))
    partitions.register(partition)
    with TcpTransport(config, secret, partitions, pool, "producer").start() as transport:
        pipe.send(transport.address)
        pipe.recv()
        writer = RecordWriter(partition, ForwardSelector(), buffer_timeout_ms=BUFFER_TIMEOUT_MS)
        per_tick = max(1, round(rate * TICK_S))
        ticks = int(seconds / TICK_S)
        start = time.monotonic()
        i = 0
        for tick in range(ticks):
            for _ in range(per_tick):
                writer.emit((time.monotonic_ns(), i))
                i += 1
            delay = start + (tick + 1) * TICK_S - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        writer.close()
        partition.finish()
        pipe.recv()


def measure(rate: int, seconds: float) -> list[int]:
    context = multiprocessing.get_context("spawn")
    secret = new_job_secret()
    parent, child = context.Pipe()
    process = context.Process(target=producer, args=(secret, child, rate, seconds))
    process.start()
    address = parent.recv()
    pool = NetworkBufferPool.from_memory(NETWORK_MEMORY, SEGMENT)
    latencies: list[int] = []
    with TcpTransport(configuration(), secret, ResultPartitionManager(), pool, "consumer"
                      ).start() as transport:
        gate = SingleInputGate(0, pool.create_buffer_pool(0, 8))
        gate.set_channels([transport.create_remote_channel(gate, ChannelIndex(0), PID, 0, address)])
        gate.request_partitions()
        parent.send("go")
        deserializer = RecordDeserializer()
        while (item := gate.get_next()) is not None:
            buffer = item[1]
            if not buffer.is_event:
                records = deserializer.deserialize(buffer.view())
                now = time.monotonic_ns()
                latencies.extend(now - emitted for emitted, _ in records)
            buffer.recycle()
        gate.close()
    parent.send("done")
    process.join()
    return latencies


def percentile(sorted_values: list[int], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))] / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=6.0)
    args = parser.parse_args()
    latencies = measure(args.rate, args.seconds)
    warm = sorted(latencies[args.rate:])  # drop the first second
    print(f"{len(warm):,} records at {args.rate:,}/s, buffer timeout {BUFFER_TIMEOUT_MS} ms")
    print(f"p50 {percentile(warm, 0.5):.2f} ms | p99 {percentile(warm, 0.99):.2f} ms | "
          f"p99.9 {percentile(warm, 0.999):.2f} ms | max {warm[-1] / 1e6:.2f} ms")


if __name__ == "__main__":
    main()
