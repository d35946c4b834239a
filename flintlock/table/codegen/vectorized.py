"""Pandas (vectorized) and async scalar functions, a batch of rows at a time (issue 32).

PyFlink evaluates a pandas scalar function (``udf(..., func_type="pandas")``) over Arrow
batches of the rows its Python Calc gets: one ``pandas.Series`` per argument, a Series as long
back. It runs an ``AsyncScalarFunction`` (or an ``async def`` function) with many calls in
flight on an asyncio loop, results in input order. Here both run in ``VectorizedCalc``, a
BUNDLE_PROCESS function (``runtime.tasks.bundle_process_operator``) the planner puts where a
Calc calls such a function: at each bundle's end (its size, its time, a watermark, a
checkpoint, the end of input, as for PyFlink's bundles), the rows

1. pass the Calc's condition first when it calls no batch function (PyFlink runs that filter
   before its Python Calc, so a pandas function only sees the rows that pass);
2. get one extra column per batch function call, computed over the batch (pandas: in batches
   of ``python.fn-execution.arrow.batch.size`` rows, default 1000; async: every call of the
   batch started at once, at most ``table.exec.async-scalar.max-concurrent-operations`` in
   flight) — innermost calls first, so a call's arguments may use another's column;
3. go through the row code the compiler makes for the Calc with each call replaced by a
   reference to its column (``compile_calc``): the compiler is not changed.

Elsewhere (a GROUP BY key, an aggregate's argument, a join condition) a pandas function gets
one-row Series and an async function's call is awaited on its own (``one_row_of_pandas_function``,
``blocking_call_of``). ``series_of_values`` gives a pandas aggregate function (``udf.py``'s
``PandasAggregateFunction``) its group's columns.

Values cross as PyFlink's Arrow conversion makes them: an integer column is ``int64`` (the
declared width), ``float64`` with NaN where it has NULLs; FLOAT/DOUBLE are floats with NaN for
NULL; BOOLEAN is ``bool`` (``object`` with NULLs); TIMESTAMP ``datetime64[ns]``; everything
else ``object``. A result's NaN / None / NaT is NULL; numpy scalars become Python values.
"""

from __future__ import annotations

import asyncio
import datetime
import decimal
import math
import threading
from collections.abc import Callable, Sequence
from typing import Any

from flintlock.common.row_batches import new_row
from flintlock.common.types import Row
from flintlock.datastream.functions import ProcessFunction
from flintlock.table import types as t
from flintlock.table.errors import TableError, TableException
from flintlock.table.plan.rex import Call, InputRef, Rex, UdfCall

ARROW_BATCH_SIZE = 1000
DEFAULT_ASYNC_OPTIONS = {"max_concurrent_operations": 10, "timeout_s": 180.0,
                         "retry": True, "max_attempts": 3, "retry_delay_s": 0.1}

__all__ = [
    "AsyncFunctionTimeoutError",
        "PandasFunctionResultError",
    "VectorizedCalc",
    "async_options",
    "blocking_call_of",
    "call_pandas_function",
    "has_batch_calls",
    "one_row_of_pandas_function",
]


class PandasFunctionResultError(TableError):
    """A pandas function returned something other than a Series of the input's length."""


class AsyncFunctionTimeoutError(TableError, TimeoutError):
    """An async scalar function's call did not complete within table.exec.async-scalar.timeout."""


# -- values between rows and pandas --------------------------------------------------------------

_INTEGERS = {t.TinyIntType: "int8", t.SmallIntType: "int16", t.IntType: "int32",
             t.BigIntType: "int64"}
_FLOATS = {t.FloatType: "float32", t.DoubleType: "float64"}


def to_series(values: Sequence[Any], data_type: t.DataType | None) -> Any:
    """One column of a batch as the Series PyFlink's Arrow conversion gives."""
    import pandas as pd

    has_null = any(v is None for v in values)
    kind = type(data_type)
    if kind in _INTEGERS:
        if has_null:
            return pd.Series([math.nan if v is None else v for v in values], dtype="float64")
        return pd.Series(values, dtype=_INTEGERS[kind])
    if kind in _FLOATS:
        return pd.Series([math.nan if v is None else v for v in values], dtype=_FLOATS[kind])
    if kind is t.BooleanType and not has_null:
        return pd.Series(values, dtype="bool")
    if kind is t.TimestampType:
        return pd.Series(pd.to_datetime(list(values)), dtype="datetime64[ns]")
    return pd.Series(list(values), dtype="object")


