"""PyFlink's ``Expression``: what the Table API's ``col('a') + 1``, ``col('b').sum`` and
``col('c').cast(DataTypes.BIGINT())`` build.

An ``Expression`` wraps a syntax tree of the same kind SQL text parses to (sqlglot nodes), so
the Table API and SQL share one resolver (``plan.resolver``): ``col('a') + 1`` is the tree of
``a + 1``. Python operators build arithmetic, comparison and logic (``&``, ``|``, ``~``);
properties and methods named as PyFlink's build function calls (``.upper_case`` is
``UPPER(x)``, ``.count`` is ``COUNT(x)``); ``alias`` names the result. Python values where an
expression is expected become literals (``concat(col('a'), '_')``).

Immutable; building an expression does no validation (the table operation that uses it
resolves it against its input and reports unknown names and type errors).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from sqlglot import exp

from flintlock.table.plan.resolver import PyLiteral, UdfNode

T = TypeVar("T")

__all__ = [
    "Expression",
    "JsonExistsOnError",
    "JsonQueryOnEmptyOrError",
    "JsonQueryWrapper",
    "JsonType",
    "JsonValueOnEmptyOrError",
    "TimeIntervalUnit",
    "TimePointUnit",
]


def to_node(value: Any) -> exp.Expression:
    """The syntax tree of ``value``: an Expression's own, or a literal of a Python value."""
    if isinstance(value, Expression):
        return value._node
    if isinstance(value, exp.Expression):
        return value
    return PyLiteral(this=value)


def _call(name: str, *operands: Any) -> Expression[Any]:
    return Expression(exp.Anonymous(this=name, expressions=[to_node(o) for o in operands]))


def _interval(value: Expression[Any], unit: str) -> Expression[Any]:
    """``lit(5).seconds``: INTERVAL '5' SECOND (a non-literal count multiplies one unit)."""
    node = value._node
    if isinstance(node, PyLiteral) and isinstance(node.this, int):
        return Expression(exp.Interval(this=exp.Literal.string(str(node.this)),
                                       unit=exp.Var(this=unit)))
    one = exp.Interval(this=exp.Literal.string("1"), unit=exp.Var(this=unit))
    return Expression(exp.Mul(this=node, expression=one))


def _unary(name: str) -> property:
    return property(lambda self: _call(name, self), doc=f"``{name}(self)``")


def _method(name: str) -> Callable[..., Expression[Any]]:
    def method(self: Expression[Any], *operands: Any) -> Expression[Any]:
        return _call(name, self, *operands)
    method.__doc__ = f"``{name}(self, ...)``"
    return method


