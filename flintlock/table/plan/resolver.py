"""Name and type resolution of expressions: a syntax tree (sqlglot's, from SQL text or from
the Table API's expression objects) over a scope of input fields becomes a typed ``Rex``.

Both front ends share this room. A ``Scope`` lists the fields an expression may name (with
the qualifier each was reached by: a table name or alias); ``ExpressionResolver`` resolves
columns, literals (typed as Flink types them: ``1`` is INT NOT NULL, ``'ab'`` CHAR(2) NOT NULL,
``1.5`` DECIMAL(2, 1) NOT NULL), operators and functions (the built-ins of ``functions`` and the
user's scalar functions from the ``FunctionCatalog``), inserting implicit casts where branches
or operands must share a type. ``AggregateResolver`` resolves the SELECT and HAVING of a
grouped query: aggregate calls become ``AggregateCall``s over a pre-projection, grouped
expressions references to the aggregate's output, and a column that is neither is refused as
Flink refuses it.

Unknown names raise ``ValidationError`` naming the closest known one. Pure functions of their
inputs and the catalog's functions; no state beyond one resolution.
"""

from __future__ import annotations

import datetime
import decimal
import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlglot import exp

from flintlock.table import types as t
from flintlock.table.errors import UnsupportedFeatureError, ValidationError
from flintlock.table.plan import functions
from flintlock.table.plan import type_rules as tr
from flintlock.table.plan.nodes import AggregateCall
from flintlock.table.plan.rex import Call, InputRef, Literal, Rex, UdfCall


@dataclass(frozen=True, slots=True)
class ScopeField:
    qualifier: str | None
    name: str
    index: int
    type: t.DataType


@dataclass
class Scope:
    """The fields visible to an expression, in input order."""

    fields: list[ScopeField] = field(default_factory=list)

    @staticmethod
    def of(names: Sequence[str], types: Sequence[t.DataType], qualifier: str | None = None,
           offset: int = 0) -> Scope:
        return Scope([ScopeField(qualifier, n, offset + i, dt)
                      for i, (n, dt) in enumerate(zip(names, types, strict=True))])

    def merged(self, other: Scope) -> Scope:
        return Scope(self.fields + other.fields)

    def lookup(self, name: str, qualifier: str | None = None) -> ScopeField:
        matches = [f for f in self.fields if f.name == name and (
            qualifier is None or f.qualifier == qualifier)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise ValidationError(f"Column '{name}' is ambiguous")
        known = [f.name for f in self.fields]
        if qualifier is not None and not any(f.qualifier == qualifier for f in self.fields):
            raise ValidationError(f"Table '{qualifier}' not found")
        close = difflib.get_close_matches(name, known, n=1)
        if not close:
            close = [k for k in known if k.lower() == name.lower()][:1]
        hint = f"; did you mean '{close[0]}'?" if close else ""
        where = f"table '{qualifier}'" if qualifier else "any table"
        raise ValidationError(f"Column '{name}' not found in {where}{hint}")

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]


class FunctionCatalog(Protocol):
    def user_function(self, name: str) -> Any | None:
        """The user's function registered under ``name`` (any case), or None."""


class NoFunctions:
    def user_function(self, name: str) -> Any | None:
        return None


AGGREGATES = frozenset({"COUNT", "SUM", "SUM0", "AVG", "MIN", "MAX", "FIRST_VALUE",
                        "LAST_VALUE", "LISTAGG", "STDDEV_POP", "STDDEV_SAMP", "VAR_POP",
                        "VAR_SAMP", "COLLECT", "BOOL_AND", "BOOL_OR", "STDDEV", "VARIANCE"})

_BINARY: dict[type, str] = {
    exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "MOD",
    exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">=",
    exp.And: "AND", exp.Or: "OR", exp.DPipe: "CONCAT",
    exp.NullSafeEQ: "IS NOT DISTINCT FROM", exp.NullSafeNEQ: "IS DISTINCT FROM",
}
_RENAMED = {"LENGTH": "CHAR_LENGTH", "SUBSTR": "SUBSTRING", "CEILING": "CEIL",
            "POW": "POWER", "IFNULL": "COALESCE", "NVL": "COALESCE", "STR_POSITION": "LOCATE",
            "REGEXP_LIKE": "REGEXP", "STDDEV": "STDDEV_SAMP", "VARIANCE": "VAR_SAMP",
            "TS_OR_DS_TO_DATE": "TO_DATE", "STR_TO_TIME": "TO_TIMESTAMP",
            "TIME_STR_TO_TIME": "TO_TIMESTAMP", "GROUP_CONCAT": "LISTAGG",
            "ARRAY_SIZE": "CARDINALITY", "CURRENTTIMESTAMP": "CURRENT_TIMESTAMP",
            "CURRENTDATE": "CURRENT_DATE", "CURRENTTIME": "CURRENT_TIME",
            "LOWERCASE": "LOWER", "UPPERCASE": "UPPER"}