def python_value(value: Any, data_type: t.DataType | None = None) -> Any:
    """A pandas/numpy result element as the Python value of ``data_type`` (NaN/NaT -> None)."""
    import pandas as pd

    if value is None or value is pd.NaT or value is pd.NA:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    item = getattr(value, "item", None)
    if item is not None and not isinstance(value, (decimal.Decimal, datetime.date)):
        value = item()
        if isinstance(value, float) and math.isnan(value):
            return None
    kind = type(data_type)
    if kind in _INTEGERS and isinstance(value, float):
        return int(value)
    if kind in _FLOATS and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


# -- pandas scalar functions ---------------------------------------------------------------------

def _callable(wrapper: Any) -> Callable[..., Any]:
    func = wrapper._func
    evaluate = getattr(func, "eval", None)
    return evaluate if evaluate is not None else func  # type: ignore[no-any-return]


def call_pandas_function(wrapper: Any, series: Sequence[Any]) -> Any:
    """``wrapper``'s pandas function over one batch, its result checked as PyFlink does."""
    import pandas as pd

    output = _callable(wrapper)(*series)
    name = wrapper._name
    if type(output) not in (pd.Series, pd.DataFrame):
        raise PandasFunctionResultError(
            f"The result type of Pandas UDF '{name}' must be pandas.Series or "
            f"pandas.DataFrame, got {type(output)}")
    if series and len(output) != len(series[0]):
        raise PandasFunctionResultError(
            f"The result length '{len(output)}' of Pandas UDF '{name}' is not equal to the "
            f"input length '{len(series[0])}'")
    return output


def _column_values(output: Any, data_type: t.DataType | None) -> list[Any]:
    import pandas as pd

    if isinstance(output, pd.DataFrame):  # a ROW result: one Row per line
        return [Row(*(python_value(v) for v in line))
                for line in output.itertuples(index=False, name=None)]
    return [python_value(v, data_type) for v in output.tolist()]


def one_row_of_pandas_function(wrapper: Any) -> Callable[..., Any]:
    """A per-row call of a pandas function: one-row Series in, the one value out."""
    types = wrapper._input_types

    def one_row(*values: Any) -> Any:
        series = [to_series([v], types[i] if types and i < len(types) else None)
                  for i, v in enumerate(values)]
        return _column_values(call_pandas_function(wrapper, series),
                              wrapper._result_type)[0]

    return one_row


# -- async scalar functions ----------------------------------------------------------------------

def async_options(configuration: Any) -> dict[str, Any]:
    """``table.exec.async-scalar.*`` from a ``Configuration`` (None: Flink's defaults)."""
    if configuration is None:
        return dict(DEFAULT_ASYNC_OPTIONS)
    from flintlock.common.options import table_udf as o

    return {"max_concurrent_operations": configuration.get(o.ASYNC_SCALAR_MAX_CONCURRENT),
            "timeout_s": configuration.get(o.ASYNC_SCALAR_TIMEOUT) / 1000.0,
            "retry": configuration.get(o.ASYNC_SCALAR_RETRY_STRATEGY) != "no-retry",
            "max_attempts": configuration.get(o.ASYNC_SCALAR_MAX_ATTEMPTS),
            "retry_delay_s": configuration.get(o.ASYNC_SCALAR_RETRY_DELAY) / 1000.0}


async def _one_call(function: Callable[..., Any], args: Sequence[Any],
                    options: dict[str, Any], semaphore: asyncio.Semaphore | None) -> Any:
    """One call with Flink's timeout (over all attempts) and fixed-delay retries."""
    attempts = options["max_attempts"] if options["retry"] else 1

    async def attempt_all() -> Any:
        for attempt in range(1, attempts + 1):
            try:
                result = function(*args)
                return await result if asyncio.iscoroutine(result) else result
            except Exception:
                if attempt == attempts:
                    raise
                await asyncio.sleep(options["retry_delay_s"])
        return None  # unreachable: the last attempt returns or raises

    async def guarded() -> Any:
        try:
            return await asyncio.wait_for(attempt_all(), options["timeout_s"])
        except TimeoutError:
            raise AsyncFunctionTimeoutError(
                f"Async function call has timed out for input: {list(args)} (after "
                f"{options['timeout_s']:g} s, table.exec.async-scalar.timeout)") from None

    if semaphore is None:
        return await guarded()
    async with semaphore:
        return await guarded()


