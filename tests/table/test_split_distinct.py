"""Split distinct aggregation (``table.optimizer.distinct-agg.split.enabled``, issue 32): the
bucket column's HASH_CODE, the rewrite's shape (Flink's SplitAggregateRule), and split jobs
ending in the same table as unsplit ones. The exact changelogs against PyFlink 2.3.0 are the
parity program ``table_split_distinct``."""

from __future__ import annotations

from typing import Any

import pytest

from flintlock.common.types import RowKind
from flintlock.table import types as t
from flintlock.table.plan import nodes as n
from flintlock.table.planner import split_distinct as sd


@pytest.mark.parametrize("value, data_type, expected", [
    # HASH_CODE(...) as PyFlink 2.3.0 printed it over a table's rows: a string's is
    # |String.hashCode()| (Java's is -217287203 for 'hello world!'), a number's is not made
    # positive
    ("abc", t.VarCharType(10), 96354), ("", t.VarCharType(10), 0),
    ("hello world!", t.VarCharType(20), 217287203), ("é中", t.VarCharType(5), 27236),
    ("abcdefgh", t.VarCharType(10), 1259673732), ("search", t.VarCharType(9), 906336856),
    ("x" * 40, t.VarCharType(40), 847293440),
    (-7, t.BigIntType(), 6), (-123457, t.BigIntType(), 123456),
    (-2.5, t.DoubleType(), -1073479680), (1.5, t.DoubleType(), 1073217536),
    (-7, t.IntType(), -7), (True, t.BooleanType(), 1231), (None, t.IntType(), None),
])
def test_hash_code_is_flinks(value: Any, data_type: t.DataType, expected: int | None) -> None:
    assert sd.hash_code(value, data_type) == expected


def test_the_bucket_is_javas_remainder() -> None:
    assert sd.java_mod(217287203, 1024) == 547
    assert sd.java_mod(-7, 4) == -3 and sd.java_mod(7, 4) == 3


def _aggregate(*calls: n.AggregateCall) -> n.Aggregate:
    fields = n.fields_of(["k", "a", "b"], [t.VarCharType(5), t.IntType(), t.IntType()])
    source = n.Values(fields, ())
    out = n.fields_of(["k"] + [f"c{i}" for i in range(len(calls))],
                      [t.VarCharType(5)] + [c.type for c in calls])
    return n.Aggregate(out, source, (0,), calls)


BIG = t.BigIntType(False)


def test_one_distinct_argument_needs_no_expansion() -> None:
    node = _aggregate(n.AggregateCall("COUNT", (1,), BIG, distinct=True),
                      n.AggregateCall("COUNT", (), BIG))
    final = sd.split(node, 1024)
    assert isinstance(final, n.Aggregate) and final.group == (0,)
    assert [c.name for c in final.calls] == ["SUM0", "SUM0"]
    partial = final.input
    assert isinstance(partial, n.Aggregate) and partial.group == (0, 3)  # k, bucket of a
    assert [(c.name, c.distinct) for c in partial.calls] == [("COUNT", True), ("COUNT", False)]
    split_input = partial.input
    assert isinstance(split_input, sd.SplitInput)
    assert split_input.hashed == (1,) and split_input.group_sets == ()


def test_several_distinct_arguments_expand_each_row_per_group_set_in_calcites_order() -> None:
    node = _aggregate(n.AggregateCall("SUM", (2,), t.IntType(), distinct=True),
                      n.AggregateCall("COUNT", (1,), BIG, distinct=True),
                      n.AggregateCall("AVG", (2,), t.IntType()))
    final = sd.split(node, 1024)
    assert isinstance(final, n.Calc)  # AVG: the final sums divided
    partial = final.input.input
    split_input = partial.input
    # buckets of a (field 3) and b (field 4); sets {k, hb} {k, ha} {k}: {0,3} < {0,4} < {0}
    assert split_input.hashed == (1, 2)
    assert split_input.group_sets == (frozenset({0, 3}), frozenset({0, 4}), frozenset({0}))
    assert [(c.name, c.filter) for c in partial.calls] == [
        ("SUM", 5), ("COUNT", 6), ("SUM0", 7), ("COUNT", 7)]
    # filter columns in order of first use: SUM's set, COUNT's, the keys'
    assert split_input.filters == ((1, None), (0, None), (2, None))