class PyLiteral(exp.Expression):
    """A Python value as a literal (the Table API's ``lit(value, type)``): ``this`` is the
    value, ``type`` an optional ``flintlock.table.types`` DataType."""

    arg_types = {"this": False, "type": False}


class UdfNode(exp.Expression):
    """A call of a user-defined function object (the Table API's ``my_udf(col('a'))``):
    ``this`` is the function, ``expressions`` its arguments."""

    arg_types = {"this": True, "expressions": False}


def is_aggregate_call(node: exp.Expression, catalog: Any) -> bool:
    """Whether ``node`` calls an aggregate function (built-in, registered or a udaf object)."""
    if isinstance(node, UdfNode):
        return getattr(node.this, "_flintlock_kind", "") == "aggregate"
    if isinstance(node, exp.Func):
        name = function_name(node)
        if name in AGGREGATES:
            return True
        user = catalog.user_function(name)
        return user is not None and getattr(user, "_flintlock_kind", "") == "aggregate"
    return False


class ResolvedRef(exp.Expression):
    """An already resolved expression inside a syntax tree (the Table API reusing a Rex)."""

    arg_types = {"this": True}


def literal_type(value: Any) -> t.DataType:
    """The SQL type Flink gives a literal of this Python value."""
    if value is None:
        return t.NullType()
    if isinstance(value, bool):
        return t.BooleanType(False)
    if isinstance(value, int):
        return t.IntType(False) if -(1 << 31) <= value < (1 << 31) else t.BigIntType(False)
    if isinstance(value, float):
        return t.DoubleType(False)
    if isinstance(value, decimal.Decimal):
        _, digits, exponent = value.as_tuple()
        scale = max(0, -int(exponent))
        return t.DecimalType(max(len(digits), scale, 1), scale, False)
    if isinstance(value, str):
        return t.CharType(max(len(value), 1), False) if value else t.CharType(0, False)
    if isinstance(value, (bytes, bytearray)):
        return t.BinaryType(max(len(value), 1), False)
    if isinstance(value, datetime.datetime):
        return t.TimestampType(6 if value.microsecond % 1000 else 3, False)
    if isinstance(value, datetime.date):
        return t.DateType(False)
    if isinstance(value, datetime.time):
        return t.TimeType(0, False)
    return t.infer_type(value)