class _Loops(threading.local):
    loop: asyncio.AbstractEventLoop | None = None


_LOOPS = _Loops()


def _run(coroutine: Any) -> Any:
    """Runs ``coroutine`` on this thread's own event loop (one per task thread, reused)."""
    loop = _LOOPS.loop
    if loop is None or loop.is_closed():
        loop = _LOOPS.loop = asyncio.new_event_loop()
    return loop.run_until_complete(coroutine)


def run_async_calls(wrapper: Any, calls: Sequence[Sequence[Any]], options: dict[str, Any]
                    ) -> list[Any]:
    """Every call of a batch in flight at once (bounded), results in the calls' order."""
    function = wrapper.coroutine_function

    async def all_calls() -> list[Any]:
        semaphore = asyncio.Semaphore(options["max_concurrent_operations"])
        return list(await asyncio.gather(
            *(_one_call(function, args, options, semaphore) for args in calls)))

    results: list[Any] = _run(all_calls())
    return results


def blocking_call_of(wrapper: Any) -> Callable[..., Any]:
    """A per-row call of an async function: runs it to completion, with the default options."""
    def call(*args: Any) -> Any:
        function = wrapper.coroutine_function
        return _run(_one_call(function, args, DEFAULT_ASYNC_OPTIONS, None))

    return call


# -- the Calc ------------------------------------------------------------------------------------

def _is_batch_call(rex: Rex) -> bool:
    if not isinstance(rex, UdfCall):
        return False
    function = rex.function
    return bool(getattr(function, "vectorized", False) or getattr(function, "asynchronous",
                                                                  False))


def has_batch_calls(rex: Rex | None) -> bool:
    """Whether ``rex`` calls a pandas or an async scalar function."""
    if rex is None:
        return False
    if _is_batch_call(rex):
        return True
    return isinstance(rex, (Call, UdfCall)) and any(has_batch_calls(o) for o in rex.operands)


def _replace(rex: Rex, width: int, calls: list[UdfCall], keys: dict[Any, int]) -> Rex:
    """``rex`` with each batch call (innermost first) a reference to its extra column."""
    if isinstance(rex, (Call, UdfCall)) and any(has_batch_calls(o) for o in rex.operands):
        operands = tuple(_replace(o, width, calls, keys) for o in rex.operands)
        rex = _with_operands(rex, operands)
    if _is_batch_call(rex):
        assert isinstance(rex, UdfCall)
        key = rex.key()
        if key not in keys:
            keys[key] = width + len(calls)
            calls.append(rex)
        return InputRef(rex.type, keys[key])
    return rex


def _with_operands(rex: Call | UdfCall, operands: tuple[Rex, ...]) -> Rex:
    import dataclasses

    return dataclasses.replace(rex, operands=operands)


