"""PyFlink's ``pyflink.table.expressions``: the functions that start Table API expressions
(``col``, ``lit``, ``call``, ``concat``, ``if_then_else``, ...). Each returns an ``Expression``
over the same syntax trees as SQL (see ``expression``)."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from flintlock.table.errors import ValidationError
from flintlock.table.expression import (
    Expression,
    JsonExistsOnError,
    JsonQueryOnEmptyOrError,
    JsonQueryWrapper,
    JsonType,
    JsonValueOnEmptyOrError,
    TimeIntervalUnit,
    TimePointUnit,
    _call,
    to_node,
)
from flintlock.table.plan.resolver import PyLiteral, UdfNode

__all__ = [
    "CURRENT_RANGE",
    "CURRENT_ROW",
    "UNBOUNDED_RANGE",
    "UNBOUNDED_ROW",
    "JsonExistsOnError",
    "JsonQueryOnEmptyOrError",
    "JsonQueryWrapper",
    "JsonType",
    "JsonValueOnEmptyOrError",
    "TimeIntervalUnit",
    "TimePointUnit",
    "and_",
    "array",
    "atan2",
    "call",
    "call_sql",
    "coalesce",
    "col",
    "concat",
    "concat_ws",
    "current_date",
    "current_time",
    "current_timestamp",
    "date_format",
    "e",
    "from_unixtime",
    "if_then_else",
    "json_string",
    "lit",
    "local_time",
    "local_timestamp",
    "log",
    "map_",
    "negative",
    "not_",
    "null_of",
    "or_",
    "pi",
    "rand",
    "rand_integer",
    "range_",
    "row",
    "row_interval",
    "to_date",
    "to_timestamp",
    "unix_timestamp",
    "uuid",
    "with_all_columns",
    "with_columns",
    "without_columns",
]


def col(name: str) -> Expression[Any]:
    """A reference to the column ``name`` of the table an operation applies to."""
    if name == "*":
        return Expression(exp.Star())
    return Expression(exp.Column(this=exp.to_identifier(name, quoted=True)))


def lit(v: Any, data_type: Any = None) -> Expression[Any]:
    """A literal: ``lit(12)`` is an INT, ``lit('abc')`` a CHAR(3); ``data_type`` declares it."""
    if data_type is None:
        return Expression(PyLiteral(this=v))
    return Expression(PyLiteral(this=v, type=data_type))


def null_of(data_type: Any) -> Expression[Any]:
    return lit(None, data_type)


def and_(predicate0: Any, predicate1: Any, *predicates: Any) -> Expression[Any]:
    result: Expression[Any] = Expression(to_node(predicate0)) & predicate1
    for predicate in predicates:
        result = result & predicate
    return result


def or_(predicate0: Any, predicate1: Any, *predicates: Any) -> Expression[Any]:
    result: Expression[Any] = Expression(to_node(predicate0)) | predicate1
    for predicate in predicates:
        result = result | predicate
    return result


def not_(expression: Any) -> Expression[Any]:
    return Expression(exp.Not(this=to_node(expression)))


def if_then_else(condition: Any, if_true: Any, if_false: Any) -> Expression[Any]:
    return Expression(exp.If(this=to_node(condition), true=to_node(if_true),
                             false=to_node(if_false)))


def coalesce(*args: Any) -> Expression[Any]:
    return _call("COALESCE", *args)


def concat(first: Any, *others: Any) -> Expression[Any]:
    return _call("CONCAT", first, *others)


def concat_ws(separator: Any, first: Any, *others: Any) -> Expression[Any]:
    return _call("CONCAT_WS", separator, first, *others)


def negative(v: Any) -> Expression[Any]:
    return Expression(exp.Neg(this=to_node(v)))


def current_date() -> Expression[Any]:
    return _call("CURRENT_DATE")


def current_time() -> Expression[Any]:
    return _call("CURRENT_TIME")


def current_timestamp() -> Expression[Any]:
    return _call("CURRENT_TIMESTAMP")


def local_time() -> Expression[Any]:
    return _call("LOCALTIME")


def local_timestamp() -> Expression[Any]:
    return _call("LOCALTIMESTAMP")


def to_date(date_str: Any, format: Any = None) -> Expression[Any]:
    return _call("TO_DATE", date_str) if format is None else _call("TO_DATE", date_str, format)


def to_timestamp(timestamp_str: Any, format: Any = None) -> Expression[Any]:
    if format is None:
        return _call("TO_TIMESTAMP", timestamp_str)
    return _call("TO_TIMESTAMP", timestamp_str, format)


def date_format(timestamp: Any, format: Any) -> Expression[Any]:
    return _call("DATE_FORMAT", timestamp, format)


def from_unixtime(unixtime: Any, format: Any = None) -> Expression[Any]:
    if format is None:
        return _call("FROM_UNIXTIME", unixtime)
    return _call("FROM_UNIXTIME", unixtime, format)


def unix_timestamp(date_str: Any = None, format: Any = None) -> Expression[Any]:
    operands = [v for v in (date_str, format) if v is not None]
    return _call("UNIX_TIMESTAMP", *operands)


def array(head: Any, *tail: Any) -> Expression[Any]:
    return _call("ARRAY", head, *tail)


def row(head: Any, *tail: Any) -> Expression[Any]:
    return _call("ROW", head, *tail)


def map_(key: Any, value: Any, *tail: Any) -> Expression[Any]:
    return _call("MAP", key, value, *tail)


def pi() -> Expression[Any]:
    return _call("PI")


def e() -> Expression[Any]:
    return Expression(PyLiteral(this=2.718281828459045))


def rand(seed: Any = None) -> Expression[Any]:
    return _call("RAND") if seed is None else _call("RAND", seed)


def rand_integer(bound: Any, seed: Any = None) -> Expression[Any]:
    """``RAND_INTEGER(bound)``: a pseudorandom INT in [0, bound). The seeded form raises
    ``UnsupportedFeatureError`` when the query is validated."""
    return _call("RAND_INTEGER", bound) if seed is None else _call("RAND_INTEGER", seed, bound)


def uuid() -> Expression[Any]:
    return _call("UUID")


def log(v: Any, base: Any = None) -> Expression[Any]:
    return _call("LOG", v) if base is None else _call("LOG", base, v)


def atan2(y: Any, x: Any) -> Expression[Any]:
    return _call("ATAN2", y, x)


def json_string(value: Any) -> Expression[Any]:
    return _call("JSON_STRING", value)


def call(f: Any, *args: Any) -> Expression[Any]:
    """A call of a function: a registered function's name, or a user-defined function."""
    if isinstance(f, str):
        return _call(f, *args)
    return Expression(UdfNode(this=f, expressions=[to_node(a) for a in args]))


