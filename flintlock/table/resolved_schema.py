"""A table's resolved schema: typed columns, watermark specs and a primary key.

What PyFlink 2.3.0 has in ``pyflink.table.catalog`` (``Column`` with ``PhysicalColumn``,
``ComputedColumn``, ``MetadataColumn``; ``WatermarkSpec``; ``UniqueConstraint``;
``ResolvedSchema``), with the same method names; the catalog re-exports them. The binder
builds one from a ``Schema`` or DDL once every expression has a type; every plan node's output
is one (physical columns only).

``str(resolved_schema)`` is ``Table.print_schema()``'s text, Flink's ``ResolvedSchema``
summary::

    (
      `id` BIGINT NOT NULL,
      `name` STRING COMMENT 'the name',
      `ts` TIMESTAMP(3) *ROWTIME*,
      `total` DECIMAL(21, 2) AS `price` * 2,
      `part` INT METADATA FROM 'partition' VIRTUAL,
      WATERMARK FOR `ts`: TIMESTAMP(3) AS `ts` - INTERVAL '5' SECOND,
      CONSTRAINT `PK_id` PRIMARY KEY (`id`) NOT ENFORCED
    )

A column prints as name, type (``sql_string``, then ``*ROWTIME*`` or ``*PROCTIME*`` for a
time attribute), its extras (``AS <expression SQL>`` for a computed column, ``METADATA [FROM
'key'] [VIRTUAL]`` for a metadata one), then ``COMMENT '...'``. A computed column and a
watermark carry their expression twice: the resolved object (opaque here, for the planner) and
its SQL text as Flink prints it (``expression_sql``, written by the binder: identifiers in
backticks). A watermark line shows the type of its expression.

Frozen value objects; no I/O.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from flintlock.table.errors import ValidationError
from flintlock.table.schema import (
    Schema,
    UnresolvedColumn,
    UnresolvedComputedColumn,
    UnresolvedMetadataColumn,
    UnresolvedPhysicalColumn,
    quote_string,
)
from flintlock.table.time_attributes import time_attribute
from flintlock.table.types import DataType, RowField, RowType, quote_identifier, sql_string

__all__ = [
    "Column", "ComputedColumn", "ConstraintType", "MetadataColumn", "PhysicalColumn",
    "ResolvedSchema", "TimeAttribute", "UniqueConstraint", "WatermarkSpec",
]


class TimeAttribute(enum.Enum):
    """A column that is the table's event time (``ROWTIME``) or processing time."""

    ROWTIME = "*ROWTIME*"
    PROCTIME = "*PROCTIME*"


def _time_attribute_of(data_type: DataType) -> TimeAttribute | None:
    """The time attribute a column's type carries (``flintlock.table.time_attributes``)."""
    mark = time_attribute(data_type)
    return None if mark is None else TimeAttribute(mark)


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a resolved schema; see the subclasses."""

    name: str
    data_type: DataType
    comment: str | None = field(default=None, kw_only=True)
    time_attribute: TimeAttribute | None = field(default=None, kw_only=True)

    @staticmethod
    def physical(name: str, data_type: DataType) -> PhysicalColumn:
        return PhysicalColumn(name, data_type, time_attribute=_time_attribute_of(data_type))

    @staticmethod
    def computed(name: str, data_type: DataType, expression: Any, expression_sql: str
                 ) -> ComputedColumn:
        return ComputedColumn(name, data_type, expression, expression_sql,
                              time_attribute=_time_attribute_of(data_type))

    @staticmethod
    def metadata(name: str, data_type: DataType, metadata_key: str | None = None,
                 is_virtual: bool = False) -> MetadataColumn:
        return MetadataColumn(name, data_type, metadata_key, is_virtual)

    def get_name(self) -> str:
        return self.name

    def get_data_type(self) -> DataType:
        return self.data_type

    def get_comment(self) -> str | None:
        return self.comment

    def is_physical(self) -> bool:
        return False

    def is_persisted(self) -> bool:
        return False

    def explain_extras(self) -> str | None:
        return None

    def type_summary(self, with_nullability: bool = True) -> str:
        """The type as print_schema (or, without NOT NULL, DESCRIBE) shows it."""
        kind = self.data_type if with_nullability else self.data_type.nullable()
        text = sql_string(kind)
        return text if self.time_attribute is None else f"{text} {self.time_attribute.value}"

    def as_summary_string(self) -> str:
        text = f"{quote_identifier(self.name)} {self.type_summary()}"
        extras = self.explain_extras()
        if extras is not None:
            text += " " + extras
        if self.comment is not None:
            text += " COMMENT " + quote_string(self.comment)
        return text

    def with_comment(self, comment: str | None) -> Column:
        return replace(self, comment=comment)

    def copy(self, new_data_type: DataType) -> Column:
        return replace(self, data_type=new_data_type)

    def rename(self, new_name: str) -> Column:
        return replace(self, name=new_name)

    def __str__(self) -> str:
        return self.as_summary_string()


@dataclass(frozen=True, slots=True)
class PhysicalColumn(Column):
    """A column read from and written to the external system."""

    def is_physical(self) -> bool:
        return True

    def is_persisted(self) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class ComputedColumn(Column):
    """A virtual column computed from others; ``expression`` is the binder's resolved form."""

    expression: Any = None
    expression_sql: str = ""

    def get_expression(self) -> Any:
        return self.expression

    def explain_extras(self) -> str | None:
        return f"AS {self.expression_sql}"


