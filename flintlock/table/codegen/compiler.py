"""Compiles resolved expressions (``plan.rex``) to Python functions: one call per record.

A projection, a filter or a key becomes the source of one Python function over a row's value
list ``r``: each sub-expression is a local variable computed once (equal sub-expressions are
shared), NULL checks only where an operand's type is nullable, ``CASE``/``IF`` evaluate only
the branch taken. The source goes through ``compile()`` once per query; the TaskManagers
compile it again from its text (``CompiledFunction`` pickles as source and constants, never as
code objects), so what runs is plain Python with no interpretation of an expression tree.

Example: ``SELECT a + 1 AS b FROM t WHERE c LIKE 'x%'`` gives two functions::

    def _filter(row):                          def _project(row):
        r = row._values                            r = row._values
        v0 = r[2]                                  v0 = r[0]
        if v0 is None: v1 = None                   if v0 is None: v1 = None
        else: v1 = F.like(v0, 'x%')                else: v1 = (v0 + 1)
        return v1 is True                          return row_of([v1], row._row_kind)

Functions built here run on the TaskManagers: ``CompiledFunction`` and its helpers import
only the standard library, ``flintlock.common`` and ``codegen.sql_functions``.
"""

from __future__ import annotations

import datetime
import decimal
import itertools
import math
import random
import re
import uuid
from collections.abc import Sequence
from typing import Any

from flintlock.common.row_batches import new_row, rows_from_columns, rows_of
from flintlock.common.types import Row, RowKind, row_of
from flintlock.table import types as t
from flintlock.table.codegen import sql_functions as F
from flintlock.table.errors import UnsupportedFeatureError
from flintlock.table.plan import functions
from flintlock.table.plan import type_rules as tr
from flintlock.table.plan.rex import Call, InputRef, Literal, Rex, UdfCall, input_refs

_KINDS = tuple(RowKind)
_KIND_CODES = {kind: bytes([code]) for code, kind in enumerate(_KINDS)}


def picked_rows(columns: list[Any], count: int, kind: RowKind) -> list[Row]:
    """The rows of the values of ``columns`` (a Calc fused into a source that only picks
    columns), built at once (in C where built). A column that is not a list is read once into
    one (it may be a one-pass iterator named twice); columns of another length than ``count``
    give as many rows as the shortest, as the loop of ``compile_column_calc`` does."""
    lists: dict[int, list[Any]] = {}
    for column in columns:
        if id(column) not in lists:
            lists[id(column)] = column if type(column) is list else list(column)
    picked = [lists[id(column)] for column in columns]
    if all(len(column) == count for column in picked):
        return rows_from_columns(_KIND_CODES[kind] * count, _KINDS, picked)
    return rows_of([list(values) for values in zip(*picked, strict=False)], kind)


_BASE_GLOBALS: dict[str, Any] = {
    "F": F, "math": math, "datetime": datetime, "decimal": decimal, "random": random,
    "uuid": uuid, "row_of": row_of, "Row": Row, "RowKind": RowKind, "NEW_ROW": new_row,
    "NEW_ROWS": rows_of, "PICKED_ROWS": picked_rows,
    "NO_VALUE": object(),  # no argument seen yet (a run memo's start): equal to nothing
}
_SIMPLE_LITERALS = (bool, int, float, str, type(None))
_COLUMN = re.compile(r"c[0-9]+")


class CompiledFunction:
    """A function compiled from generated source; pickles as its source and constants."""

    def __init__(self, name: str, source: str, constants: dict[str, Any]) -> None:
        self.name = name
        self.source = source
        self.constants = constants
        self.function = _build(name, source, constants)

    def __call__(self, *args: Any) -> Any:
        return self.function(*args)

    def user_functions(self) -> list[Any]:
        """The user-defined functions the compiled code calls (to open and close them)."""
        return [v for v in self.constants.values() if hasattr(v, "_flintlock_kind")]

    def needs_open(self) -> bool:
        """Whether a user-defined function it calls has ``open`` / ``close`` to be called with
        an operator's runtime context (a ``UserDefinedFunction`` subclass); a plain Python
        function wrapped by ``udf`` has none, so the compiled code may run anywhere."""
        return any(callable(getattr(getattr(f, "_func", None), "open", None))
                   for f in self.user_functions())

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (CompiledFunction, (self.name, self.source, self.constants))

    def __repr__(self) -> str:
        return f"CompiledFunction({self.name})"


