"""Python aggregate functions a bundle at a time (``changelog.bundled_agg`` on the
KEYED_BUNDLE_PROCESS operator, ``runtime.tasks.bundle_process_operator``): PyFlink's Python
group aggregation buffers a bundle's rows per key and emits one result per key when the bundle
ends. Where a bundle ends (size, time, watermark, checkpoint, end of input), the changelog of a
udaf and of a udtaf (``flat_aggregate``) with retractions, and the Table API end to end."""

from __future__ import annotations

from typing import Any

import pytest

from flintlock.common.operator_spec import OperatorKind, OperatorSpec
from flintlock.common.types import Row, RowKind
from flintlock.datastream.changelog.bundled_agg import (
    BundledGroupAggFunction,
    BundledGroupTableAggFunction,
)
from flintlock.datastream.changelog.group_agg import AggregateCall
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.tasks.operator import TaskEnvironment
from flintlock.testing.operators import ManualTimers, MemoryStateWriter, open_operator


class SumAndCount:
    """A user's aggregate with retraction: (sum, count) of its argument."""

    def create_accumulator(self) -> list[int]:
        return [0, 0]

    def accumulate(self, acc: list[int], value: int) -> None:
        acc[0] += value
        acc[1] += 1

    def retract(self, acc: list[int], value: int) -> None:
        acc[0] -= value
        acc[1] -= 1

    def get_value(self, acc: list[int]) -> Row:
        return Row(acc[0], acc[1])


class TopTwo:
    """A user's table aggregate: the two largest values, largest first."""

    def create_accumulator(self) -> list[int]:
        return []

    def accumulate(self, acc: list[int], value: int) -> None:
        acc.append(value)

    def retract(self, acc: list[int], value: int) -> None:
        acc.remove(value)

    def emit_value(self, acc: list[int]) -> Any:
        for value in sorted(acc, reverse=True)[:2]:
            yield Row(value)


def _row(kind: RowKind, *values: Any) -> Row:
    row = Row(*values)
    row.set_row_kind(kind)
    return row


def _shown(values: list[Row]) -> list[str]:
    return [f"{row.get_row_kind().short_string()}{[_plain(v) for v in row._values]}"
            for row in values]


def _plain(value: Any) -> Any:
    return tuple(value._values) if isinstance(value, Row) else value


def _operator(function: Any, bundle_size: int = 100_000, bundle_time_ms: int = 1000,
              backend: Any = None) -> tuple[Any, Any, ManualTimers, Any]:
    backend = backend or HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
    timers = ManualTimers()
    spec = OperatorSpec(OperatorKind.KEYED_BUNDLE_PROCESS, keyed=True, function=function)
    operator, out = open_operator(
        spec, keyed_backend=backend, key_selectors=(function.key_selector(),), timers=timers,
        environment=TaskEnvironment(bundle_size=bundle_size, bundle_time_ms=bundle_time_ms))
    return operator, out, timers, backend


def _sum_and_count() -> BundledGroupAggFunction:
    return BundledGroupAggFunction((0,), [AggregateCall(SumAndCount(), (1,))])


INSERTS = [_row(RowKind.INSERT, "a", 1), _row(RowKind.INSERT, "b", 10),
           _row(RowKind.INSERT, "a", 2)]


def test_a_bundle_emits_one_result_per_key_in_first_seen_order_at_the_end_of_input() -> None:
    operator, out, _, _ = _operator(_sum_and_count())
    operator.process_batch(INSERTS[:2])
    operator.process_batch(INSERTS[2:])
    assert out.values() == []
    operator.end_input()
    assert _shown(out.values()) == ["+I['a', (3, 2)]", "+I['b', (10, 1)]"]


def test_the_next_bundle_updates_with_before_and_after_and_skips_an_unchanged_result() -> None:
    operator, out, _, _ = _operator(_sum_and_count())
    operator.process_batch(INSERTS)
    operator.end_input()
    operator.process_batch([_row(RowKind.INSERT, "a", 5), _row(RowKind.INSERT, "b", 0),
                            _row(RowKind.UPDATE_BEFORE, "b", 0)])
    operator.end_input()
    assert _shown(out.values())[2:] == ["-U['a', (3, 2)]", "+U['a', (8, 3)]"]


