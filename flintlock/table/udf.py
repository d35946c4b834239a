"""PyFlink's ``pyflink.table.udf``: user-defined scalar, table and aggregate functions.

``udf``, ``udtf``, ``udaf`` and ``udtaf`` wrap a Python function or a ``ScalarFunction`` /
``TableFunction`` / ``AggregateFunction`` object with its declared types; calling the wrapper
with expressions (``my_udf(col('a'))``) builds a call the resolver types by the declared result
type. The wrappers travel to the TaskManagers inside the compiled functions (pickled by value
with the job, as a DataStream function does) and run in the same Python process as the
operators: no JVM, no data exchange per call — a Python UDF costs one function call per row.

Each wrapper says what it is with ``_flintlock_kind`` (``scalar``, ``table``, ``aggregate``,
``table_aggregate``) and gives its result type for the argument types (``result_type_for``).
"""

from __future__ import annotations

import abc
import inspect
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, TypeVar

from flintlock.common.types import Row
from flintlock.table import types as t
from flintlock.table.errors import UnsupportedFeatureError, ValidationError

T = TypeVar("T")
ACC = TypeVar("ACC")

__all__ = [
    "AggregateFunction", "AsyncScalarFunction", "FunctionContext", "ScalarFunction",
    "TableAggregateFunction", "TableFunction", "UserDefinedFunction", "udaf", "udf", "udtaf",
    "udtf",
]


class FunctionContext:
    """What ``open`` receives: the task's metric group, job parameters and subtask index."""

    def __init__(self, runtime_context: Any = None) -> None:
        self._context = runtime_context

    def get_metric_group(self) -> Any:
        return self._context.get_metrics_group()

    def get_job_parameter(self, key: str, default_value: str) -> str:
        return str(self._context.get_job_parameter(key, default_value))

    def get_task_name(self) -> str:
        return str(self._context.get_task_name())

    def get_task_name_with_subtasks(self) -> str:
        return str(self._context.get_task_name_with_subtasks())

    def get_number_of_parallel_subtasks(self) -> int:
        return int(self._context.get_number_of_parallel_subtasks())

    def get_max_number_of_parallel_subtasks(self) -> int:
        return int(self._context.get_max_number_of_parallel_subtasks())

    def get_index_of_this_subtask(self) -> int:
        return int(self._context.get_index_of_this_subtask())

    def get_attempt_number(self) -> int:
        return int(self._context.get_attempt_number())


class UserDefinedFunction(abc.ABC):  # noqa: B024 - open/close/is_deterministic are hooks
    def open(self, function_context: FunctionContext) -> None:  # noqa: B027
        pass

    def close(self) -> None:  # noqa: B027
        pass

    def is_deterministic(self) -> bool:
        return True


class ScalarFunction(UserDefinedFunction):
    @abc.abstractmethod
    def eval(self, *args: Any) -> Any: ...


class AsyncScalarFunction(UserDefinedFunction):
    @abc.abstractmethod
    async def eval(self, *args: Any) -> Any: ...


class TableFunction(UserDefinedFunction):
    @abc.abstractmethod
    def eval(self, *args: Any) -> Iterable[Any]: ...


class ImperativeAggregateFunction(UserDefinedFunction, Generic[T, ACC]):
    @abc.abstractmethod
    def create_accumulator(self) -> ACC: ...

    @abc.abstractmethod
    def accumulate(self, accumulator: ACC, *args: Any) -> None: ...

    def retract(self, accumulator: ACC, *args: Any) -> None:
        raise UnsupportedFeatureError(
            f"{type(self).__name__}.retract", "the aggregate function has no retract method, "
            "but its input has updates")

    def merge(self, accumulator: ACC, accumulators: Iterable[ACC]) -> None:
        raise UnsupportedFeatureError(f"{type(self).__name__}.merge")

    def get_result_type(self) -> t.DataType | str:
        raise ValidationError(f"{type(self).__name__} declares no result type: pass "
                              "result_type to udaf() or define get_result_type()")

    def get_accumulator_type(self) -> t.DataType | str:
        raise ValidationError(f"{type(self).__name__} declares no accumulator type")


class AggregateFunction(ImperativeAggregateFunction[T, ACC]):
    @abc.abstractmethod
    def get_value(self, accumulator: ACC) -> T: ...


