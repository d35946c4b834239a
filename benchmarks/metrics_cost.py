"""What metrics cost on the hot path: a user's ``counter.inc()`` in a map function against a
bare attribute increment (``self.n += 1``) in the same function, and the operator-level
record counts of an operator chain (a counting chained edge, per batch).

What: ``MapFunction``s, each called once per record the way the map operator calls it (a
list comprehension over a batch): one that only returns its record, one that also does
``self.n += 1``, and ones that also call ``self.seen.inc()`` / ``inc(2)`` on the ``Counter``
from ``RuntimeContext.get_metrics_group()`` (made by the real ``RuntimeContextImpl``): the C
accelerator's type where it was built (``common/_speedups.c``). For reference, the same
``inc()`` on its Python twin (``PythonCounter``, what runs where no C compiler built the
accelerator) and ``meter.mark_event()``. The difference to the bare function is each update's
cost (docs/metrics.md, "Cost on the hot path").

Operator counts: ``CountingChainedOutput.collect_batch`` (tasks/operator_io.py: add the
batch's length, call the successor's ``process_batch``) against the successor's bound
``process_batch`` called directly, as a chain without operator counts would; per batch, and per
record at batch sizes 1, 100 and 1,000 (the stream task's batches are up to 4,096 records).

How: CPU time (``time.process_time``) over ``--records`` records per repeat in 1,000-record
batches; the median of ``--repeat`` repeats; nanoseconds per record.

    .venv/bin/python -m benchmarks.metrics_cost [--records 1000000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from flintlock.datastream.functions import MapFunction
from flintlock.runtime.metrics.metrics import PythonCounter
from flintlock.runtime.tasks.contexts import RuntimeContextImpl
from flintlock.runtime.tasks.operator import OperatorContext
from flintlock.runtime.tasks.operator_io import CountingChainedOutput


class _NoTimers:
    def now_ms(self) -> int:
        return 0

    def schedule(self, timestamp_ms: int, callback: Callable[[int], None]) -> None:
        raise NotImplementedError


class Bare(MapFunction):
    def map(self, value: int) -> int:
        return value


class Attribute(MapFunction):
    def __init__(self) -> None:
        self.n = 0

    def map(self, value: int) -> int:
        self.n += 1
        return value


class Counted(MapFunction):
    def open(self, runtime_context: RuntimeContextImpl) -> None:  # type: ignore[override]
        self.seen = runtime_context.get_metrics_group().counter("seen")

    def map(self, value: int) -> int:
        self.seen.inc()
        return value


class Marked(MapFunction):
    def open(self, runtime_context: RuntimeContextImpl) -> None:  # type: ignore[override]
        self.events = runtime_context.get_metrics_group().meter("events")

    def map(self, value: int) -> int:
        self.events.mark_event()
        return value


class CountedBy2(Counted):
    def map(self, value: int) -> int:
        self.seen.inc(2)
        return value


class PythonCounted(MapFunction):
    """The Python twin of the counter (``PythonCounter``), as where no C compiler built the
    accelerator."""

    def __init__(self) -> None:
        self.seen = PythonCounter()

    def map(self, value: int) -> int:
        self.seen.inc()
        return value


class _Successor:
    """A chained successor that does nothing with its batch."""

    def process_batch(self, records: list[int]) -> None:
        pass

    def process_watermark(self, timestamp: int) -> None:
        pass

    def process_watermark_status(self, idle: bool) -> None:
        pass


def _ns_per_batch(collect: Callable[[list[int]], None], size: int, repeat: int) -> float:
    batch = list(range(size))
    calls = 200_000
    samples = []
    for _ in range(repeat):
        started = time.process_time()
        for _ in range(calls // 1000):
            for _ in range(1000):
                collect(batch)
        samples.append((time.process_time() - started) / calls * 1e9)
    return statistics.median(samples)


def _edge_costs(repeat: int) -> None:
    successor = _Successor()
    direct = _ns_per_batch(successor.process_batch, 100, repeat)
    counted = _ns_per_batch(CountingChainedOutput(successor).collect_batch, 100, repeat)
    extra = counted - direct
    print(f"\n{'chained edge':<32}{'ns/batch':>10}")
    print(f"{'process_batch (no counts)':<32}{direct:>10.1f}")
    print(f"{'counting edge':<32}{counted:>10.1f}{extra:>+11.1f}")
    for size in (1, 100, 1000):
        print(f"{f'  per record, batches of {size}':<32}{extra / size:>10.2f}")


def _context() -> RuntimeContextImpl:
    return RuntimeContextImpl(OperatorContext(
        task_name="Map", operator_name="Map", operator_id="op", subtask_index=0,
        parallelism=1, max_parallelism=128, attempt_number=0, timers=_NoTimers()))


def _ns_per_record(function: MapFunction, records: int, repeat: int) -> float:
    function.open(_context())  # type: ignore[arg-type]
    call = function.map
    batch = list(range(1000))
    samples = []
    for _ in range(repeat):
        started = time.process_time()
        for _ in range(records // len(batch)):
            [call(value) for value in batch]
        samples.append((time.process_time() - started) / records * 1e9)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    bare = _ns_per_record(Bare(), args.records, args.repeat)
    print(f"{'map function':<32}{'ns/record':>10}{'over bare':>11}")
    print(f"{'return value (bare)':<32}{bare:>10.1f}{'':>11}")
    for label, function in (("self.n += 1", Attribute()), ("counter.inc()", Counted()),
                            ("counter.inc(2)", CountedBy2()),
                            ("PythonCounter.inc()", PythonCounted()),
                            ("meter.mark_event()", Marked())):
        cost = _ns_per_record(function, args.records, args.repeat)
        print(f"{label:<32}{cost:>10.1f}{cost - bare:>+11.1f}")
    _edge_costs(args.repeat)


if __name__ == "__main__":
    main()