def test_retracting_every_row_of_a_key_deletes_its_result_and_state() -> None:
    operator, out, _, _ = _operator(_sum_and_count())
    operator.process_batch(INSERTS)
    operator.end_input()
    operator.process_batch([_row(RowKind.DELETE, "b", 10)])
    operator.end_input()
    assert _shown(out.values())[2:] == ["-D['b', (10, 1)]"]
    operator.process_batch([_row(RowKind.DELETE, "b", 10), _row(RowKind.INSERT, "b", 4)])
    operator.end_input()
    # a key without state skips its leading retractions
    assert _shown(out.values())[3:] == ["+I['b', (4, 1)]"]


@pytest.mark.parametrize("ending", ["size", "time", "watermark", "snapshot"])
def test_where_a_bundle_ends(ending: str) -> None:
    operator, out, timers, backend = _operator(_sum_and_count(), bundle_size=3,
                                               bundle_time_ms=500)
    operator.process_batch(INSERTS[:2])
    assert out.values() == []
    if ending == "size":
        operator.process_batch(INSERTS[2:])
    elif ending == "time":
        timers.advance(499)
        assert out.values() == []
        timers.advance(1)
    elif ending == "watermark":
        operator.process_watermark(7)
    else:
        operator.snapshot_state(1)
        backend.snapshot(1).write(MemoryStateWriter(), "keyed")
    shown = _shown(out.values())
    assert shown[0].startswith("+I['a', (") and shown[1] == "+I['b', (10, 1)]"
    if ending == "watermark":  # the bundle's results go before the watermark
        assert [event[0] for event in out.events] == ["record", "record", "watermark"]


def test_a_bundle_timer_of_an_ended_bundle_does_not_end_the_next_one_early() -> None:
    operator, out, timers, _ = _operator(_sum_and_count(), bundle_time_ms=500)
    operator.process_batch(INSERTS[:1])
    timers.advance(100)
    operator.process_watermark(1)  # ends bundle 1; its timer is still scheduled at 500
    operator.process_batch(INSERTS[1:2])  # bundle 2 starts at 100, ends at 600
    timers.advance(400)
    assert _shown(out.values()) == ["+I['a', (1, 1)]"]
    timers.advance(100)
    assert _shown(out.values())[1:] == ["+I['b', (10, 1)]"]


def test_a_distinct_call_sees_each_value_once_until_its_last_row_is_retracted() -> None:
    function = BundledGroupAggFunction((0,), [AggregateCall(SumAndCount(), (1,),
                                                            distinct=True)])
    operator, out, _, _ = _operator(function)
    operator.process_batch([_row(RowKind.INSERT, "a", 2), _row(RowKind.INSERT, "a", 2),
                            _row(RowKind.INSERT, "a", 3)])
    operator.end_input()
    operator.process_batch([_row(RowKind.DELETE, "a", 2)])
    operator.end_input()
    operator.process_batch([_row(RowKind.DELETE, "a", 2)])
    operator.end_input()
    assert _shown(out.values()) == ["+I['a', (5, 2)]", "-U['a', (5, 2)]",
                                    "+U['a', (3, 1)]"]


def test_a_table_aggregate_retracts_its_previous_rows_then_emits_the_new_ones() -> None:
    function = BundledGroupTableAggFunction((0,), AggregateCall(TopTwo(), (1,)))
    operator, out, _, _ = _operator(function)
    operator.process_batch([_row(RowKind.INSERT, "a", 1), _row(RowKind.INSERT, "a", 5)])
    operator.end_input()
    operator.process_batch([_row(RowKind.INSERT, "a", 3), _row(RowKind.DELETE, "a", 5)])
    operator.end_input()
    operator.process_batch([_row(RowKind.DELETE, "a", 1), _row(RowKind.DELETE, "a", 3)])
    operator.end_input()
    assert _shown(out.values()) == [
        "+I['a', 5]", "+I['a', 1]",
        "-D['a', 5]", "-D['a', 1]", "+I['a', 3]", "+I['a', 1]",
        "-D['a', 3]", "-D['a', 1]"]