class PandasAggregateFunction(AggregateFunction[Any, list[Any]]):
    """A pandas aggregate function as the aggregate protocol: the accumulator is the group's
    argument rows; the value is the function over one Series per argument."""

    def __init__(self, func: Any, name: str) -> None:
        self.func = func
        self.name = name

    def create_accumulator(self) -> list[Any]:
        return []

    def accumulate(self, accumulator: list[Any], *args: Any) -> None:
        accumulator.append(args)

    def retract(self, accumulator: list[Any], *args: Any) -> None:
        accumulator.remove(args)

    def merge(self, accumulator: list[Any], accumulators: Iterable[list[Any]]) -> None:
        for other in accumulators:
            accumulator.extend(other)

    def get_value(self, accumulator: list[Any]) -> Any:
        from flintlock.table.codegen.vectorized import python_value, series_of_values

        width = len(accumulator[0]) if accumulator else 0
        series = [series_of_values([a[i] for a in accumulator]) for i in range(width)]
        evaluate = getattr(self.func, "eval", None)
        return python_value((evaluate or self.func)(*series))

    def open(self, function_context: FunctionContext) -> None:
        if isinstance(self.func, UserDefinedFunction):
            self.func.open(function_context)

    def close(self) -> None:
        if isinstance(self.func, UserDefinedFunction):
            self.func.close()


class TableAggregateFunction(ImperativeAggregateFunction[T, ACC]):
    @abc.abstractmethod
    def emit_value(self, accumulator: ACC) -> Iterable[T]: ...


def _data_type(value: t.DataType | str | None) -> t.DataType | None:
    if value is None or isinstance(value, t.DataType):
        return value
    return t.from_sql_string(value)


def _types(values: Any) -> list[t.DataType] | None:
    if values is None:
        return None
    if isinstance(values, t.RowType):
        return list(values.field_types())
    if isinstance(values, (t.DataType, str)):
        values = [values]
    return [_data_type(v) for v in values]  # type: ignore[misc]


class UserDefinedFunctionWrapper:
    """A user's function with its declared types (what ``udf``/``udtf``/``udaf`` return)."""

    _flintlock_kind = "scalar"

    def __init__(self, func: Any, input_types: Any, func_type: str = "general",
                 deterministic: bool | None = None, name: str | None = None) -> None:
        if inspect.isclass(func) or (not isinstance(func, UserDefinedFunction)
                                     and not callable(func)):
            raise TypeError(
                f"Invalid function: not a function or callable (__call__ is not defined): "
                f"{type(func)}")
        self._func = func
        self._input_types = _types(input_types)
        self._name = name or getattr(func, "__name__", type(func).__name__)
        self._func_type = func_type
        self._deterministic = deterministic if deterministic is not None else (
            func.is_deterministic() if isinstance(func, UserDefinedFunction) else True)
        self._alias_names: tuple[str, ...] = ()
        self._takes_row_as_input = False

    def __call__(self, *args: Any) -> Any:
        from flintlock.table.expressions import call

        return call(self, *args)

    def alias(self, *alias_names: str) -> UserDefinedFunctionWrapper:
        self._alias_names = alias_names
        return self

    # -- what runs on the TaskManagers ------------------------------------------------------

    def open(self, runtime_context: Any) -> None:
        if isinstance(self._func, UserDefinedFunction):
            self._func.open(FunctionContext(runtime_context))

    def close(self) -> None:
        if isinstance(self._func, UserDefinedFunction):
            self._func.close()

    @property
    def function(self) -> Callable[..., Any]:
        """What to call per row."""
        evaluate = getattr(self._func, "eval", None)
        return evaluate if evaluate is not None else self._func  # type: ignore[no-any-return]


class UserDefinedScalarFunctionWrapper(UserDefinedFunctionWrapper):
    _flintlock_kind = "scalar"

    def __init__(self, func: Any, input_types: Any, result_type: Any, func_type: str,
                 deterministic: bool | None, name: str | None) -> None:
        super().__init__(func, input_types, func_type, deterministic, name)
        if result_type is None:
            raise TypeError("Invalid returnType: returnType should be DataType or str but is None")
        if func_type not in ("general", "pandas"):
            raise ValueError(f"The func_type must be one of 'general, pandas', got {func_type}.")
        self._result_type = _data_type(result_type)

    def result_type_for(self, argument_types: Sequence[t.DataType]) -> t.DataType:
        return self._result_type  # type: ignore[return-value]

    @property
    def vectorized(self) -> bool:
        """Whether the function takes a batch of rows (pandas) rather than one row."""
        return self._func_type == "pandas"

    @property
    def function(self) -> Callable[..., Any]:
        """What to call per row: a pandas function gets one-row Series (where a Calc runs
        it, ``flintlock.table.vectorized`` hands it the whole batch instead)."""
        if self._func_type != "pandas":
            return super().function
        from flintlock.table.codegen.vectorized import one_row_of_pandas_function

        return one_row_of_pandas_function(self)

    def eval_series(self, *series: Any) -> Any:
        """The pandas function over one batch: a Series as long as the input (checked)."""
        from flintlock.table.codegen.vectorized import call_pandas_function

        return call_pandas_function(self, series)

    def __call__(self, *args: Any) -> Any:
        return super().__call__(*args)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_scalar_wrapper, (self._func, self._input_types, self._result_type,
                                  self._func_type, self._deterministic, self._name))


