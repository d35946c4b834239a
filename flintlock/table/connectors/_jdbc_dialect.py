"""Flink's PostgreSQL dialect for the ``jdbc`` table connector: which column types a table may
have, how a value read from PostgreSQL becomes the Python value of its Flink type (and back),
and the SQL the connector runs.

**Types** (Flink's ``PostgresDialect``): CHAR, VARCHAR/STRING, BOOLEAN, BINARY/VARBINARY/BYTES
(``bytea``), DECIMAL (precision 1..1000), TINYINT, SMALLINT, INT, BIGINT, FLOAT (``real``),
DOUBLE, DATE, TIME, TIMESTAMP(1..6), TIMESTAMP_LTZ(1..6) (``timestamptz``) and ARRAY of those.
Anything else is refused when the table is planned with Flink's message (``The PostgreSQL
dialect doesn't support type: MAP<STRING, INT>.``).

**Values.** psycopg returns Python values already (int, Decimal, str, bytes, date, time,
datetime, list); a reader converts what the Flink type needs: a ``timestamptz`` (an aware
datetime) to the table layer's naive UTC for TIMESTAMP_LTZ, a ``numeric`` to float for
DOUBLE, ``memoryview`` to bytes, a value of another type to ``str`` for a string column. A
writer gives a TIMESTAMP_LTZ (naive UTC) its UTC zone; the rest passes as it is.

**Statements** (Flink's dialect, identifiers as written: PostgreSQL folds unquoted names to
lower case, as with Flink): ``SELECT a, b FROM t``, ``INSERT INTO t(a, b) VALUES (?, ?)``,
the upsert ``... ON CONFLICT (k) DO UPDATE SET b=EXCLUDED.b`` (``DO NOTHING`` when every
column is in the key), ``DELETE FROM t WHERE k = ?`` and the lookup ``SELECT ... WHERE k = ?``.

Pure functions; built on the driver, the converters run on task threads.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

from flintlock.table import types as t
from flintlock.table.errors import ValidationError
from flintlock.table.plan.nodes import Field

Convert = Callable[[Any], Any]

_SIMPLE = (t.CharType, t.VarCharType, t.BooleanType, t.BinaryType, t.VarBinaryType,
           t.TinyIntType, t.SmallIntType, t.IntType, t.BigIntType, t.FloatType, t.DoubleType,
           t.DateType, t.TimeType)


def check_types(fields: Sequence[Field]) -> None:
    """Refuses a column type the PostgreSQL dialect does not support, as Flink does."""
    for field in fields:
        _check(field.name, field.type)


def _check(name: str, data_type: t.DataType) -> None:
    if isinstance(data_type, _SIMPLE):
        return
    if isinstance(data_type, t.DecimalType):
        if not 1 <= data_type.precision <= 1000:
            raise ValidationError(
                f"The precision of field '{name}' is out of the DECIMAL precision range [1, "
                f"1000] supported by PostgreSQL dialect.")
        return
    if isinstance(data_type, (t.TimestampType, t.LocalZonedTimestampType)):
        if not 1 <= data_type.precision <= 6:
            raise ValidationError(
                f"The precision of field '{name}' is out of the TIMESTAMP precision range [1, "
                f"6] supported by PostgreSQL dialect.")
        return
    if isinstance(data_type, t.ArrayType):
        _check(name, data_type.element_type)
        return
    raise ValidationError(
        f"The PostgreSQL dialect doesn't support type: {t.sql_string(data_type)}.")


# -- values ----------------------------------------------------------------------------------

def reader(data_type: t.DataType) -> Convert:
    """PostgreSQL's value (as psycopg returns it, never None) -> the Flink type's value."""
    if isinstance(data_type, t.LocalZonedTimestampType):
        return _naive_utc
    if isinstance(data_type, t.TimestampType):
        return lambda v: v.replace(tzinfo=None) if isinstance(v, datetime.datetime) else v
    if isinstance(data_type, t.TimeType):
        return lambda v: v.replace(tzinfo=None) if isinstance(v, datetime.time) else v
    if isinstance(data_type, (t.FloatType, t.DoubleType)):
        return float
    if isinstance(data_type, t.DecimalType):
        return lambda v: v if isinstance(v, Decimal) else Decimal(str(v))
    if isinstance(data_type, (t.CharType, t.VarCharType)):
        return lambda v: v if isinstance(v, str) else str(v)
    if isinstance(data_type, (t.BinaryType, t.VarBinaryType)):
        return bytes
    if isinstance(data_type, t.ArrayType):
        element = nullable(reader(data_type.element_type))
        return lambda v: [element(e) for e in v]
    return _same


def writer(data_type: t.DataType) -> Convert | None:
    """The Flink type's value -> what psycopg should send (None: the value as it is)."""
    if isinstance(data_type, t.LocalZonedTimestampType):
        return _aware_utc
    if isinstance(data_type, t.ArrayType):
        element = writer(data_type.element_type)
        if element is None:
            return list
        convert = nullable(element)
        return lambda v: [convert(e) for e in v]
    return None


def nullable(convert: Convert) -> Convert:
    return lambda v: None if v is None else convert(v)


def row_reader(fields: Sequence[Field]) -> Callable[[Sequence[Any]], list[Any]]:
    """A fetched tuple -> the row's values, converted per column."""
    converts = [nullable(reader(f.type)) for f in fields]
    return lambda values: [c(v) for c, v in zip(converts, values, strict=True)]


def params_writer(types: Sequence[t.DataType]) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    """A row's values -> the statement's parameters."""
    converts = [writer(dt) for dt in types]
    if all(c is None for c in converts):
        return tuple
    wrapped = [_same if c is None else nullable(c) for c in converts]
    return lambda values: tuple(c(v) for c, v in zip(wrapped, values, strict=True))


def _same(value: Any) -> Any:
    return value


def _naive_utc(value: Any) -> Any:
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return value.astimezone(datetime.UTC).replace(tzinfo=None)
    return value


def _aware_utc(value: Any) -> Any:
    if isinstance(value, datetime.datetime) and value.tzinfo is None:
        return value.replace(tzinfo=datetime.UTC)
    return value


# -- statements --------------------------------------------------------------------------------

def _placeholders(count: int) -> str:
    return ", ".join(["?"] * count)


def select(table: str, columns: Sequence[str], conditions: Sequence[str] = ()) -> str:
    sql = f"SELECT {', '.join(columns)} FROM {table}"
    if conditions:
        sql += " WHERE " + " AND ".join(f"{c} = ?" for c in conditions)
    return sql


def insert(table: str, columns: Sequence[str]) -> str:
    return f"INSERT INTO {table}({', '.join(columns)}) VALUES ({_placeholders(len(columns))})"


def upsert(table: str, columns: Sequence[str], key: Sequence[str]) -> str:
    updates = [c for c in columns if c not in key]
    action = ("DO UPDATE SET " + ", ".join(f"{c}=EXCLUDED.{c}" for c in updates)
              if updates else "DO NOTHING")
    return f"{insert(table, columns)} ON CONFLICT ({', '.join(key)}) {action}"


def delete(table: str, key: Sequence[str]) -> str:
    return f"DELETE FROM {table} WHERE " + " AND ".join(f"{c} = ?" for c in key)


__all__ = ["check_types", "delete", "insert", "nullable", "params_writer", "reader",
           "row_reader", "select", "upsert", "writer"]
