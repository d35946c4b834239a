"""Pandas (vectorized) scalar and aggregate functions and async scalar functions (issue 32,
item 6): the batch a pandas function gets in a Calc, its result checks, per-row use elsewhere,
async calls run concurrently in order with Flink's timeout and retries, and ListView /
MapView accumulators. Thread TaskManagers."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pandas as pd
import pytest

from flintlock.common.types import Row
from flintlock.table import DataTypes, EnvironmentSettings, TableEnvironment
from flintlock.table.codegen.vectorized import (
    AsyncFunctionTimeoutError,
    to_series,
)
from flintlock.table.data_view import MapView
from flintlock.table.expressions import col
from flintlock.table.udf import AsyncScalarFunction, udaf, udf
from flintlock.testing.executor import use_thread_executor


@pytest.fixture
def t_env(monkeypatch: pytest.MonkeyPatch) -> Any:
    use_thread_executor(monkeypatch)
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "1")
    return env


def items(env: Any, n: int = 5) -> Any:
    return env.from_elements(
        [(i, i * 10) for i in range(1, n + 1)],
        DataTypes.ROW([DataTypes.FIELD("id", DataTypes.BIGINT()),
                       DataTypes.FIELD("v", DataTypes.BIGINT())]))


def values(table: Any) -> list[tuple[Any, ...]]:
    with table.execute().collect() as results:
        return [tuple(r) for r in results]


def test_a_pandas_function_gets_the_whole_batch_as_series(t_env: Any) -> None:
    @udf(result_type=DataTypes.DOUBLE(), func_type="pandas")
    def share(v: pd.Series) -> pd.Series:
        return v / v.sum()

    @udf(result_type=DataTypes.STRING(), func_type="pandas")
    def seen(v: pd.Series) -> pd.Series:
        return pd.Series([f"{v.dtype}/{len(v)}"] * len(v))

    rows = values(items(t_env, 4).select(col("id"), share(col("v")), seen(col("v"))))
    assert rows == [(1, 0.1, "int64/4"), (2, 0.2, "int64/4"), (3, 0.3, "int64/4"),
                    (4, 0.4, "int64/4")]


def test_the_arrow_batch_size_splits_the_batches(t_env: Any) -> None:
    t_env.get_config().set("python.fn-execution.arrow.batch.size", "2")

    @udf(result_type=DataTypes.BIGINT(), func_type="pandas")
    def batch_length(v: pd.Series) -> pd.Series:
        return pd.Series([len(v)] * len(v))

    assert [r[0] for r in values(items(t_env, 5).select(batch_length(col("v"))))] == [
        2, 2, 2, 2, 1]


def test_a_filter_without_pandas_calls_runs_before_the_pandas_function(t_env: Any) -> None:
    @udf(result_type=DataTypes.BIGINT(), func_type="pandas")
    def total(v: pd.Series) -> pd.Series:
        return pd.Series([v.sum()] * len(v))

    rows = values(items(t_env, 4).where(col("v") > 20).select(col("id"), total(col("v"))))
    assert rows == [(3, 70), (4, 70)]


def test_a_pandas_call_in_the_condition_and_nested_calls(t_env: Any) -> None:
    @udf(result_type=DataTypes.BIGINT(), func_type="pandas")
    def plus_one(v: pd.Series) -> pd.Series:
        return v + 1

    table = items(t_env, 4).where(plus_one(col("v")) > 25).select(
        col("id"), plus_one(plus_one(col("id"))))
    assert values(table) == [(3, 5), (4, 6)]


def test_wrong_length_and_wrong_type_fail_with_pyflinks_words(t_env: Any) -> None:
    @udf(result_type=DataTypes.BIGINT(), func_type="pandas")
    def short(v: pd.Series) -> pd.Series:
        return v[:1]

    @udf(result_type=DataTypes.BIGINT(), func_type="pandas")
    def listy(v: pd.Series) -> Any:
        return list(v)

    with pytest.raises(Exception, match="The result length '1' of Pandas UDF 'short' is not "
                                        "equal to the input length '3'"):
        values(items(t_env, 3).select(short(col("v"))))
    with pytest.raises(Exception, match=re.escape(
            "The result type of Pandas UDF 'listy' must be pandas.Series or pandas.DataFrame")):
        values(items(t_env, 3).select(listy(col("v"))))


def test_nulls_cross_as_nan_and_come_back_as_null(t_env: Any) -> None:
    assert str(to_series([1, None], DataTypes.BIGINT()).dtype) == "float64"
    table = t_env.from_elements([(1,), (None,)], DataTypes.ROW(
        [DataTypes.FIELD("a", DataTypes.BIGINT())]))

    @udf(result_type=DataTypes.BIGINT(), func_type="pandas")
    def twice(a: pd.Series) -> pd.Series:
        return a * 2

    assert values(table.select(twice(col("a")))) == [(2,), (None,)]


def test_a_pandas_function_called_per_row_gets_one_row_series() -> None:
    @udf(result_type=DataTypes.BIGINT(), func_type="pandas")
    def parity(v: pd.Series) -> pd.Series:
        assert len(v) == 1
        return v % 2

    assert parity.function(3) == 1 and type(parity.function(4)) is int


def test_a_pandas_aggregate_gets_a_groups_series(monkeypatch: pytest.MonkeyPatch) -> None:
    use_thread_executor(monkeypatch)  # not marked spark: without it the job started Spark
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.get_config().set("parallelism.default", "1")
    median = udaf(lambda v: v.median(), result_type=DataTypes.DOUBLE(), func_type="pandas")
    rows = env.from_elements([("a", 1), ("a", 9), ("a", 2), ("b", 4)], ["k", "v"])
    result = values(rows.group_by(col("k")).select(col("k"), median(col("v"))))
    assert sorted(result) == [("a", 2.0), ("b", 4.0)]


def test_pandas_aggregate_and_async_declarations_are_checked() -> None:
    with pytest.raises(ValueError, match="Async scalar functions do not support pandas"):
        async def f(x: Any) -> Any:
            return x
        udf(f, result_type=DataTypes.INT(), func_type="pandas")
    with pytest.raises(ValueError, match="func_type must be one of"):
        udaf(lambda v: v.sum(), result_type=DataTypes.INT(), func_type="arrow")


class Slow(AsyncScalarFunction):
    def __init__(self) -> None:
        self.in_flight = 0
        self.most = 0

    async def eval(self, key: int) -> str:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        await asyncio.sleep(0.002 * (10 - key))
        self.in_flight -= 1
        return f"v{key}"


def test_async_calls_run_concurrently_and_come_out_in_order(t_env: Any) -> None:
    t_env.get_config().set("table.exec.async-scalar.max-concurrent-operations", "3")
    slow = Slow()
    function = udf(slow, result_type=DataTypes.STRING())
    rows = values(items(t_env, 6).select(col("id"), function(col("id"))))
    assert rows == [(i, f"v{i}") for i in range(1, 7)]


def test_async_concurrency_is_bounded() -> None:
    from flintlock.table.codegen.vectorized import DEFAULT_ASYNC_OPTIONS, run_async_calls

    slow = Slow()
    wrapper = udf(slow, result_type=DataTypes.STRING())
    options = dict(DEFAULT_ASYNC_OPTIONS, max_concurrent_operations=3)
    assert run_async_calls(wrapper, [(k,) for k in range(1, 8)], options) == [
        f"v{k}" for k in range(1, 8)]
    assert slow.most == 3


def test_async_retries_then_times_out_with_a_typed_error(t_env: Any) -> None:
    from flintlock.table.codegen.vectorized import DEFAULT_ASYNC_OPTIONS, run_async_calls

    attempts: list[int] = []

    async def flaky(x: int) -> int:
        attempts.append(x)
        if len(attempts) < 3:
            raise ConnectionError("try again")
        return x + 1

    wrapper = udf(flaky, result_type=DataTypes.BIGINT())
    options = dict(DEFAULT_ASYNC_OPTIONS, retry_delay_s=0.0)
    assert run_async_calls(wrapper, [(1,)], options) == [2]
    assert attempts == [1, 1, 1]

    async def hangs(x: int) -> int:
        await asyncio.sleep(60)  # cancelled by the timeout
        return x

    hanging = udf(hangs, result_type=DataTypes.BIGINT())
    with pytest.raises(AsyncFunctionTimeoutError, match="timed out for input: \\[7\\]"):
        run_async_calls(hanging, [(7,)], dict(DEFAULT_ASYNC_OPTIONS, timeout_s=0.01))

    t_env.get_config().set("table.exec.async-scalar.timeout", "10 ms")
    with pytest.raises(Exception, match="timed out"):
        values(items(t_env, 1).select(hanging(col("id"))))


def test_no_retry_fails_at_the_first_exception(t_env: Any, tmp_path: Any) -> None:
    t_env.get_config().set("table.exec.async-scalar.retry-strategy", "NO_RETRY")
    log = str(tmp_path / "calls")

    async def fails(x: int) -> int:
        with open(log, "a") as calls:
            calls.write(f"{x}\n")
        raise ValueError("no")

    with pytest.raises(Exception, match="no"):
        values(items(t_env, 1).select(udf(fails, result_type=DataTypes.BIGINT())(col("id"))))
    with open(log) as calls:
        assert calls.read() == "1\n"


def test_map_view_dict_access() -> None:
    view: MapView[str, int] = MapView()
    view["a"] = 1
    view.put("b", 2)
    assert "a" in view and view["b"] == 2 and sorted(view) == ["a", "b"]
    del view["a"]
    assert not view.contains("a") and list(view.items()) == [("b", 2)]
    assert Row(view, 1)[0] is view
