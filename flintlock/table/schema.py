"""PyFlink's ``Schema`` and ``Schema.Builder``: the unresolved schema of a table or view.

A ``Schema`` is what ``CREATE TABLE (schema) WITH (...)`` declares, built in Python:
physical columns (a ``DataType`` or a type string such as ``"DECIMAL(10, 2)"``), computed
columns (an expression: SQL text or a Table API ``Expression``, kept as given — the binder
resolves it), metadata columns, watermarks and a primary key. Nothing is resolved here; the
catalog turns a ``Schema`` into a ``ResolvedSchema`` (``flintlock.table.resolved_schema``)
once the expressions have types.

``str(schema)`` is Flink's unresolved summary, as PyFlink prints it: one member per line in
``(`` ``)``, names in backticks, unresolved parts (type strings, SQL expressions) in square
brackets::

    (
      `id` BIGINT NOT NULL,
      `c` [DECIMAL(10, 2)],
      `total` AS [id * 2],
      `part` INT METADATA FROM 'partition' VIRTUAL,
      WATERMARK FOR `ts` AS [ts - INTERVAL '5' SECOND],
      CONSTRAINT `PK_id` PRIMARY KEY (`id`) NOT ENFORCED
    )

An ``Expression`` object prints as its ``as_summary_string()`` if it has one (Flink's summary:
``plus(id, 1)``, ``ts``), else as its ``str``. The members are frozen dataclasses
(``UnresolvedPhysicalColumn`` ...) readable with ``get_columns()``, ``get_watermark_specs()``
and ``get_primary_key()``. The builder checks what Flink's builder checks at build time:
names are strings, one primary key, a named constraint and a non-empty column list.

Immutable once built; no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flintlock.table.errors import ValidationError
from flintlock.table.types import DataType, RowType, quote_identifier, sql_string

if TYPE_CHECKING:
    from flintlock.table.resolved_schema import ResolvedSchema

__all__ = [
    "Schema", "SchemaError", "UnresolvedComputedColumn", "UnresolvedMetadataColumn",
    "UnresolvedPhysicalColumn", "UnresolvedPrimaryKey", "UnresolvedWatermarkSpec",
]

TypeSpec = DataType | str
"""A column's declared type: a ``DataType`` or a type string, resolved later."""


class SchemaError(ValidationError, ValueError):
    """A schema built with conflicting or malformed members."""


def _type_text(data_type: TypeSpec) -> str:
    return f"[{data_type}]" if isinstance(data_type, str) else sql_string(data_type)


def _expression_text(expression: Any) -> str:
    if isinstance(expression, str):
        return f"[{expression}]"
    summary = getattr(expression, "as_summary_string", None)
    return str(summary()) if callable(summary) else str(expression)


def _comment_text(comment: str | None) -> str:
    return "" if comment is None else " COMMENT '" + comment.replace("'", "''") + "'"


def quote_string(text: str) -> str:
    """A string literal as Flink prints one: in single quotes, quotes doubled."""
    return "'" + text.replace("'", "''") + "'"


@dataclass(frozen=True, slots=True)
class UnresolvedPhysicalColumn:
    name: str
    data_type: TypeSpec
    comment: str | None = None

    def summary(self) -> str:
        return f"{quote_identifier(self.name)} {_type_text(self.data_type)}" + _comment_text(
            self.comment)


@dataclass(frozen=True, slots=True)
class UnresolvedComputedColumn:
    name: str
    expression: Any
    """SQL text (``str``) or a Table API ``Expression`` object."""
    comment: str | None = None

    def summary(self) -> str:
        return (f"{quote_identifier(self.name)} AS {_expression_text(self.expression)}"
                + _comment_text(self.comment))


@dataclass(frozen=True, slots=True)
class UnresolvedMetadataColumn:
    name: str
    data_type: TypeSpec
    metadata_key: str | None = None
    is_virtual: bool = False
    comment: str | None = None

    def summary(self) -> str:
        text = f"{quote_identifier(self.name)} {_type_text(self.data_type)} METADATA"
        if self.metadata_key is not None:
            text += " FROM " + quote_string(self.metadata_key)
        if self.is_virtual:
            text += " VIRTUAL"
        return text + _comment_text(self.comment)


UnresolvedColumn = (UnresolvedPhysicalColumn | UnresolvedComputedColumn
                    | UnresolvedMetadataColumn)


@dataclass(frozen=True, slots=True)
class UnresolvedWatermarkSpec:
    column_name: str
    expression: Any
    """SQL text (``str``) or a Table API ``Expression`` object."""

    def summary(self) -> str:
        return (f"WATERMARK FOR {quote_identifier(self.column_name)} AS "
                f"{_expression_text(self.expression)}")


@dataclass(frozen=True, slots=True)
class UnresolvedPrimaryKey:
    constraint_name: str
    column_names: tuple[str, ...]

    def summary(self) -> str:
        columns = ", ".join(quote_identifier(name) for name in self.column_names)
        return (f"CONSTRAINT {quote_identifier(self.constraint_name)} PRIMARY KEY ({columns}) "
                "NOT ENFORCED")


