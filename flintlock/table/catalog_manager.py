"""The tables, views and functions a ``TableEnvironment`` knows, by their three-part names.

Flink names every object ``catalog.database.object``; an unqualified name is read in the
current catalog and database (``default_catalog.default_database``). flintlock keeps one
in-memory catalog per table environment (Flink's ``GenericInMemoryCatalog``): connector tables
(``TableSpec``), views (a logical plan), and functions. Temporary objects shadow permanent ones
of the same name, as in Flink. Function names are case-insensitive; object names are not.

Owned by one ``TableEnvironment`` and used from the thread that builds its jobs.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from flintlock.table.errors import ValidationError
from flintlock.table.plan.nodes import PlanNode, TableSpec

Path = tuple[str, str, str]


@dataclass
class CatalogEntry:
    path: Path
    table: TableSpec | None = None
    view: PlanNode | None = None
    temporary: bool = False
    query_text: str | None = None

    @property
    def is_view(self) -> bool:
        return self.view is not None


class CatalogManager:
    def __init__(self, catalog: str, database: str) -> None:
        self.builtin_catalog = catalog
        self.current_catalog = catalog
        self.current_database = database
        self.catalogs: dict[str, set[str]] = {catalog: {database}}
        self.entries: dict[Path, CatalogEntry] = {}
        self.temporary: dict[Path, CatalogEntry] = {}
        self.functions: dict[str, Any] = {}
        self.temporary_functions: dict[str, Any] = {}
        self.system_functions: dict[str, Any] = {}

    # -- names --------------------------------------------------------------------------------

    def qualify(self, name: str | tuple[str, ...]) -> Path:
        parts = split_path(name) if isinstance(name, str) else tuple(name)
        if len(parts) == 1:
            return (self.current_catalog, self.current_database, parts[0])
        if len(parts) == 2:
            return (self.current_catalog, parts[0], parts[1])
        if len(parts) == 3:
            return (parts[0], parts[1], parts[2])
        raise ValidationError(f"Object identifier '{'.'.join(parts)}' has too many parts")

    # -- tables and views ---------------------------------------------------------------------

    def lookup(self, name: str | tuple[str, ...]) -> CatalogEntry | None:
        path = self.qualify(name)
        return self.temporary.get(path) or self.entries.get(path)

    def get(self, name: str | tuple[str, ...]) -> CatalogEntry:
        found = self.lookup(name)
        if found is None:
            path = self.qualify(name)
            known = [p[2] for p in [*self.temporary, *self.entries]
                     if p[:2] == path[:2]]
            close = difflib.get_close_matches(path[2], known, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            shown = ".".join(name) if isinstance(name, tuple) else name
            raise ValidationError(f"Object '{shown}' not found{hint}")
        return found

    def register(self, entry: CatalogEntry, ignore_if_exists: bool = False) -> bool:
        self._check_database(entry.path)
        target = self.temporary if entry.temporary else self.entries
        if entry.path in target:
            if ignore_if_exists:
                return False
            kind = "Temporary table" if entry.temporary else "Table or view"
            raise ValidationError(f"{kind} '{'.'.join(entry.path)}' already exists")
        target[entry.path] = entry
        return True

    def drop(self, name: str | tuple[str, ...], temporary: bool, view: bool,
             if_exists: bool = False) -> bool:
        path = self.qualify(name)
        target = self.temporary if temporary else self.entries
        entry = target.get(path)
        if entry is None or entry.is_view != view:
            if if_exists:
                return False
            kind = ("Temporary view" if view else "Temporary table") if temporary else (
                "View" if view else "Table")
            raise ValidationError(
                f"{kind} with identifier '{'.'.join(path)}' does not exist.")
        del target[path]
        return True

    def _check_database(self, path: Path) -> None:
        databases = self.catalogs.get(path[0])
        if databases is None:
            raise ValidationError(f"Catalog '{path[0]}' does not exist")
        if path[1] not in databases:
            raise ValidationError(f"Database '{path[1]}' does not exist in catalog '{path[0]}'")

    def names(self, temporary_only: bool = False, views_only: bool = False) -> list[str]:
        here = (self.current_catalog, self.current_database)
        found = set()
        for source in ([self.temporary] if temporary_only else [self.temporary, self.entries]):
            for path, entry in source.items():
                if path[:2] == here and (not views_only or entry.is_view):
                    found.add(path[2])
        return sorted(found)

    # -- functions ----------------------------------------------------------------------------

    def register_function(self, name: str, function: Any, temporary: bool = True,
                          system: bool = False, ignore_if_exists: bool = False) -> None:
        key = name.lower()
        target = self.system_functions if system else (
            self.temporary_functions if temporary else self.functions)
        if key in target and not ignore_if_exists:
            raise ValidationError(f"Function '{name}' already exists")
        target.setdefault(key, function) if ignore_if_exists else target.__setitem__(
            key, function)

    def drop_function(self, name: str, temporary: bool = True, system: bool = False) -> bool:
        target = self.system_functions if system else (
            self.temporary_functions if temporary else self.functions)
        return target.pop(name.lower(), None) is not None

    def user_function(self, name: str) -> Any | None:
        key = name.split(".")[-1].lower()
        for source in (self.temporary_functions, self.system_functions, self.functions):
            if key in source:
                return source[key]
        return None

    def function_names(self) -> list[str]:
        return sorted({*self.temporary_functions, *self.system_functions, *self.functions})


def split_path(name: str) -> tuple[str, ...]:
    """``a.b.c`` or ``a.`b.c`` -> its parts (backticks quote a part holding dots)."""
    parts: list[str] = []
    current = []
    quoted = False
    index = 0
    while index < len(name):
        char = name[index]
        if char == "`":
            if quoted and index + 1 < len(name) and name[index + 1] == "`":
                current.append("`")
                index += 2
                continue
            quoted = not quoted
        elif char == "." and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    parts.append("".join(current))
    if any(not p for p in parts):
        raise ValidationError(f"Invalid object path '{name}'")
    return tuple(parts)