@dataclass(frozen=True, slots=True)
class MetadataColumn(Column):
    """A connector or format field (Kafka's timestamp, partition, ...)."""

    metadata_key: str | None = None
    virtual: bool = False

    def is_virtual(self) -> bool:
        return self.virtual

    def get_metadata_key(self) -> str | None:
        return self.metadata_key

    def is_persisted(self) -> bool:
        return not self.virtual

    def explain_extras(self) -> str | None:
        text = "METADATA"
        if self.metadata_key is not None:
            text += " FROM " + quote_string(self.metadata_key)
        return text + (" VIRTUAL" if self.virtual else "")


@dataclass(frozen=True, slots=True)
class WatermarkSpec:
    """``WATERMARK FOR rowtime AS expression``, resolved: the expression's type and SQL text."""

    rowtime_attribute: str
    expression: Any
    expression_sql: str
    data_type: DataType

    @staticmethod
    def of(rowtime_attribute: str, expression: Any, expression_sql: str,
           data_type: DataType) -> WatermarkSpec:
        return WatermarkSpec(rowtime_attribute, expression, expression_sql, data_type)

    def get_rowtime_attribute(self) -> str:
        return self.rowtime_attribute

    def get_watermark_expression(self) -> Any:
        return self.expression

    def as_summary_string(self) -> str:
        return (f"WATERMARK FOR {quote_identifier(self.rowtime_attribute)}: "
                f"{sql_string(self.data_type)} AS {self.expression_sql}")

    def __str__(self) -> str:
        return self.as_summary_string()


class ConstraintType(enum.Enum):
    PRIMARY_KEY = "PRIMARY KEY"
    UNIQUE_KEY = "UNIQUE"


@dataclass(frozen=True, slots=True)
class UniqueConstraint:
    """A primary key (informational: Flink never enforces it)."""

    name: str
    columns: tuple[str, ...]
    enforced: bool = False
    type: ConstraintType = ConstraintType.PRIMARY_KEY

    @staticmethod
    def primary_key(name: str, columns: Sequence[str]) -> UniqueConstraint:
        return UniqueConstraint(name, tuple(columns))

    def get_name(self) -> str:
        return self.name

    def is_enforced(self) -> bool:
        return self.enforced

    def get_type(self) -> ConstraintType:
        return self.type

    def get_columns(self) -> list[str]:
        return list(self.columns)

    def get_type_string(self) -> str:
        return self.type.value

    def as_summary_string(self) -> str:
        columns = ", ".join(quote_identifier(name) for name in self.columns)
        enforced = "" if self.enforced else " NOT ENFORCED"
        return (f"CONSTRAINT {quote_identifier(self.name)} {self.get_type_string()} "
                f"({columns}){enforced}")

    def __str__(self) -> str:
        return self.as_summary_string()