class ExpressionResolver:
    """Resolves a syntax tree against ``scope``; ``functions`` finds the user's functions."""

    def __init__(self, scope: Scope, catalog: FunctionCatalog | None = None,
                 subquery: Callable[[exp.Expression], Any] | None = None) -> None:
        self.scope = scope
        self.catalog = catalog or NoFunctions()
        self.subquery = subquery

    # -- entry --------------------------------------------------------------------------------

    def resolve(self, node: exp.Expression) -> Rex:
        handler = getattr(self, f"_r_{type(node).__name__}", None)
        if handler is not None:
            return handler(node)  # type: ignore[no-any-return]
        binary = _BINARY.get(type(node))
        if binary is not None:
            return self.call(binary, [self.resolve(node.this), self.resolve(node.expression)])
        if isinstance(node, exp.Func):
            return self._function(node)
        raise UnsupportedFeatureError(f"the SQL expression {node.sql()!r}")

    # -- building calls -----------------------------------------------------------------------

    def call(self, name: str, operands: list[Rex], options: tuple[Any, ...] = ()) -> Rex:
        builtin = functions.lookup(name)
        functions.check_arity(builtin, len(operands))
        operands = self._coerce_operands(builtin.name, operands)
        result = builtin.infer([o.type for o in operands], options)
        if isinstance(result, t.NullType) and builtin.strict:
            return Literal(t.NullType(), None)
        return Call(result, builtin.name, tuple(operands), options)

    def _coerce_operands(self, name: str, operands: list[Rex]) -> list[Rex]:
        if name in ("=", "<>", "<", "<=", ">", ">=", "IN", "BETWEEN", "NOT BETWEEN",
                    "COALESCE", "GREATEST", "LEAST", "IS DISTINCT FROM",
                    "IS NOT DISTINCT FROM") and len(operands) >= 2:
            types = [o.type for o in operands]
            if all(tr.is_numeric(dt) or tr.is_null_type(dt) for dt in types):
                common = tr.common_type(types, name)
                return [cast_to(o, tr.with_nullability(common, tr.is_nullable(o.type)))
                        if (tr.is_numeric(o.type) and not tr.is_integral(o.type))
                        or (tr.is_numeric(o.type) and not tr.is_integral(common)) else o
                        for o in operands]
            if name in ("COALESCE", "GREATEST", "LEAST") and all(
                    tr.is_string(dt) or tr.is_null_type(dt) for dt in types):
                return operands
        return operands

    # -- leaves -------------------------------------------------------------------------------

    def _r_Column(self, node: exp.Column) -> Rex:
        qualifier = node.table or None
        name = node.name
        if isinstance(node.this, exp.Star):
            raise ValidationError("'*' is only allowed in the SELECT list")
        if qualifier is not None and not any(f.qualifier == qualifier for f in self.scope.fields):
            row = self._row_column(qualifier, node.args.get("db"))
            if row is not None:  # ``person.id``: a field of the ROW column ``person`` (Flink)
                return self._field_of(row, name)
        found = self.scope.lookup(name, qualifier)
        return InputRef(found.type, found.index)

    def _row_column(self, name: str, table: exp.Expression | None) -> Rex | None:
        """The ROW column ``name`` (of ``table``) when no table in scope is called ``name``."""
        matches = [f for f in self.scope.fields if f.name == name and (
            table is None or f.qualifier == table.name)]
        if len(matches) != 1 or not isinstance(matches[0].type, t.RowType):
            return None
        return InputRef(matches[0].type, matches[0].index)

    def _r_Identifier(self, node: exp.Identifier) -> Rex:
        found = self.scope.lookup(node.this)
        return InputRef(found.type, found.index)

    def _r_Dot(self, node: exp.Dot) -> Rex:
        return self._field_of(self.resolve(node.this), node.expression.name)

    def _field_of(self, container: Rex, name: str) -> Rex:
        if not isinstance(container.type, t.RowType) or name not in container.type.names:
            raise ValidationError(f"Unknown field '{name}' of {tr.sql_name(container.type)}")
        index = container.type.names.index(name)
        field_type = container.type.fields[index].data_type
        return Call(tr.with_nullability(field_type, True), "ITEM",
                    (container, Literal(t.IntType(False), index)))

    def _r_Paren(self, node: exp.Paren) -> Rex:
        return self.resolve(node.this)

    def _r_ResolvedRef(self, node: ResolvedRef) -> Rex:
        return node.this  # type: ignore[no-any-return]

    def _r_Literal(self, node: exp.Literal) -> Rex:
        if node.is_string:
            text = node.this
            return Literal(t.CharType(len(text), False) if text else t.CharType(0, False), text)
        text = node.this
        if any(c in text for c in "eE"):
            return Literal(t.DoubleType(False), float(text))
        if "." in text:
            value = decimal.Decimal(text)
            return Literal(literal_type(value), value)
        number = int(text)
        return Literal(literal_type(number), number)

    def _r_PyLiteral(self, node: PyLiteral) -> Rex:
        value = node.this
        declared = node.args.get("type")
        if declared is not None:
            return Literal(declared, value)
        return Literal(literal_type(value), value)

    def _r_Boolean(self, node: exp.Boolean) -> Rex:
        return Literal(t.BooleanType(False), bool(node.this))

    def _r_Null(self, node: exp.Null) -> Rex:
        return Literal(t.NullType(), None)

    def _r_Neg(self, node: exp.Neg) -> Rex:
        inner = self.resolve(node.this)
        if isinstance(inner, Literal) and isinstance(inner.value, (int, float, decimal.Decimal)):
            return Literal(inner.type, -inner.value)
        return self.call("NEGATE", [inner])

    def _r_Not(self, node: exp.Not) -> Rex:
        inner = node.this
        if isinstance(inner, exp.Is):
            return self._is(inner, negated=True)
        if isinstance(inner, exp.In):
            return self.call("NOT", [self.resolve(inner)])
        if isinstance(inner, exp.Between):
            return self.call("NOT", [self.resolve(inner)])
        return self.call("NOT", [self.resolve(inner)])

    def _r_Is(self, node: exp.Is) -> Rex:
        return self._is(node, negated=False)

    def _is(self, node: exp.Is, negated: bool) -> Rex:
        target = node.expression
        operand = self.resolve(node.this)
        if isinstance(target, exp.Null):
            return self.call("IS NOT NULL" if negated else "IS NULL", [operand])
        if isinstance(target, exp.Boolean):
            name = ("IS NOT " if negated else "IS ") + ("TRUE" if target.this else "FALSE")
            return self.call(name, [operand])
        raise UnsupportedFeatureError(f"IS {target.sql()}")

    def _r_In(self, node: exp.In) -> Rex:
        if node.args.get("query") is not None:
            raise UnsupportedFeatureError("IN with a subquery in this position")
        operand = self.resolve(node.this)
        values = [self.resolve(v) for v in node.expressions]
        return self.call("IN", [operand, *values])

    def _r_Between(self, node: exp.Between) -> Rex:
        return self.call("BETWEEN", [self.resolve(node.this), self.resolve(node.args["low"]),
                                     self.resolve(node.args["high"])])

    def _r_Like(self, node: exp.Like) -> Rex:
        return self.call("LIKE", [self.resolve(node.this), self.resolve(node.expression)])

    def _r_Escape(self, node: exp.Escape) -> Rex:
        like = node.this
        return self.call("LIKE", [self.resolve(like.this), self.resolve(like.expression),
                                  self.resolve(node.expression)])

    def _r_SimilarTo(self, node: exp.Expression) -> Rex:
        return self.call("SIMILAR TO", [self.resolve(node.this), self.resolve(node.expression)])

    def _r_RegexpLike(self, node: exp.Expression) -> Rex:
        return self.call("REGEXP", [self.resolve(node.this), self.resolve(node.expression)])

    # -- conditional --------------------------------------------------------------------------

    def _r_Case(self, node: exp.Case) -> Rex:
        subject = node.this
        conditions: list[Rex] = []
        results: list[Rex] = []
        for branch in node.args.get("ifs") or []:
            condition = branch.this
            if subject is not None:
                conditions.append(self.call("=", [self.resolve(subject),
                                                  self.resolve(condition)]))
            else:
                conditions.append(self.resolve(condition))
            results.append(self.resolve(branch.args["true"]))
        default = node.args.get("default")
        otherwise = self.resolve(default) if default is not None else None
        return self.case(conditions, results, otherwise)

    def case(self, conditions: list[Rex], results: list[Rex], otherwise: Rex | None) -> Rex:
        branches = results + ([otherwise] if otherwise is not None else [])
        common = tr.common_type([b.type for b in branches], "CASE")
        nullable = otherwise is None or any(tr.is_nullable(b.type) for b in branches)
        result_type = tr.with_nullability(common, nullable)
        operands: list[Rex] = []
        for condition, result in zip(conditions, results, strict=True):
            operands += [condition, cast_to(result, result_type)]
        if otherwise is not None:
            operands.append(cast_to(otherwise, result_type))
        return Call(result_type, "CASE", tuple(operands))

    def _r_If(self, node: exp.If) -> Rex:
        false = node.args.get("false")
        if false is None:
            return self.case([self.resolve(node.this)], [self.resolve(node.args["true"])], None)
        return _if(self, [node.this, node.args["true"], false])

    def _r_Coalesce(self, node: exp.Coalesce) -> Rex:
        operands = [self.resolve(node.this)] + [self.resolve(e) for e in node.expressions]
        return self.call("COALESCE", operands)

    # -- casts --------------------------------------------------------------------------------

    def _r_Cast(self, node: exp.Cast) -> Rex:
        return self._cast(node, "CAST")

    def _r_TryCast(self, node: exp.TryCast) -> Rex:
        return self._cast(node, "TRY_CAST")

    def _cast(self, node: exp.Expression, kind: str) -> Rex:
        operand = self.resolve(node.this)
        target = data_type_of(node.args["to"])
        nullable = tr.is_nullable(operand.type) or kind == "TRY_CAST"
        target = tr.with_nullability(target, nullable if tr.is_nullable(target) else False)
        if isinstance(operand, Literal) and operand.value is None:
            return Literal(tr.with_nullability(target, True), None)
        return Call(target, kind, (operand,))

    # -- functions ----------------------------------------------------------------------------

    def _function(self, node: exp.Func) -> Rex:
        name = function_name(node)
        if name in AGGREGATES:
            raise ValidationError(
                f"Aggregate function {name} is not allowed here (outside a GROUP BY query's "
                "SELECT or HAVING)")
        user = self.catalog.user_function(name)
        operands_nodes = function_operands(node)
        if user is not None:
            return self.user_call(name, user, [self.resolve(o) for o in operands_nodes])
        special = _SPECIAL_FUNCTIONS.get(name)
        if special is not None:
            return special(self, operands_nodes)
        return self.call(name, [self.resolve(o) for o in operands_nodes])

    def user_call(self, name: str, function: Any, operands: list[Rex]) -> Rex:
        kind = getattr(function, "_flintlock_kind", "scalar")
        if kind != "scalar":
            raise ValidationError(
                f"Function '{name}' is a {kind} function and cannot be called as a scalar "
                "function here")
        result_type = function.result_type_for([o.type for o in operands])
        return UdfCall(result_type, function, name, tuple(operands))

    def _json_value(self, operands: list[exp.Expression]) -> Rex:
        returning = None
        if len(operands) > 2:
            returning = data_type_of(operands[2])
        args = [self.resolve(o) for o in operands[:2]]
        return self.call("JSON_VALUE", args, (returning,) if returning is not None else ())

    def _extract(self, operands: list[exp.Expression]) -> Rex:
        unit = operands[0].name.upper()
        return self.call("EXTRACT", [self.resolve(operands[1])], (unit,))

    def _timestampdiff(self, operands: list[exp.Expression]) -> Rex:
        unit = operands[0].name.upper()
        return self.call("TIMESTAMPDIFF", [self.resolve(operands[1]), self.resolve(operands[2])],
                         (unit,))

    def _timestampadd(self, operands: list[exp.Expression]) -> Rex:
        unit = operands[0].name.upper()
        return self.call("TIMESTAMPADD", [self.resolve(operands[1]), self.resolve(operands[2])],
                         (unit,))

    def _trim(self, operands: list[exp.Expression]) -> Rex:
        return self.call("TRIM", [self.resolve(o) for o in operands])

    def _row(self, operands: list[exp.Expression]) -> Rex:
        values = [self.resolve(o) for o in operands]
        row_type = t.RowType([t.RowField(f"EXPR${i}", v.type) for i, v in enumerate(values)],
                             False)
        return Call(row_type, "ROW", tuple(values))

    def _array(self, operands: list[exp.Expression]) -> Rex:
        values = [self.resolve(o) for o in operands]
        element = tr.common_type([v.type for v in values], "ARRAY")
        return Call(t.ArrayType(element, False), "ARRAY", tuple(values))

    def _map(self, operands: list[exp.Expression]) -> Rex:
        values = [self.resolve(o) for o in operands]
        keys = tr.common_type([v.type for v in values[0::2]], "MAP")
        items = tr.common_type([v.type for v in values[1::2]], "MAP")
        return Call(t.MapType(keys, items, False), "MAP", tuple(values))

    def _r_JSONValue(self, node: exp.Expression) -> Rex:
        operands = [node.this, node.args["path"]]
        returning = node.args.get("returning")
        if returning is not None:
            operands.append(returning)
        return self._json_value(operands)

    def _r_Extract(self, node: exp.Extract) -> Rex:
        return self.call("EXTRACT", [self.resolve(node.expression)], (node.this.name.upper(),))

    def _r_StrPosition(self, node: exp.StrPosition) -> Rex:
        operands = [self.resolve(node.args["substr"]), self.resolve(node.this)]
        position = node.args.get("position")
        if position is not None:
            return self.call("LOCATE", [*operands, self.resolve(position)])
        return self.call("POSITION", operands)

    def _r_Trim(self, node: exp.Trim) -> Rex:
        operands = [self.resolve(node.this)]
        if node.args.get("expression") is not None:
            operands.append(self.resolve(node.args["expression"]))
        mode = str(node.args.get("position") or "BOTH").upper()
        return self.call("TRIM", operands, (mode,))

    def _r_Substring(self, node: exp.Substring) -> Rex:
        operands = [self.resolve(node.this), self.resolve(node.args["start"])]
        if node.args.get("length") is not None:
            operands.append(self.resolve(node.args["length"]))
        return self.call("SUBSTRING", operands)

    def _r_Ceil(self, node: exp.Expression) -> Rex:
        return self._rounding(node, "CEIL")

    def _r_Floor(self, node: exp.Expression) -> Rex:
        return self._rounding(node, "FLOOR")

    def _rounding(self, node: exp.Expression, name: str) -> Rex:
        unit = node.args.get("to")
        operand = self.resolve(node.this)
        if unit is not None:
            function = "CEIL_TIME" if name == "CEIL" else "FLOOR_TIME"
            return self.call(function, [operand], (unit.name.upper(),))
        return self.call(name, [operand])

    def _r_TypedLiteral(self, node: exp.Expression) -> Rex:
        target = data_type_of(node.args["to"])
        text = node.this.name
        if isinstance(target, (t.TimestampType, t.LocalZonedTimestampType, t.TimeType)):
            digits = len(text.strip().rpartition(".")[2]) if "." in text else 0
            target = type(target)(digits)  # Flink types the literal by the digits it has
        value = typed_literal_value(text, target)
        return Literal(tr.with_nullability(target, False), value)

    def _r_VarMap(self, node: exp.Expression) -> Rex:
        keys = list(node.args["keys"].expressions)
        values = list(node.args["values"].expressions)
        return self._map([item for pair in zip(keys, values, strict=True) for item in pair])

    def _r_Array(self, node: exp.Array) -> Rex:
        return self._array(list(node.expressions))

    def _r_Concat(self, node: exp.Concat) -> Rex:
        return self.call("CONCAT", [self.resolve(e) for e in node.expressions])

    def _r_UdfNode(self, node: exp.Expression) -> Rex:
        function = node.this
        name = getattr(function, "_name", "udf")
        return self.user_call(name, function, [self.resolve(o) for o in node.expressions])

    def _r_Bracket(self, node: exp.Bracket) -> Rex:
        if isinstance(node.this, exp.Column) and node.this.name.upper() == "MAP" and not (
                node.this.table):
            return self._map(list(node.expressions))
        container = self.resolve(node.this)
        key = self.resolve(node.expressions[0])
        container_type = container.type
        if isinstance(container_type, t.ArrayType):
            element = container_type.element_type
        elif isinstance(container_type, t.MapType):
            element = container_type.value_type
        else:
            raise ValidationError(f"cannot index a value of type {tr.sql_name(container_type)}")
        return Call(tr.with_nullability(element, True), "ITEM", (container, key))

    def _r_Interval(self, node: exp.Interval) -> Rex:
        value = node.this.name if isinstance(node.this, exp.Literal) else node.this.sql()
        unit = node.text("unit").upper() or "SECOND"
        milliseconds = interval_millis(value, unit)
        interval = t.DataTypes.INTERVAL(t.DataTypes.SECOND(3)).not_null()
        return Literal(interval, datetime.timedelta(milliseconds=milliseconds))