class Schema:
    """The unresolved schema of a table or view (module docstring); build with
    ``Schema.new_builder()``."""

    __slots__ = ("_columns", "_primary_key", "_watermark_specs")

    def __init__(self, columns: Sequence[UnresolvedColumn] = (),
                 watermark_specs: Sequence[UnresolvedWatermarkSpec] = (),
                 primary_key: UnresolvedPrimaryKey | None = None) -> None:
        self._columns = tuple(columns)
        self._watermark_specs = tuple(watermark_specs)
        self._primary_key = primary_key

    @staticmethod
    def new_builder() -> Schema.Builder:
        return Schema.Builder()

    def get_columns(self) -> tuple[UnresolvedColumn, ...]:
        return self._columns

    def get_watermark_specs(self) -> tuple[UnresolvedWatermarkSpec, ...]:
        return self._watermark_specs

    def get_primary_key(self) -> UnresolvedPrimaryKey | None:
        return self._primary_key

    def _key(self) -> tuple[Any, ...]:
        return (self._columns, self._watermark_specs, self._primary_key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schema) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(str(self))

    def __str__(self) -> str:
        members = [member.summary() for member in self._columns]
        members += [spec.summary() for spec in self._watermark_specs]
        if self._primary_key is not None:
            members.append(self._primary_key.summary())
        return "(\n" + ",\n".join("  " + member for member in members) + "\n)"

    def __repr__(self) -> str:
        return f"Schema({self})"

    class Builder:
        """Builds a ``Schema`` member by member; every method returns the builder."""

        def __init__(self) -> None:
            self._columns: list[UnresolvedColumn] = []
            self._watermark_specs: list[UnresolvedWatermarkSpec] = []
            self._primary_key: UnresolvedPrimaryKey | None = None

        def from_schema(self, unresolved_schema: Schema) -> Schema.Builder:
            """Adopts every member of an unresolved schema."""
            self._columns.extend(unresolved_schema.get_columns())
            self._watermark_specs.extend(unresolved_schema.get_watermark_specs())
            key = unresolved_schema.get_primary_key()
            if key is not None:
                self._set_primary_key(key.constraint_name, key.column_names)
            return self

        def from_resolved_schema(self, resolved_schema: ResolvedSchema) -> Schema.Builder:
            """Adopts every member of a resolved schema (expressions as their SQL text)."""
            return self.from_schema(resolved_schema.to_schema())

        def from_row_data_type(self, data_type: DataType) -> Schema.Builder:
            """Adopts the fields of a ROW type as physical columns."""
            if not isinstance(data_type, RowType):
                raise SchemaError(f"a ROW data type is needed, got {data_type!r}")
            for field in data_type.fields:
                self.column(field.name, field.data_type)
            return self

        def from_fields(self, field_names: Sequence[str],
                        field_data_types: Sequence[DataType]) -> Schema.Builder:
            """Adopts the given names and types as physical columns."""
            if len(field_names) != len(field_data_types):
                raise SchemaError(f"{len(field_names)} field names for "
                                  f"{len(field_data_types)} data types")
            for name, data_type in zip(field_names, field_data_types, strict=True):
                self.column(name, data_type)
            return self

        def column(self, column_name: str, data_type: TypeSpec) -> Schema.Builder:
            """Declares a physical column."""
            self._columns.append(UnresolvedPhysicalColumn(_name(column_name),
                                                          _type_spec(data_type)))
            return self

        def column_by_expression(self, column_name: str, expr: Any) -> Schema.Builder:
            """Declares a computed column (SQL text or an ``Expression``)."""
            self._columns.append(UnresolvedComputedColumn(_name(column_name),
                                                          _expression(expr)))
            return self

        def column_by_metadata(self, column_name: str, data_type: TypeSpec,
                               metadata_key: str | None = None,
                               is_virtual: bool = False) -> Schema.Builder:
            """Declares a metadata column (``metadata_key`` defaults to the column name)."""
            if metadata_key is not None and not isinstance(metadata_key, str):
                raise SchemaError(f"metadata_key must be a string, got {metadata_key!r}")
            self._columns.append(UnresolvedMetadataColumn(
                _name(column_name), _type_spec(data_type), metadata_key, bool(is_virtual)))
            return self

        def watermark(self, column_name: str, watermark_expr: Any) -> Schema.Builder:
            """Declares ``column_name`` as the event-time attribute with a watermark strategy."""
            self._watermark_specs.append(UnresolvedWatermarkSpec(_name(column_name),
                                                                 _expression(watermark_expr)))
            return self

        def primary_key(self, *column_names: str) -> Schema.Builder:
            """Declares a primary key named ``PK_col1_col2`` (informational, not enforced)."""
            names = _names(column_names)
            return self._set_primary_key("PK_" + "_".join(names), names)

        def primary_key_named(self, constraint_name: str, *column_names: str) -> Schema.Builder:
            """Declares a primary key with the given constraint name."""
            return self._set_primary_key(_name(constraint_name, "constraint name"),
                                         _names(column_names))

        def _set_primary_key(self, constraint_name: str, names: Sequence[str]
                             ) -> Schema.Builder:
            if self._primary_key is not None:
                raise SchemaError("Multiple primary keys are not supported.")
            self._primary_key = UnresolvedPrimaryKey(constraint_name, tuple(names))
            return self

        def build(self) -> Schema:
            return Schema(self._columns, self._watermark_specs, self._primary_key)


def _name(name: Any, what: str = "column name") -> str:
    if not isinstance(name, str):
        raise SchemaError(f"a {what} must be a string, got {name!r}")
    return name


def _names(names: Sequence[Any]) -> tuple[str, ...]:
    if len(names) == 1 and isinstance(names[0], (list, tuple)):
        names = names[0]
    result = tuple(_name(name) for name in names)
    if not result:
        raise SchemaError("Primary key constraint must be defined for at least a single column.")
    if len(set(result)) != len(result):
        raise SchemaError(f"Invalid primary key: duplicate columns in {list(result)}.")
    return result


def _type_spec(data_type: Any) -> TypeSpec:
    if not isinstance(data_type, (DataType, str)):
        raise SchemaError(f"a column type must be a DataType or a type string, got "
                          f"{data_type!r}")
    return data_type


def _expression(expr: Any) -> Any:
    if expr is None:
        raise SchemaError("an expression is needed (SQL text or an Expression), got None")
    return expr