class VectorizedCalc(ProcessFunction):
    """A Calc that calls pandas or async scalar functions, run a bundle at a time (module
    docstring). Built on the planner's thread, pickled to the TaskManagers."""

    def __init__(self, projections: Sequence[Rex], condition: Rex | None, width: int,
                 configuration: Any = None) -> None:
        from flintlock.table.codegen.compiler import (
            compile_calc,
            compile_predicate,
            compile_projection,
            compile_values,
        )
        from flintlock.table.plan.rex import Literal

        calls: list[UdfCall] = []
        keys: dict[Any, int] = {}
        self.pre_filter = None
        if condition is not None and not has_batch_calls(condition):
            self.pre_filter = compile_predicate(condition)
            condition = None
        replaced_condition = (_replace(condition, width, calls, keys)
                              if condition is not None else None)
        replaced = [_replace(p, width, calls, keys) for p in projections]
        self.functions = [c.function for c in calls]
        self.result_types = [c.type for c in calls]
        self.argument_types = [[o.type for o in c.operands] for c in calls]
        self.arguments = [compile_values([_replace(o, width, calls, keys) for o in c.operands],
                                         f"_arguments{i}") if c.operands else None
                          for i, c in enumerate(calls)]
        if replaced_condition is None:
            replaced_condition = Literal(t.BooleanType(), True)
        self.calc = compile_calc(replaced, replaced_condition)
        self.project = compile_projection(replaced)
        self.has_condition = condition is not None
        self.options = async_options(configuration)
        if configuration is None:
            self.batch_size = ARROW_BATCH_SIZE
        else:
            from flintlock.common.options import table_udf as o

            self.batch_size = configuration.get(o.ARROW_BATCH_SIZE)

    # BUNDLE_PROCESS protocol
    def key_selector(self) -> Callable[[Any], Any]:
        return _no_key

    def add_input(self, rows: list[Any] | None, row: Any) -> list[Any]:
        if rows is None:
            rows = []
        rows.append(row)
        return rows

    def finish_bundle(self, bundle: dict[Any, list[Any]]) -> list[Any]:
        rows = bundle.get(None, [])
        if self.pre_filter is not None:
            keep = self.pre_filter.function
            rows = [r for r in rows if keep(r)]
        if not rows:
            return []
        extended = [new_row(list(r._values), r._row_kind) for r in rows]
        for index, function in enumerate(self.functions):
            column = self._column(index, function, extended)
            for row, value in zip(extended, column, strict=True):
                row._values.append(value)
        if self.has_condition:
            calc = self.calc.function
            return [out for row in extended for out in calc(row)]
        project = self.project.function
        return [project(row) for row in extended]

    def _column(self, index: int, function: Any, rows: list[Any]) -> list[Any]:
        arguments = self.arguments[index]
        calls = ([arguments.function(r) for r in rows] if arguments is not None
                 else [() for _ in rows])
        if getattr(function, "asynchronous", False):
            return run_async_calls(function, calls, self.options)
        types = self.argument_types[index]
        result_type = self.result_types[index]
        column: list[Any] = []
        for start in range(0, len(calls), self.batch_size):
            batch = calls[start:start + self.batch_size]
            series = [to_series([c[i] for c in batch], types[i]) for i in range(len(types))]
            if not series:  # a function of no arguments gets nothing; its length is unchecked
                output = _callable(function)()
                column.extend(_column_values(output, result_type)[:len(batch)])
                continue
            column.extend(_column_values(call_pandas_function(function, series), result_type))
        return column

    # user functions' lifecycle, as the compiled Calc's
    def open(self, runtime_context: Any) -> None:
        for function in self._user_functions():
            function.open(runtime_context)

    def close(self) -> None:
        for function in self._user_functions():
            function.close()

    def _user_functions(self) -> list[Any]:
        seen: dict[int, Any] = {id(f): f for f in self.functions}
        compiled = [self.calc, self.project, *(a for a in self.arguments if a is not None)]
        if self.pre_filter is not None:
            compiled.append(self.pre_filter)
        for c in compiled:
            for f in c.user_functions():
                seen.setdefault(id(f), f)
        return list(seen.values())

    def process_element(self, value: Any, ctx: Any) -> Any:
        raise TypeError("VectorizedCalc runs as a BUNDLE_PROCESS operator")


def _no_key(_row: Any) -> None:
    return None


def series_of_values(values: Sequence[Any]) -> Any:
    """A column whose type is not declared (a pandas aggregate's argument): integers as
    ``int64`` (``float64`` with NULLs), numbers as ``float64``, else ``object``."""
    import pandas as pd

    numbers = [v for v in values if v is not None]
    if numbers and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                       for v in numbers):
        kind = t.BigIntType() if all(isinstance(v, int) for v in numbers) else t.DoubleType()
        return to_series(values, kind)
    return pd.Series(list(values), dtype="object")


def refuse_streaming_pandas_aggregates(functions: Any) -> None:
    """Flink 2.3 plans no pandas aggregate function in a streaming GROUP BY (nor a window
    TVF aggregation): its planner's error, first line as PyFlink prints it."""
    if any(getattr(f, "_func_type", "") == "pandas" for f in functions):
        raise TableException(
            "Cannot generate a valid execution plan for the given query: \n\n"
            "Pandas UDAFs are not supported in streaming mode currently.")