def _scalar_wrapper(*args: Any) -> UserDefinedScalarFunctionWrapper:
    return UserDefinedScalarFunctionWrapper(*args)


class UserDefinedAsyncScalarFunctionWrapper(UserDefinedScalarFunctionWrapper):
    """An ``AsyncScalarFunction`` or a coroutine function: where a Calc runs it, the calls of
    a batch of rows run concurrently on one asyncio event loop (``flintlock.table.vectorized``,
    ``table.exec.async-scalar.*``); elsewhere each call runs to completion on its own."""

    asynchronous = True

    @property
    def coroutine_function(self) -> Callable[..., Any]:
        """What to call per row: returns the coroutine to await."""
        return super().function

    @property
    def function(self) -> Callable[..., Any]:
        from flintlock.table.codegen.vectorized import blocking_call_of

        return blocking_call_of(self)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_async_scalar_wrapper, (self._func, self._input_types, self._result_type,
                                        self._func_type, self._deterministic, self._name))


def _async_scalar_wrapper(*args: Any) -> UserDefinedAsyncScalarFunctionWrapper:
    return UserDefinedAsyncScalarFunctionWrapper(*args)


class UserDefinedTableFunctionWrapper(UserDefinedFunctionWrapper):
    _flintlock_kind = "table"

    def __init__(self, func: Any, input_types: Any, result_types: Any,
                 deterministic: bool | None = None, name: str | None = None) -> None:
        super().__init__(func, input_types, "general", deterministic, name)
        types = _types(result_types)
        if not types:
            raise TypeError("Invalid result_types: result_types should be a list of DataType")
        self._result_types = types

    def result_types(self) -> list[t.DataType]:
        return list(self._result_types)

    def eval_rows(self, *args: Any) -> list[list[Any]]:
        """The rows the function yields for one call, each as a list of values."""
        produced = self.function(*args)
        rows: list[list[Any]] = []
        if produced is None:
            return rows
        width = len(self._result_types)
        for item in produced:
            if isinstance(item, Row):
                rows.append(list(item))
            elif isinstance(item, (tuple, list)) and width > 1:
                rows.append(list(item))
            else:
                rows.append([item])
        return rows


class UserDefinedAggregateFunctionWrapper(UserDefinedFunctionWrapper):
    _flintlock_kind = "aggregate"

    def __init__(self, func: Any, input_types: Any, result_type: Any, accumulator_type: Any,
                 func_type: str, deterministic: bool | None, name: str | None,
                 table_aggregate: bool = False) -> None:
        super().__init__(func, input_types, func_type, deterministic, name)
        if func_type not in ("general", "pandas"):
            raise ValueError(f"The func_type must be one of 'general, pandas', got {func_type}.")
        if func_type == "pandas":
            if table_aggregate:
                raise ValueError("Only support func_type 'general' for table aggregate "
                                 "functions, got pandas.")
            if result_type is None:
                raise TypeError("Invalid returnType: returnType should be DataType or str "
                                "but is None")
            self._func = func = PandasAggregateFunction(func, str(self._name))
        if not isinstance(func, ImperativeAggregateFunction):
            raise TypeError(f"Invalid function: {type(func)} is not an AggregateFunction")
        if result_type is None:
            result_type = func.get_result_type()
        self._result_type = _data_type(result_type)
        self._accumulator_type = _data_type(accumulator_type)
        if table_aggregate:
            self._flintlock_kind = "table_aggregate"

    def result_type_for(self, argument_types: Sequence[t.DataType]) -> t.DataType:
        return self._result_type  # type: ignore[return-value]

    # the aggregate protocol the changelog operators call
    def create_accumulator(self) -> Any:
        return self._func.create_accumulator()

    def accumulate(self, accumulator: Any, *args: Any) -> None:
        self._func.accumulate(accumulator, *args)

    def retract(self, accumulator: Any, *args: Any) -> None:
        self._func.retract(accumulator, *args)

    def merge(self, accumulator: Any, accumulators: Any) -> None:
        self._func.merge(accumulator, accumulators)

    def get_value(self, accumulator: Any) -> Any:
        return self._func.get_value(accumulator)

    def emit_value(self, accumulator: Any) -> Any:
        return self._func.emit_value(accumulator)


