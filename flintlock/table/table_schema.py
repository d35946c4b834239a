"""PyFlink's deprecated ``TableSchema``: a table's field names and data types (FLIP-164 replaced
it with ``Schema`` and ``ResolvedSchema``; ``Table.get_schema()`` still returns one).

``repr`` is Flink's legacy tree text: ``root``, then `` |-- name: TYPE`` per field, each line
ending with a newline. Field lookups by index or name return None when there is no such field.

Immutable once built; no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from flintlock.table.errors import ValidationError
from flintlock.table.types import DataType, RowField, RowType, sql_string

__all__ = ["TableSchema"]


class TableSchema:
    """Field names and their types, in order."""

    def __init__(self, field_names: Sequence[str] | None = None,
                 data_types: Sequence[DataType] | None = None) -> None:
        names, types = list(field_names or []), list(data_types or [])
        if len(names) != len(types):
            raise ValidationError(f"{len(names)} field names for {len(types)} data types")
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValidationError(f"Field names must be unique. Duplicate fields: {duplicates}")
        for data_type in types:
            if not isinstance(data_type, DataType):
                raise ValidationError(f"a DataType is needed, got {data_type!r}")
        self._names = names
        self._types = types

    @staticmethod
    def from_row_type(row_type: RowType) -> TableSchema:
        return TableSchema(row_type.field_names(), row_type.field_types())

    def copy(self) -> TableSchema:
        return TableSchema(self._names, self._types)

    def get_field_data_types(self) -> list[DataType]:
        return list(self._types)

    def get_field_data_type(self, field: int | str) -> DataType | None:
        if isinstance(field, bool) or not isinstance(field, (int, str)):
            raise TypeError(f"Expected field index or field name, got {type(field)}")
        if isinstance(field, str):
            return self._types[self._names.index(field)] if field in self._names else None
        return self._types[field] if 0 <= field < len(self._types) else None

    def get_field_count(self) -> int:
        return len(self._names)

    def get_field_names(self) -> list[str]:
        return list(self._names)

    def get_field_name(self, field_index: int) -> str | None:
        return self._names[field_index] if 0 <= field_index < len(self._names) else None

    def to_row_data_type(self) -> RowType:
        return RowType([RowField(name, kind) for name, kind in zip(
            self._names, self._types, strict=True)], False)

    def __repr__(self) -> str:
        lines = ["root"] + [f" |-- {name}: {sql_string(kind)}"
                            for name, kind in zip(self._names, self._types, strict=True)]
        return "".join(text + "\n" for text in lines)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TableSchema) and self._names == other._names
                and self._types == other._types)

    def __hash__(self) -> int:
        return hash(tuple(self._names))

    @classmethod
    def builder(cls) -> TableSchema.Builder:
        return TableSchema.Builder()

    class Builder:
        """Adds fields in order; ``build()`` makes the schema."""

        def __init__(self) -> None:
            self._field_names: list[str] = []
            self._field_data_types: list[DataType] = []

        def field(self, name: str, data_type: DataType) -> TableSchema.Builder:
            if name is None or data_type is None:
                raise ValidationError("a field needs a name and a data type")
            self._field_names.append(name)
            self._field_data_types.append(data_type)
            return self

        def build(self) -> TableSchema:
            return TableSchema(self._field_names, self._field_data_types)
