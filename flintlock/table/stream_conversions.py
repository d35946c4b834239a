"""DataStream ↔ Table: ``from_data_stream``, ``from_changelog_stream``, ``to_data_stream``,
``to_changelog_stream``, ``to_append_stream``, ``to_retract_stream``.

A stream's declared type decides the table's columns, as in PyFlink: a named ROW gives its
field names and types, a TUPLE ``f0, f1, ...``, any other type one column ``f0``; a stream of
no declared type (pickled objects) is one column of RAW values. ``Schema`` arguments may rename
nothing but add computed columns (``column_by_expression``) after the physical ones; a list of
column expressions renames them (``col('a'), col('b')``). Back to a DataStream, rows carry their
field names and row kinds; an updating table becomes a plain DataStream only through
``to_changelog_stream`` (or ``to_retract_stream``), and refuses otherwise with Flink's error.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from flintlock.common import typeinfo as ti
from flintlock.common.types import Row, RowKind, row_of
from flintlock.datastream.functions import MapFunction
from flintlock.table import types as t
from flintlock.table.errors import ValidationError
from flintlock.table.plan import nodes as n
from flintlock.table.plan.changelog import check_sink
from flintlock.table.plan.resolver import ExpressionResolver, Scope
from flintlock.table.plan.rex import InputRef, Rex

if TYPE_CHECKING:
    from flintlock.table.table import Table
    from flintlock.table.table_environment import TableEnvironment

_BASIC = {
    ti.BasicType.STRING: t.VarCharType(0x7FFFFFFF), ti.BasicType.BYTE: t.TinyIntType(),
    ti.BasicType.BOOLEAN: t.BooleanType(), ti.BasicType.SHORT: t.SmallIntType(),
    ti.BasicType.INT: t.IntType(), ti.BasicType.LONG: t.BigIntType(),
    ti.BasicType.FLOAT: t.FloatType(), ti.BasicType.DOUBLE: t.DoubleType(),
    ti.BasicType.CHAR: t.CharType(1), ti.BasicType.BIG_INT: t.DecimalType(38, 0),
    ti.BasicType.BIG_DEC: t.DecimalType(38, 18),
    ti.BasicType.INSTANT: t.LocalZonedTimestampType(9),
}


def data_type_of(type_info: Any) -> t.DataType:
    """The table type of a DataStream type (``Types.INT()`` is INT, ...)."""
    if isinstance(type_info, ti.BasicTypeInfo):
        return _BASIC[type_info.basic_type]
    if isinstance(type_info, ti.SqlTimeTypeInfo):
        kind = type_info.time_type
        if kind in (ti.SqlTimeType.DATE, ti.SqlTimeType.LOCAL_DATE):
            return t.DateType()
        if kind in (ti.SqlTimeType.TIME, ti.SqlTimeType.LOCAL_TIME):
            return t.TimeType()
        return t.TimestampType(3)
    if isinstance(type_info, ti.RowTypeInfo):
        return t.RowType([t.RowField(name, data_type_of(kind)) for name, kind in zip(
            type_info.get_field_names(), type_info.get_field_types(), strict=True)])
    if isinstance(type_info, ti.TupleTypeInfo):  # a tuple's primitive fields are NOT NULL
        return t.RowType([t.RowField(f"f{i}", _tuple_field(kind))
                          for i, kind in enumerate(type_info.get_field_types())])
    if isinstance(type_info, ti.MapTypeInfo):
        return t.MapType(data_type_of(type_info.key_type), data_type_of(type_info.value_type))
    if isinstance(type_info, ti._SequenceTypeInfo):
        return t.ArrayType(data_type_of(type_info.element_type))
    return t.RawType() if hasattr(t, "RawType") else t.VarBinaryType()


_PRIMITIVES = frozenset({ti.BasicType.BYTE, ti.BasicType.BOOLEAN, ti.BasicType.SHORT,
                         ti.BasicType.INT, ti.BasicType.LONG, ti.BasicType.FLOAT,
                         ti.BasicType.DOUBLE, ti.BasicType.CHAR})


def _tuple_field(type_info: Any) -> t.DataType:
    data_type = data_type_of(type_info)
    if isinstance(type_info, ti.BasicTypeInfo) and type_info.basic_type in _PRIMITIVES:
        return data_type.not_null()
    return data_type


class _Values:
    """How one record becomes a row's value list (picklable, for the TaskManagers)."""

    def __init__(self, kind: str, width: int) -> None:
        self.kind = kind
        self.width = width
        self.instants: tuple[int, ...] = ()

    def __call__(self, record: Any) -> list[Any]:
        values = list(record) if self.kind == "fields" else [record]
        for index in self.instants:  # issue 32: Instants become TIMESTAMP_LTZ values
            value = values[index]
            if value is not None and not isinstance(value, datetime.datetime):
                values[index] = _EPOCH + datetime.timedelta(
                    seconds=value.seconds, microseconds=value.nanos // 1000)
        return values


_EPOCH = datetime.datetime(1970, 1, 1)
"""TIMESTAMP_LTZ values are naive datetimes of the instant in UTC."""


def _instant_fields(type_info: Any) -> tuple[int, ...]:
    """The positions of a stream type's INSTANT fields (or (0,) for an INSTANT stream)."""
    if isinstance(type_info, (ti.RowTypeInfo, ti.TupleTypeInfo)):
        return tuple(i for i, kind in enumerate(type_info.get_field_types())
                     if isinstance(kind, ti.BasicTypeInfo)
                     and kind.basic_type is ti.BasicType.INSTANT)
    if isinstance(type_info, ti.BasicTypeInfo) and type_info.basic_type is ti.BasicType.INSTANT:
        return (0,)
    return ()


def table_from_stream(env: TableEnvironment, stream: Any, fields_or_schema: Sequence[Any],
                      changelog: bool) -> Table:
    from flintlock.table.schema import Schema
    from flintlock.table.table import Table

    type_info = stream.get_type()
    declared = data_type_of(type_info) if type_info is not None else None
    if isinstance(declared, t.RowType):
        names = list(declared.names)
        types = list(declared.field_types())
        convert = _Values("fields", len(names))
    else:
        names = ["f0"]
        types = [declared if declared is not None else t.VarBinaryType()]
        convert = _Values("atomic", 1)
        if declared is None:
            types = [_raw_type()]
    convert.instants = _instant_fields(type_info)
    fields = n.fields_of(names, types)
    plan: n.PlanNode = n.StreamScan(fields, stream, convert, changelog)
    schema = fields_or_schema[0] if len(fields_or_schema) == 1 and isinstance(
        fields_or_schema[0], Schema) else None
    declared = None
    if schema is not None:
        source = plan
        plan = _apply_schema(env, plan, schema)
        declared = _declared_schema(source, plan, schema)
    elif fields_or_schema:
        plan = _rename(plan, fields_or_schema)
    table = Table(env, plan)
    table._declared_schema = declared  # type: ignore[attr-defined]
    return table


def _declared_schema(source: n.PlanNode, plan: n.PlanNode, schema: Any) -> Any:
    """The schema print_schema shows for ``from_data_stream(stream, schema)``, as Flink shows
    it when the stream's fields are the table's first columns as they are (no projection):
    computed columns with their expression as written (``AS score * 2``) and the watermark
    (issue 32); None otherwise (print_schema then shows the plan's columns)."""
    from flintlock.table.plan.window_nodes import WatermarkAssigner
    from flintlock.table.resolved_schema import Column, ResolvedSchema, WatermarkSpec
    from flintlock.table.schema import UnresolvedComputedColumn
    from flintlock.table.time_attributes import materialized

    width = len(source.fields)
    if plan.names[:width] != source.names or plan.types[:width] != source.types:
        return None
    computed = {c.name: c.expression for c in schema.get_columns()
                if isinstance(c, UnresolvedComputedColumn)}
    if set(plan.names[width:]) != set(computed):
        return None
    columns = [Column.physical(f.name, f.type) if i < width else Column.computed(
        f.name, f.type, None, str(computed[f.name])) for i, f in enumerate(plan.fields)]
    watermarks = []
    if isinstance(plan, WatermarkAssigner):
        spec = schema.get_watermark_specs()[0]
        data_type = plan.watermark.type if plan.watermark is not None else plan.fields[
            plan.rowtime].type
        watermarks.append(WatermarkSpec.of(spec.column_name, plan.watermark,
                                           str(spec.expression), materialized(data_type)))
    return ResolvedSchema(tuple(columns), tuple(watermarks))


def _raw_type() -> t.DataType:
    raw = getattr(t, "RawType", None)
    return raw() if raw is not None else t.VarBinaryType()


def _apply_schema(env: TableEnvironment, plan: n.PlanNode, schema: Any) -> n.PlanNode:
    from flintlock.table.expression import to_node
    from flintlock.table.schema import (
        UnresolvedComputedColumn,
        UnresolvedPhysicalColumn,
    )
    from flintlock.table.sql.parser import parse_expression

    declared = any(isinstance(c, UnresolvedPhysicalColumn) for c in schema.get_columns())
    # Flink: declared physical columns are the table's, in the schema's order (issue 32)
    projections: list[Rex] = [] if declared else [
        InputRef(f.type, i) for i, f in enumerate(plan.fields)]
    names = [] if declared else list(plan.names)
    scope = Scope.of(plan.names, plan.types)
    for column in schema.get_columns():
        if isinstance(column, UnresolvedPhysicalColumn):
            if column.name not in plan.names:
                raise ValidationError(
                    f"Unable to find a field named '{column.name}' in the physical data type "
                    f"derived from the given type information for schema declaration. Make "
                    f"sure that the type information is not a generic raw type. Currently "
                    f"available fields are: [{', '.join(plan.names)}]")
            projections.append(_physical(env, scope, column))
            names.append(column.name)
        elif isinstance(column, UnresolvedComputedColumn):
            node = parse_expression(column.expression) if isinstance(
                column.expression, str) else to_node(column.expression)
            projections.append(ExpressionResolver(scope, env).resolve(node))
            names.append(column.name)
    result: n.PlanNode = n.Calc(n.fields_of(names, [p.type for p in projections]), plan,
                                tuple(projections))
    for spec in schema.get_watermark_specs():
        from flintlock.table.plan.windows import with_watermark

        expression = spec.expression
        node = parse_expression(expression) if isinstance(expression, str) else to_node(
            expression)
        result = with_watermark(result, spec.column_name, node, env)
    return result


def _physical(env: TableEnvironment, scope: Scope, column: Any) -> Rex:
    """A declared physical column: the stream's field, cast when the declared type differs."""
    from flintlock.table.sql.parser import parse_expression

    field = scope.lookup(column.name)
    declared = column.data_type
    if isinstance(declared, str):
        declared = t.from_sql_string(declared)
    if t.sql_string(declared) == t.sql_string(field.type):
        return InputRef(field.type, field.index)
    cast = parse_expression(f"CAST(`{column.name}` AS {t.sql_string(declared)})")
    return ExpressionResolver(scope, env).resolve(cast)


def _rename(plan: n.PlanNode, fields: Sequence[Any]) -> n.PlanNode:
    from flintlock.table.expression import to_node

    names = []
    for index, field in enumerate(fields):
        node = to_node(field) if not isinstance(field, str) else exp.column(field)
        if isinstance(node, exp.Alias):
            names.append(node.alias)
        elif isinstance(node, exp.Column):
            names.append(node.name)
        else:
            raise ValidationError(f"field {index} must be a column reference or an alias")
    if len(names) > len(plan.fields):
        raise ValidationError(f"{len(names)} names given for {len(plan.fields)} fields")
    names += plan.names[len(names):]
    from flintlock.table.plan.rewrite import project_fields

    return project_fields(plan, names)


class _ToStream(MapFunction):
    """Rows of a table as the records of a DataStream: named fields, the row kind kept."""

    def __init__(self, names: list[str], keep_kind: bool) -> None:
        self.names = names
        self.keep_kind = keep_kind

    def map(self, row: Row) -> Row:
        kind = row.get_row_kind() if self.keep_kind else RowKind.INSERT
        return row_of(list(row._values), kind, self.names)


class _ToRetract(MapFunction):
    def __init__(self, names: list[str]) -> None:
        self.names = names

    def map(self, row: Row) -> tuple[bool, Row]:
        accumulate = row.get_row_kind() in (RowKind.INSERT, RowKind.UPDATE_AFTER)
        return (accumulate, row_of(list(row._values), RowKind.INSERT, self.names))


def stream_from_table(env: TableEnvironment, table: Table, changelog: bool,
                      type_info: Any = None) -> Any:
    plan = table._plan
    if not changelog:
        check_sink("*anonymous_datastream_sink*", False, plan)
    stream = env._translator(env._job_environment()).stream(plan)
    output = type_info if type_info is not None else t.python_type_info(plan.row_type())
    return stream.map(_ToStream(plan.names, changelog), output_type=output)


def retract_stream(env: TableEnvironment, table: Table, type_info: Any) -> Any:
    plan = table._plan
    stream = env._translator(env._job_environment()).stream(plan)
    output = ti.Types.TUPLE([ti.Types.BOOLEAN(), type_info])
    return stream.map(_ToRetract(plan.names), output_type=output)