def _wrap_function(f: Any) -> Any:
    if inspect.isclass(f):
        raise TypeError(f"Invalid function: {f} is a class; pass an instance")
    return f


def udf(f: Any = None, input_types: Any = None, result_type: Any = None,
        deterministic: bool | None = None, name: str | None = None, func_type: str = "general"
        ) -> Any:
    """A user-defined scalar function (as a decorator with arguments, or applied to ``f``)."""
    if f is None:
        return lambda func: udf(func, input_types, result_type, deterministic, name, func_type)
    if inspect.iscoroutinefunction(f) or isinstance(f, AsyncScalarFunction):
        if func_type == "pandas":
            raise ValueError("Async scalar functions do not support pandas func_type. "
                             "Please use func_type='general' (default) for async functions.")
        return UserDefinedAsyncScalarFunctionWrapper(_wrap_function(f), input_types,
                                                     result_type, func_type, deterministic,
                                                     name)
    return UserDefinedScalarFunctionWrapper(_wrap_function(f), input_types, result_type,
                                            func_type, deterministic, name)


def udtf(f: Any = None, input_types: Any = None, result_types: Any = None,
         deterministic: bool | None = None, name: str | None = None) -> Any:
    """A user-defined table function: yields zero or more rows per call."""
    if f is None:
        return lambda func: udtf(func, input_types, result_types, deterministic, name)
    return UserDefinedTableFunctionWrapper(_wrap_function(f), input_types, result_types,
                                           deterministic, name)


def udaf(f: Any = None, input_types: Any = None, result_type: Any = None,
         accumulator_type: Any = None, deterministic: bool | None = None,
         name: str | None = None, func_type: str = "general") -> Any:
    """A user-defined aggregate function (an ``AggregateFunction`` instance)."""
    if f is None:
        return lambda func: udaf(func, input_types, result_type, accumulator_type,
                                 deterministic, name, func_type)
    return UserDefinedAggregateFunctionWrapper(_wrap_function(f), input_types, result_type,
                                               accumulator_type, func_type, deterministic, name)


def udtaf(f: Any = None, input_types: Any = None, result_type: Any = None,
          accumulator_type: Any = None, deterministic: bool | None = None,
          name: str | None = None, func_type: str = "general") -> Any:
    """A user-defined table aggregate function (``flat_aggregate``; issue 32 runs them)."""
    if f is None:
        return lambda func: udtaf(func, input_types, result_type, accumulator_type,
                                  deterministic, name, func_type)
    return UserDefinedAggregateFunctionWrapper(_wrap_function(f), input_types, result_type,
                                               accumulator_type, func_type, deterministic, name,
                                               table_aggregate=True)


def as_registered_function(function: Any) -> Any:
    """What ``create_temporary_function`` registers: a wrapper made by udf/udtf/udaf, or an
    ``AggregateFunction`` (wrapped); other objects are refused (their types are unknown)."""
    if isinstance(function, UserDefinedFunctionWrapper):
        return function
    if isinstance(function, ScalarFunction):
        raise ValidationError(
            "register a ScalarFunction through udf(..., result_type=...) so its result type "
            "is known")
    if isinstance(function, TableFunction):
        raise ValidationError("register a TableFunction through udtf(..., result_types=...)")
    if isinstance(function, AggregateFunction):
        return udaf(function)
    raise ValidationError(f"not a user-defined function: {function!r}")


def load_python_function(class_path: str) -> Any:
    """``module.name`` of a Python function for ``CREATE FUNCTION ... LANGUAGE PYTHON``."""
    import importlib

    module_name, _, attribute = class_path.rpartition(".")
    if not module_name:
        raise ValidationError(f"'{class_path}' is not a module path (module.function)")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValidationError(f"Cannot import module '{module_name}' of function "
                              f"'{class_path}': {exc}") from exc
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise ValidationError(f"Module '{module_name}' has no function '{attribute}'") from None
