"""Issue 32's window benchmark job taken apart: CPU cost per row of each stage.

What: the ``window`` job of ``benchmarks.table_sql_windows`` (datagen sequence with a computed
event time -> watermark -> ``TUMBLE(ts, 10 s)`` ``GROUP BY k, window_start, window_end``
``COUNT(*)``, ``SUM(id)`` -> blackhole). The planner builds its stream graph (captured from
``env.execute``); each operator is then built from the graph's own description and timed
alone, on the batches the stage before it produced, in the job's order: the datagen source
(``BATCH`` rows a poll), the Calc computing ``k`` and ``ts``, the watermark assigner, the Calc
before the window aggregation, the key selector, the window aggregation (fed each batch then
the watermark the assigner gave after it, so windows fire and their firing is in the cost;
a new operator per repeat), the Calc after it and the blackhole sink (per output row). The
exchange between the assigner's chain and the keyed operator (encode/decode) is
``benchmarks.table_sql_stages``'s business and not repeated here.

How: CPU time (``time.process_time``), median (min) of ``--repeat`` repeats, ns per input row
of the stage; the machine may be shared, so read the figures as relative. ``--end-to-end N``
also runs the whole job on TaskManager threads of this process (as ``job_graph`` does) at N
and 5N rows, ``--repeat`` pairs, and prints the marginal CPU per row (all threads of the
process: the stages plus the exchange, task loops, watermarks and timers around them).

    .venv/bin/python -m benchmarks.table_sql_windows_stages [--records 100000] [--repeat 5]
        [--end-to-end N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from benchmarks.local_exchange import MAX_PARALLELISM
from benchmarks.stage_costs import captured_stream_graphs
from flintlock.common.config import Configuration
from flintlock.common.operator_spec import OperatorKind
from flintlock.runtime.state.factory import create_keyed_state_backend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.operator import OperatorStateBackend
from flintlock.table.connectors.datagen import _Splits
from flintlock.testing.operators import ManualTimers, open_operator

BATCH = 1_000
Cost = tuple[float, float]


class Keep:
    """An output that keeps what it was given, in order: ("rows", batch) and
    ("watermark", timestamp) events (the next stage's input)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def collect_batch(self, records: list[Any]) -> None:
        self.events.append(("rows", records[:]))  # a TimestampedBatch stays one

    def collect(self, record: Any) -> None:
        self.events.append(("rows", [record]))

    def emit_watermark(self, timestamp: int) -> None:
        self.events.append(("watermark", timestamp))

    def emit_watermark_status(self, idle: bool) -> None:
        pass


def _replay(operator: Any, events: list[tuple[str, Any]]) -> None:
    for kind, item in events:
        if kind == "rows":
            operator.process_batch(item)
        else:
            operator.process_watermark(item)


def job_graph(rows: int, spent: list[float] | None = None) -> Any:
    """The stream graph of the window job on ``rows`` rows (run on TaskManager threads);
    the job's CPU seconds appended to ``spent``."""
    from flintlock.table import EnvironmentSettings, TableEnvironment

    with captured_stream_graphs(threads=True) as captured:
        t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        t_env.get_config().set("parallelism.default", "1")
        t_env.execute_sql(
            "CREATE TABLE src (id BIGINT, k AS MOD(id, 10), ts AS TIMESTAMPADD(SECOND, "
            "CAST(FLOOR(id / 100) AS INT), TIMESTAMP '2024-01-01 00:00:00'), "
            "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen', "
            "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', "
            f"'fields.id.end' = '{rows}', 'rows-per-second' = '1000000000')")
        t_env.execute_sql("CREATE TABLE sink (k BIGINT, ws TIMESTAMP(3), c BIGINT, s BIGINT) "
                          "WITH ('connector' = 'blackhole')")
        started = time.process_time()
        t_env.execute_sql(
            "INSERT INTO sink SELECT k, window_start, COUNT(*), SUM(id) FROM TABLE(TUMBLE("
            "TABLE src, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
            "GROUP BY k, window_start, window_end").wait()
        if spent is not None:
            spent.append(time.process_time() - started)
        return captured[-1]


def end_to_end(rows: int, repeat: int) -> Cost:
    """Marginal CPU ns per row between jobs of ``rows`` and ``5 * rows`` on threads, median
    (min) of ``repeat`` pairs."""
    runs = []
    for _ in range(repeat):
        small: list[float] = []
        large: list[float] = []
        job_graph(rows, small)
        job_graph(5 * rows, large)
        runs.append((large[0] - small[0]) / (4 * rows) * 1e9)
    return _median(runs)


def _open(spec: Any, key: Any = None) -> tuple[Any, Keep]:
    out = Keep()
    context: dict[str, Any] = {"timers": ManualTimers(10**12),
                               "operator_backend": OperatorStateBackend()}
    if key is not None:
        context["keyed_backend"] = create_keyed_state_backend(
            Configuration(), KeyGroupRange.for_subtask(MAX_PARALLELISM, 1, 0), MAX_PARALLELISM)
        context["key_selectors"] = (key,)
        context["max_parallelism"] = MAX_PARALLELISM
    operator, _ = open_operator(spec, output=out, **context)
    return operator, out


def _median(runs: list[float]) -> Cost:
    return statistics.median(runs), min(runs)


def stage_costs(records: int, repeat: int) -> list[tuple[str, Cost]]:
    nodes = list(job_graph(1000)._nodes.values())
    batches = records // BATCH
    costs: list[tuple[str, Cost]] = []
    runs: list[float] = []
    for _ in range(repeat):  # the source: a fresh reader each repeat
        source, produced = _open(nodes[0].operator)
        source.add_splits(_Splits(None, 1).initial())
        started = time.process_time()
        for _ in range(batches):
            source.emit_next(BATCH)
        runs.append((time.process_time() - started) / (batches * BATCH) * 1e9)
    costs.append(("datagen source: reader poll -> batch of rows", _median(runs)))
    events = [e for e in produced.events if e[0] == "rows"][:batches]
    for node in nodes[1:]:
        kind = node.operator.kind
        key = None
        if kind is OperatorKind.KEYED_PROCESS:
            key = node.key_selectors[0]
            key = getattr(key, "get_key", key)
            started = time.process_time()
            for _ in range(repeat):
                for event_kind, rows in events:
                    if event_kind == "rows":
                        for row in rows:
                            key(row)
            spent = (time.process_time() - started) / (repeat * records) * 1e9
            costs.append(("key selector (in the writer, again in the operator)",
                          (spent, spent)))
        runs, kept = [], Keep()
        for _ in range(repeat):  # a new operator (and state) each repeat
            operator, kept = _open(node.operator, key)
            started = time.process_time()
            _replay(operator, events)
            if key is not None:
                operator.process_watermark(2**63 - 1)
            runs.append((time.process_time() - started) / records * 1e9)
        costs.append((_label(node), _median(runs)))
        events = kept.events
    return costs


def _label(node: Any) -> str:
    kind = node.operator.kind
    if kind is OperatorKind.TIMESTAMPS:
        return "watermark assigner (rowtime, WATERMARK expression)"
    if kind is OperatorKind.SINK:
        return "blackhole sink"
    if kind is OperatorKind.KEYED_PROCESS:
        return (f"window aggregation ({type(node.operator.function).__name__}: state, "
                "timers, firing)")
    return f"{kind.name} ({type(node.operator.function).__name__})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--end-to-end", type=int, default=0, metavar="N",
                        help="also the marginal CPU per row of whole jobs of N and 5N rows")
    args = parser.parse_args()
    costs = stage_costs(args.records, args.repeat)
    print(f"CPU ns per input row, median (min) of {args.repeat}, {args.records} rows")
    for name, (median, low) in costs:
        print(f"  {name:70} {median:8.0f} ({low:.0f})")
    print(f"  {'sum of the stages':70} {sum(c[0] for _, c in costs):8.0f}")
    if args.end_to_end:
        median, low = end_to_end(args.end_to_end, args.repeat)
        label = f"end to end, threads, marginal N={args.end_to_end:,} -> 5N"
        print(f"  {label:70} {median:8.0f} ({low:.0f})")


if __name__ == "__main__":
    main()
