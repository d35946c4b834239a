"""Sub-plan reuse (``planner/subplan_reuse``, Flink's ``table.optimizer.reuse-sub-plan-enabled``,
issue 33): a sub-plan a job writes twice is built once — the same results as building it
twice, fewer operators; never a sub-plan calling a nondeterministic function, never a sink,
and not at all with the option off."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from flintlock.common.types import RowKind
from flintlock.datastream.changelog.group_agg import GroupAggFunction
from flintlock.table import EnvironmentSettings, TableEnvironment
from flintlock.testing.executor import use_thread_executor
from tests.table.test_calc_fusion import graphs

GROUP = "SELECT MOD(id, 4) AS k, COUNT(*) AS c FROM src {where} GROUP BY MOD(id, 4)"
TOP = ("SELECT a.k, a.c FROM ({group}) a JOIN (SELECT MAX(c) AS m FROM ({group})) b "
       "ON a.c >= b.m")  # q5's shape: a count per key joined with the largest count


def _env(reuse: bool) -> Any:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "2")
    env.get_config().set("table.optimizer.reuse-sub-plan-enabled", str(reuse).lower())
    env.execute_sql(
        "CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', "
        "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '41')")
    env.execute_sql("CREATE TABLE hole (k BIGINT, c BIGINT) WITH ('connector' = 'blackhole')")
    return env


def _table(rows: list[Any]) -> Counter[tuple[Any, ...]]:
    table: Counter[tuple[Any, ...]] = Counter()
    for row in rows:
        add = row.get_row_kind() in (RowKind.INSERT, RowKind.UPDATE_AFTER)
        table[tuple(row)] += 1 if add else -1
    return +table


def _group_aggs(graph: Any) -> int:
    return sum(isinstance(getattr(node.operator, "function", None), GroupAggFunction)
               for node in graph._nodes.values())


def test_a_sub_plan_written_twice_runs_once_with_the_same_results(monkeypatch) -> None:
    use_thread_executor(monkeypatch)
    captured = graphs(monkeypatch)
    sql = TOP.format(group=GROUP.format(where=""))
    shared = _table(list(_env(True).execute_sql(sql).collect()))
    apart = _table(list(_env(False).execute_sql(sql).collect()))
    assert shared == apart == Counter({(1, 11): 1})
    # the count per key once (and the MAX), against twice (and the MAX) with the option off
    assert [_group_aggs(graph) for graph in captured] == [2, 3]


def test_nondeterministic_sub_plans_and_sinks_are_never_shared(monkeypatch) -> None:
    use_thread_executor(monkeypatch)
    captured = graphs(monkeypatch)
    env = _env(True)
    env.execute_sql(TOP.format(group=GROUP.format(where="WHERE RAND() < 2"))).wait()
    assert _group_aggs(captured[-1]) == 3  # RAND() may differ per call: each side its own
    sinks = env.create_statement_set()
    for _ in range(2):
        sinks.add_insert_sql(f"INSERT INTO hole {GROUP.format(where='')}")
    sinks.execute().wait()
    graph = captured[-1]
    assert _group_aggs(graph) == 1  # one aggregation feeds both INSERTs ...
    writers = [node for node in graph._nodes.values() if "hole" in str(node.name)]
    assert len(writers) == 2  # ... which each write their rows


@pytest.mark.parametrize("reuse", [True, False])
def test_the_option_is_read(reuse: bool) -> None:
    env = _env(reuse)
    translator = env._translator(env._job_environment())
    assert translator.reuse_sub_plans is reuse
