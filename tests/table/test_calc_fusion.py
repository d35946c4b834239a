"""Calc fusion (issue 28's speed work): a chain of Calcs is one compiled function; a Calc over a
datagen table runs inside the source's batch loop (``compile_column_calc``); a Calc that gives
its input's values back (a sink's widening CAST) is no operator at all. Same rows as before,
checked on the job's output and against the plain (unfused) functions."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

import flintlock.datastream.stream_execution_environment as environment
from flintlock.common.operator_spec import OperatorKind
from flintlock.common.types import Row, RowKind
from flintlock.table import DataTypes, EnvironmentSettings, TableEnvironment
from flintlock.table import types as t
from flintlock.table.codegen.compiler import (
    compile_calc,
    compile_column_calc,
    compile_projection,
    is_value_identity,
)
from flintlock.table.connectors.datagen import DataGenReader, _Splits, plan_of
from flintlock.table.plan.nodes import Field, TableSpec
from flintlock.table.plan.rex import Call, InputRef, Literal
from flintlock.table.udf import ScalarFunction, udf
from flintlock.testing.clock import ManualClock
from flintlock.testing.executor import use_thread_executor

BIG = t.BigIntType(False)
ID = InputRef(BIG, 0)
MOD = Call(t.IntType(False), "MOD", (ID, Literal(t.IntType(False), 10)))
KEEP = Call(t.BooleanType(False), "<>", (MOD, Literal(t.IntType(False), 0)))


@pytest.fixture
def t_env(monkeypatch: pytest.MonkeyPatch) -> Any:
    use_thread_executor(monkeypatch)
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "2")
    env.execute_sql(
        "CREATE TABLE src (id BIGINT, r INT) WITH ('connector' = 'datagen', "
        "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '200', "
        "'fields.r.min' = '0', 'fields.r.max' = '9')")
    return env


def graphs(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    captured: list[Any] = []
    cls = environment.StreamExecutionEnvironment
    original = cls.get_stream_graph

    def capture(self: Any, *args: Any, **kwargs: Any) -> Any:
        graph = original(self, *args, **kwargs)
        captured.append(graph)
        return graph

    monkeypatch.setattr(cls, "get_stream_graph", capture)
    return captured


def kinds(graph: Any) -> list[OperatorKind]:
    return [node.operator.kind for node in graph._nodes.values()]


def final(result: Any) -> list[tuple[Any, ...]]:
    rows: dict[tuple[Any, ...], int] = {}
    for row in result.collect():
        values = tuple(row[i] for i in range(len(row)))
        rows[values] = rows.get(values, 0) + (
            1 if row.get_row_kind() in (RowKind.INSERT, RowKind.UPDATE_AFTER) else -1)
    return sorted(v for v, n in rows.items() for _ in range(n))


def test_a_filter_and_projection_over_datagen_run_in_the_source(t_env: Any, monkeypatch: Any
                                                                ) -> None:
    captured = graphs(monkeypatch)
    got = final(t_env.execute_sql(
        "SELECT d, id FROM (SELECT id, id * 2 + 1 AS d FROM src WHERE MOD(id, 10) <> 0) "
        "WHERE id > 100"))
    assert got == [(2 * i + 1, i) for i in range(101, 201) if i % 10]
    assert OperatorKind.MAP not in kinds(captured[-1])
    assert OperatorKind.FLAT_MAP not in kinds(captured[-1])


def test_a_plain_function_udf_is_fused_one_with_open_stays_an_operator(
        t_env: Any, monkeypatch: Any) -> None:
    captured = graphs(monkeypatch)
    t_env.create_temporary_function(
        "plus", udf(lambda x: x + 1, result_type=DataTypes.BIGINT()))
    assert final(t_env.execute_sql("SELECT plus(id) FROM src WHERE id <= 5")) == [
        (i + 1,) for i in range(1, 6)]
    assert OperatorKind.FLAT_MAP not in kinds(captured[-1])  # no open(): runs in the source

    class Opened(ScalarFunction):
        def open(self, function_context: Any) -> None:
            self.offset = 10

        def eval(self, x: int) -> int:
            return x + self.offset

    t_env.create_temporary_function("opened", udf(Opened(), result_type=DataTypes.BIGINT()))
    assert final(t_env.execute_sql("SELECT opened(id) FROM src WHERE id <= 5")) == [
        (i + 10,) for i in range(1, 6)]
    assert OperatorKind.FLAT_MAP in kinds(captured[-1])  # opened with a runtime context


def test_a_sinks_widening_cast_is_no_operator(t_env: Any, monkeypatch: Any) -> None:
    captured = graphs(monkeypatch)
    t_env.execute_sql("CREATE TABLE sink (k BIGINT, c BIGINT) WITH ('connector' = 'blackhole')")
    t_env.execute_sql("INSERT INTO sink SELECT MOD(id, 10) AS k, COUNT(*) AS c FROM src "
                      "GROUP BY MOD(id, 10)").wait()
    assert kinds(captured[-1]) == [OperatorKind.SOURCE, OperatorKind.KEYED_BATCH_PROCESS,
                                   OperatorKind.SINK]
    got = final(t_env.execute_sql("SELECT MOD(id, 10) AS k, COUNT(*) AS c FROM src "
                                  "GROUP BY MOD(id, 10)"))
    assert got == [(k, 20) for k in range(10)]


def test_value_identity_needs_every_field_in_place() -> None:
    small = InputRef(t.IntType(False), 0)
    widened = Call(BIG, "CAST", (small,))
    assert is_value_identity([widened, InputRef(BIG, 1)], 2)
    assert not is_value_identity([InputRef(BIG, 1), widened], 2)  # swapped
    assert not is_value_identity([widened], 2)  # a field dropped
    narrowed = Call(t.IntType(False), "CAST", (InputRef(BIG, 0),))
    assert not is_value_identity([narrowed], 1)  # a narrowing cast computes
    assert not is_value_identity([MOD], 1)


def test_the_column_calc_gives_the_row_calcs_rows() -> None:
    columns = [range(1, 41), list(range(100, 140))]
    rows = [Row(a, b) for a, b in zip(*columns, strict=True)]
    projections = [MOD, InputRef(BIG, 1), ID]
    row_calc = compile_calc(projections, KEEP)
    expected = [out for row in rows for out in row_calc(row)]
    got = compile_column_calc(projections, KEEP)(columns, 40, RowKind.INSERT)
    assert got == expected and len(got) == 36
    assert compile_column_calc([Literal(BIG, 7)], None)(columns, 3, RowKind.INSERT) == [
        Row(7), Row(7), Row(7)]


@pytest.mark.parametrize("kind", [RowKind.INSERT, RowKind.UPDATE_AFTER, RowKind.DELETE])
def test_the_column_calc_without_a_filter_gives_the_row_calcs_rows(
        kind: RowKind) -> None:
    nullable = InputRef(t.BigIntType(), 1)
    doubled = Call(t.BigIntType(), "*", (nullable, Literal(BIG, 2)))
    columns: list[Any] = [range(1, 41), [None if i % 7 == 0 else i for i in range(100, 140)]]
    rows = [Row(a, b) for a, b in zip(*columns, strict=True)]
    projections = [MOD, nullable, ID, doubled, Literal(BIG, 7), ID]
    row_calc = compile_projection(projections)
    calc = compile_column_calc(projections, None)
    got = calc(columns, 40, kind)
    assert [list(r) for r in got] == [list(row_calc(row)) for row in rows]
    assert {r.get_row_kind() for r in got} == {kind} and len(got) == 40
    assert calc([range(0), []], 0, kind) == []
    assert [list(r) for r in compile_column_calc([], None)([range(2)], 2, kind)] == [[], []]
    once = calc([range(1, 41), iter(columns[1])], 40, kind)  # a one-pass column, read twice
    assert [list(r) for r in once] == [list(r) for r in got]


def test_a_fused_filter_counts_generated_rows_against_the_rate() -> None:
    table = TableSpec(("g",), (Field("id", BIG),), {
        "connector": "datagen", "fields.id.kind": "sequence", "fields.id.start": "1",
        "fields.id.end": "100", "rows-per-second": "10"})
    keep_last = Call(t.BooleanType(False), ">", (ID, Literal(BIG, 95)))
    plan = replace(plan_of(table), calc=compile_column_calc([ID], keep_last))
    clock = ManualClock()
    reader = DataGenReader(plan, 1, clock)
    reader.add_splits(_Splits(plan.total_rows, 1).initial())
    reader.notify_no_more_splits()
    emitted: list[Any] = []
    for second in range(10):  # 10 rows a second: all 100 rows take 10 seconds
        records, finished = reader.poll(1000)
        emitted.extend(records)
        assert finished == (second == 9)
        if not finished:
            assert reader.poll(1000) == ([], False)  # the second's budget is used up
        clock.advance(1000)
    assert emitted == [Row(i) for i in range(96, 101)]


def test_computed_columns_and_watermark_run_in_the_source_same_windows(
        t_env: Any, monkeypatch: Any) -> None:
    """A datagen table's computed columns (the rowtime of a WATERMARK among them) are computed
    in the source's batch loop: no Calc operator between the source and the assigner, and
    the same window results as with the computed-column map (fusion switched off)."""
    from flintlock.table.connectors.datagen import DataGenFactory

    t_env.get_config().set("parallelism.default", "1")
    t_env.execute_sql(
        "CREATE TABLE ev (id BIGINT, k AS MOD(id, 3), ts AS TIMESTAMPADD(SECOND, "
        "CAST(FLOOR(id / 10) AS INT), TIMESTAMP '2024-01-01 00:00:00'), "
        "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen', "
        "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '95')")
    query = ("SELECT k, window_start, COUNT(*), SUM(id) FROM TABLE(TUMBLE(TABLE ev, "
             "DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY k, window_start, window_end")
    captured = graphs(monkeypatch)
    fused = final(t_env.execute_sql(query))
    assert kinds(captured[-1])[:2] == [OperatorKind.SOURCE, OperatorKind.TIMESTAMPS]
    monkeypatch.setattr(DataGenFactory, "accepts_calc", False)
    plain = final(t_env.execute_sql(query))
    assert kinds(captured[-1])[:3] == [OperatorKind.SOURCE, OperatorKind.MAP,
                                       OperatorKind.TIMESTAMPS]
    assert fused == plain and len(plain) == 3 * 5
    assert sum(row[2] for row in fused) == 95
