"""flintlock's Nexmark read path taken apart: CPU cost per line / row of each stage (issue 33).

What: on the bid lines of ``generate.py``'s files, (1) the per-line reader of the csv format
with a ``Row`` per line (what the filesystem source did before the batch reader: one
``csv.reader`` and the conversions per line), (2) the batch reader over every column, (3) the
source's decoding with the Calc the planner fused into it for q1 and q2 (only the columns the
Calc reads are converted; q1's ``0.908 * price`` cast to DECIMAL(23, 3)), (4) that DECIMAL
expression alone, and (5) the INNER join's step for a bid (q20: multiplicity in state, the
auction side's matches, the joined rows) through the keyed two-input operator, with 1 in 9
auctions of category 10 stored, a record at a time and on the join's batch path, and (6) a
bid row through the exchange's serializer (``dumps`` + ``loads``), TIMESTAMP column packed
or not. Each is timed on batches of ``--batch`` lines.

How: CPU time (``time.process_time``) per line, median (and min) of ``--repeat`` repeats; the
machine may be shared: read the figures as relative.

    .venv/bin/python -m benchmarks.nexmark.stages [--data DIR] [--lines 20000] [--repeat 5]
        [--end-to-end q0 q1 q2 q20]   # and the queries' CPU seconds on thread TaskManagers
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.nexmark.queries import BY_NAME, TABLE_COLUMNS, table_columns, write_side_input
from benchmarks.nexmark.run import ROOT, dataset
from benchmarks.stage_costs import captured_stream_graphs, set_up
from flintlock.common.operator_spec import OperatorKind, OperatorSpec
from flintlock.common.row_batches import rows_of
from flintlock.common.types import RowKind, row_of
from flintlock.datastream.changelog.join import JoinType, StreamingJoinFunction
from flintlock.table.codegen import sql_functions
from flintlock.table.connectors._file_rows import Decoding, calc_columns
from flintlock.table.connectors._options import Options
from flintlock.table.formats import lookup
from flintlock.table.plan.nodes import Field

CSV = lookup("csv")


def timed(step: Callable[[], Any], count: int, repeat: int) -> tuple[float, float]:
    runs = []
    for _ in range(repeat):
        started = time.process_time()
        step()
        runs.append((time.process_time() - started) / count * 1e9)
    return statistics.median(runs), min(runs)


def bid_fields() -> list[Field]:
    from flintlock.table.sql import parse_statement
    statement: Any = parse_statement(f"CREATE TABLE bid ({TABLE_COLUMNS['bid']}) "
                                     "WITH ('connector' = 'blackhole')")
    return [Field(c.name, c.type) for c in statement.columns]


def fused_calc(query: str, data: Path) -> Any:
    """The column Calc the planner fused into the bid table's source for ``query`` (its job
    run once on thread TaskManagers over ``data``, the stream graph captured)."""
    from flintlock.table import EnvironmentSettings, TableEnvironment

    with captured_stream_graphs(threads=True) as captured:
        spec = BY_NAME[query]
        t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        t_env.execute_sql(f"CREATE TABLE bid ({TABLE_COLUMNS['bid']}) WITH ('connector' = "
                          f"'filesystem', 'path' = '{data}/bid', 'format' = 'csv')")
        t_env.execute_sql(f"CREATE TABLE sink ({spec.sink}) WITH ('connector' = 'blackhole')")
        t_env.execute_sql(f"INSERT INTO sink {spec.sql}").wait()
    for node in captured[-1]._nodes.values():
        decoding = getattr(getattr(node.operator, "source", None), "_decoding", None)
        if decoding is not None:
            return decoding.calc
    raise RuntimeError(f"no source with a fused Calc planned for {query}")


def rows_step(decoding: Decoding, chunks: list[list[str]]) -> Callable[[], None]:
    def step() -> None:
        for chunk in chunks:
            decoding.rows(chunk)
    return step


class _PerRecordJoin(StreamingJoinFunction):
    """The join without its batch path (``CoOperator`` calls it a record at a time)."""

    process_batch = None


def join_step(bids: list[list[Any]], batch: int,
              kind: type[StreamingJoinFunction] = StreamingJoinFunction) -> Callable[[], None]:
    function = kind(JoinType.INNER, 7, 10, [0], [0])
    operator: Any
    operator, _ = set_up(OperatorSpec(OperatorKind.KEYED_CO_PROCESS, function, keyed=True),
                         (function.left_key_selector(), function.right_key_selector()))
    moment = datetime.datetime(2015, 7, 15)
    ids = sorted({b[0] for b in bids})
    operator.process_batch2(rows_of([[i, "item", "d", 1, 2, moment, moment, 5, 10, "x"]
                                     for i in ids[::9]], RowKind.INSERT))
    rows = rows_of([list(b) for b in bids], RowKind.INSERT)

    def step() -> None:
        for start in range(0, len(rows), batch):
            operator.process_batch(rows[start:start + batch])
    return step


def exchange_step(rows: list[Any], batch: int, packed: bool) -> Callable[[], None]:
    """The changelog serializer's ``dumps`` + ``loads`` of the rows, with TIMESTAMP columns
    packed (now) or pickled a value at a time (``packed`` False: before 085fd91)."""
    from flintlock.runtime.network import changelog_serializer
    from flintlock.runtime.network.serialization import PickleBatchSerializer

    serializer, reader = changelog_serializer.ChangelogRowSerializer(), PickleBatchSerializer()
    pack = changelog_serializer.packed

    def step() -> None:
        changelog_serializer.packed = pack if packed else (lambda columns: columns)
        try:
            for start in range(0, len(rows), batch):
                reader.loads(serializer.dumps(rows[start:start + batch]))
        finally:
            changelog_serializer.packed = pack
    return step


def end_to_end(query: str, data: Path) -> float:
    """CPU seconds of the query's INSERT into a blackhole over ``data``, on thread
    TaskManagers in this process (parallelism 2; every thread counted)."""
    import flintlock.datastream.stream_execution_environment as environment
    from flintlock.table import EnvironmentSettings, TableEnvironment
    from flintlock.testing.executor import ThreadExecutor

    executor, loader = ThreadExecutor(None), environment.load_executor
    environment.load_executor = lambda: executor
    try:
        spec = BY_NAME[query]
        t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        t_env.get_config().set("parallelism.default", "2")
        if "side_input" in spec.tables:
            write_side_input(data)
        for table, columns in table_columns(spec).items():
            t_env.execute_sql(f"CREATE TABLE {table} ({columns}) WITH ("
                              f"'connector' = 'filesystem', 'path' = '{data}/{table}', "
                              "'format' = 'csv')")
        t_env.execute_sql(f"CREATE TABLE sink ({spec.sink}) WITH ('connector' = 'blackhole')")
        started = time.process_time()
        t_env.execute_sql(f"INSERT INTO sink {spec.sql}").wait()
        return time.process_time() - started
    finally:
        environment.load_executor = loader


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / ".bench" / "nexmark")
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--lines", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--end-to-end", nargs="*", default=[], metavar="QUERY",
                        help="also run these queries end to end on thread TaskManagers")
    args = parser.parse_args()
    directory = dataset(args.data, args.events)
    lines = (directory / "bid" / "part-0.csv").read_text().splitlines()[:args.lines]
    chunks = [lines[i:i + args.batch] for i in range(0, len(lines), args.batch)]
    fields, options, n = bid_fields(), Options({}), len(lines)
    per_line: Any = CSV.reader(fields, options, "csv")
    batch = CSV.batch_reader(fields, options, "csv")
    decoded, _ = batch(lines)
    results: dict[str, tuple[float, float]] = {"per-line reader + row_of (before)": timed(
        lambda: [row_of(per_line(line)) for line in lines], n, args.repeat),
        "batch reader, every column": timed(lambda: [batch(c) for c in chunks], n, args.repeat)}
    small = dataset(args.data, 5000)
    for name in ("q1", "q2"):
        calc = fused_calc(name, small)
        read = CSV.batch_reader(fields, options, "csv", calc_columns(calc))
        decoding = Decoding(read, tuple(range(7)), 7, calc=calc)
        results[f"{name}: decode + fused Calc"] = timed(rows_step(decoding, chunks), n,
                                                        args.repeat)
    k = decimal.Decimal("0.908")
    results["q1: 0.908 * price AS DECIMAL(23, 3)"] = timed(
        lambda: [sql_functions.cast_to_decimal(k * p, 23, 3) for p in decoded[2]], n,
        args.repeat)
    bids = [list(values) for values in zip(*decoded, strict=True)]
    bid_rows = rows_of([list(b) for b in bids], RowKind.INSERT)
    for packed in (False, True):
        results[f"q20: exchange of a bid, {'packed' if packed else 'per value'}"] = timed(
            exchange_step(bid_rows, args.batch, packed), n, args.repeat)
    results["q20: INNER join step per bid, per record"] = timed(
        join_step(bids, args.batch, _PerRecordJoin), n, args.repeat)
    results["q20: INNER join step per bid, batch path"] = timed(
        join_step(bids, args.batch), n, args.repeat)
    for name, (median, low) in results.items():
        print(f"{name:45} {median:8.0f} ns/line  (min {low:.0f})", flush=True)
    for query in args.end_to_end:
        print(f"{query} end to end, threads, {args.events} events: "
              f"{end_to_end(query, directory):.2f} CPU s", flush=True)


if __name__ == "__main__":
    main()
