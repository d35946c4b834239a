"""Which group aggregations emit -U (``planner/update_kinds``, Flink's update-kind trait): not
into a blackhole table (its sink drops UPDATE_BEFORE, as Flink's does), through a projection
or a UNION ALL either; into a print table, under a filter (HAVING), into another aggregation,
or when one path of a statement set needs it, yes."""

from __future__ import annotations

from typing import Any

import pytest

from flintlock.common.operator_spec import OperatorKind
from flintlock.datastream.changelog.group_agg import GroupAggFunction
from flintlock.table import EnvironmentSettings, TableEnvironment
from flintlock.table.planner.update_kinds import aggregates_without_update_before
from flintlock.testing.executor import use_thread_executor
from tests.table.test_calc_fusion import graphs

GROUP = "SELECT MOD(id, 3) AS k, COUNT(*) AS c FROM src GROUP BY MOD(id, 3)"


@pytest.fixture
def t_env(monkeypatch: pytest.MonkeyPatch) -> Any:
    use_thread_executor(monkeypatch)
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "1")
    env.execute_sql(
        "CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', "
        "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '30')")
    for name in ("hole", "shown"):
        connector = "blackhole" if name == "hole" else "print"
        env.execute_sql(f"CREATE TABLE {name} (k BIGINT, c BIGINT) "
                        f"WITH ('connector' = '{connector}')")
    return env


def update_before_flags(monkeypatch: pytest.MonkeyPatch, run: Any) -> list[bool]:
    """The generate_update_before of every GroupAggFunction of the job ``run`` starts."""
    captured = graphs(monkeypatch)
    run().wait()
    return [node.operator.function.generate_update_before
            for node in captured[-1]._nodes.values()
            if node.operator.kind in (OperatorKind.KEYED_BATCH_PROCESS,
                                      OperatorKind.KEYED_PROCESS)
            and isinstance(node.operator.function, GroupAggFunction)]


def test_a_blackhole_sink_gets_no_update_before(t_env: Any, monkeypatch: Any) -> None:
    assert update_before_flags(monkeypatch, lambda: t_env.execute_sql(
        f"INSERT INTO hole SELECT k, c FROM ({GROUP})")) == [False]
    assert update_before_flags(monkeypatch, lambda: t_env.execute_sql(
        f"INSERT INTO hole SELECT k, c FROM ({GROUP}) UNION ALL "
        f"SELECT k, c FROM ({GROUP})")) == [False]  # the two equal GROUP BYs built once


def test_a_print_sink_a_filter_or_an_aggregation_above_keep_it(t_env: Any,
                                                               monkeypatch: Any) -> None:
    assert update_before_flags(monkeypatch, lambda: t_env.execute_sql(
        f"INSERT INTO shown SELECT k, c FROM ({GROUP})")) == [True]
    assert update_before_flags(monkeypatch, lambda: t_env.execute_sql(
        f"INSERT INTO hole SELECT k, c FROM ({GROUP}) WHERE c > 2")) == [True]
    inner_outer = update_before_flags(monkeypatch, lambda: t_env.execute_sql(
        f"INSERT INTO hole SELECT c, COUNT(*) FROM ({GROUP}) GROUP BY c"))
    assert sorted(inner_outer) == [False, True]  # the inner one retracts into the outer


def test_a_shared_aggregation_keeps_it_when_one_sink_needs_it(t_env: Any) -> None:
    grouped = t_env.sql_query(GROUP)
    sinks = [t_env.sink_plan(("hole",), grouped._plan), t_env.sink_plan(("shown",),
                                                                          grouped._plan)]
    assert aggregates_without_update_before(sinks) == frozenset()
    assert len(aggregates_without_update_before(sinks[:1])) == 1