def typed_literal_value(text: str, target: t.DataType) -> Any:
    """The value of ``DATE '2020-01-01'``, ``TIMESTAMP '2020-01-01 00:00:00'``, ..."""
    try:
        if isinstance(target, t.DateType):
            return datetime.date.fromisoformat(text.strip())
        if isinstance(target, t.TimeType):
            return datetime.time.fromisoformat(text.strip())
        return datetime.datetime.fromisoformat(text.strip().replace("T", " "))
    except ValueError:
        raise ValidationError(
            f"Illegal {tr.sql_name(target)} literal '{text}'") from None


def interval_millis(value: str, unit: str) -> int:
    """An ``INTERVAL 'value' unit`` as milliseconds (day-time intervals)."""
    units = {"MILLISECOND": 1, "SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000,
             "DAY": 86_400_000, "WEEK": 604_800_000}
    unit = unit.rstrip("S") if unit.endswith("S") and unit[:-1] in units else unit
    if unit not in units:
        raise UnsupportedFeatureError(f"INTERVAL ... {unit}")
    return int(decimal.Decimal(value.strip()) * units[unit])


def _if(resolver: ExpressionResolver, operands: list[exp.Expression]) -> Rex:
    """IF(c, a, b): a CASE whose result is nullable also when ``c`` is (Flink's IF)."""
    if len(operands) != 3:
        raise ValidationError("Invalid number of arguments to function 'IF'. Was expecting 3 "
                              f"arguments, got {len(operands)}")
    condition = resolver.resolve(operands[0])
    result = resolver.case([condition], [resolver.resolve(operands[1])],
                           resolver.resolve(operands[2]))
    if tr.is_nullable(condition.type) and not tr.is_nullable(result.type):
        assert isinstance(result, Call)
        return Call(tr.with_nullability(result.type, True), result.function, result.operands)
    return result


