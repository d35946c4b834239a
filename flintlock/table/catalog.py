"""PyFlink's ``pyflink.table.catalog``, as far as flintlock's in-memory catalog has it.

- the resolved-schema classes (``Column``, ``PhysicalColumn``, ``ComputedColumn``,
  ``MetadataColumn``, ``WatermarkSpec``, ``UniqueConstraint``, ``ResolvedSchema``), re-exported
  from ``resolved_schema`` where they live;
- ``ObjectPath`` (a database name and an object name) and ``ObjectIdentifier`` (a catalog, a
  database and an object name), small value objects with Flink's methods, text and checks.

The Java catalog API (``Catalog``, ``CatalogDatabase``, ``CatalogBaseTable``, statistics,
partitions, ``HiveCatalog``, ...) is not here: ``flintlock/_missing_modules.py`` lists each
name. Frozen value objects; no I/O.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from flintlock.table.errors import ValidationError
from flintlock.table.resolved_schema import (
    Column,
    ComputedColumn,
    MetadataColumn,
    PhysicalColumn,
    ResolvedSchema,
    UniqueConstraint,
    WatermarkSpec,
)

__all__ = [
    "Column", "ComputedColumn", "MetadataColumn", "ObjectIdentifier", "ObjectPath",
    "PhysicalColumn", "ResolvedSchema", "UniqueConstraint", "WatermarkSpec",
]


def _require_name(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{what} cannot be null or empty.")
    return value


@functools.total_ordering
@dataclass(frozen=True, slots=True, init=False)
class ObjectPath:
    """A database name and an object (table, view, function) name in a catalog.

    ``str()`` and ``get_full_name()`` are ``database.object``; paths order by that text."""

    database_name: str
    object_name: str

    def __init__(self, database_name: str, object_name: str) -> None:
        object.__setattr__(self, "database_name",
                           _require_name(database_name, "databaseName"))
        object.__setattr__(self, "object_name", _require_name(object_name, "objectName"))

    def get_database_name(self) -> str:
        return self.database_name

    def get_object_name(self) -> str:
        return self.object_name

    def get_full_name(self) -> str:
        return f"{self.database_name}.{self.object_name}"

    def compare_to(self, other: ObjectPath) -> int:
        mine, theirs = self.get_full_name(), other.get_full_name()
        return (mine > theirs) - (mine < theirs)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, ObjectPath):
            return NotImplemented
        return self.compare_to(other) < 0

    def __str__(self) -> str:
        return self.get_full_name()

    @staticmethod
    def from_string(full_name: str) -> ObjectPath:
        """``'db.table'`` -> ``ObjectPath('db', 'table')``; anything but two parts, each
        non-empty, raises ``ValidationError``."""
        _require_name(full_name, "fullName")
        parts = full_name.split(".")
        while parts and not parts[-1]:
            parts.pop()  # as Java's String.split drops trailing empty strings
        if len(parts) != 2:
            raise ValidationError(
                f"Cannot get split '{full_name}' to get databaseName and objectName")
        return ObjectPath(parts[0], parts[1])


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


@dataclass(frozen=True, slots=True)
class ObjectIdentifier:
    """A catalog object's full name: catalog, database and object name.

    ``as_serializable_string()`` (and ``str()``) quotes each part in backticks;
    ``as_summary_string()`` joins them with dots unquoted."""

    catalog_name: str
    database_name: str
    object_name: str

    def __post_init__(self) -> None:
        for value, what in ((self.catalog_name, "Catalog name"),
                            (self.database_name, "Database name"),
                            (self.object_name, "Object name")):
            if not isinstance(value, str):
                raise ValidationError(f"{what} must not be null.")

    @staticmethod
    def of(catalog_name: str, database_name: str, object_name: str) -> ObjectIdentifier:
        return ObjectIdentifier(catalog_name, database_name, object_name)

    def get_catalog_name(self) -> str:
        return self.catalog_name

    def get_database_name(self) -> str:
        return self.database_name

    def get_object_name(self) -> str:
        return self.object_name

    def to_object_path(self) -> ObjectPath:
        return ObjectPath(self.database_name, self.object_name)

    def to_list(self) -> list[str]:
        return [self.catalog_name, self.database_name, self.object_name]

    def as_serializable_string(self) -> str:
        return ".".join(_quote(part) for part in self.to_list())

    def as_summary_string(self) -> str:
        return ".".join(self.to_list())

    def __str__(self) -> str:
        return self.as_serializable_string()
