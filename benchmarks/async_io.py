"""Async I/O against a blocking ``map`` (issue 18): records/s when each record needs a call to
a service that answers after 10 ms.

The service is ``flintlock.testing.slow_service.SlowService`` on 127.0.0.1 (an asyncio server
in this process; each answer waits ``--latency-ms`` without holding up the others). Both jobs
read ``range(N)`` from a collection and collect the answers with ``execute_and_collect``:

* ``blocking``: ``map`` with a ``BlockingClient`` (one socket per subtask, one request at a
  time): at most 1 / latency records/s per subtask;
* ``async``: ``AsyncDataStream.unordered_wait`` (and ``ordered_wait``) with an
  ``AsyncFunction`` whose ``AsyncClient`` pipelines requests on one connection, ``capacity``
  in flight per subtask.

Each job runs ``--repeat`` times; the table shows the median rate from submission to the last
record (start-up included; the record counts are chosen so each run takes a few seconds).
TaskManagers run as threads of this process by default, on embedded Spark with ``--spark``.

    .venv/bin/python -m benchmarks.async_io [--latency-ms 10] [--parallelism 1]
        [--capacity 100] [--repeat 3] [--spark]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from typing import Any

from flintlock.common import Time, Types
from flintlock.datastream import (
    AsyncDataStream,
    AsyncFunction,
    MapFunction,
    StreamExecutionEnvironment,
)
from flintlock.testing.slow_service import AsyncClient, BlockingClient, SlowService


class BlockingLookup(MapFunction):
    def __init__(self, address: tuple[str, int]) -> None:
        self.client = BlockingClient(address)

    def map(self, value: Any) -> Any:
        return self.client.query(str(value))


class AsyncLookup(AsyncFunction):
    def __init__(self, address: tuple[str, int]) -> None:
        self.address = address

    def open(self, runtime_context: Any) -> None:
        self.client = AsyncClient(self.address)

    async def async_invoke(self, value: Any) -> list[Any]:
        return [await self.client.query(str(value))]


def _env(parallelism: int) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    return env


def run(kind: str, records: int, address: tuple[str, int], parallelism: int,
        capacity: int) -> float:
    env = _env(parallelism)
    source = env.from_collection(list(range(records)))
    if kind == "blocking":
        stream = source.map(BlockingLookup(address), Types.STRING())
    else:
        wait = AsyncDataStream.ordered_wait if kind == "async-ordered" else (
            AsyncDataStream.unordered_wait)
        stream = wait(source, AsyncLookup(address), Time.seconds(60), capacity, Types.STRING())
    started = time.perf_counter()
    out = list(stream.execute_and_collect())
    elapsed = time.perf_counter() - started
    if len(out) != records:
        raise RuntimeError(f"{kind}: {len(out)} results for {records} records")
    return records / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, default=10.0)
    parser.add_argument("--parallelism", type=int, default=1)
    parser.add_argument("--capacity", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--spark", action="store_true", help="TaskManagers on embedded Spark")
    args = parser.parse_args()
    if not args.spark:
        import pytest

        from flintlock.testing.executor import use_thread_executor

        use_thread_executor(pytest.MonkeyPatch())
    tempfile.tempdir = tempfile.mkdtemp(prefix="async-io-bench-")
    per_subtask = 1000.0 / args.latency_ms
    sizes = {"blocking": int(per_subtask * args.parallelism * 4),
             "async-unordered": 20_000 * args.parallelism,
             "async-ordered": 20_000 * args.parallelism}
    with SlowService(latency_s=args.latency_ms / 1000) as service:
        print(f"latency {args.latency_ms} ms, parallelism {args.parallelism}, "
              f"capacity {args.capacity}, {'spark' if args.spark else 'threads'}")
        rates = {}
        for kind, records in sizes.items():
            runs = [run(kind, records, service.address, args.parallelism, args.capacity)
                    for _ in range(args.repeat)]
            rates[kind] = statistics.median(runs)
            print(f"{kind:16s} {records:7d} records  {rates[kind]:9.0f} records/s  "
                  f"(runs: {', '.join(f'{r:.0f}' for r in runs)})")
        for kind in ("async-unordered", "async-ordered"):
            print(f"{kind} / blocking: {rates[kind] / rates['blocking']:.1f}x")


if __name__ == "__main__":
    main()