_SPECIAL_FUNCTIONS: dict[str, Callable[[ExpressionResolver, list[exp.Expression]], Rex]] = {
    "IF": _if,
    "JSON_VALUE": ExpressionResolver._json_value,
    "EXTRACT": ExpressionResolver._extract,
    "TIMESTAMPADD": ExpressionResolver._timestampadd,
    "TIMESTAMPDIFF": ExpressionResolver._timestampdiff,
    "ROW": ExpressionResolver._row,
    "ARRAY": ExpressionResolver._array,
    "MAP": ExpressionResolver._map,
}


def function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        name = str(node.this).upper()
    else:
        name = type(node).sql_name().upper()
    return _RENAMED.get(name, name)


def function_operands(node: exp.Func) -> list[exp.Expression]:
    """A function node's arguments in call order (sqlglot keeps them under named keys)."""
    if isinstance(node, exp.Anonymous):
        return list(node.expressions)
    operands: list[exp.Expression] = []
    for key in node.arg_types:
        value = node.args.get(key)
        if value is None or isinstance(value, (bool, str)):
            continue
        if isinstance(value, list):
            operands.extend(v for v in value if isinstance(v, exp.Expression))
        elif isinstance(value, exp.Expression):
            operands.append(value)
    return operands


def cast_to(rex: Rex, target: t.DataType) -> Rex:
    """``rex`` as ``target`` (no cast when the types already agree)."""
    if tr.type_key(rex.type) == tr.type_key(target):
        return rex
    if tr.type_key(tr.with_nullability(rex.type, True)) == tr.type_key(
            tr.with_nullability(target, True)):
        return rex
    if isinstance(rex, Literal) and rex.value is None:
        return Literal(tr.with_nullability(target, True), None)
    if _without_not_null(rex.type) == _without_not_null(target):
        return rex  # only the nullability of nested types differs: the values are the same
    return Call(target, "CAST", (rex,))