def call_sql(sql_expression: str) -> Expression[Any]:
    """An expression written in SQL (``call_sql('UPPER(name)')``)."""
    from flintlock.table.sql import parse_expression

    return Expression(parse_expression(sql_expression))


class _ColumnRange(exp.Expression):
    """``with_columns(range_(1, 3))``: the columns from ``this`` to ``expression``."""

    arg_types = {"this": True, "expression": True}


class ColumnSelection(exp.Expression):
    """``with_columns(...)`` / ``without_columns(...)``: ``expressions`` selects; ``this`` is
    True to exclude them."""

    arg_types = {"this": False, "expressions": True}


def range_(start: Any, end: Any) -> Expression[Any]:
    return Expression(_ColumnRange(this=start, expression=end))


def with_columns(head: Any, *tails: Any) -> Expression[Any]:
    return Expression(ColumnSelection(expressions=[_selector(v) for v in (head, *tails)]))


def without_columns(head: Any, *tails: Any) -> Expression[Any]:
    return Expression(ColumnSelection(this=True, expressions=[_selector(v)
                                                              for v in (head, *tails)]))


def with_all_columns() -> Expression[Any]:
    return Expression(exp.Star())


def _selector(value: Any) -> exp.Expression:
    if isinstance(value, str):
        return exp.Column(this=exp.to_identifier(value, quoted=True))
    if isinstance(value, int):
        return PyLiteral(this=value)
    return to_node(value)


class OverOffset(exp.Expression):
    """An offset of an over window (``Over...preceding(...)`` / ``following(...)``): ``this``
    is ``UNBOUNDED_ROW``, ``UNBOUNDED_RANGE``, ``CURRENT_ROW``, ``CURRENT_RANGE``, or ``ROWS``
    with ``expression`` the number of rows (``row_interval``). Over windows are issue 32."""

    arg_types = {"this": True, "expression": False}


UNBOUNDED_ROW: Expression[Any] = Expression(OverOffset(this="UNBOUNDED_ROW"))
"""``preceding(UNBOUNDED_ROW)``: a row-count over window starting at the partition's first row."""

UNBOUNDED_RANGE: Expression[Any] = Expression(OverOffset(this="UNBOUNDED_RANGE"))
"""``preceding(UNBOUNDED_RANGE)``: a time-range over window starting at the partition's first
row."""

CURRENT_ROW: Expression[Any] = Expression(OverOffset(this="CURRENT_ROW"))
"""``following(CURRENT_ROW)``: the window ends at the current row."""

CURRENT_RANGE: Expression[Any] = Expression(OverOffset(this="CURRENT_RANGE"))
"""``following(CURRENT_RANGE)``: the window ends at the current row's sort key (its peers
included)."""


def row_interval(rows: int) -> Expression[Any]:
    """An over window's offset of ``rows`` rows (``preceding(row_interval(4))``)."""
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
        raise ValidationError(f"row_interval needs a non-negative number of rows, got {rows!r}")
    return Expression(OverOffset(this="ROWS", expression=PyLiteral(this=rows)))