def test_expand_rows_null_the_other_buckets_and_flag_their_own_calls() -> None:
    from flintlock.common.types import row_of

    expand = sd.ExpandRows([(1, t.IntType()), (2, t.IntType())], 4,
                           [[True, False], [False, True], [False, False]],
                           [(0, None), (1, None), (2, 3)], 3)
    rows = expand.flat_map(row_of(["x", 5, -6, True], RowKind.UPDATE_BEFORE))
    assert [r._values[4:] for r in rows] == [
        [1, None, True, False, False], [None, -2, False, True, False],
        [None, None, False, False, True]]
    assert {r.get_row_kind() for r in rows} == {RowKind.UPDATE_BEFORE}


# -- jobs on TaskManager threads -----------------------------------------------------------------

CLICKS = [(1, "ann", "home"), (2, "bob", "home"), (3, "ann", "cart"), (4, "cid", "home"),
          (5, "bob", "cart"), (6, "ann", "home"), (7, "cid", "pay"), (8, "bob", "home")]
QUERY = ("SELECT who, COUNT(DISTINCT page) AS pages, COUNT(*) AS n, AVG(id) AS mean "
         "FROM clicks GROUP BY who")


def _changelog(monkeypatch: Any, **settings: str) -> list[tuple[RowKind, tuple[Any, ...]]]:
    from flintlock.table import EnvironmentSettings, TableEnvironment
    from flintlock.testing.executor import use_thread_executor

    use_thread_executor(monkeypatch)
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = t_env.get_config()
    config.set("parallelism.default", "1")
    for key, value in settings.items():
        config.set(key, value)
    t_env.create_temporary_view("clicks", t_env.from_elements(CLICKS, ["id", "who", "page"]))
    return [(r.get_row_kind(), tuple(r)) for r in t_env.execute_sql(QUERY).collect()]


def _final(changelog: list[tuple[RowKind, tuple[Any, ...]]]) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for kind, row in changelog:
        if kind in (RowKind.INSERT, RowKind.UPDATE_AFTER):
            rows.append(row)
        else:
            rows.remove(row)
    return sorted(rows)


def test_a_split_job_ends_in_the_unsplit_table_through_more_updates(monkeypatch) -> None:
    plain = _changelog(monkeypatch)
    split = _changelog(monkeypatch, **{"table.optimizer.distinct-agg.split.enabled": "true",
                                       "table.optimizer.distinct-agg.split.bucket-num": "2"})
    assert _final(split) == _final(plain) == [("ann", 2, 3, 3), ("bob", 2, 3, 5),
                                              ("cid", 2, 2, 5)]
    # a key's partial row updated retracts its part of the result first
    assert len(split) > len(plain)


def test_the_sql_hash_code_function_is_flinks_too(monkeypatch) -> None:
    from flintlock.table import EnvironmentSettings, TableEnvironment
    from flintlock.testing.executor import use_thread_executor

    use_thread_executor(monkeypatch)
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.create_temporary_view("w", t_env.from_elements(
        [("hello world!", -123457, -7)], ["s", "i", "n"]))
    rows = [tuple(r) for r in t_env.execute_sql(
        "SELECT HASH_CODE(s), MOD(HASH_CODE(s), 4), HASH_CODE(i), HASH_CODE(CAST(n AS INT)) "
        "FROM w").collect()]
    assert rows == [(217287203, 3, 123456, -7)]  # as PyFlink 2.3.0 printed them
