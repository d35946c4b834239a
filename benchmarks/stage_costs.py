"""Keyed running count: the CPU cost per record of each stage, next to the bare loop's.

What: issue 20's job — ``NumberSequenceSource(0, N-1)`` → ``map(i -> (i % 100, 1))``
(``TUPLE([LONG, LONG])``) → ``key_by(t[0])`` (``LONG``) → ``reduce`` (sum) → ``filter`` (final
counts) → ``execute_and_collect()`` — taken apart into the runtime pieces it runs, each timed
alone with the job's own functions: the source operator polling its reader; the map, reduce
(heap keyed backend) and filter operators from ``create_operator`` with an ``OperatorContext``;
the keyed record writer with one and with two channels into a partition that recycles its
buffers; the typed and the pickle codec; a local exchange (writer → partition → local channels
→ gate → deserializer). End to end runs the job with TaskManagers as threads of this process
(``ThreadExecutor``, no Spark; at parallelism 2 two TaskManagers, so half of the keyed
exchange crosses TCP on loopback).

The bare reference is the issue's loop run as module-level code (``exec``: globals), cut the
same way — an empty loop over ``range``; + the map call; + the key call; + dict get/set and the
reduce call; + the filter call (the whole loop) — so the differences are each stage's bare
cost. The same loop inside a function (locals) is printed as a stricter reference.

How: CPU time (``time.process_time``) over ``--records`` records per repeat in 1,000-record
batches (a task hands its chain up to 4,096); median (min) of ``--repeat`` repeats. End to end
is marginal CPU per record between jobs of N and 5N records (N = ``--records``; start-up
cancels), all threads of the process counted, as on one core. End-to-end jobs run under the
cycle-collector settings a TaskManager process uses on Spark
(``spark/collector.py``; ``--collector default`` keeps CPython's), and the time
spent in collections during each job (``gc.callbacks``) is a row of its own.

How to read: rows starting with "=" are differences of measured calls, the recipe in the row.
"declared - bare" is what flintlock adds to the bare loop per stage. "unattributed" is end to
end minus the sum of the stages: the task loop, buffer hand-offs between threads, TCP at P=2.
At P=1 the keyed writer has one channel and calls no key selector: its two key rows drop out.

    .venv/bin/python -m benchmarks.stage_costs [--records 200000] [--repeat 5]
        [--collector tuned|default]

(docs/benchmarks.md quotes a run with ``--records 500000``: steadier end-to-end figures.)
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import statistics
import time
import timeit
from collections.abc import Callable
from typing import Any

import flintlock.datastream.stream_execution_environment as environment
from benchmarks.local_exchange import MAX_PARALLELISM, NullPartition
from flintlock.common import WatermarkStrategy, ids
from flintlock.common.config import Configuration
from flintlock.common.operator_spec import OperatorKind, OperatorSpec
from flintlock.common.typeinfo import Types
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.connectors.number_seq import NumberSequenceSource, split_range
from flintlock.datastream.functions import wrap_filter, wrap_key_selector, wrap_map, wrap_reduce
from flintlock.runtime.network import partition as partitions
from flintlock.runtime.network.buffer import NetworkBufferPool
from flintlock.runtime.network.channel_selector import KeyGroupSelector
from flintlock.runtime.network.event_time import RunDetectingSerializer
from flintlock.runtime.network.gate import SingleInputGate
from flintlock.runtime.network.local_channel import LocalInputChannel
from flintlock.runtime.network.request_backoff import RequestBackoff
from flintlock.runtime.network.serialization import PickleBatchSerializer, RecordDeserializer
from flintlock.runtime.network.typed_serializer import TypedBatchSerializer
from flintlock.runtime.network.writer import RecordWriter
from flintlock.runtime.state.factory import create_keyed_state_backend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.operator import OperatorStateBackend
from flintlock.runtime.tasks.operator import OperatorContext, StreamOperator
from flintlock.runtime.tasks.operator_factory import create_operator
from flintlock.spark.collector import tuned_collector
from flintlock.testing.exchange import timer_scheduler
from flintlock.testing.executor import ThreadExecutor

KEYS = 100
BATCH = 1_000
PAIR = Types.TUPLE([Types.LONG(), Types.LONG()])
Cost = tuple[float, float]
"""(median, min) CPU ns per record."""

BARE_FUNCTIONS = """
def f_map(i): return (i % K, 1)
def f_key(t): return t[0]
def f_red(a, b): return (a[0], a[1] + b[1])
def f_fil(t): return t[1] == N // K
"""
BARE_STEPS = {  # cumulative: each loop adds one stage to the one before
    "loop": "for i in range(N):\n    pass\n",
    "map": "for i in range(N):\n    t = f_map(i)\n",
    "key": "for i in range(N):\n    t = f_map(i); k = f_key(t)\n",
    "reduce": "state = {}\nfor i in range(N):\n    t = f_map(i); k = f_key(t); acc = state.get(k)\n"
              "    acc = t if acc is None else f_red(acc, t)\n    state[k] = acc\n",
    "filter": "state = {}; out = []\nfor i in range(N):\n"  # the loop, verbatim
              "    t = f_map(i); k = f_key(t); acc = state.get(k)\n"
              "    acc = t if acc is None else f_red(acc, t)\n    state[k] = acc\n"
              "    if f_fil(acc): out.append(acc)\n",
}
IN_FUNCTION = "def run():\n" + "".join(
    f"    {line}\n" for line in BARE_STEPS["filter"].splitlines()) + "run()\n"


def job_functions(n: int) -> tuple[Callable[..., Any], ...]:
    """The job's map, key, reduce and filter functions, written as a PyFlink user writes them."""
    keys = KEYS
    return ((lambda i: (i % keys, 1)), (lambda t: t[0]),
            (lambda a, b: (a[0], a[1] + b[1])), (lambda t: t[1] == n // keys))


@contextlib.contextmanager
def captured_stream_graphs(threads: bool = False) -> Any:
    """Inside the block, every ``StreamExecutionEnvironment.get_stream_graph`` call of this
    process appends its graph to the list this yields (a Table/SQL job's planned operators, for
    a stage script to take apart); with ``threads``, jobs run on TaskManager threads of this
    process. Both are put back on exit. The caller owns the list; one block at a time."""
    captured: list[Any] = []
    cls = environment.StreamExecutionEnvironment
    original, loader = cls.get_stream_graph, environment.load_executor

    def capture(self: Any, *args: Any, **kwargs: Any) -> Any:
        graph = original(self, *args, **kwargs)
        captured.append(graph)
        return graph

    cls.get_stream_graph = capture  # type: ignore[method-assign]
    if threads:
        executor = ThreadExecutor()
        environment.load_executor = lambda: executor
    try:
        yield captured
    finally:
        cls.get_stream_graph = original  # type: ignore[method-assign]
        environment.load_executor = loader


def timed(step: Callable[[], object], records: int, repeat: int) -> Cost:
    """CPU ns per record of ``step``, which handles one batch, over ``records`` records."""
    number = max(1, records // BATCH)
    runs = timeit.repeat(step, number=number, repeat=repeat, timer=time.process_time)
    per_record = [run / (number * BATCH) * 1e9 for run in runs]
    return statistics.median(per_record), min(per_record)


def total(*costs: Cost) -> Cost:
    return sum(c[0] for c in costs), sum(c[1] for c in costs)


def minus(a: Cost, *others: Cost) -> Cost:
    b = total(*others)
    return a[0] - b[0], a[1] - b[1]


class Keep:
    """A collecting output: keeps the last batch, which feeds the next stage."""

    def __init__(self) -> None:
        self.last: list[Any] = []

    def collect_batch(self, records: list[Any]) -> None:
        self.last = records

    def emit_watermark(self, timestamp_or_idle: Any) -> None:
        """No watermarks here (``no_watermarks()``)."""

    emit_watermark_status = emit_watermark


def set_up(spec: OperatorSpec, key: Any = None) -> tuple[StreamOperator, Keep]:
    """The runtime operator for ``spec``, set up and opened as a chain does it (keyed: with
    a heap backend owning every key group and ``key`` as its key selector, or a tuple of one
    per input)."""
    operator = create_operator(spec)
    backend = None
    if key is not None:
        backend = create_keyed_state_backend(
            Configuration(), KeyGroupRange.for_subtask(MAX_PARALLELISM, 1, 0), MAX_PARALLELISM)
    context = OperatorContext(
        "stage costs", spec.kind.name, "op", 0, 1, MAX_PARALLELISM, 0, timers=None,  # type: ignore[arg-type]
        keyed_backend=backend, operator_backend=OperatorStateBackend(),
        key_selectors=key if type(key) is tuple else (key,) if key is not None else ())
    out = Keep()
    operator.setup(context, out)
    operator.initialize_state(None)
    operator.open()
    return operator, out


class OneChannel(NullPartition):
    """The writer's partition at parallelism 1 (buffers recycled at once, as in the parent)."""

    num_subpartitions = 1


def keyed_writer(partition: Any, serializer: Any, key: Any) -> RecordWriter:
    return RecordWriter(partition, KeyGroupSelector(key.get_key, MAX_PARALLELISM), serializer,
                        buffer_timeout_ms=-1)


def local_exchange(serializer: Any, key: Any, batch: list[Any]) -> Callable[[], None]:
    """One batch through writer → partition → two local channels → one gate → deserializers,
    drained at once (one thread: no hand-off between threads is measured)."""
    network = NetworkBufferPool.from_memory(16 * 1024 * 1024, 32 * 1024)
    manager = partitions.ResultPartitionManager()
    partition_id = ids.ResultPartitionId(ids.IntermediateDataSetId("costs"), ids.SubtaskIndex(0))
    kind = partitions.ResultPartitionType.PIPELINED_BOUNDED
    pool = partitions.create_partition_pool(network, kind, 2, Configuration())
    partition = partitions.ResultPartition(partition_id, kind, 2, pool)
    manager.register(partition)
    gate = SingleInputGate(0)
    gate.set_channels([LocalInputChannel(gate, ids.ChannelIndex(c), partition_id, c, manager,
                                         RequestBackoff(100, 10_000), timer_scheduler)
                       for c in range(2)])
    writer = keyed_writer(partition, serializer, key)
    readers = [RecordDeserializer(RunDetectingSerializer()) for _ in range(2)]

    def step() -> None:
        writer.emit_batch(batch)
        while (item := gate.poll_next()) is not None:
            channel, buffer = item
            readers[channel].deserialize(buffer.view())
            buffer.recycle()
    return step


def operator_costs(records: int, repeat: int) -> tuple[dict[str, Cost], list[Any], Any]:
    """Source, map, key call, reduce and filter; also a mapped batch and the key selector."""
    f_map, f_key, f_red, f_fil = job_functions(records)
    key = wrap_key_selector(f_key)
    source, sourced = set_up(OperatorSpec(
        OperatorKind.SOURCE, source=NumberSequenceSource(0, 2**62),
        watermark_strategy=WatermarkStrategy.no_watermarks(), output_type=Types.LONG()))
    source.add_splits(split_range(0, 2**62, 1))  # type: ignore[attr-defined]
    mapper, mapped = set_up(OperatorSpec(OperatorKind.MAP, wrap_map(f_map), PAIR))
    reducer, reduced = set_up(OperatorSpec(OperatorKind.REDUCE, wrap_reduce(f_red), PAIR,
                                           keyed=True), key)
    filterer, _ = set_up(OperatorSpec(OperatorKind.FILTER, wrap_filter(f_fil), PAIR))
    source.emit_next(BATCH)  # type: ignore[attr-defined]
    mapper.process_batch(sourced.last)
    batch = mapped.last
    reducer.process_batch(batch)

    def key_calls() -> None:
        for record in batch:
            f_key(record)

    def loop_only() -> None:
        for _ in batch:
            pass

    return {
        "source": timed(lambda: source.emit_next(BATCH), records, repeat),  # type: ignore[attr-defined]
        "map": timed(lambda: mapper.process_batch(sourced.last), records, repeat),
        "key": minus(timed(key_calls, records, repeat), timed(loop_only, records, repeat)),
        "reduce": timed(lambda: reducer.process_batch(batch), records, repeat),
        "filter": timed(lambda: filterer.process_batch(reduced.last), records, repeat),
    }, batch, key


def codec_costs(serializer: Any, key: Any, batch: list[Any], records: int, repeat: int
                ) -> dict[str, Cost]:
    """Encode, decode, the keyed writer with one and two channels, the local exchange."""
    data = bytes(serializer.dumps(batch))
    decoder = RunDetectingSerializer()
    one = keyed_writer(OneChannel(), serializer, key).emit_batch
    two = keyed_writer(NullPartition(), serializer, key).emit_batch
    return {
        "encode": timed(lambda: serializer.dumps(batch), records, repeat),
        "decode": timed(lambda: decoder.loads(data), records, repeat),
        "writer1": timed(lambda: one(batch), records, repeat),
        "writer2": timed(lambda: two(batch), records, repeat),
        "exchange": timed(local_exchange(serializer, key, batch), records, repeat),
    }


def bare_costs(records: int, repeat: int) -> dict[str, Cost]:
    """The module-level loops of ``BARE_STEPS`` and the in-function loop, ns per record."""
    costs = {}
    for name, body in {**BARE_STEPS, "function": IN_FUNCTION}.items():
        code = compile(BARE_FUNCTIONS + body, f"<bare {name}>", "exec")
        runs = []
        for _ in range(repeat):
            namespace = {"K": KEYS, "N": records}
            started = time.process_time()
            exec(code, namespace)
            runs.append((time.process_time() - started) / records * 1e9)
        costs[name] = statistics.median(runs), min(runs)
    return costs


class CollectorClock:
    """Wall seconds spent in the cycle collector while it is installed (any thread)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started

    @contextlib.contextmanager
    def installed(self) -> Any:
        gc.callbacks.append(self)
        try:
            yield self
        finally:
            gc.callbacks.remove(self)


COLLECTOR: dict[str, Callable[[], contextlib.AbstractContextManager[Any]]] = {
    "tuned": lambda: tuned_collector(Configuration()), "default": contextlib.nullcontext}
"""The end-to-end jobs' cycle-collector settings: a TaskManager's, or CPython's defaults."""
collector_policy = "tuned"


def run_job(n: int, parallelism: int, declared: bool, collect_all: bool = False
            ) -> tuple[float, float]:
    """(CPU seconds of the whole job, every thread of this process, through the public API;
    seconds of it in the cycle collector)."""
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    stream = env.from_source(NumberSequenceSource(0, n - 1), WatermarkStrategy.no_watermarks(),
                             "seq")
    if not collect_all:
        f_map, f_key, f_red, f_fil = job_functions(n)
        typed = {"output_type": PAIR} if declared else {}
        keyed = {"key_type": Types.LONG()} if declared else {}
        stream = stream.map(f_map, **typed).key_by(f_key, **keyed).reduce(f_red).filter(f_fil)
    with COLLECTOR[collector_policy](), CollectorClock().installed() as collector:
        started = time.process_time()
        results = stream.execute_and_collect()
        assert not isinstance(results, list)
        with results:
            count = sum(1 for _ in results)
        cpu = time.process_time() - started
    assert count == (n if collect_all else KEYS), count
    return cpu, collector.seconds


def marginal(records: int, repeat: int, **job: Any) -> tuple[Cost, Cost]:
    """CPU ns per record between jobs of N and 5N records (start-up cancels), and the
    collector's part of it."""
    runs, collections = [], []
    for _ in range(repeat):
        small, large = run_job(records, **job), run_job(5 * records, **job)
        runs.append((large[0] - small[0]) / (4 * records) * 1e9)
        collections.append((large[1] - small[1]) / (4 * records) * 1e9)
    return ((statistics.median(runs), min(runs)),
            (statistics.median(collections), min(collections)))


def stage_rows(c: dict[str, Cost], bare: dict[str, Cost], collect: Cost,
               end: dict[int, tuple[Cost, Cost]], records: int
               ) -> list[tuple[str, Cost, Cost]]:
    """(stage, flintlock, bare) for one codec; rows starting with "=" are differences."""
    zero = (0.0, 0.0)
    b = {step: minus(bare[step], bare[before])
         for before, step in zip(BARE_STEPS, list(BARE_STEPS)[1:], strict=False)}
    collected = minus(collect, c["source"])
    stages = [
        ("source: reader poll -> batch", c["source"], bare["loop"]),
        ("map operator (with the user call)", c["map"], b["map"]),
        ("key extraction in the keyed writer (P>=2)", c["key"], zero),
        ("= key group + channel: writer 2 ch - writer 1 ch - key (P>=2)",
         minus(c["writer2"], c["writer1"], c["key"]), zero),
        ("= writer: pending list, chunks into buffers: writer 1 ch - encode",
         minus(c["writer1"], c["encode"]), zero),
        ("encode (declared: typed codec; undeclared: pickle)", c["encode"], zero),
        ("= transport, local: exchange - writer 2 ch - decode",
         minus(c["exchange"], c["writer2"], c["decode"]), zero),
        ("decode (RunDetectingSerializer.loads)", c["decode"], zero),
        ("key extraction in the reduce operator", c["key"], b["key"]),
        ("= state access + reduce call: reduce operator - key", minus(c["reduce"], c["key"]),
         b["reduce"]),
        ("filter operator (with the user call)", c["filter"], b["filter"]),
        (f"= collect to driver: {collected[0]:.0f} ns x {KEYS} records / N", (
            collected[0] * KEYS / records, collected[1] * KEYS / records), zero),
    ]
    summed = total(*(cost for _, cost, _ in stages))
    rows = [*stages, ("sum of the stages (P=2 path)", summed, bare["filter"])]
    for parallelism, path in ((2, summed), (1, minus(summed, stages[2][1], stages[3][1]))):
        whole, collector = end[parallelism]
        rows.append((f"end to end, threads, P={parallelism}", whole, bare["filter"]))
        rows.append((f"cycle collector ({collector_policy}) in the end to end, P={parallelism}",
                     collector, zero))
        rows.append((f"= unattributed, P={parallelism}: task loop, buffers, hand-offs",
                     minus(whole, path, collector), zero))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000,
                        help="records per timed repeat; N of the end-to-end jobs (and 5N)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--collector", choices=sorted(COLLECTOR), default="tuned",
                        help="the end-to-end jobs' cycle-collector settings: a TaskManager's "
                             "on Spark (tuned) or CPython's defaults")
    args = parser.parse_args()
    global collector_policy
    collector_policy = args.collector
    executor = ThreadExecutor()
    environment.load_executor = lambda: executor
    bare = bare_costs(args.records, args.repeat)
    common, batch, key = operator_costs(args.records, args.repeat)
    costs = {mode: {**common, **codec_costs(serializer, key, batch, args.records, args.repeat)}
             for mode, serializer in (("declared", TypedBatchSerializer(PAIR, "Map")),
                                      ("undeclared", PickleBatchSerializer()))}
    collect, _ = marginal(args.records, args.repeat, parallelism=1, declared=True,
                          collect_all=True)
    rows = {mode: stage_rows(costs[mode], bare, collect, {
        p: marginal(args.records, args.repeat, parallelism=p, declared=mode == "declared")
        for p in (1, 2)}, args.records) for mode in ("declared", "undeclared")}
    print(f"CPU ns/record, median (min) of {args.repeat}; {args.records:,} records per repeat "
          f"in batches of {BATCH}; end to end: marginal between N={args.records:,} and 5N")
    print("| stage | declared | undeclared | bare | declared - bare |\n|---|---:|---:|---:|---:|")
    for (stage, declared, bare_cost), (_, undeclared, _) in zip(*rows.values(), strict=True):
        print(f"| {stage} | {declared[0]:.0f} ({declared[1]:.0f}) | {undeclared[0]:.0f} "
              f"({undeclared[1]:.0f}) | {bare_cost[0]:.0f} | {declared[0] - bare_cost[0]:.0f} |")
    for name, step in (("at module level (the issue's reference)", "filter"),
                       ("inside a function (locals)", "function")):
        print(f"| bare loop {name} | | | {bare[step][0]:.0f} ({bare[step][1]:.0f}) | |")


if __name__ == "__main__":
    main()
