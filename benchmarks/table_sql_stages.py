"""Issue 28's SQL benchmark job taken apart: CPU cost per row of each stage.

What: the job of ``benchmarks.table_sql`` (datagen sequence -> ``SELECT MOD(id, 100) AS k,
id`` -> ``GROUP BY k`` ``COUNT(*)``, ``SUM(id)`` -> blackhole). The planner builds its stream
graph (captured from ``env.execute``); each runtime piece is then built from the graph's own
operator descriptions with ``create_operator`` and timed alone on batches of ``BATCH`` rows:
the datagen source operator (with the Calc fused into it where the planner fused it), the
Calc operators before the aggregation (none when fused), the key selector, the keyed writer
(key group and channel, the changelog serializer), decode (as the aggregation's input is
read: to a ``ColumnBatch``, no rows, issue 28), the group aggregation (the keyed operator the
planner chose, on the decoded batch; and for comparison the per-record step with an empty keyed
function: the operator's floor), the Calc operators after the aggregation (none when the
planner found them value-identities; else two rows per input row: -U and +U) and the
blackhole sink. Where the C kernel runs the aggregation (``agg_kernel``), its Python twin
(the compiled batch step) is timed on the same batches too. End to end is the marginal CPU
per row between jobs of N and 5N rows run with TaskManagers as threads of this process
(``ThreadExecutor``; every thread of the process counted, as on one core), under the cycle
collector a TaskManager process on Spark runs (``spark/collector.py``: the objects that exist
at the job's start frozen, young collections every 50,000 net allocations;
``--collector default`` keeps CPython's, under which the collector costs more than the
stages), with the collector's own part a row of its own.

How: CPU time (``time.process_time``), median (min) of ``--repeat`` repeats; the machine may
be shared, so read the figures as relative. Rows of the aggregation's downstream are per
input row (two outputs per input row at steady state).

    .venv/bin/python -m benchmarks.table_sql_stages [--records 200000] [--repeat 5]
        [--udf] [--end-to-end N] [--collector tuned|default]
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import time
from dataclasses import replace
from typing import Any

import flintlock.datastream.stream_execution_environment as environment
from benchmarks.local_exchange import MAX_PARALLELISM, NullPartition
from benchmarks.stage_costs import (
    BATCH,
    COLLECTOR,
    CollectorClock,
    OneChannel,
    captured_stream_graphs,
    set_up,
    timed,
)
from flintlock.common.operator_spec import OperatorKind, OperatorSpec
from flintlock.datastream.functions import KeyedProcessFunction
from flintlock.runtime.network import changelog_serializer
from flintlock.runtime.network.changelog_serializer import ChangelogRowSerializer
from flintlock.runtime.network.channel_selector import KeyGroupSelector
from flintlock.runtime.network.event_time import RunDetectingSerializer
from flintlock.runtime.network.writer import RecordWriter
from flintlock.table.connectors.datagen import _Splits
from flintlock.testing.executor import ThreadExecutor

QUERY = ("INSERT INTO sink SELECT k, COUNT(*) AS c, SUM(id) AS s FROM "
         "(SELECT {key} AS k, id FROM src) GROUP BY k")


def run_sql(rows: int, udf: bool = False, collector: str = "tuned") -> Any:
    """Runs the job on threads under ``collector`` (``COLLECTOR``); returns (its stream graph, CPU
    seconds of the job, seconds of it in the cycle collector)."""
    from flintlock.table import DataTypes, EnvironmentSettings, TableEnvironment
    from flintlock.table.udf import udf as make_udf

    with captured_stream_graphs() as captured:
        t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        t_env.get_config().set("parallelism.default", "2")
        t_env.create_temporary_function(
            "bucket", make_udf(lambda x: x % 100, result_type=DataTypes.BIGINT()))
        t_env.execute_sql(
            "CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', "
            "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', "
            f"'fields.id.end' = '{rows}', 'rows-per-second' = '1000000000')")
        t_env.execute_sql("CREATE TABLE sink (k BIGINT, c BIGINT, s BIGINT) "
                          "WITH ('connector' = 'blackhole')")
        with COLLECTOR[collector](), CollectorClock().installed() as clock:
            started = time.process_time()
            t_env.execute_sql(QUERY.format(key="bucket(id)" if udf else "MOD(id, 100)")).wait()
            spent = time.process_time() - started
        return captured[-1], spent, clock.seconds


class _Empty(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> None:
        return None


def stage_costs(records: int, repeat: int, udf: bool) -> list[tuple[str, tuple[float, float]]]:
    graph = run_sql(1000, udf)[0]
    nodes = list(graph._nodes.values())
    by_kind: dict[OperatorKind, list[Any]] = {}
    for node in nodes:
        by_kind.setdefault(node.operator.kind, []).append(node)
    source_node, sink_node = by_kind[OperatorKind.SOURCE][0], by_kind[OperatorKind.SINK][0]
    agg_node = by_kind[OperatorKind.KEYED_BATCH_PROCESS][0]
    index = nodes.index(agg_node)
    before = [n for n in nodes[1:index] if n.operator.kind is not OperatorKind.SINK]
    after = [n for n in nodes[index + 1:] if n.operator.kind is not OperatorKind.SINK]
    key = agg_node.key_selectors[0]
    key = getattr(key, "get_key", key)
    source, sourced = set_up(source_node.operator)
    source.add_splits(_Splits(None, 1).initial())  # type: ignore[attr-defined]
    calcs = [set_up(n.operator) for n in before]
    casts = [set_up(n.operator) for n in after]
    agg, aggregated = set_up(agg_node.operator, key)
    per_record, _ = set_up(replace(  # its own copy of the function: open() binds its state
        agg_node.operator, kind=OperatorKind.KEYED_PROCESS,
        function=pickle.loads(pickle.dumps(agg_node.operator.function))), key)
    empty, _ = set_up(OperatorSpec(OperatorKind.KEYED_PROCESS, _Empty(), keyed=True), key)
    twin, _ = set_up(replace(agg_node.operator, function=pickle.loads(pickle.dumps(
        agg_node.operator.function))), key)
    python_step = getattr(twin.function._batch, "python", None)  # type: ignore[attr-defined]
    if python_step is not None:  # the C kernel runs the batches: time its Python twin too
        twin.function._batch = python_step  # type: ignore[attr-defined]
    sink, _ = set_up(sink_node.operator)
    source.emit_next(BATCH)  # type: ignore[attr-defined]
    batch = sourced.last
    calc_inputs = []
    for operator, output in calcs:
        calc_inputs.append(batch)
        operator.process_batch(batch)
        batch = output.last
    for _ in range(3):
        agg.process_batch(batch)  # every key seen: steady state (-U/+U per row)
        per_record.process_batch(batch)
        twin.process_batch(batch)
    aggregated_batch = aggregated.last
    cast_inputs = []
    for operator, output in casts:
        cast_inputs.append(aggregated_batch)
        operator.process_batch(aggregated_batch)
        aggregated_batch = output.last
    serializer = ChangelogRowSerializer()
    data = bytes(serializer.dumps(batch))
    # as the aggregation's input is read (issue 28: a ColumnBatch), else rows (older trees)
    decoder = getattr(changelog_serializer, "ColumnDecodingSerializer", RunDetectingSerializer)()
    decoded = decoder.loads(data)

    def writer(partition: Any) -> Any:
        return RecordWriter(partition, KeyGroupSelector(key, MAX_PARALLELISM), serializer,
                            buffer_timeout_ms=-1).emit_batch

    one, two = writer(OneChannel()), writer(NullPartition())

    def keys() -> None:
        for row in batch:
            key(row)

    def loop() -> None:
        for _ in batch:
            pass

    def run_all(operators: list[Any], inputs: list[Any]) -> Any:
        def run() -> None:
            for (operator, _), given in zip(operators, inputs, strict=True):
                operator.process_batch(given)
        return run

    fused = "fused Calc" if not calcs else "table rows"
    c = {
        "source": timed(lambda: source.emit_next(BATCH), records, repeat),  # type: ignore[attr-defined]
        "calc": timed(run_all(calcs, calc_inputs), records, repeat),
        "key": timed(keys, records, repeat), "loop": timed(loop, records, repeat),
        "writer1": timed(lambda: one(batch), records, repeat),
        "writer2": timed(lambda: two(batch), records, repeat),
        "encode": timed(lambda: serializer.dumps(batch), records, repeat),
        "decode": timed(lambda: decoder.loads(data), records, repeat),
        "agg": timed(lambda: agg.process_batch(decoded), records, repeat),
        "per_record": timed(lambda: per_record.process_batch(batch), records, repeat),
        "twin": timed(lambda: twin.process_batch(batch), records, repeat),
        "empty": timed(lambda: empty.process_batch(batch), records, repeat),
        "cast": timed(run_all(casts, cast_inputs), records, repeat),
        "sink": timed(lambda: sink.process_batch(aggregated_batch), records, repeat),
    }

    def less(a: str, *bs: str) -> tuple[float, float]:
        return (c[a][0] - sum(c[b][0] for b in bs), c[a][1] - sum(c[b][1] for b in bs))

    return [
        (f"source: datagen reader poll -> batch of rows ({fused})", c["source"]),
        (f"Calc operators before the aggregation ({len(calcs)}; "
         f"{'Python UDF' if udf else 'MOD'})", c["calc"]),
        ("key selector call, in the writer (and again in the agg operator)", less("key", "loop")),
        ("= key group + channel: writer 2 ch - writer 1 ch - key",
         less("writer2", "writer1", "key")),
        ("= writer: pending list, buffers: writer 1 ch - encode", less("writer1", "encode")),
        ("encode (ChangelogRowSerializer)", c["encode"]),
        ("decode", c["decode"]),
        (f"group aggregation: {type(agg).__name__}"
         f"{' (C kernel)' if python_step is not None else ''}", c["agg"]),
        ("  the same, the compiled Python batch step", c["twin"]),
        ("  the same per record (KEYED_PROCESS: key, set_current_key, call)", c["per_record"]),
        ("  keyed process operator, empty function (per-record floor)", c["empty"]),
        (f"Calc operators after the aggregation ({len(casts)}; 2 rows per input row)",
         c["cast"]),
        ("blackhole sink (2 rows per input row)", c["sink"]),
    ]


def end_to_end(records: int, repeat: int, udf: bool, collector: str
               ) -> tuple[float, float]:
    """(CPU ns per row, of it in the cycle collector) between jobs of N and 5N rows, the
    medians of ``repeat`` pairs."""
    runs, collections = [], []
    for _ in range(repeat):
        small, large = run_sql(records, udf, collector), run_sql(5 * records, udf, collector)
        runs.append((large[1] - small[1]) / (4 * records) * 1e9)
        collections.append((large[2] - small[2]) / (4 * records) * 1e9)
    return statistics.median(runs), statistics.median(collections)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--udf", action="store_true", help="the key computed by a Python UDF")
    parser.add_argument("--end-to-end", type=int, default=0, metavar="N",
                        help="also the marginal end-to-end CPU between jobs of N and 5N rows")
    parser.add_argument("--collector", choices=sorted(COLLECTOR), default="tuned",
                        help="the end-to-end jobs' cycle collector (default: a TaskManager's)")
    args = parser.parse_args()
    executor = ThreadExecutor()
    environment.load_executor = lambda: executor
    rows = stage_costs(args.records, args.repeat, args.udf)
    print(f"CPU ns/row, median (min) of {args.repeat}; {args.records:,} rows per repeat in "
          f"batches of {BATCH}")
    print("| stage | ns/row |\n|---|---:|")
    summed = [0.0, 0.0]
    for index, (stage, (median, least)) in enumerate(rows):
        print(f"| {stage} | {median:.0f} ({least:.0f}) |")
        if index not in (8, 9, 10):  # references, not stages
            summed[0] += median
            summed[1] += least
    summed[0] += rows[2][1][0]  # the key selector runs twice (writer and operator)
    summed[1] += rows[2][1][1]
    print(f"| sum of the stages (key selector counted twice) | {summed[0]:.0f} ({summed[1]:.0f}) |")
    if args.end_to_end:
        whole = end_to_end(args.end_to_end, 1, args.udf, args.collector)
        print(f"| end to end, threads, P=2, marginal N={args.end_to_end:,} -> 5N, "
              f"{args.collector} collector | {whole[0]:.0f} |")
        print(f"|   of it in the cycle collector | {whole[1]:.0f} |")


if __name__ == "__main__":
    main()