def _build(name: str, source: str, constants: dict[str, Any]) -> Any:
    namespace = dict(_BASE_GLOBALS)
    namespace.update(constants)
    for key, value in constants.items():
        if hasattr(value, "_flintlock_kind"):  # a user-defined function's wrapper
            namespace[key + "_call"] = value.function
    code = compile(source, f"<flintlock-sql {name}>", "exec")
    exec(code, namespace)
    return namespace[name]


class _Block:
    """Source lines under construction, with the values each nesting level already holds."""

    def __init__(self, field: str = "r[{}]", depth: int = 1, direct: bool = False) -> None:
        self.field = field
        """How the input's field i is read (``r[i]`` of a row's values, ``c{i}`` of columns)."""
        self.direct = direct
        """Fields are variables already (``c{i}``): used by name, not copied to a local."""
        self.lines: list[str] = []
        self.depth = depth
        self.scopes: list[dict[Any, str]] = [{}]
        self.counter = itertools.count()
        self.constants: dict[str, Any] = {}
        self.prelude: list[str] = []
        """Lines run once before a column loop (``direct``): the run memos' locals."""

    def add(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def fresh(self) -> str:
        return f"v{next(self.counter)}"

    def known(self, key: Any) -> str | None:
        for scope in reversed(self.scopes):
            if key in scope:
                return str(scope[key])
        return None

    def remember(self, key: Any, name: str) -> None:
        self.scopes[-1][key] = name

    def constant(self, value: Any) -> str:
        name = f"_k{len(self.constants)}"
        self.constants[name] = value
        return name

    def nested(self) -> _Nested:
        return _Nested(self)


class _Nested:
    def __init__(self, block: _Block) -> None:
        self.block = block

    def __enter__(self) -> None:
        self.block.depth += 1
        self.block.scopes.append({})

    def __exit__(self, *exc: object) -> None:
        self.block.depth -= 1
        self.block.scopes.pop()


class _Emitter:
    """Writes the statements that compute expressions into a ``_Block``."""

    def __init__(self, block: _Block) -> None:
        self.b = block

    def value(self, rex: Rex) -> str:
        if isinstance(rex, Literal):
            return self._literal(rex)
        key = rex.key()
        known = self.b.known(key)
        if known is not None:
            return known
        if isinstance(rex, InputRef) and self.b.direct:
            name = self.b.field.format(rex.index)
        elif isinstance(rex, InputRef):
            name = self.b.fresh()
            self.b.add(f"{name} = {self.b.field.format(rex.index)}")
        elif isinstance(rex, UdfCall):
            name = self._udf(rex)
        elif isinstance(rex, Call):
            name = self._call(rex)
        else:
            raise TypeError(f"not an expression: {rex!r}")
        self.b.remember(key, name)
        return name

    def _literal(self, rex: Literal) -> str:
        value = rex.value
        if isinstance(value, _SIMPLE_LITERALS) and not (
                isinstance(value, float) and (math.isnan(value) or math.isinf(value))):
            return repr(value)
        return self.b.constant(value)

    def _udf(self, rex: UdfCall) -> str:
        args = [self.value(o) for o in rex.operands]
        function = self.b.constant(rex.function)
        name = self.b.fresh()
        self.b.add(f"{name} = {function}_call({', '.join(args)})")
        return name

    def _call(self, rex: Call) -> str:
        special = _SPECIAL.get(rex.function)
        if special is not None:
            return special(self, rex)
        builtin = functions.lookup(rex.function)
        args = [self.value(o) for o in rex.operands]
        types = [o.type for o in rex.operands]
        source = builtin.emit(args, types, rex.options)
        name = self.b.fresh()
        checks = [arg for arg, o in zip(args, rex.operands, strict=True)
                  if builtin.strict and tr.is_nullable(o.type) and not _is_constant(arg)]
        checks = list(dict.fromkeys(checks))
        if any(arg == "None" for arg in args) and builtin.strict:
            self.b.add(f"{name} = None")
            return name
        if checks:
            self.b.add(f"if {' or '.join(f'{c} is None' for c in checks)}: {name} = None")
        varying = self._run_argument(rex, args)
        if varying is not None:  # a run of equal arguments is computed once (column loops)
            memo = f"_m{len(self.b.prelude)}"
            self.b.prelude.append(f"{memo}a = {memo}v = NO_VALUE")
            self.b.add(f"{'elif' if checks else 'if'} {varying} == {memo}a: {name} = {memo}v")
            self.b.add(f"else: {name} = {memo}v = {source}; {memo}a = {varying}")
        elif checks:
            self.b.add(f"else: {name} = {source}")
        else:
            self.b.add(f"{name} = {source}")
        return name

    def _run_argument(self, rex: Call, args: Sequence[str]) -> str | None:
        """In a column loop, the one argument of a ``_RUN_MEMO`` call that is no constant,
        if it is an integer, a TIMESTAMP or a DATE (``==`` then means the same value, so the
        same result)."""
        if not self.b.direct or rex.function.upper() not in _RUN_MEMO:
            return None
        varying = [(arg, operand) for arg, operand in zip(args, rex.operands, strict=True)
                   if not (_is_constant(arg) or arg.startswith("_k"))]
        if len(varying) != 1 or not (tr.is_integral(varying[0][1].type) or isinstance(
                varying[0][1].type, (t.TimestampType, t.DateType))):
            return None
        return varying[0][0]

    # -- special forms ----------------------------------------------------------------------

    def case(self, rex: Call) -> str:
        """CASE WHEN c1 THEN v1 ... [ELSE e] END: operands c1, v1, c2, v2, ..., [e]. The
        resolver has cast every branch to the result type; only the branch taken runs."""
        name = self.b.fresh()
        operands = rex.operands
        pairs = [(operands[i], operands[i + 1]) for i in range(0, len(operands) - 1, 2)]
        otherwise = operands[-1] if len(operands) % 2 else None
        self._branch(name, pairs, otherwise)
        return name

    def _branch(self, name: str, pairs: Sequence[tuple[Rex, Rex]], otherwise: Rex | None
                ) -> None:
        if not pairs:
            self.b.add(f"{name} = {'None' if otherwise is None else self.value(otherwise)}")
            return
        condition, result = pairs[0]
        self.b.add(f"if {self.value(condition)} is True:")
        with self.b.nested():
            self.b.add(f"{name} = {self.value(result)}")
        self.b.add("else:")
        with self.b.nested():
            self._branch(name, pairs[1:], otherwise)

    def cast(self, rex: Call) -> str:
        operand = rex.operands[0]
        source = self.value(operand)
        name = self.b.fresh()
        if source == "None":
            self.b.add(f"{name} = None")
            return name
        if rex.function == "TRY_CAST":
            body = cast_source("x", operand.type, rex.type)
            converter = self.b.constant(CompiledFunction(
                "_cast", f"def _cast(x):\n    return {body}\n", {}))
            expression = f"F.try_call({converter}, {source})"
        else:
            expression = cast_source(source, operand.type, rex.type)
            if expression == source:  # the value as it is (a widening integer CAST)
                return source
            folded = _folded_decimal_cast(operand, rex.type, expression)
            if folded is not None:
                return self.b.constant(folded)
        self.b.add(f"{name} = {self._unless_null(source, operand)}{expression}")
        return name

    def row(self, rex: Call) -> str:
        values = [self.value(o) for o in rex.operands]
        name = self.b.fresh()
        names = list(rex.type.names) if isinstance(rex.type, t.RowType) else None
        fields = self.b.constant(names)
        self.b.add(f"{name} = row_of([{', '.join(values)}], RowKind.INSERT, {fields})")
        return name

    def array(self, rex: Call) -> str:
        values = [self.value(o) for o in rex.operands]
        name = self.b.fresh()
        self.b.add(f"{name} = [{', '.join(values)}]")
        return name

    def map(self, rex: Call) -> str:
        values = [self.value(o) for o in rex.operands]
        name = self.b.fresh()
        pairs = ", ".join(f"{values[i]}: {values[i + 1]}" for i in range(0, len(values), 2))
        self.b.add(f"{name} = {{{pairs}}}")
        return name

    def item(self, rex: Call) -> str:
        """``container[key]``: arrays are 1-based, a missing key or index gives NULL."""
        container = self.value(rex.operands[0])
        key = self.value(rex.operands[1])
        name = self.b.fresh()
        container_type = rex.operands[0].type
        if isinstance(container_type, t.ArrayType):
            self.b.add(f"{name} = ({container}[{key} - 1] if {container} is not None and "
                       f"{key} is not None and 0 < {key} <= len({container}) else None)")
        elif isinstance(container_type, t.RowType):
            self.b.add(f"{name} = None if {container} is None else {container}[{key}]")
        else:
            self.b.add(f"{name} = None if {container} is None else {container}.get({key})")
        return name

    def random(self, rex: Call) -> str:
        """RAND([seed]) and RAND_INTEGER([seed,] bound): with a literal seed one
        ``java.util.Random`` per function instance (per subtask, as Flink's generated code
        holds one), so the sequence is Flink's; without a seed Python's generator."""
        operands = rex.operands
        name = self.b.fresh()
        seeded = (rex.function == "RAND" and len(operands) == 1) or (
            rex.function == "RAND_INTEGER" and len(operands) == 2)
        if seeded and isinstance(operands[0], Literal) and operands[0].value is not None:
            generator = self.b.constant(F.JavaRandom(int(operands[0].value)))
            if rex.function == "RAND":
                self.b.add(f"{name} = {generator}.next_double()")
            else:
                bound = self.value(operands[1])
                self.b.add(f"{name} = {self._unless_null(bound, operands[1])}"
                           f"{generator}.next_int({bound})")
            return name
        if seeded:
            raise UnsupportedFeatureError(f"{rex.function} with a seed that is not a literal")
        if rex.function == "RAND":
            self.b.add(f"{name} = random.random()")
        else:
            bound = self.value(operands[0])
            self.b.add(f"{name} = {self._unless_null(bound, operands[0])}"
                       f"F.JavaRandom(random.getrandbits(48)).next_int({bound})")
        return name

    @staticmethod
    def _unless_null(source: str, rex: Rex) -> str:
        """``None if x is None else `` for a nullable operand, nothing otherwise."""
        return f"None if {source} is None else " if tr.is_nullable(rex.type) else ""

    def cardinality(self, rex: Call) -> str:
        container = self.value(rex.operands[0])
        name = self.b.fresh()
        self.b.add(f"{name} = None if {container} is None else len({container})")
        return name


def _folded_decimal_cast(operand: Rex, target: t.DataType, expression: str) -> Any:
    """The value of a CAST of a number literal to DECIMAL, computed once here (q14's
    ``0.908 * price > 1000000`` cast the literal per row), or None where it is not such a
    cast or gives no value (NULL, an error: left to run per row as before)."""
    if not (isinstance(target, t.DecimalType) and isinstance(operand, Literal)
            and type(operand.value) in (int, decimal.Decimal)):
        return None
    try:
        return eval(expression, {"F": F, "decimal": decimal})  # our own generated source
    except Exception:  # the per-row code raises it, as before
        return None


_RUN_MEMO = frozenset({"TIMESTAMPADD", "DATE_FORMAT", "EXTRACT", "YEAR", "QUARTER", "MONTH",
                       "WEEK", "DAYOFYEAR", "DAYOFMONTH", "DAYOFWEEK", "HOUR", "MINUTE",
                       "SECOND"})
"""Pure calls dear enough (a datetime built or formatted per value) that a column loop keeps
the last argument and result: event times computed from a sequence, or read from a file in
event order, repeat for a run of rows. The argument is an integer, a TIMESTAMP (naive: ``==``
is the same wall time) or a DATE."""

_SPECIAL = {
    "CASE": _Emitter.case,
    "CAST": _Emitter.cast,
    "TRY_CAST": _Emitter.cast,
    "ROW": _Emitter.row,
    "ARRAY": _Emitter.array,
    "MAP": _Emitter.map,
    "ITEM": _Emitter.item,
    "CARDINALITY": _Emitter.cardinality,
    "RAND": _Emitter.random,
    "RAND_INTEGER": _Emitter.random,
}


def _is_constant(source: str) -> bool:
    return source[:1].isdigit() or source[:1] in "'\"-" or source in ("True", "False")


# -- CAST ---------------------------------------------------------------------------------------

_INTEGER_BITS: dict[type, int] = {t.TinyIntType: 8, t.SmallIntType: 16, t.IntType: 32,
                                  t.BigIntType: 64}


def cast_source(value: str, source: t.DataType, target: t.DataType) -> str:
    """Python source converting ``value`` (not NULL) of ``source`` type to ``target``."""
    if tr.type_key(tr.with_nullability(source, True)) == tr.type_key(
            tr.with_nullability(target, True)) or _same_values(source, target):
        return value
    if isinstance(source, t.RowType) and isinstance(target, t.RowType) and _same_values(
            t.RowType([t.RowField(n, f.data_type) for n, f in zip(
                target.names, source.fields, strict=False)]), target) and len(
            source.fields) == len(target.fields):
        names = list(target.names)
        return f"F.rename_row({value}, {names!r})"
    if tr.is_string(target):
        if tr.is_string(source):
            text = value
        else:
            text = f"F.cast_to_string({value}, {_cast_kind(source)!r})"
        if isinstance(target, t.CharType) and target.length < tr.MAX_LENGTH:
            return f"F.pad_char({text}[:{target.length}], {target.length})"
        if isinstance(target, t.VarCharType) and target.length < tr.MAX_LENGTH:
            return f"{text}[:{target.length}]"
        return text
    if type(target) in _INTEGER_BITS:
        if _INTEGER_BITS.get(type(source), 65) <= _INTEGER_BITS[type(target)]:
            return value  # widening an integer keeps its value (a sink's INT -> BIGINT)
        bits = _INTEGER_BITS[type(target)]
        if type(source) in _INTEGER_BITS:  # narrowing an integer: wraps, as Java's does
            return f"(({value} + {1 << (bits - 1)}) % {1 << bits} - {1 << (bits - 1)})"
        return f"F.cast_to_integer({value}, {bits})"
    if isinstance(target, (t.DoubleType, t.FloatType)):
        return f"F.cast_to_float({value})"
    if isinstance(target, t.DecimalType):
        return f"F.cast_to_decimal({value}, {target.precision}, {target.scale})"
    if isinstance(target, t.BooleanType):
        if tr.is_string(source):
            return f"F.cast_string_to_boolean({value})"
        return f"({value} != 0)"
    if isinstance(target, (t.TimestampType, t.LocalZonedTimestampType)):
        if tr.is_string(source):
            return f"F.parse_timestamp({value})"
        if isinstance(source, t.DateType):
            return f"datetime.datetime.combine({value}, datetime.time())"
        if isinstance(source, (t.TimestampType, t.LocalZonedTimestampType)):
            return value
    if isinstance(target, t.DateType):
        if tr.is_string(source):
            return f"F.parse_date({value})"
        if isinstance(source, (t.TimestampType, t.LocalZonedTimestampType)):
            return f"{value}.date()"
    if isinstance(target, (t.BinaryType, t.VarBinaryType)) and tr.is_string(source):
        return f"{value}.encode('utf-8')"
    raise UnsupportedFeatureError(
        f"CAST from {tr.sql_name(source)} to {tr.sql_name(target)}")


def _same_values(source: t.DataType, target: t.DataType) -> bool:
    """Whether values of ``source`` are values of ``target`` as they are: collections whose
    elements differ only in nullability or in the length of a variable string."""
    if not isinstance(source, (t.ArrayType, t.MapType, t.MultisetType, t.RowType)):
        return False

    def plain(data_type: t.DataType) -> str:
        text = t.sql_string(data_type).replace(" NOT NULL", "")
        return re.sub(r"\b(?:VAR)?CHAR\(\d+\)", "STRING", text)

    return plain(source) == plain(target) and "CHAR(" not in t.sql_string(target)


def _cast_kind(data_type: t.DataType) -> str:
    if tr.is_boolean(data_type):
        return "BOOLEAN"
    if isinstance(data_type, t.DoubleType):
        return "DOUBLE"
    if isinstance(data_type, t.FloatType):
        return "FLOAT"
    if isinstance(data_type, (t.TimestampType, t.LocalZonedTimestampType)):
        return "TIMESTAMP"
    if isinstance(data_type, t.DateType):
        return "DATE"
    if isinstance(data_type, t.TimeType):
        return "TIME"
    if isinstance(data_type, (t.BinaryType, t.VarBinaryType)):
        return "BINARY"
    return "OTHER"


# -- entry points -------------------------------------------------------------------------------

def compile_projection(expressions: Sequence[Rex], name: str = "_project",
                       field_names: Sequence[str] | None = None) -> CompiledFunction:
    """``row -> Row`` computing ``expressions``; the output keeps the input's row kind."""
    block = _Block()
    emitter = _Emitter(block)
    block.add("r = row._values")
    values = [emitter.value(e) for e in expressions]
    if field_names is None:
        block.add(f"return NEW_ROW([{', '.join(values)}], row._row_kind)")
    else:
        fields = block.constant(list(field_names))
        block.add(f"return row_of([{', '.join(values)}], row._row_kind, {fields})")
    return _finish(name, "row", block)


def compile_calc(expressions: Sequence[Rex], condition: Rex, name: str = "_calc"
                 ) -> CompiledFunction:
    """``row -> ()`` or ``(Row,)``: the projection of the rows where ``condition`` is TRUE,
    in one function (values the condition computed are not computed again)."""
    block = _Block()
    emitter = _Emitter(block)
    block.add("r = row._values")
    test = emitter.value(condition)
    block.add(f"if {test} is not True: return ()")
    values = [emitter.value(e) for e in expressions]
    block.add(f"return (NEW_ROW([{', '.join(values)}], row._row_kind),)")
    return _finish(name, "row", block)


def compile_column_calc(expressions: Sequence[Rex], condition: Rex | None,
                        name: str = "_calc_columns") -> CompiledFunction:
    """``(columns, count, kind) -> list[Row]``: a Calc fused into a source that builds its
    batches column-wise (``columns[i]`` holds field i of the ``count`` rows): one loop over
    the columns the expressions read, the projection of the rows where ``condition`` (if
    any) is TRUE, their rows built at once (``rows_of``) with ``kind``; without a condition
    the computed values are gathered as columns and the rows built from the columns
    (``_computed_columns``); a Calc that only picks columns builds its rows from them with no
    loop (``picked_rows``). Same values as
    ``compile_calc`` / ``compile_projection`` on the rows the columns make."""
    block = _Block("c{}", depth=2, direct=True)
    emitter = _Emitter(block)
    if condition is not None:
        test = emitter.value(condition)
        block.add(f"if {test} is not True: continue")
    values = [emitter.value(e) for e in expressions]
    if (condition is None and values and not block.lines
            and all(_COLUMN.fullmatch(v) for v in values)):
        picked = ", ".join(f"columns[{v[1:]}]" for v in values)  # a projection of columns
        return CompiledFunction(name, f"def {name}(columns, count, kind):\n"
                                f"    return PICKED_ROWS([{picked}], count, kind)\n", {})
    read = sorted(set().union(*(input_refs(e) for e in expressions),
                                input_refs(condition) if condition is not None else set()))
    if not read:
        loop = "for _ in range(count):"
    elif len(read) == 1:
        loop = f"for c{read[0]} in columns[{read[0]}]:"
    else:
        loop = (f"for {', '.join(f'c{i}' for i in read)} in zip("
                f"{', '.join(f'columns[{i}]' for i in read)}):")
    prelude = "".join(f"    {line}\n" for line in block.prelude)
    if condition is None and read:
        return _computed_columns(name, values, block, prelude, read)
    block.add(f"append([{', '.join(values)}])")
    source = (f"def {name}(columns, count, kind):\n    out = []\n    append = out.append\n"
              f"{prelude}    {loop}\n" + "\n".join(block.lines)
              + "\n    return NEW_ROWS(out, kind)\n")
    return CompiledFunction(name, source, block.constants)


def _computed_columns(name: str, values: list[str], block: _Block, prelude: str,
                      read: list[int]) -> CompiledFunction:
    """``compile_column_calc`` without a condition: each computed output gathered as a column
    (one append a row), each output that is an input column passed on as that column, the
    rows built from the columns at once (``picked_rows``; issue 28: no list built per row in
    Python, a third less time a row for ``MOD(id, 100), id``). A column read that is not a
    list is read into one first (the loop and the rows both read it); columns not read are
    not touched (a source may not have made them)."""
    lines = [f"    k{i} = columns[{i}]\n    if type(k{i}) is not list: k{i} = list(k{i})\n"
             for i in read]
    outputs = []
    for index, value in enumerate(values):
        if _COLUMN.fullmatch(value):
            outputs.append(f"k{value[1:]}")
            continue
        outputs.append(f"o{index}")
        lines.append(f"    o{index} = []\n    a{index} = o{index}.append\n")
        block.add(f"a{index}({value})")
    loop = (f"for c{read[0]} in k{read[0]}:" if len(read) == 1 else
            f"for {', '.join(f'c{i}' for i in read)} in zip({', '.join(f'k{i}' for i in read)}):")
    source = (f"def {name}(columns, count, kind):\n{''.join(lines)}{prelude}    {loop}\n"
              + "\n".join(block.lines)
              + f"\n    return PICKED_ROWS([{', '.join(outputs)}], count, kind)\n")
    return CompiledFunction(name, source, block.constants)


def is_value_identity(expressions: Sequence[Rex], width: int) -> bool:
    """Whether the projection gives every input row's values back as they are: field i of
    ``width`` fields at position i, each read as it is or through a conversion that keeps the
    value (a widening integer CAST, a cast between types whose values are the same). A Calc
    doing that is no work: the planner hands its input on."""
    if len(expressions) != width:
        return False
    block = _Block()
    emitter = _Emitter(block)
    values = [emitter.value(e) for e in expressions]
    reads = dict(line.strip().partition(" = ")[::2] for line in block.lines)
    return len(block.lines) == width and all(
        reads.get(v) == f"r[{i}]" for i, v in enumerate(values))


def compile_predicate(condition: Rex, name: str = "_filter") -> CompiledFunction:
    """``row -> bool``: True only where ``condition`` is TRUE (NULL and FALSE drop the row)."""
    block = _Block()
    emitter = _Emitter(block)
    block.add("r = row._values")
    value = emitter.value(condition)
    block.add(f"return {value} is True")
    return _finish(name, "row", block)


def compile_values(expressions: Sequence[Rex], name: str = "_values") -> CompiledFunction:
    """``row -> tuple`` of the expressions' values (keys, aggregate arguments)."""
    block = _Block()
    emitter = _Emitter(block)
    block.add("r = row._values")
    values = [emitter.value(e) for e in expressions]
    if len(values) == 1:
        block.add(f"return ({values[0]},)")
    else:
        block.add(f"return ({', '.join(values)})")
    return _finish(name, "row", block)


def compile_join_condition(condition: Rex, name: str = "_join_condition") -> CompiledFunction:
    """``(left values, right values) -> bool`` for a condition over the left fields followed
    by the right fields (a join's residual condition)."""
    block = _Block()
    emitter = _Emitter(block)
    block.add("r = (*left, *right)")
    value = emitter.value(condition)
    block.add(f"return {value} is True")
    return _finish(name, "left, right", block)


def _finish(name: str, parameter: str, block: _Block) -> CompiledFunction:
    source = f"def {name}({parameter}):\n" + "\n".join(block.lines) + "\n"
    return CompiledFunction(name, source, block.constants)
