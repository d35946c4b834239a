"""The window and timer counts (``benchmarks/ported``): CPU cost per record of each stage, next
to the bare loop's (issue 31).

What: the ported ``window_count`` and ``timer_count`` jobs as the API builds them (their own
specs, functions and key selectors, with declared types and without), taken apart into the
runtime pieces a record passes — the source operator polling ``NumberSequenceSource``; the
``map`` to ``(key, event time)``; the timestamp assigner operator (timestamps and the
watermark generator); the keyed writer with two channels handing each channel its stamped run
(the encode inside); the encode alone and the decode of one run; the window operator (resp.
the ``KeyedProcessFunction``'s operator) fed batches in event-time order with the watermark
the job's strategy would give after each batch, so windows fire (timers fire at the end) and
the firing is in the cost. Each stage is timed alone in one process on 1,000-record batches
(CPU ns per record, median and min of ``--repeat`` runs of ``--records`` records). The bare
references are ``benchmarks/ported/bare.py``'s loops over the same functions, at module level
and inside a function. Everything runs under the cycle-collector settings of a TaskManager
process on Spark (``spark/collector.py``: what exists frozen, young collections after 50,000
allocations); ``--collector default`` keeps CPython's (700), as runs before 2026-11-29 06:50
UTC did, which charged each stage the collections a job does not make.

    .venv/bin/python -m benchmarks.event_time_stages [--records 200000] [--repeat 5]
        [--only window_count timer_count] [--collector tuned|default]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from collections.abc import Callable
from typing import Any

from benchmarks.local_exchange import MAX_PARALLELISM, NullPartition
from benchmarks.ported import bare, flintlock_jobs
from benchmarks.ported import functions as f
from flintlock.common.config import Configuration
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.connectors.number_seq import split_range
from flintlock.runtime.network.channel_selector import KeyGroupSelector
from flintlock.runtime.network.event_time import (
    RunDetectingSerializer,
    StampedRun,
    TimestampedBatch,
)
from flintlock.runtime.network.serialization import PickleBatchSerializer
from flintlock.runtime.network.typed_serializer import TypedBatchSerializer
from flintlock.runtime.network.writer import RecordWriter
from flintlock.runtime.state.factory import create_keyed_state_backend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.operator import OperatorStateBackend
from flintlock.runtime.tasks.operator import StreamOperator
from flintlock.spark.collector import tuned_collector
from flintlock.testing.operators import ManualTimers, open_operator

BATCH = 1_000
Cost = tuple[float, float]


class Keep:
    """An output that keeps the last batch (the next stage's input)."""

    def __init__(self) -> None:
        self.last: list[Any] = []

    def collect_batch(self, records: list[Any]) -> None:
        self.last = records

    def emit_watermark(self, timestamp: int) -> None:
        pass

    def emit_watermark_status(self, idle: bool) -> None:
        pass


def _transformations(job: str, typed: bool) -> list[Any]:
    env = StreamExecutionEnvironment.get_execution_environment()
    builder = {"window_count": flintlock_jobs.window_count,
               "timer_count": flintlock_jobs.timer_count}[job]
    builder(env, 1_000, typed)
    return list(env._transformations)


def _open(transformation: Any, keyed: bool) -> tuple[StreamOperator, Keep]:
    out = Keep()
    context: dict[str, Any] = {"timers": ManualTimers(10**12),
                               "operator_backend": OperatorStateBackend()}
    if keyed:
        context["keyed_backend"] = create_keyed_state_backend(
            Configuration(), KeyGroupRange.for_subtask(MAX_PARALLELISM, 1, 0), MAX_PARALLELISM)
        context["key_selectors"] = (transformation.inputs[0][0].partitioner.key_selector,)
        context["max_parallelism"] = MAX_PARALLELISM
    operator, _ = open_operator(transformation.spec, output=out, **context)
    return operator, out


def _timed(step: Callable[[int], object], records: int, repeat: int) -> Cost:
    """CPU ns per record of ``step(i)``, which handles the i-th batch of ``BATCH`` records."""
    batches = max(1, records // BATCH)
    runs = []
    for _ in range(repeat):
        started = time.process_time()
        for i in range(batches):
            step(i)
        runs.append((time.process_time() - started) / (batches * BATCH) * 1e9)
    return statistics.median(runs), min(runs)


def stage_costs(job: str, typed: bool, records: int, repeat: int) -> dict[str, Cost]:
    source_t, map_t, stamps_t, keyed_t = _transformations(job, typed)
    source, _ = _open(source_t, keyed=False)
    source.add_splits(split_range(0, 2**62, 1))  # type: ignore[attr-defined]
    mapper, mapped = _open(map_t, keyed=False)
    stamper, stamped = _open(stamps_t, keyed=False)
    key = keyed_t.inputs[0][0].partitioner.key_selector
    serializer = (TypedBatchSerializer(map_t.output_type, "Map") if typed
                  else PickleBatchSerializer())
    writer = RecordWriter(NullPartition(), KeyGroupSelector(key, MAX_PARALLELISM), serializer,
                          buffer_timeout_ms=-1)
    costs: dict[str, Cost] = {}
    costs["source: reader poll -> batch"] = _timed(
        lambda i: source.emit_next(BATCH), records, repeat)  # type: ignore[attr-defined]
    # Event-time order: the map's input is the batch of numbers starting at i * BATCH.
    numbers = [list(range(i * BATCH, (i + 1) * BATCH)) for i in range(records // BATCH)]
    costs["map operator (with the user call)"] = _timed(
        lambda i: mapper.process_batch(numbers[i]), records, repeat)
    events = _outputs(mapper, mapped, numbers)
    costs["timestamps operator (assigner call, watermark generator)"] = _timed(
        lambda i: stamper.process_batch(events[i]), records, repeat)
    runs = _outputs(stamper, stamped, events)
    costs["keyed writer, 2 channels (key call, channel, stamped runs, encode)"] = _timed(
        lambda i: writer.emit_stamped_batch(runs[i], runs[i].timestamps), records, repeat)
    costs["encode one run (typed codec / pickle)"] = _timed(
        lambda i: serializer.dumps([StampedRun(list(runs[i]), runs[i].timestamps)]),
        records, repeat)
    data = [bytes(serializer.dumps([StampedRun(list(run), run.timestamps)])) for run in runs]
    decoder = RunDetectingSerializer()
    costs["decode one run"] = _timed(lambda i: decoder.loads(data[i]), records, repeat)
    name = ("window operator (grouping, state, timers, firing)" if job == "window_count"
            else "keyed process operator (state, timers)")
    costs[name] = _keyed_cost(keyed_t, runs, records, repeat)
    return costs


def _outputs(operator: StreamOperator, kept: Keep, batches: list[Any]) -> list[Any]:
    """What ``operator`` gives for each of ``batches``: the next stage's input."""
    outputs = []
    for batch in batches:
        operator.process_batch(batch)
        outputs.append(kept.last)
    return outputs


def _keyed_cost(keyed_t: Any, runs: list[TimestampedBatch], records: int, repeat: int
                ) -> Cost:
    """The keyed operator on the stamped batches in order, each followed by the watermark
    the job's bounded-out-of-orderness strategy offers then; a new operator per repeat."""
    watermarks = [max(run.timestamps) - f.OUT_OF_ORDERNESS_MS - 1 for run in runs]
    results = []
    for _ in range(repeat):
        operator, _ = _open(keyed_t, keyed=True)
        started = time.process_time()
        for run, watermark in zip(runs, watermarks, strict=True):
            operator.process_batch(TimestampedBatch(run, run.timestamps))
            operator.process_watermark(watermark)
        operator.process_watermark(2**63 - 1)
        results.append((time.process_time() - started) / (len(runs) * BATCH) * 1e9)
    return statistics.median(results), min(results)


def bare_costs(job: str, records: int, repeat: int) -> dict[str, Cost]:
    costs = {}
    for scope in bare.SCOPES:
        runs = []
        for _ in range(repeat):
            started = time.process_time()
            bare.run(job, scope, records, "", "")
            runs.append((time.process_time() - started) / records * 1e9)
        costs[scope] = statistics.median(runs), min(runs)
    return costs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", nargs="+", default=["window_count", "timer_count"],
                        choices=["window_count", "timer_count"])
    parser.add_argument("--collector", choices=("tuned", "default"), default="tuned")
    args = parser.parse_args(argv)
    with (tuned_collector(Configuration()) if args.collector == "tuned"
          else contextlib.nullcontext()):
        _report(args)
    return 0


def _report(args: argparse.Namespace) -> None:
    for job in args.only:
        declared = stage_costs(job, True, args.records, args.repeat)
        undeclared = stage_costs(job, False, args.records, args.repeat)
        loops = bare_costs(job, args.records, args.repeat)
        print(f"\n{job}: CPU ns per record, median (min) of {args.repeat} x "
              f"{args.records:,} records\n")
        print("| stage | declared | undeclared |\n|---|---:|---:|")
        for stage, cost in declared.items():
            other = undeclared[stage]
            print(f"| {stage} | {cost[0]:.0f} ({cost[1]:.0f}) | "
                  f"{other[0]:.0f} ({other[1]:.0f}) |")
        path = [name for name in declared if not name.startswith("encode")]
        total_d = sum(declared[name][0] for name in path)
        total_u = sum(undeclared[name][0] for name in path)
        print(f"| sum of the stages (writer includes the encode) | {total_d:.0f} | "
              f"{total_u:.0f} |")
        for scope, cost in loops.items():
            print(f"| bare loop, {scope} scope (whole job) | {cost[0]:.0f} ({cost[1]:.0f}) | |")


if __name__ == "__main__":
    raise SystemExit(main())