@dataclass(frozen=True, slots=True)
class ResolvedSchema:
    """Columns, watermark specs and a primary key, all resolved (module docstring)."""

    columns: tuple[Column, ...]
    watermark_specs: tuple[WatermarkSpec, ...] = ()
    primary_key: UniqueConstraint | None = None

    def __post_init__(self) -> None:
        names = [column.name for column in self.columns]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValidationError(f"Schema must not contain duplicate column names. Found "
                                  f"duplicates: {duplicates}")
        for name in self.primary_key.columns if self.primary_key else ():
            if name not in names:
                raise ValidationError(f"Invalid primary key '{self.primary_key.name}'. "  # type: ignore[union-attr]
                                      f"Column '{name}' does not exist.")

    @staticmethod
    def of(columns: Sequence[Column]) -> ResolvedSchema:
        return ResolvedSchema(tuple(columns))

    @staticmethod
    def physical(column_names: Sequence[str], column_data_types: Sequence[DataType]
                 ) -> ResolvedSchema:
        if len(column_names) != len(column_data_types):
            raise ValidationError(f"{len(column_names)} column names for "
                                  f"{len(column_data_types)} data types")
        return ResolvedSchema(tuple(Column.physical(name, kind) for name, kind in zip(
            column_names, column_data_types, strict=True)))

    @staticmethod
    def of_row_type(row_type: RowType) -> ResolvedSchema:
        """Physical columns from the fields of a ROW type."""
        return ResolvedSchema.physical(row_type.field_names(), row_type.field_types())

    def get_column_count(self) -> int:
        return len(self.columns)

    def get_columns(self) -> list[Column]:
        return list(self.columns)

    def get_column_names(self) -> list[str]:
        return [column.name for column in self.columns]

    def get_column_data_types(self) -> list[DataType]:
        return [column.data_type for column in self.columns]

    def get_column(self, column_index_or_name: int | str) -> Column | None:
        if isinstance(column_index_or_name, int):
            if 0 <= column_index_or_name < len(self.columns):
                return self.columns[column_index_or_name]
            return None
        return next((c for c in self.columns if c.name == column_index_or_name), None)

    def get_watermark_specs(self) -> list[WatermarkSpec]:
        return list(self.watermark_specs)

    def get_primary_key(self) -> UniqueConstraint | None:
        return self.primary_key

    def get_primary_key_indexes(self) -> list[int]:
        names = self.get_column_names()
        return [names.index(name) for name in self.primary_key.columns] if self.primary_key else []

    def _row_type(self, columns: Sequence[Column]) -> RowType:
        return RowType([RowField(column.name, column.data_type) for column in columns], False)

    def to_source_row_data_type(self) -> RowType:
        """Every column, as a query of the table produces it."""
        return self._row_type(self.columns)

    def to_physical_row_data_type(self) -> RowType:
        return self._row_type([column for column in self.columns if column.is_physical()])

    def to_sink_row_data_type(self) -> RowType:
        """The persisted columns: physical and non-virtual metadata ones."""
        return self._row_type([column for column in self.columns if column.is_persisted()])

    def to_schema(self) -> Schema:
        """The unresolved ``Schema`` with the same members (expressions as their SQL text)."""
        columns: list[UnresolvedColumn] = []
        for column in self.columns:
            if isinstance(column, ComputedColumn):
                columns.append(UnresolvedComputedColumn(column.name, column.expression_sql,
                                                        column.comment))
            elif isinstance(column, MetadataColumn):
                columns.append(UnresolvedMetadataColumn(column.name, column.data_type,
                                                        column.metadata_key, column.virtual,
                                                        column.comment))
            else:
                columns.append(UnresolvedPhysicalColumn(column.name, column.data_type,
                                                        column.comment))
        builder = Schema.Builder()
        schema = Schema(columns)
        builder.from_schema(schema)
        for spec in self.watermark_specs:
            builder.watermark(spec.rowtime_attribute, spec.expression_sql)
        if self.primary_key is not None:
            builder.primary_key_named(self.primary_key.name, *self.primary_key.columns)
        return builder.build()

    def __str__(self) -> str:
        members = [column.as_summary_string() for column in self.columns]
        members += [spec.as_summary_string() for spec in self.watermark_specs]
        if self.primary_key is not None:
            members.append(self.primary_key.as_summary_string())
        return "(\n" + ",\n".join("  " + member for member in members) + "\n)"