def test_state_of_a_bundle_survives_a_snapshot_and_restore() -> None:
    operator, _, _, backend = _operator(_sum_and_count())
    operator.process_batch(INSERTS)
    operator.snapshot_state(1)
    files = MemoryStateWriter()
    handle = backend.snapshot(1).write(files, "keyed")
    restored_backend = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
    restored_backend.restore([handle], lambda h: files.files[h.uri.split("//")[1]])
    restored, restored_out, _, _ = _operator(_sum_and_count(), backend=restored_backend)
    restored.process_batch([_row(RowKind.INSERT, "a", 10)])
    restored.end_input()
    assert _shown(restored_out.values()) == ["-U['a', (3, 2)]", "+U['a', (13, 3)]"]


# -- the Table API and SQL end to end (TaskManager threads) ------------------------------------


@pytest.fixture
def t_env(monkeypatch):
    from flintlock.table import EnvironmentSettings, TableEnvironment
    from flintlock.testing.executor import use_thread_executor

    use_thread_executor(monkeypatch)
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "1")
    return env


def _changelog(table: Any) -> list[tuple[RowKind, tuple[Any, ...]]]:
    return [(r.get_row_kind(), tuple(r)) for r in table.execute().collect()]


def _orders(t_env: Any) -> Any:
    return t_env.from_elements(
        [(1, "apple", 3), (2, "pear", 1), (3, "apple", 2), (4, "fig", 5), (5, "pear", 4)],
        ["id", "fruit", "qty"])


def test_a_sql_group_by_with_a_python_udaf_emits_once_per_key_and_bundle(t_env) -> None:
    from flintlock.table import DataTypes
    from flintlock.table.udf import AggregateFunction, udaf

    class Total(AggregateFunction):
        def create_accumulator(self):
            return [0]

        def accumulate(self, acc, value):
            acc[0] += value

        def get_value(self, acc):
            return acc[0]

    t_env.create_temporary_view("orders", _orders(t_env))
    t_env.create_temporary_function(
        "total", udaf(Total(), result_type=DataTypes.BIGINT(), accumulator_type=DataTypes.ARRAY(
            DataTypes.BIGINT())))
    rows = _changelog(t_env.sql_query(
        "SELECT fruit, total(qty), COUNT(*) FROM orders GROUP BY fruit"))
    # one bundle (the whole bounded input): no -U/+U, keys in first-seen order
    assert rows == [(RowKind.INSERT, ("apple", 5, 2)), (RowKind.INSERT, ("pear", 5, 2)),
                    (RowKind.INSERT, ("fig", 5, 1))]


def test_flat_aggregate_with_a_udtaf_alias_and_a_global_flat_aggregate(t_env) -> None:
    from flintlock.table import DataTypes
    from flintlock.table.expressions import col
    from flintlock.table.udf import TableAggregateFunction, udtaf

    class Top2(TableAggregateFunction):
        def create_accumulator(self):
            return []

        def accumulate(self, acc, value):
            acc.append(value)
            acc.sort(reverse=True)
            del acc[2:]

        def emit_value(self, acc):
            for rank, value in enumerate(acc, 1):
                yield Row(value, rank)

        def get_result_type(self):
            return DataTypes.ROW([DataTypes.FIELD("v", DataTypes.BIGINT()),
                                  DataTypes.FIELD("r", DataTypes.INT())])

    top2 = udtaf(Top2())
    orders = _orders(t_env)
    grouped = orders.group_by(col("fruit")).flat_aggregate(
        top2(col("qty")).alias("best", "rank")).select(col("fruit"), col("best"), col("rank"))
    assert grouped.get_schema().get_field_names() == ["fruit", "best", "rank"]
    assert _changelog(grouped) == [
        (RowKind.INSERT, ("apple", 3, 1)), (RowKind.INSERT, ("apple", 2, 2)),
        (RowKind.INSERT, ("pear", 4, 1)), (RowKind.INSERT, ("pear", 1, 2)),
        (RowKind.INSERT, ("fig", 5, 1))]
    overall = orders.flat_aggregate(top2(col("qty"))).select(col("v"), col("r"))
    assert _changelog(overall) == [(RowKind.INSERT, (5, 1)), (RowKind.INSERT, (4, 2))]


def test_flat_aggregate_refuses_what_is_not_a_table_aggregate_function(t_env) -> None:
    from flintlock.table.errors import ValidationError
    from flintlock.table.expressions import col

    with pytest.raises(ValidationError, match=r"flat_aggregate\(\) takes a call of a table "
                                              r"aggregate function \(udtaf\)"):
        _orders(t_env).group_by(col("fruit")).flat_aggregate(col("qty").sum).select(
            col("fruit"))
