"""The built-in scalar functions: for each, its arity, its result type from the operand types,
and the Python source that computes it (``emit``), which the compiler inlines.

A function is *strict* when any NULL operand makes the result NULL; the compiler then checks
the operands once (only those whose type is nullable) and calls ``emit`` on non-NULL values.
Non-strict ones (``AND``, ``OR``, ``IS NULL``, ``COALESCE``, ``CASE``, ``CONCAT_WS``) see
NULLs and handle them in their source. ``emit(args, types, options)`` gets the operands as
Python expressions (variables of the compiled function) and returns one Python expression;
it may name the helpers of ``codegen.sql_functions`` as ``F.<name>``.

Names are upper case; aliases map onto one definition (``CHARACTER_LENGTH`` → ``CHAR_LENGTH``).
Unknown names raise ``ValidationError`` with the closest known name. Pure data.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from flintlock.table import types as t
from flintlock.table.errors import ValidationError
from flintlock.table.plan import type_rules as tr
from flintlock.table.time_attributes import proctime_type

Emit = Callable[[Sequence[str], Sequence[t.DataType], tuple[Any, ...]], str]
Infer = Callable[[Sequence[t.DataType], tuple[Any, ...]], t.DataType]


@dataclass(frozen=True, slots=True)
class Builtin:
    name: str
    min_args: int
    max_args: int | None
    infer: Infer
    emit: Emit
    strict: bool = True


REGISTRY: dict[str, Builtin] = {}
ALIASES: dict[str, str] = {}


def _nullable(types: Sequence[t.DataType]) -> bool:
    return any(tr.is_nullable(dt) for dt in types)


def _fixed(data_type: Callable[[bool], t.DataType]) -> Infer:
    return lambda types, options: data_type(_nullable(types))


def _same_as_first(types: Sequence[t.DataType], options: tuple[Any, ...]) -> t.DataType:
    return tr.with_nullability(types[0], _nullable(types))


def _string_result(types: Sequence[t.DataType], options: tuple[Any, ...]) -> t.DataType:
    return tr.string_type(nullable=_nullable(types))


def _boolean(types: Sequence[t.DataType], options: tuple[Any, ...]) -> t.DataType:
    return t.BooleanType(_nullable(types))


def define(name: str, arity: int | tuple[int, int | None], infer: Infer, emit: Emit,
           strict: bool = True, aliases: Sequence[str] = ()) -> None:
    low, high = (arity, arity) if isinstance(arity, int) else arity
    REGISTRY[name] = Builtin(name, low, high, infer, emit, strict)
    for alias in aliases:
        ALIASES[alias] = name


def lookup(name: str) -> Builtin:
    upper = name.upper()
    upper = ALIASES.get(upper, upper)
    found = REGISTRY.get(upper)
    if found is None:
        close = difflib.get_close_matches(upper, list(REGISTRY) + list(ALIASES), n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise ValidationError(f"No match found for function signature {name}(...){hint}")
    return found


def check_arity(builtin: Builtin, count: int) -> None:
    if count < builtin.min_args or (builtin.max_args is not None and count > builtin.max_args):
        expected = (str(builtin.min_args) if builtin.min_args == builtin.max_args else
                    f"{builtin.min_args} or more" if builtin.max_args is None else
                    f"{builtin.min_args} to {builtin.max_args}")
        raise ValidationError(
            f"Invalid number of arguments to function '{builtin.name}'. "
            f"Was expecting {expected} arguments, got {count}")


# -- arithmetic -------------------------------------------------------------------------------

def _arith(operator: str) -> Infer:
    return lambda types, options: tr.arithmetic_result(operator, types[0], types[1])


def _emit_plus(a: Sequence[str], types: Sequence[t.DataType], o: tuple[Any, ...]) -> str:
    return f"({a[0]} + {a[1]})"


def _emit_div(a: Sequence[str], types: Sequence[t.DataType], o: tuple[Any, ...]) -> str:
    result = tr.arithmetic_result("/", types[0], types[1])
    if tr.is_integral(result):
        if a[0].isidentifier() and a[1].isdigit() and int(a[1]) > 0:
            # Java's division by a positive constant (toward zero), inline: no call per row
            return f"({a[0]} // {a[1]} if {a[0]} >= 0 else -(-{a[0]} // {a[1]}))"
        return f"F.int_div({a[0]}, {a[1]})"
    if isinstance(result, t.DecimalType):
        return f"F.decimal_div({a[0]}, {a[1]}, {result.scale})"
    return f"F.float_div({a[0]}, {a[1]})"


def _emit_mod(a: Sequence[str], types: Sequence[t.DataType], o: tuple[Any, ...]) -> str:
    if tr.is_integral(types[0]) and tr.is_integral(types[1]):
        if a[0].isidentifier() and a[1].isdigit() and int(a[1]) > 0:
            # Java's remainder by a positive constant, inline (no call per row)
            return f"({a[0]} % {a[1]} if {a[0]} >= 0 else -(-{a[0]} % {a[1]}))"
        return f"F.int_mod({a[0]}, {a[1]})"
    return f"math.fmod({a[0]}, {a[1]})"


define("+", 2, _arith("+"), _emit_plus, aliases=("PLUS",))
define("-", 2, _arith("-"), lambda a, ty, o: f"({a[0]} - {a[1]})", aliases=("MINUS",))
define("*", 2, _arith("*"), lambda a, ty, o: f"({a[0]} * {a[1]})", aliases=("TIMES",))
define("/", 2, _arith("/"), _emit_div, aliases=("DIVIDE",))
define("MOD", 2, _arith("%"), _emit_mod, aliases=("%",))
define("NEGATE", 1, _same_as_first, lambda a, ty, o: f"(-{a[0]})", aliases=("MINUS_PREFIX",))
define("ABS", 1, _same_as_first, lambda a, ty, o: f"abs({a[0]})")


def _approx(types: Sequence[t.DataType], options: tuple[Any, ...]) -> t.DataType:
    return t.DoubleType(_nullable(types))


define("SQRT", 1, _approx, lambda a, ty, o: f"math.sqrt({a[0]})")
define("POWER", 2, _approx, lambda a, ty, o: f"F.sql_power({a[0]}, {a[1]})", aliases=("POW",))
define("EXP", 1, _approx, lambda a, ty, o: f"math.exp({a[0]})")
define("LN", 1, _approx, lambda a, ty, o: f"math.log({a[0]})")
define("LOG10", 1, _approx, lambda a, ty, o: f"math.log10({a[0]})")
define("LOG2", 1, _approx, lambda a, ty, o: f"math.log2({a[0]})")
define("LOG", (1, 2), _approx, lambda a, ty, o: f"F.sql_log({', '.join(a)})")
define("SIN", 1, _approx, lambda a, ty, o: f"math.sin({a[0]})")
define("COS", 1, _approx, lambda a, ty, o: f"math.cos({a[0]})")
define("TAN", 1, _approx, lambda a, ty, o: f"math.tan({a[0]})")
define("PI", 0, lambda ty, o: t.DoubleType(False), lambda a, ty, o: "math.pi")
define("RAND", (0, 1), lambda ty, o: t.DoubleType(False),
       lambda a, ty, o: "None")  # compiled as a special form (codegen.compiler.random)


def _rand_integer_infer(types: Sequence[t.DataType], options: tuple[Any, ...]) -> t.DataType:
    for operand in types:
        if not tr.is_integral(operand):
            raise ValidationError(
                "Cannot apply 'RAND_INTEGER' to arguments of type "
                f"'RAND_INTEGER(<{tr.sql_name(operand)}>)'. Supported form(s): "
                "'RAND_INTEGER(<INTEGER>)', 'RAND_INTEGER(<INTEGER>, <INTEGER>)'")
    return t.IntType(_nullable(types))


define("RAND_INTEGER", (1, 2), _rand_integer_infer,
       lambda a, ty, o: "None")  # compiled as a special form (codegen.compiler.random)
define("FLOOR", 1, _same_as_first,  # an integer is its own floor and ceiling
       lambda a, ty, o: a[0] if tr.is_integral(ty[0]) else f"F.sql_floor({a[0]})")
define("CEIL", 1, _same_as_first,
       lambda a, ty, o: a[0] if tr.is_integral(ty[0]) else f"F.sql_ceil({a[0]})",
       aliases=("CEILING",))
define("ROUND", (1, 2), _same_as_first, lambda a, ty, o: f"F.sql_round({', '.join(a)})")
define("SIGN", 1, _same_as_first, lambda a, ty, o: f"(({a[0]} > 0) - ({a[0]} < 0))")

# -- comparison and logic ---------------------------------------------------------------------

_COMPARE = {"=": "==", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def _compare_infer(name: str) -> Infer:
    def infer(types: Sequence[t.DataType], options: tuple[Any, ...]) -> t.DataType:
        if not tr.comparable(types[0], types[1]):
            raise ValidationError(
                f"Cannot apply '{name}' to arguments of type '<{tr.sql_name(types[0])}> "
                f"{name} <{tr.sql_name(types[1])}>'. Supported form(s): "
                "'<COMPARABLE_TYPE> = <COMPARABLE_TYPE>'")
        return t.BooleanType(_nullable(types))
    return infer


for _sql, _py in _COMPARE.items():
    define(_sql, 2, _compare_infer(_sql),
           (lambda op: lambda a, ty, o: f"({a[0]} {op} {a[1]})")(_py))
ALIASES.update({"==": "=", "!=": "<>", "EQUALS": "=", "NOT_EQUALS": "<>",
                "LESS_THAN": "<", "GREATER_THAN": ">", "LESS_THAN_OR_EQUAL": "<=",
                "GREATER_THAN_OR_EQUAL": ">="})


def _logic(types: Sequence[t.DataType], options: tuple[Any, ...]) -> t.DataType:
    for dt in types:
        if not (tr.is_boolean(dt) or tr.is_null_type(dt)):
            raise ValidationError(f"a boolean expression is required, got {tr.sql_name(dt)}")
    return t.BooleanType(_nullable(types))


def _emit_and(a: Sequence[str], types: Sequence[t.DataType], o: tuple[Any, ...]) -> str:
    if not _nullable(types):
        return "(" + " and ".join(a) + ")"
    return f"F.sql_and({', '.join(a)})"


def _emit_or(a: Sequence[str], types: Sequence[t.DataType], o: tuple[Any, ...]) -> str:
    if not _nullable(types):
        return "(" + " or ".join(a) + ")"
    return f"F.sql_or({', '.join(a)})"


define("AND", (2, None), _logic, _emit_and, strict=False)
define("OR", (2, None), _logic, _emit_or, strict=False)
define("NOT", 1, _logic, lambda a, ty, o: f"(not {a[0]})")
_NOT_NULL_BOOLEAN: Infer = lambda types, options: t.BooleanType(False)  # noqa: E731
define("IS NULL", 1, _NOT_NULL_BOOLEAN, lambda a, ty, o: f"({a[0]} is None)", strict=False,
       aliases=("IS_NULL", "ISNULL"))
define("IS NOT NULL", 1, _NOT_NULL_BOOLEAN, lambda a, ty, o: f"({a[0]} is not None)",
       strict=False, aliases=("IS_NOT_NULL", "ISNOTNULL"))
define("IS TRUE", 1, _NOT_NULL_BOOLEAN, lambda a, ty, o: f"({a[0]} is True)", strict=False,
       aliases=("IS_TRUE",))
define("IS FALSE", 1, _NOT_NULL_BOOLEAN, lambda a, ty, o: f"({a[0]} is False)", strict=False,
       aliases=("IS_FALSE",))
define("IS NOT TRUE", 1, _NOT_NULL_BOOLEAN, lambda a, ty, o: f"({a[0]} is not True)",
       strict=False, aliases=("IS_NOT_TRUE",))
define("IS NOT FALSE", 1, _NOT_NULL_BOOLEAN, lambda a, ty, o: f"({a[0]} is not False)",
       strict=False, aliases=("IS_NOT_FALSE",))
define("IS DISTINCT FROM", 2, _NOT_NULL_BOOLEAN, lambda a, ty, o: f"({a[0]} != {a[1]})",
       strict=False)
define("IS NOT DISTINCT FROM", 2, _NOT_NULL_BOOLEAN, lambda a, ty, o: f"({a[0]} == {a[1]})",
       strict=False)


def _emit_in(a: Sequence[str], types: Sequence[t.DataType], o: tuple[Any, ...]) -> str:
    return f"({a[0]} in ({', '.join(a[1:])},))"


define("IN", (2, None), _boolean, _emit_in)
define("BETWEEN", 3, _boolean, lambda a, ty, o: f"({a[1]} <= {a[0]} <= {a[2]})")
define("NOT BETWEEN", 3, _boolean, lambda a, ty, o: f"(not ({a[1]} <= {a[0]} <= {a[2]}))")
define("LIKE", (2, 3), _boolean, lambda a, ty, o: f"F.like({', '.join(a)})")
define("SIMILAR TO", 2, _boolean, lambda a, ty, o: f"F.similar({a[0]}, {a[1]})")
define("REGEXP", 2, _boolean, lambda a, ty, o: f"F.regexp({a[0]}, {a[1]})")


def _common(types: Sequence[t.DataType], options: tuple[Any, ...]) -> t.DataType:
    return tr.common_type(types, "COALESCE")


def _coalesce_infer(types: Sequence[t.DataType], options: tuple[Any, ...]) -> t.DataType:
    common = tr.common_type(types, "COALESCE")
    return tr.with_nullability(common, all(tr.is_nullable(dt) for dt in types))


define("COALESCE", (1, None), _coalesce_infer,
       lambda a, ty, o: f"F.coalesce({', '.join(a)})", strict=False, aliases=("IFNULL",))
define("NULLIF", 2, lambda ty, o: tr.with_nullability(ty[0], True),
       lambda a, ty, o: f"(None if {a[0]} == {a[1]} else {a[0]})", strict=False)
define("GREATEST", (1, None), _common, lambda a, ty, o: f"F.greatest({', '.join(a)})",
       strict=False)
define("LEAST", (1, None), _common, lambda a, ty, o: f"F.least({', '.join(a)})", strict=False)

# -- strings ----------------------------------------------------------------------------------


def _int_result(types: Sequence[t.DataType], options: tuple[Any, ...]) -> t.DataType:
    return t.IntType(_nullable(types))


def _concat_infer(types: Sequence[t.DataType], options: tuple[Any, ...]) -> t.DataType:
    total = sum(tr.string_length(dt) for dt in types)
    if all(isinstance(dt, t.CharType) for dt in types):
        return t.CharType(min(total, tr.MAX_LENGTH), _nullable(types))
    return tr.string_type(total, _nullable(types))


def _emit_concat(a: Sequence[str], types: Sequence[t.DataType], o: tuple[Any, ...]) -> str:
    parts = [arg if tr.is_string(dt) else f"str({arg})" for arg, dt in zip(a, types,
                                                                        strict=True)]
    return "(" + " + ".join(parts) + ")"


define("CONCAT", (1, None), _concat_infer, _emit_concat, aliases=("||",))
define("CONCAT_WS", (2, None), lambda ty, o: tr.string_type(nullable=tr.is_nullable(ty[0])),
       lambda a, ty, o: f"F.concat_ws_n({', '.join(a)})", strict=False)
define("UPPER", 1, _same_as_first, lambda a, ty, o: f"{a[0]}.upper()", aliases=("UPPER_CASE",))
define("LOWER", 1, _same_as_first, lambda a, ty, o: f"{a[0]}.lower()", aliases=("LOWER_CASE",))
define("INITCAP", 1, _same_as_first, lambda a, ty, o: f"F.initcap({a[0]})")
define("CHAR_LENGTH", 1, _int_result, lambda a, ty, o: f"len({a[0]})",
       aliases=("CHARACTER_LENGTH", "LENGTH"))
define("SUBSTRING", (2, 3), _string_result, lambda a, ty, o: f"F.substring({', '.join(a)})",
       aliases=("SUBSTR",))
define("POSITION", 2, _int_result, lambda a, ty, o: f"F.position({a[0]}, {a[1]})")
define("LOCATE", (2, 3), _int_result, lambda a, ty, o: f"F.locate({', '.join(a)})")
define("INSTR", 2, _int_result, lambda a, ty, o: f"F.position({a[1]}, {a[0]})")


def _emit_trim(a: Sequence[str], types: Sequence[t.DataType], o: tuple[Any, ...]) -> str:
    mode = o[0] if o else "BOTH"
    characters = a[1] if len(a) > 1 else "' '"
    return (f"F.trim({a[0]}, {characters}, {mode in ('BOTH', 'LEADING')}, "
            f"{mode in ('BOTH', 'TRAILING')})")


define("TRIM", (1, 2), _string_result, _emit_trim)
define("LTRIM", 1, _string_result, lambda a, ty, o: f"{a[0]}.lstrip(' ')")
define("RTRIM", 1, _string_result, lambda a, ty, o: f"{a[0]}.rstrip(' ')")
define("REPLACE", 3, _string_result, lambda a, ty, o: f"{a[0]}.replace({a[1]}, {a[2]})")
define("REVERSE", 1, _string_result, lambda a, ty, o: f"{a[0]}[::-1]")
define("REPEAT", 2, _string_result, lambda a, ty, o: f"({a[0]} * max({a[1]}, 0))")
define("LPAD", 3, lambda ty, o: tr.string_type(), lambda a, ty, o: f"F.lpad({', '.join(a)})")
define("RPAD", 3, lambda ty, o: tr.string_type(), lambda a, ty, o: f"F.rpad({', '.join(a)})")
define("LEFT", 2, _string_result, lambda a, ty, o: f"{a[0]}[:max({a[1]}, 0)]")
define("RIGHT", 2, _string_result,
       lambda a, ty, o: f"({a[0]}[-{a[1]}:] if {a[1]} > 0 else '')")
define("REGEXP_REPLACE", 3, _string_result,
       lambda a, ty, o: f"F.regexp_replace({', '.join(a)})")
define("REGEXP_EXTRACT", (2, 3), lambda ty, o: tr.string_type(),
       lambda a, ty, o: f"F.regexp_extract({', '.join(a)})")
define("SPLIT_INDEX", 3, lambda ty, o: tr.string_type(),
       lambda a, ty, o: f"F.split_index({', '.join(a)})")
define("MD5", 1, _string_result, lambda a, ty, o: f"F.md5({a[0]})")
define("SHA1", 1, _string_result, lambda a, ty, o: f"F.sha1({a[0]})")
define("SHA256", 1, _string_result, lambda a, ty, o: f"F.sha256({a[0]})")
def _hash_code(a: Sequence[str], ty: Sequence[t.DataType], o: tuple[Any, ...]) -> str:
    """Flink's HASH_CODE as PyFlink 2.3.0 prints it: |String.hashCode()| of a string (issue
    32, tests/table/test_split_distinct.py), an INT/SMALLINT/TINYINT itself, else Java's
    hashCode of the boxed value."""
    if tr.is_string(ty[0]):
        return f"abs(F.java_hash_code({a[0]}))"
    if isinstance(ty[0], (t.IntType, t.SmallIntType, t.TinyIntType)):
        return f"({a[0]})"
    return f"F.java_hash_code({a[0]})"


define("HASH_CODE", 1, _int_result, _hash_code)
define("ASCII", 1, _int_result, lambda a, ty, o: f"(ord({a[0]}[0]) if {a[0]} else 0)")
define("CHR", 1, _string_result, lambda a, ty, o: f"chr({a[0]} % 256)")
define("UUID", 0, lambda ty, o: tr.string_type(nullable=False),
       lambda a, ty, o: "str(uuid.uuid4())")

# -- JSON -------------------------------------------------------------------------------------


def _json_value_infer(types: Sequence[t.DataType], options: tuple[Any, ...]) -> t.DataType:
    returning = options[0] if options else None
    return tr.with_nullability(returning, True) if returning is not None else tr.string_type()


def _emit_json_value(a: Sequence[str], types: Sequence[t.DataType], o: tuple[Any, ...]) -> str:
    returning = o[0] if o else None
    kind = "STRING" if returning is None or tr.is_string(returning) else (
        "DECIMAL" if isinstance(returning, t.DecimalType) else
        returning.type_name() if not tr.is_boolean(returning) else "BOOLEAN")
    return f"F.json_value({a[0]}, {a[1]}, {kind!r})"


define("JSON_VALUE", 2, _json_value_infer, _emit_json_value)
define("JSON_EXISTS", 2, _boolean, lambda a, ty, o: f"F.json_exists({a[0]}, {a[1]})")
define("JSON_QUOTE", 1, _string_result, lambda a, ty, o: f"F.json_quote({a[0]})")
define("JSON_STRING", 1, lambda ty, o: tr.string_type(),
       lambda a, ty, o: f"F.json_string({a[0]})")

# -- temporal ---------------------------------------------------------------------------------


def _timestamp3(types: Sequence[t.DataType], options: tuple[Any, ...]) -> t.DataType:
    return t.TimestampType(3, _nullable(types))


define("TO_TIMESTAMP", (1, 2), lambda ty, o: t.TimestampType(3),
       lambda a, ty, o: f"F.parse_timestamp({', '.join(a)})")
define("TO_DATE", 1, lambda ty, o: t.DateType(_nullable(ty)),
       lambda a, ty, o: f"F.parse_date({a[0]})")
define("DATE_FORMAT", 2, _string_result, lambda a, ty, o: f"F.date_format({a[0]}, {a[1]})")
define("UNIX_TIMESTAMP", (0, 2), lambda ty, o: t.BigIntType(_nullable(ty)),
       lambda a, ty, o: f"F.unix_timestamp({', '.join(a)})")
define("FROM_UNIXTIME", (1, 2), _string_result,
       lambda a, ty, o: f"F.from_unixtime({', '.join(a)})")
define("EXTRACT", 1, lambda ty, o: t.BigIntType(_nullable(ty)),
       lambda a, ty, o: f"F.extract({o[0]!r}, {a[0]})")
for _unit in ("YEAR", "QUARTER", "MONTH", "WEEK", "DAYOFYEAR", "DAYOFMONTH", "DAYOFWEEK", "HOUR",
              "MINUTE", "SECOND"):
    _field = {"DAYOFYEAR": "DOY", "DAYOFMONTH": "DAY", "DAYOFWEEK": "DOW"}.get(_unit, _unit)
    define(_unit, 1, lambda ty, o: t.BigIntType(_nullable(ty)),
           (lambda f: lambda a, ty, o: f"F.extract({f!r}, {a[0]})")(_field))
define("TIMESTAMPADD", 2, lambda ty, o: tr.with_nullability(ty[1], _nullable(ty)),
       lambda a, ty, o: f"F.timestamp_add({o[0]!r}, {a[0]}, {a[1]})")
define("TIMESTAMPDIFF", 2, lambda ty, o: t.IntType(_nullable(ty)),
       lambda a, ty, o: f"F.timestamp_diff({o[0]!r}, {a[0]}, {a[1]})")
define("CEIL_TIME", 1, _same_as_first, lambda a, ty, o: f"F.ceil_time({a[0]}, {o[0]!r})")
define("FLOOR_TIME", 1, _same_as_first, lambda a, ty, o: f"F.floor_time({a[0]}, {o[0]!r})")
define("CURRENT_TIMESTAMP", 0, lambda ty, o: t.LocalZonedTimestampType(3, False),
       lambda a, ty, o: "datetime.datetime.now()", aliases=("NOW",))
define("PROCTIME", 0, lambda ty, o: proctime_type(),  # issue 32: a processing-time attribute
       lambda a, ty, o: "datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)")
define("LOCALTIMESTAMP", 0, lambda ty, o: t.TimestampType(3, False),
       lambda a, ty, o: "datetime.datetime.now()")
define("CURRENT_DATE", 0, lambda ty, o: t.DateType(False),
       lambda a, ty, o: "datetime.date.today()")
define("CURRENT_TIME", 0, lambda ty, o: t.TimeType(0, False),
       lambda a, ty, o: "datetime.datetime.now().time().replace(microsecond=0)",
       aliases=("LOCALTIME",))
define("POSITION_IN", 2, _int_result, lambda a, ty, o: f"F.position({a[0]}, {a[1]})")
define("LOCATE_IN", (2, 3), _int_result, lambda a, ty, o: f"F.locate({', '.join(a)})")
define("LTRIM_CHARS", 2, _string_result, lambda a, ty, o: f"F.trim({a[0]}, {a[1]}, True, False)")
define("RTRIM_CHARS", 2, _string_result, lambda a, ty, o: f"F.trim({a[0]}, {a[1]}, False, True)")
define("SIMILAR_TO", 2, _boolean, lambda a, ty, o: f"F.similar({a[0]}, {a[1]})")


def _element(data_type: t.DataType) -> t.DataType:
    if not isinstance(data_type, t.ArrayType):
        raise ValidationError(f"ELEMENT needs an ARRAY, got {tr.sql_name(data_type)}")
    return data_type.element_type


define("ELEMENT", 1, lambda ty, o: tr.with_nullability(_element(ty[0]), True),
       lambda a, ty, o: f"F.element({a[0]})")
define("ATAN2", 2, _approx, lambda a, ty, o: f"math.atan2({a[0]}, {a[1]})")
