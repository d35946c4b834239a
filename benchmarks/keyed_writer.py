"""CPU per record of a key-group-hashing ``RecordWriter``, by number of distinct keys.

One process, no network: a ``RecordWriter`` with a ``KeyGroupSelector`` (max parallelism 128,
two channels) is handed batches of 1,024 ``(key, 1)`` records, keys cycling through
``0 .. keys-1``, as the operator chain hands them over; the partition recycles each finished
buffer at once. What it shows: the writer caches key → channel for up to 65,536 keys, so
beyond that every record pays the key-group hash (``KeyGroupSelector.channel_for_key``).

    .venv/bin/python benchmarks/keyed_writer.py [--records N] [--keys 1000 100000 ...]

To compare with another version, run it with ``PYTHONPATH`` pointing at that source tree.
"""

from __future__ import annotations

import argparse
import time

from flintlock.common.config import Configuration
from flintlock.common.ids import IntermediateDataSetId, ResultPartitionId, SubtaskIndex
from flintlock.runtime.network.buffer import Buffer, NetworkBufferPool
from flintlock.runtime.network.channel_selector import KeyGroupSelector
from flintlock.runtime.network.partition import (
    ResultPartition,
    ResultPartitionType,
    create_partition_pool,
)
from flintlock.runtime.network.writer import RecordWriter

BATCH = 1024


def cpu_per_record(keys: int, records: int) -> float:
    """µs of CPU per record for one pass of ``records`` records over ``keys`` keys."""
    pool = NetworkBufferPool.from_memory(64 * 2**20, 32 * 1024)
    kind = ResultPartitionType.PIPELINED_BOUNDED
    partition = ResultPartition(
        ResultPartitionId(IntermediateDataSetId("bench"), SubtaskIndex(0)), kind, 2,
        create_partition_pool(pool, kind, 2, Configuration()))

    def add_buffer(channel: int, buffer: Buffer) -> None:
        buffer.recycle()  # no consumer: a finished buffer is free again at once

    partition.add_buffer = add_buffer  # type: ignore[method-assign]
    writer = RecordWriter(partition, KeyGroupSelector(lambda r: r[0], 128), buffer_timeout_ms=-1)
    batches = [[(i % keys, 1) for i in range(start, min(records, start + BATCH))]
               for start in range(0, records, BATCH)]
    started = time.process_time()
    for batch in batches:
        writer.emit_batch(batch)
    return (time.process_time() - started) / records * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, nargs="+", default=[1_000, 50_000, 100_000,
                                                                  1_000_000])
    parser.add_argument("--repeat", type=int, default=3, help="best of this many passes")
    args = parser.parse_args()
    print(f"| distinct keys | CPU µs/record (best of {args.repeat}) |")
    print("|---:|---:|")
    for keys in args.keys:
        best = min(cpu_per_record(keys, args.records) for _ in range(args.repeat))
        print(f"| {keys:,} | {best:.2f} |")


if __name__ == "__main__":
    main()