class Expression(Generic[T]):
    """A Table API expression (see the module docstring)."""

    __slots__ = ("_node",)

    def __init__(self, node: exp.Expression) -> None:
        self._node = node

    # -- operators ----------------------------------------------------------------------------

    def _binary(self, kind: type[exp.Expression], other: Any, reverse: bool = False
                ) -> Expression[Any]:
        left, right = (to_node(other), self._node) if reverse else (self._node, to_node(other))
        return Expression(kind(this=left, expression=right))

    def __add__(self, other: Any) -> Expression[Any]:
        return self._binary(exp.Add, other)

    def __radd__(self, other: Any) -> Expression[Any]:
        return self._binary(exp.Add, other, True)

    def __sub__(self, other: Any) -> Expression[Any]:
        return self._binary(exp.Sub, other)

    def __rsub__(self, other: Any) -> Expression[Any]:
        return self._binary(exp.Sub, other, True)

    def __mul__(self, other: Any) -> Expression[Any]:
        return self._binary(exp.Mul, other)

    def __rmul__(self, other: Any) -> Expression[Any]:
        return self._binary(exp.Mul, other, True)

    def __truediv__(self, other: Any) -> Expression[Any]:
        return self._binary(exp.Div, other)

    def __rtruediv__(self, other: Any) -> Expression[Any]:
        return self._binary(exp.Div, other, True)

    def __mod__(self, other: Any) -> Expression[Any]:
        return self._binary(exp.Mod, other)

    def __rmod__(self, other: Any) -> Expression[Any]:
        return self._binary(exp.Mod, other, True)

    def __pow__(self, other: Any) -> Expression[Any]:
        return _call("POWER", self, other)

    def __rpow__(self, other: Any) -> Expression[Any]:
        return _call("POWER", other, self)

    def __neg__(self) -> Expression[Any]:
        return Expression(exp.Neg(this=self._node))

    def __pos__(self) -> Expression[Any]:
        return self

    def __eq__(self, other: Any) -> Expression[Any]:  # type: ignore[override]
        return self._binary(exp.EQ, other)

    def __ne__(self, other: Any) -> Expression[Any]:  # type: ignore[override]
        return self._binary(exp.NEQ, other)

    def __lt__(self, other: Any) -> Expression[Any]:
        return self._binary(exp.LT, other)

    def __le__(self, other: Any) -> Expression[Any]:
        return self._binary(exp.LTE, other)

    def __gt__(self, other: Any) -> Expression[Any]:
        return self._binary(exp.GT, other)

    def __ge__(self, other: Any) -> Expression[Any]:
        return self._binary(exp.GTE, other)

    def __and__(self, other: Any) -> Expression[Any]:
        return self._binary(exp.And, other)

    def __rand__(self, other: Any) -> Expression[Any]:
        return self._binary(exp.And, other, True)

    def __or__(self, other: Any) -> Expression[Any]:
        return self._binary(exp.Or, other)

    def __ror__(self, other: Any) -> Expression[Any]:
        return self._binary(exp.Or, other, True)

    def __invert__(self) -> Expression[Any]:
        return Expression(exp.Not(this=self._node))

    def __hash__(self) -> int:
        return id(self)

    def __bool__(self) -> bool:
        raise TypeError("an Expression has no truth value; combine conditions with & and |")

    def __getitem__(self, index: Any) -> Expression[Any]:
        return self.at(index)

    def __str__(self) -> str:
        return _text(self._node)

    def __repr__(self) -> str:
        return f"Expression({_text(self._node)})"

    # -- naming and types ---------------------------------------------------------------------

    def alias(self, name: str, *extra_names: str) -> Expression[Any]:
        if extra_names:
            return Expression(exp.Aliases(this=self._node, expressions=[
                exp.to_identifier(n, quoted=True) for n in (name, *extra_names)]))
        return Expression(exp.Alias(this=self._node, alias=exp.to_identifier(name, quoted=True)))

    def cast(self, data_type: Any) -> Expression[Any]:
        return Expression(exp.Cast(this=self._node, to=PyLiteral(this=data_type)))

    def try_cast(self, data_type: Any) -> Expression[Any]:
        return Expression(exp.TryCast(this=self._node, to=PyLiteral(this=data_type), safe=True))

    @property
    def asc(self) -> Expression[Any]:
        return Expression(exp.Ordered(this=self._node, desc=False, nulls_first=True))

    @property
    def desc(self) -> Expression[Any]:
        return Expression(exp.Ordered(this=self._node, desc=True, nulls_first=False))

    # -- conditions ---------------------------------------------------------------------------

    def in_(self, first_element_or_table: Any, *remaining: Any) -> Expression[Any]:
        values = [to_node(v) for v in (first_element_or_table, *remaining)]
        return Expression(exp.In(this=self._node, expressions=values))

    def between(self, lower_bound: Any, upper_bound: Any) -> Expression[Any]:
        return Expression(exp.Between(this=self._node, low=to_node(lower_bound),
                                      high=to_node(upper_bound)))

    def not_between(self, lower_bound: Any, upper_bound: Any) -> Expression[Any]:
        return ~self.between(lower_bound, upper_bound)

    def then(self, if_true: Any, if_false: Any) -> Expression[Any]:
        return Expression(exp.If(this=self._node, true=to_node(if_true),
                                 false=to_node(if_false)))

    def if_null(self, null_replacement: Any) -> Expression[Any]:
        return _call("COALESCE", self, null_replacement)

    @property
    def is_null(self) -> Expression[Any]:
        return Expression(exp.Is(this=self._node, expression=exp.Null()))

    @property
    def is_not_null(self) -> Expression[Any]:
        return Expression(exp.Not(this=exp.Is(this=self._node, expression=exp.Null())))

    @property
    def is_true(self) -> Expression[Any]:
        return Expression(exp.Is(this=self._node, expression=exp.Boolean(this=True)))

    @property
    def is_false(self) -> Expression[Any]:
        return Expression(exp.Is(this=self._node, expression=exp.Boolean(this=False)))

    @property
    def is_not_true(self) -> Expression[Any]:
        return Expression(exp.Not(this=exp.Is(this=self._node, expression=exp.Boolean(
            this=True))))

    @property
    def is_not_false(self) -> Expression[Any]:
        return Expression(exp.Not(this=exp.Is(this=self._node, expression=exp.Boolean(
            this=False))))

    def like(self, pattern: Any = None) -> Expression[Any]:
        return Expression(exp.Like(this=self._node, expression=to_node(pattern)))

    def similar(self, pattern: Any = None) -> Expression[Any]:
        return _call("SIMILAR_TO", self, pattern)

    # -- aggregates -----------------------------------------------------------------------------

    sum = _unary("SUM")
    sum0 = _unary("SUM0")
    min = _unary("MIN")
    max = _unary("MAX")
    count = _unary("COUNT")
    avg = _unary("AVG")
    first_value = _unary("FIRST_VALUE")
    last_value = _unary("LAST_VALUE")
    stddev_pop = _unary("STDDEV_POP")
    stddev_samp = _unary("STDDEV_SAMP")
    var_pop = _unary("VAR_POP")
    var_samp = _unary("VAR_SAMP")
    collect = _unary("COLLECT")

    # -- time intervals and windows (issue 32) --------------------------------------------------

    days = property(lambda self: _interval(self, "DAY"), doc="``lit(n).days``: n days")
    hours = property(lambda self: _interval(self, "HOUR"), doc="an interval of hours")
    minutes = property(lambda self: _interval(self, "MINUTE"), doc="an interval of minutes")
    seconds = property(lambda self: _interval(self, "SECOND"), doc="an interval of seconds")
    millis = property(lambda self: _interval(self, "MILLISECOND"), doc="milliseconds")
    milli = millis
    rows = property(lambda self: _call("$ROWS", self), doc="``lit(n).rows``: n rows (over)")
    start = _unary("$WINDOW_START")
    end = _unary("$WINDOW_END")
    rowtime = _unary("$WINDOW_ROWTIME")
    proctime = _unary("$WINDOW_PROCTIME")

    def over(self, alias: Any) -> Expression[Any]:
        """``col('x').sum.over(col('w'))``: the aggregate over the over window ``w``."""
        name = to_node(alias)
        return Expression(exp.Window(this=self._node, alias=exp.to_identifier(
            name.name if isinstance(name, exp.Column) else str(alias))))

    def list_agg(self, separator: str | None = None) -> Expression[Any]:
        return _call("LISTAGG", self) if separator is None else _call("LISTAGG", self, separator)

    @property
    def distinct(self) -> Expression[Any]:
        """``.count.distinct`` is COUNT(DISTINCT x); ``x.distinct`` alone marks x for it."""
        node = self._node
        if isinstance(node, exp.Anonymous):
            return Expression(exp.Anonymous(this=node.this, expressions=[
                exp.Distinct(expressions=list(node.expressions))]))
        return Expression(exp.Distinct(expressions=[node]))

    # -- math -----------------------------------------------------------------------------------

    exp = _unary("EXP")
    log10 = _unary("LOG10")
    log2 = _unary("LOG2")
    ln = _unary("LN")
    sin = _unary("SIN")
    cos = _unary("COS")
    tan = _unary("TAN")
    sqrt = _unary("SQRT")
    abs = _unary("ABS")
    sign = _unary("SIGN")
    floor = _unary("FLOOR")
    ceil = _unary("CEIL")

    def log(self, base: Any = None) -> Expression[Any]:
        return _call("LOG", self) if base is None else _call("LOG", base, self)

    def round(self, places: Any = 0) -> Expression[Any]:
        return _call("ROUND", self, places)

    def power(self, other: Any) -> Expression[Any]:
        return _call("POWER", self, other)

    # -- strings --------------------------------------------------------------------------------

    char_length = _unary("CHAR_LENGTH")
    upper_case = _unary("UPPER")
    lower_case = _unary("LOWER")
    init_cap = _unary("INITCAP")
    reverse = _unary("REVERSE")
    md5 = _unary("MD5")
    sha1 = _unary("SHA1")
    sha256 = _unary("SHA256")
    ascii = _unary("ASCII")
    chr = _unary("CHR")
    ltrim = _unary("LTRIM")
    rtrim = _unary("RTRIM")
    to_date = _unary("TO_DATE")
    to_timestamp = _unary("TO_TIMESTAMP")
    cardinality = _unary("CARDINALITY")
    year = _unary("YEAR")
    month = _unary("MONTH")
    hour = _unary("HOUR")
    minute = _unary("MINUTE")
    second = _unary("SECOND")

    def concat(self, *others: Any) -> Expression[Any]:
        return _call("CONCAT", self, *others)

    def substring(self, begin_index: Any, length: Any = None) -> Expression[Any]:
        if length is None:
            return _call("SUBSTRING", self, begin_index)
        return _call("SUBSTRING", self, begin_index, length)

    substr = substring

    def trim(self, character: Any = " ") -> Expression[Any]:
        return Expression(exp.Anonymous(this="TRIM", expressions=[
            self._node, to_node(character)]))

    def trim_leading(self, character: Any = " ") -> Expression[Any]:
        return _call("LTRIM_CHARS", self, character)

    def trim_trailing(self, character: Any = " ") -> Expression[Any]:
        return _call("RTRIM_CHARS", self, character)

    replace = _method("REPLACE")
    position = _method("POSITION_IN")
    lpad = _method("LPAD")
    rpad = _method("RPAD")
    regexp = _method("REGEXP")
    regexp_replace = _method("REGEXP_REPLACE")
    regexp_extract = _method("REGEXP_EXTRACT")
    split_index = _method("SPLIT_INDEX")
    left = _method("LEFT")
    right = _method("RIGHT")
    repeat = _method("REPEAT")
    instr = _method("INSTR")
    locate = _method("LOCATE_IN")

    def starts_with(self, start_expr: Any) -> Expression[Any]:
        return Expression(exp.Like(this=self._node, expression=exp.Anonymous(
            this="CONCAT", expressions=[to_node(start_expr), PyLiteral(this="%")])))

    def ends_with(self, end_expr: Any) -> Expression[Any]:
        return Expression(exp.Like(this=self._node, expression=exp.Anonymous(
            this="CONCAT", expressions=[PyLiteral(this="%"), to_node(end_expr)])))

    # -- JSON -----------------------------------------------------------------------------------

    def json_value(self, path: str, returning_type: Any = None,
                   on_empty: Any = None, default_on_empty: Any = None,
                   on_error: Any = None, default_on_error: Any = None) -> Expression[Any]:
        operands = [self._node, PyLiteral(this=path)]
        if returning_type is not None:
            operands.append(PyLiteral(this=returning_type))
        return Expression(exp.Anonymous(this="JSON_VALUE", expressions=operands))

    def json_exists(self, path: str, on_error: Any = None) -> Expression[Any]:
        return _call("JSON_EXISTS", self, path)

    # -- collections and rows -------------------------------------------------------------------

    def at(self, index: Any) -> Expression[Any]:
        return Expression(exp.Bracket(this=self._node, expressions=[to_node(index)]))

    def get(self, name_or_index: Any) -> Expression[Any]:
        if isinstance(name_or_index, str):
            return Expression(exp.Dot(this=self._node,
                                      expression=exp.to_identifier(name_or_index)))
        return self.at(name_or_index)

    element = _unary("ELEMENT")


