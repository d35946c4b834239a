"""Event-time temporal joins (``flintlock.datastream.changelog.temporal_join``, issue 32):
Flink's ``TemporalRowTimeJoinOperator`` semantics — a left row waits for the watermark, then
joins the version valid at its time (the latest at or before it), in arrival order; a deleted
version or a failed condition joins nothing (LEFT: NULL-padded); UPDATE_BEFORE rows of the
versioned side are dropped; versions older than the one valid at the watermark are dropped;
state survives a snapshot and restore. And the planner's checks of the versioned table."""

from __future__ import annotations

import pytest

from flintlock.datastream.changelog.errors import InvalidOperatorArgumentError
from flintlock.datastream.changelog.temporal_join import TemporalRowTimeJoinFunction
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.table import EnvironmentSettings, TableEnvironment
from flintlock.table.errors import ValidationError
from flintlock.table.plan.time_join_nodes import TemporalJoin
from tests.table.changelog_harness import Harness, r

END = 2**63 - 1


class TimeOf:
    def __call__(self, row):
        return row[1]


def _join(left_outer=False, condition=None, state=None, restored=False):
    function = TemporalRowTimeJoinFunction(3, 3, (0,), (0,), TimeOf(), TimeOf(), condition,
                                           left_outer)
    harness = Harness(function, [function.left_key_selector(), function.right_key_selector()],
                      state=state, restored=restored)
    return harness, function


def test_a_row_joins_the_version_valid_at_its_time_once_the_watermark_passes_it():
    h, _ = _join()
    h.feed(r("+I", "EUR", 0, 1.10), r("+I", "EUR", 5, 1.12), side=1)
    assert h.feed(r("+I", "EUR", 7, "o1"), r("+I", "EUR", 5, "o2"), r("+I", "EUR", 2, "o3")) == []
    assert h.watermark(4) == ["+I[EUR, 2, o3, EUR, 0, 1.1]"]
    assert h.watermark(7) == ["+I[EUR, 7, o1, EUR, 5, 1.12]", "+I[EUR, 5, o2, EUR, 5, 1.12]"]
    assert h.watermark(END) == []


def test_no_version_deletions_and_conditions_pad_a_left_join():
    h, _ = _join(left_outer=True, condition=lambda left, right: right[2] > 1)
    h.feed(r("+I", "EUR", 3, 0.9), r("+I", "GBP", 1, 1.3), side=1)
    h.feed(r("-U", "GBP", 1, 1.3), r("+U", "GBP", 4, 1.28), side=1)  # -U dropped
    h.feed(r("-D", "GBP", 6, 1.28), side=1)  # a deletion is a version too
    h.feed(r("+I", "EUR", 1, "early"), r("+I", "EUR", 5, "cheap"), r("+I", "GBP", 5, "g"),
           r("+I", "GBP", 7, "gone"))
    assert sorted(h.watermark(END)) == sorted([
        "+I[EUR, 1, early, null, null, null]", "+I[EUR, 5, cheap, null, null, null]",
        "+I[GBP, 5, g, GBP, 4, 1.28]", "+I[GBP, 7, gone, null, null, null]"])
    h, _ = _join()
    h.feed(r("+I", "EUR", 1, "early"))
    assert h.watermark(END) == []


def test_old_versions_are_dropped_once_a_newer_one_is_valid_at_the_watermark():
    h, f = _join()
    h.feed(r("+I", "EUR", 0, 1.0), r("+I", "EUR", 5, 1.1), r("+I", "EUR", 9, 1.2), side=1)
    h.feed(r("+I", "EUR", 6, "o"))
    assert h.watermark(6) == ["+I[EUR, 6, o, EUR, 5, 1.1]"]
    h.backend.set_current_key("EUR")
    assert sorted(f._versions.keys()) == [5, 9]
    assert list(f._left.keys()) == []


def test_waiting_rows_and_versions_survive_a_snapshot_and_restore():
    first, _ = _join()
    first.feed(r("+I", "EUR", 0, 1.0), side=1)
    first.feed(r("+I", "EUR", 3, "o"))
    handle, writer = first.snapshot()
    backend = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
    backend.restore([handle], writer.read)
    second, _ = _join(state=backend, restored=True)
    assert second.watermark(END) == ["+I[EUR, 3, o, EUR, 0, 1.0]"]


def test_the_function_needs_keys():
    with pytest.raises(InvalidOperatorArgumentError):
        TemporalRowTimeJoinFunction(1, 1, (), (), TimeOf(), TimeOf())


@pytest.fixture(scope="module")
def t_env():
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql("""CREATE TABLE orders (id INT, cur STRING, ts TIMESTAMP(3),
        WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen')""")
    env.execute_sql("""CREATE TABLE rates (cur STRING, region STRING, rate DOUBLE,
        ts TIMESTAMP(3), WATERMARK FOR ts AS ts, PRIMARY KEY (cur, region) NOT ENFORCED)
        WITH ('connector' = 'datagen')""")
    env.execute_sql("""CREATE TABLE plain (cur STRING, rate DOUBLE, ts TIMESTAMP(3),
        WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen')""")
    return env


def test_the_planner_makes_a_temporal_join_of_a_versioned_table(t_env):
    plan = t_env.sql_query("SELECT * FROM orders o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ts "
                           "AS r ON o.cur = r.cur AND r.region = 'EU' AND o.cur = r.region"
                           )._plan
    while not isinstance(plan, TemporalJoin):
        plan = plan.inputs[0]
    assert plan.kind.value == "LEFT" and (plan.left_keys, plan.right_keys) == ((1, 1), (0, 1))
    assert (plan.left_time, plan.right_time) == (2, 3) and plan.condition is not None


@pytest.mark.parametrize(("query", "message"), [
    ("SELECT * FROM orders o JOIN plain FOR SYSTEM_TIME AS OF o.ts AS p ON o.cur = p.cur",
     "requires primary key"),
    ("SELECT * FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur",
     "primary key \\[cur, region\\] must be included"),
    ("SELECT * FROM orders o RIGHT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r "
     "ON o.cur = r.cur", "only supports INNER JOIN and LEFT JOIN"),
])
def test_the_planner_refuses_what_flink_refuses(t_env, query, message):
    with pytest.raises(ValidationError, match=message):
        t_env.sql_query(query)


def test_a_view_keeping_the_latest_row_per_key_by_rowtime_is_versioned(t_env):
    t_env.execute_sql("""CREATE TEMPORARY VIEW latest AS SELECT cur, rate, ts FROM (
        SELECT *, ROW_NUMBER() OVER (PARTITION BY cur ORDER BY ts DESC) AS rn FROM plain)
        WHERE rn = 1""")
    plan = t_env.sql_query("SELECT * FROM orders o JOIN latest FOR SYSTEM_TIME AS OF o.ts "
                           "AS l ON o.cur = l.cur")._plan
    while not isinstance(plan, TemporalJoin):
        plan = plan.inputs[0]
    assert (plan.left_keys, plan.right_keys) == ((1,), (0,))
