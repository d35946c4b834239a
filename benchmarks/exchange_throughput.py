"""Remote exchange throughput between two processes on loopback, next to a bare reference.

flintlock: a spawned producer TaskManager (TcpTransport, PIPELINED_BOUNDED partition, one
subpartition, ``RecordWriter`` with a forward selector) sends to this process, the consumer
TaskManager (TcpTransport, one remote channel, ``RecordDeserializer``), which counts records.
The producer appends records to a list, as bare does, and hands each list of
``CHAIN_BATCH`` records to ``RecordWriter.emit_batch``: that is how the operator chain feeds a
writer (a task hands its chain up to 4,096 records at once; no task path calls the
per-record ``emit``). ``--emit record`` calls ``emit`` once per record instead, the cost a
per-record API would add.

bare: the same two processes with no framework: the producer appends records to a list and,
every batch of about one buffer (32 KiB), pickles it and ``sendall``s it length-prefixed on a
raw socket; the consumer ``recv``s, unpickles and counts. No auth, no credit, no pools.

Both run in the same invocation with the same record shapes: small ``(i, i)`` tuples and
``(i, 1 KiB bytes)`` (a fresh bytes object per record, so pickle cannot share them).

Besides wall-clock rates (which swing with whatever else runs on the machine) it reports CPU
seconds per record of each process while the records flow, and "vs bare (CPU)": bare's
busier process over ours, i.e. the rate ratio two otherwise idle cores would show.

Run: ``.venv/bin/python benchmarks/exchange_throughput.py [--records N] [--repeat R]
[--shape small|kib|both] [--emit batch|record] [--set key=value ...]`` (``--set`` configures
both TaskManagers, e.g. more credit; ``--set security.ssl.internal.enabled=true`` runs the
flintlock path over mutual TLS, docs/security.md). To compare with another version of
flintlock, run the same script with ``PYTHONPATH`` pointing at that version's source tree (the
spawned producer inherits it).
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing
import pickle
import socket
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from flintlock.common.config import Configuration
from flintlock.common.ids import (
    ChannelIndex,
    IntermediateDataSetId,
    ResultPartitionId,
    SubtaskIndex,
)
from flintlock.common.options.network import FLOATING_BUFFERS_PER_GATE
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
from flintlock.runtime.tls.certificates import new_job_credentials

PID = ResultPartitionId(IntermediateDataSetId("bench"), SubtaskIndex(0))
SEGMENT = 32 * 1024
NETWORK_MEMORY = 64 * 1024 * 1024
LENGTH = struct.Struct("!I")
CHAIN_BATCH = 1024  # records per emit_batch; a task's adaptive batch grows to 4,096


def small(i: int) -> Any:
    return (i, i)


def kib(i: int) -> Any:
    return (i, i.to_bytes(8, "little") * 128)


@dataclass(frozen=True, slots=True)
class Result:
    seconds: float  # first emit to last record received
    wire_bytes: int
    producer_cpu: float  # CPU seconds of the whole producer process (all threads)
    consumer_cpu: float  # CPU seconds of the consumer side of this process

    @property
    def bottleneck_cpu(self) -> float:
        """On two idle cores the busier process bounds the rate: the load-independent figure."""
        return max(self.producer_cpu, self.consumer_cpu)


SHAPES: dict[str, tuple[Callable[[int], Any], int]] = {
    # name: (record factory, records per ~32 KiB batch for the bare reference)
    "(int, int)": (small, 3000),
    "(int, 1 KiB bytes)": (kib, 31),
}


# ------------------------------------------------------------------------------- flintlock


def configuration(options: dict[str, str]) -> Configuration:
    config = Configuration()
    for key, value in options.items():
        config.set_string(key, value)
    return config


def flintlock_producer(
    secret: bytes, pipe: Connection, shape: str, records: int, options: dict[str, str],
    emit_mode: str,
) -> None:
    make = SHAPES[shape][0]
    config = configuration(options)
    pool = NetworkBufferPool.from_memory(NETWORK_MEMORY, SEGMENT)
    partitions = ResultPartitionManager()
    kind = ResultPartitionType.PIPELINED_BOUNDED
    partition = ResultPartition(PID, kind, 1, create_partition_pool(pool, kind, 1, config))
    partitions.register(partition)
    with TcpTransport(config, secret, partitions, pool, "producer").start() as transport:
        pipe.send(transport.address)
        pipe.recv()  # the consumer is connected
        writer = RecordWriter(partition, ForwardSelector(), buffer_timeout_ms=-1)
        pipe.send(time.monotonic())
        cpu_start = time.process_time()
        if emit_mode == "record":
            emit = writer.emit
            for i in range(records):
                emit(make(i))
        else:
            emit_batch = writer.emit_batch
            batch: list[Any] = []
            for i in range(records):
                batch.append(make(i))
                if len(batch) >= CHAIN_BATCH:
                    emit_batch(batch)
                    batch = []
            if batch:
                emit_batch(batch)
        writer.close()
        partition.finish()
        producer_cpu = time.process_time() - cpu_start
        pipe.recv()
    pipe.send(producer_cpu)


def flintlock_run(
    shape: str, records: int, options: dict[str, str], emit_mode: str = "batch"
) -> Result:
    context = multiprocessing.get_context("spawn")
    secret = new_job_credentials(configuration(options))  # the job's TLS material if asked
    parent, child = context.Pipe()
    process = context.Process(
        target=flintlock_producer, args=(secret, child, shape, records, options, emit_mode)
    )
    process.start()
    address = parent.recv()
    pool = NetworkBufferPool.from_memory(NETWORK_MEMORY, SEGMENT)
    config = configuration(options)
    floating = config.get(FLOATING_BUFFERS_PER_GATE)
    with TcpTransport(config, secret, ResultPartitionManager(), pool, "consumer"
                      ).start() as transport:
        gate = SingleInputGate(0, pool.create_buffer_pool(0, floating))
        gate.set_channels([transport.create_remote_channel(gate, ChannelIndex(0), PID, 0, address)])
        gate.request_partitions()
        parent.send("go")
        started = parent.recv()
        cpu_start = time.process_time()
        deserializer = RecordDeserializer()
        received = 0
        while (item := gate.get_next()) is not None:
            buffer = item[1]
            if not buffer.is_event:
                for _ in deserializer.deserialize(buffer.view()):
                    received += 1
            buffer.recycle()
        elapsed = time.monotonic() - started
        consumer_cpu = time.process_time() - cpu_start
        wire_bytes = sum(c.bytes_received for c in transport.statistics().connections)
        gate.close()
    parent.send("done")
    producer_cpu = parent.recv()
    process.join()
    assert received == records, (received, records)
    return Result(elapsed, wire_bytes, producer_cpu, consumer_cpu)


# ------------------------------------------------------------------------------------ bare


def bare_producer(port: int, pipe: Connection, shape: str, records: int) -> None:
    make, batch_size = SHAPES[shape]
    cpu_start = time.process_time()
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    pipe.send(time.monotonic())
    batch: list[Any] = []
    for i in range(records):
        batch.append(make(i))
        if len(batch) >= batch_size:
            data = pickle.dumps(batch, 5)
            sock.sendall(LENGTH.pack(len(data)) + data)
            batch = []
    if batch:
        data = pickle.dumps(batch, 5)
        sock.sendall(LENGTH.pack(len(data)) + data)
    sock.close()
    pipe.send(time.process_time() - cpu_start)


def recv_exactly(sock: socket.socket, size: int) -> bytearray | None:
    data = bytearray(size)
    view = memoryview(data)
    filled = 0
    while filled < size:
        n = sock.recv_into(view[filled:])
        if n == 0:
            return None
        filled += n
    return data


def bare_run(shape: str, records: int, options: dict[str, str]) -> Result:
    context = multiprocessing.get_context("spawn")
    listener = socket.create_server(("127.0.0.1", 0))
    parent, child = context.Pipe()
    port = listener.getsockname()[1]
    process = context.Process(target=bare_producer, args=(port, child, shape, records))
    process.start()
    sock, _ = listener.accept()
    cpu_start = time.process_time()
    started = parent.recv()
    received, wire_bytes = 0, 0
    while (header := recv_exactly(sock, LENGTH.size)) is not None:
        (size,) = LENGTH.unpack(header)
        data = recv_exactly(sock, size)
        assert data is not None
        for _ in pickle.loads(data):
            received += 1
        wire_bytes += LENGTH.size + size
    elapsed = time.monotonic() - started
    consumer_cpu = time.process_time() - cpu_start
    sock.close()
    listener.close()
    producer_cpu = parent.recv()
    process.join()
    assert received == records, (received, records)
    return Result(elapsed, wire_bytes, producer_cpu, consumer_cpu)


def best(
    run: Callable[[str, int, dict[str, str]], Result], shape: str, records: int, repeat: int,
    options: dict[str, str],
) -> Result:
    return min((run(shape, records, options) for _ in range(repeat)), key=lambda r: r.seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a configuration option for both TaskManagers")
    parser.add_argument("--shape", choices=("small", "kib", "both"), default="both",
                        help="only (int, int) records, only (int, 1 KiB bytes), or both")
    parser.add_argument("--emit", choices=("batch", "record"), default="batch",
                        help="hand the writer lists of records, as the operator chain does "
                             "(default), or call emit once per record")
    args = parser.parse_args()
    options = dict(item.split("=", 1) for item in args.set)
    shapes = {"small": ["(int, int)"], "kib": ["(int, 1 KiB bytes)"], "both": list(SHAPES)}
    print("| records | path | records/s | MB/s on the wire | vs bare (wall) "
          "| CPU µs/record (producer / consumer) | vs bare (CPU) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for shape in shapes[args.shape]:
        records = args.records if shape == "(int, int)" else args.records // 10
        bare = best(bare_run, shape, records, args.repeat, options)
        ours = best(functools.partial(flintlock_run, emit_mode=args.emit), shape, records,
                    args.repeat, options)
        for name, result in (("bare", bare), ("flintlock", ours)):
            print(
                f"| {records:,} x {shape} | {name} | {records / result.seconds / 1e6:.2f} M "
                f"| {result.wire_bytes / result.seconds / 1e6:.0f} "
                f"| {bare.seconds / result.seconds:.0%} "
                f"| {result.producer_cpu / records * 1e6:.2f} / "
                f"{result.consumer_cpu / records * 1e6:.2f} "
                f"| {bare.bottleneck_cpu / result.bottleneck_cpu:.0%} |"
            )


if __name__ == "__main__":
    main()