def _text(node: exp.Expression) -> str:
    if isinstance(node, PyLiteral):
        return repr(node.this)
    if isinstance(node, UdfNode):
        name = getattr(node.this, "_name", None) or type(node.this).__name__
        return f"{name}({', '.join(_text(a) for a in node.expressions)})"
    try:
        return node.sql()
    except Exception:
        return repr(node)


class TimeIntervalUnit:
    """Units of ``timestamp_diff`` and ``extract`` (PyFlink's enum names)."""

    YEAR = "YEAR"
    YEAR_TO_MONTH = "YEAR_TO_MONTH"
    QUARTER = "QUARTER"
    MONTH = "MONTH"
    WEEK = "WEEK"
    DAY = "DAY"
    DAY_TO_HOUR = "DAY_TO_HOUR"
    DAY_TO_MINUTE = "DAY_TO_MINUTE"
    DAY_TO_SECOND = "DAY_TO_SECOND"
    HOUR = "HOUR"
    SECOND = "SECOND"
    HOUR_TO_MINUTE = "HOUR_TO_MINUTE"
    HOUR_TO_SECOND = "HOUR_TO_SECOND"
    MINUTE = "MINUTE"
    MINUTE_TO_SECOND = "MINUTE_TO_SECOND"


class TimePointUnit:
    YEAR = "YEAR"
    MONTH = "MONTH"
    DAY = "DAY"
    HOUR = "HOUR"
    MINUTE = "MINUTE"
    SECOND = "SECOND"
    QUARTER = "QUARTER"
    WEEK = "WEEK"
    MILLISECOND = "MILLISECOND"
    MICROSECOND = "MICROSECOND"


class JsonType:
    VALUE = "VALUE"
    ARRAY = "ARRAY"
    OBJECT = "OBJECT"
    SCALAR = "SCALAR"


class JsonExistsOnError:
    TRUE = "TRUE"
    FALSE = "FALSE"
    UNKNOWN = "UNKNOWN"
    ERROR = "ERROR"


class JsonValueOnEmptyOrError:
    NULL = "NULL"
    ERROR = "ERROR"
    DEFAULT = "DEFAULT"


class JsonQueryWrapper:
    WITHOUT_ARRAY = "WITHOUT_ARRAY"
    CONDITIONAL_ARRAY = "CONDITIONAL_ARRAY"
    UNCONDITIONAL_ARRAY = "UNCONDITIONAL_ARRAY"


class JsonQueryOnEmptyOrError:
    NULL = "NULL"
    EMPTY_ARRAY = "EMPTY_ARRAY"
    EMPTY_OBJECT = "EMPTY_OBJECT"
    ERROR = "ERROR"
