"""Planning interval joins (issue 32): the binder finds the time bounds of an ON / WHERE
condition (BETWEEN, strict and non-strict comparisons written either way round, intervals
added or subtracted) and plans an ``IntervalJoin`` keeping both rowtimes; a condition with
one bound only, bounds on different time columns, or a remaining condition reading a time
attribute leaves a regular join."""

from __future__ import annotations

import pytest

from flintlock.table import EnvironmentSettings, TableEnvironment
from flintlock.table.errors import TableException
from flintlock.table.plan import nodes as n
from flintlock.table.plan.time_join_nodes import IntervalJoin
from flintlock.table.time_attributes import is_rowtime


@pytest.fixture(scope="module")
def t_env():
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    for name in ("a", "b"):
        env.execute_sql(f"""
            CREATE TABLE {name} (id INT, v STRING, ts TIMESTAMP(3), ts2 TIMESTAMP(3),
                                 p AS PROCTIME(), WATERMARK FOR ts AS ts)
            WITH ('connector' = 'datagen')""")
    return env


def _join(t_env, where):
    plan = t_env.sql_query(f"SELECT * FROM a, b WHERE a.id = b.id AND {where}")._plan
    while not isinstance(plan, (IntervalJoin, n.Join)):
        plan = plan.inputs[0]
    return plan


@pytest.mark.parametrize(("where", "lower", "upper"), [
    ("a.ts BETWEEN b.ts - INTERVAL '5' SECOND AND b.ts", -5000, 0),
    ("b.ts BETWEEN a.ts - INTERVAL '1' SECOND AND a.ts + INTERVAL '2' SECOND", -2000, 1000),
    ("a.ts > b.ts - INTERVAL '5' SECOND AND a.ts < b.ts + INTERVAL '1' MINUTE", -4999, 59999),
    ("b.ts <= a.ts AND b.ts + INTERVAL '3' SECOND >= a.ts", 0, 3000),
    ("a.p BETWEEN b.p AND b.p + INTERVAL '1' SECOND", 0, 1000),
])
def test_time_bounds_make_an_interval_join(t_env, where, lower, upper):
    join = _join(t_env, where)
    assert isinstance(join, IntervalJoin)
    assert (join.lower_bound, join.upper_bound) == (lower, upper)
    assert join.proctime == ("a.p" in where)
    assert join.condition is None and (join.left_keys, join.right_keys) == ((0,), (0,))


def test_the_rowtimes_survive_and_the_rest_of_the_condition_stays(t_env):
    join = _join(t_env, "a.ts BETWEEN b.ts AND b.ts + INTERVAL '1' SECOND AND a.v <> b.v")
    assert isinstance(join, IntervalJoin) and join.condition is not None
    assert [f.name for f in join.fields if is_rowtime(f.type)] == ["ts", "ts"]
    assert "IntervalJoin(joinType=[INNER]" in join.explain_summary()


@pytest.mark.parametrize("where", [
    "a.ts >= b.ts",  # one bound
    "a.ts BETWEEN b.ts AND b.ts2",  # ts2 is no time attribute
    "a.ts BETWEEN b.ts AND b.ts + INTERVAL '1' SECOND AND a.ts <> b.ts",  # more on the time
    "a.ts BETWEEN b.ts AND b.ts + INTERVAL '1' SECOND AND a.ts > b.ts - INTERVAL '1' SECOND",
    "a.ts BETWEEN b.p AND b.p + INTERVAL '1' SECOND",  # rowtime against proctime
])
def test_other_conditions_leave_a_regular_join(t_env, where):
    assert type(_join(t_env, where)) is n.Join


def test_an_updating_input_is_refused(t_env):
    from flintlock.table.planner.time_joins import translate_interval_join

    class _Translator:
        def stream(self, node):
            raise AssertionError("not reached")

    join = _join(t_env, "a.ts BETWEEN b.ts AND b.ts + INTERVAL '1' SECOND")
    updating = n.Aggregate(join.right.fields, join.right, (0,), ())
    with pytest.raises(TableException, match="IntervalJoin doesn't support consuming update"):
        translate_interval_join(_Translator(), IntervalJoin(
            join.fields, join.left, updating, join.kind, join.left_keys, join.right_keys,
            None, join.left_time, join.right_time, 0, 1000))


def test_the_table_api_join_with_time_bounds_is_an_interval_join(t_env):
    from flintlock.table.expressions import col, lit

    a = t_env.from_path("a")
    b = t_env.from_path("b").select(col("id").alias("bid"), col("ts").alias("bts"))
    joined = a.join(b, (col("id") == col("bid"))
                    & col("ts").between(col("bts") - lit(2).seconds, col("bts")))
    plan = joined._plan
    while not isinstance(plan, (IntervalJoin, n.Join)):
        plan = plan.inputs[0]
    assert isinstance(plan, IntervalJoin) and (plan.lower_bound, plan.upper_bound) == (-2000, 0)