def _without_not_null(data_type: t.DataType) -> str:
    return t.sql_string(data_type).replace(" NOT NULL", "")


def data_type_of(node: exp.Expression) -> t.DataType:
    """The DataType a CAST target or RETURNING clause names."""
    if isinstance(node, PyLiteral) and isinstance(node.this, t.DataType):
        return node.this
    if isinstance(node, exp.DataType) and isinstance(node.args.get("kind"), str):
        return t.from_sql_string(node.args["kind"])
    return t.from_sql_string(node.sql())


# -- grouped queries ---------------------------------------------------------------------------

@dataclass
class AggregatePlan:
    """What resolving a grouped query's expressions collected: the pre-projection (group
    expressions, then aggregate arguments) and the aggregate calls over it."""

    group: list[Rex]
    pre_projection: list[Rex] = field(default_factory=list)
    calls: list[AggregateCall] = field(default_factory=list)
    call_keys: list[Any] = field(default_factory=list)

    def argument(self, rex: Rex) -> int:
        for index, known in enumerate(self.pre_projection):
            if known == rex:
                return index
        self.pre_projection.append(rex)
        return len(self.pre_projection) - 1


class AggregateResolver(ExpressionResolver):
    """Resolves expressions over a GROUP BY's output: group keys and aggregate calls."""

    def __init__(self, scope: Scope, plan: AggregatePlan, catalog: FunctionCatalog | None = None,
                 has_group_keys: bool = True) -> None:
        super().__init__(scope, catalog)
        self.plan = plan
        self.input_resolver = ExpressionResolver(scope, catalog)
        self.has_group_keys = has_group_keys
        if not plan.pre_projection:
            plan.pre_projection.extend(plan.group)

    def resolve(self, node: exp.Expression) -> Rex:
        if isinstance(node, exp.Filter):
            return self._filtered(node)
        if is_aggregate_call(node, self.catalog):
            return self._call(node, None)
        if isinstance(node, (exp.Literal, exp.Boolean, exp.Null, PyLiteral)):
            return super().resolve(node)
        try:
            plain = self.input_resolver.resolve(node)
        except ValidationError:
            plain = None
        if plain is not None:
            for index, key in enumerate(self.plan.group):
                if key == plain:
                    return InputRef(key.type, index)
            if isinstance(node, (exp.Column, exp.Identifier)):
                raise ValidationError(
                    f"Expression '{node.sql()}' is not being grouped")
        return super().resolve(node)

    def _call(self, node: exp.Expression, filter_index: int | None) -> Rex:
        if isinstance(node, UdfNode):
            return self._aggregate(node, getattr(node.this, "_name", "udaf"), node.this,
                                   filter_index)
        name = function_name(node)  # type: ignore[arg-type]
        return self._aggregate(node, name, self.catalog.user_function(name), filter_index)

    def _filtered(self, node: exp.Filter) -> Rex:
        """``agg(x) FILTER (WHERE c)``: the call over the rows where ``c`` is TRUE; a call of
        its own, never shared with the same call unfiltered or under another condition."""
        if not is_aggregate_call(node.this, self.catalog):
            raise ValidationError("FILTER (WHERE ...) applies to an aggregate call")
        condition = self.input_resolver.resolve(node.expression.this)
        return self._call(node.this, self.plan.argument(condition))

    def _aggregate(self, node: exp.Expression, name: str, user: Any,
                   filter_index: int | None = None) -> Rex:
        operands = (list(node.expressions) if isinstance(node, UdfNode)
                    else function_operands(node))  # type: ignore[arg-type]
        distinct = False
        if len(operands) == 1 and isinstance(operands[0], exp.Distinct):
            distinct = True
            operands = list(operands[0].expressions)
        if name == "COUNT" and (not operands or isinstance(operands[0], exp.Star)):
            operands = []
        arguments = [self.input_resolver.resolve(o) for o in operands]
        args = tuple(self.plan.argument(a) for a in arguments)
        if user is not None:
            result_type = user.result_type_for([a.type for a in arguments])
            call = AggregateCall(name.lower(), args, result_type, distinct, filter_index, user)
        else:
            result_type = aggregate_type(name, [a.type for a in arguments], self.has_group_keys)
            if name == "LISTAGG" and len(arguments) > 1:
                args = args[:1]
                separator = arguments[1]
                options: tuple[Any, ...] = (separator.value if isinstance(separator, Literal)
                                            else ",",)
            else:
                options = ()
            call = AggregateCall(name, args, result_type, distinct, filter_index, None, options)
        key = (call.name, call.args, call.distinct, id(call.function), call.options,
               call.filter)
        for index, known in enumerate(self.plan.call_keys):
            if known == key:
                return InputRef(self.plan.calls[index].type, len(self.plan.group) + index)
        self.plan.calls.append(call)
        self.plan.call_keys.append(key)
        return InputRef(result_type, len(self.plan.group) + len(self.plan.calls) - 1)


def aggregate_type(name: str, types: Sequence[t.DataType], grouped: bool) -> t.DataType:
    """The result type Flink gives a built-in aggregate."""
    if name == "COUNT":
        return t.BigIntType(False)
    if not types:
        raise ValidationError(f"Invalid number of arguments to function '{name}'")
    argument = types[0]
    nullable = True
    if name in ("SUM", "SUM0"):
        if not tr.is_numeric(argument):
            raise ValidationError(
                f"Cannot apply '{name}' to arguments of type '{name}(<{tr.sql_name(argument)}>)'"
                f". Supported form(s): '{name}(<NUMERIC>)'")
        if isinstance(argument, t.DecimalType):
            return t.DecimalType(38, argument.scale, nullable)
        return tr.with_nullability(argument, name == "SUM" and nullable)
    if name == "AVG":
        if not tr.is_numeric(argument):
            raise ValidationError(
                f"Cannot apply 'AVG' to arguments of type 'AVG(<{tr.sql_name(argument)}>)'. "
                "Supported form(s): 'AVG(<NUMERIC>)'")
        if isinstance(argument, t.DecimalType):
            return t.DecimalType(38, max(6, argument.scale), True)
        return tr.with_nullability(argument, True)
    if name in ("MIN", "MAX", "FIRST_VALUE", "LAST_VALUE"):
        return tr.with_nullability(argument, True)
    if name == "LISTAGG":
        return tr.string_type(nullable=True)
    if name in ("STDDEV_POP", "STDDEV_SAMP", "VAR_POP", "VAR_SAMP"):
        return t.DoubleType(True) if not isinstance(argument, t.DecimalType) else t.DecimalType(
            38, 6, True)
    if name in ("BOOL_AND", "BOOL_OR"):
        return t.BooleanType(True)
    if name == "COLLECT":
        return t.MultisetType(argument, False)
    raise UnsupportedFeatureError(f"the aggregate function {name}")
