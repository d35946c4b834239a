"""The ``canal-json`` format, for writing changelog rows (Flink's ``CanalJsonFormatFactory``).

Each row is one line ``{"data":[<row as the json format writes it>],"type":"INSERT"}``:
+I and +U rows are ``INSERT``, -U and -D rows ``DELETE``, as Flink's
``CanalJsonSerializationSchema`` writes them. Options ``canal-json.timestamp-format.standard``,
``canal-json.map-null-key.mode`` / ``.literal``, ``canal-json.encode.decimal-as-plain-number``
and ``canal-json.encode.ignore-null-fields`` mean what they mean for ``json``.

Reading (``CanalJsonDeserializationSchema``): ``INSERT`` gives ``+I`` of every row in
``data``; ``UPDATE`` gives, for every row of ``data``, ``-U`` of the old row then ``+U`` of the
new one, where the old row is ``old[i]`` with the fields ``old[i]`` does not name (unchanged)
taken from ``data[i]``; ``DELETE`` gives ``-D`` of every row in ``data``; ``CREATE`` (DDL) gives
nothing. ``canal-json.database.include`` / ``table.include`` (regular expressions matched
against the whole ``database`` / ``table`` value) drop the events of other tables. Values are
read as the ``json`` format reads them (Canal writes numbers as strings). A line that is not
JSON is ``Corrupt Canal JSON message '...'``; an unknown ``type`` names itself; with
``canal-json.ignore-parse-errors`` such lines are skipped.

Built on the driver; the writer runs on the sink subtask's task thread.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from flintlock.common.types import Row, RowKind, row_of
from flintlock.table.connectors._options import Options
from flintlock.table.formats import json as json_format
from flintlock.table.formats._base import FormatParseError
from flintlock.table.plan.nodes import Field

OPTION_KEYS = frozenset({
    "ignore-parse-errors", "timestamp-format.standard", "map-null-key.mode",
    "map-null-key.literal", "encode.decimal-as-plain-number", "encode.ignore-null-fields",
    "database.include", "table.include",
})
_TYPES = {RowKind.INSERT: "INSERT", RowKind.UPDATE_AFTER: "INSERT",
          RowKind.UPDATE_BEFORE: "DELETE", RowKind.DELETE: "DELETE"}


def row_writer(fields: list[Field], settings: json_format.JsonSettings
               ) -> Callable[[Any], str]:
    data = json_format.row_writer(fields, settings)

    def write(row: Any) -> str:
        return '{"data":[' + data(row) + '],"type":"' + _TYPES[row.get_row_kind()] + '"}'
    return write


class CanalSettings(json_format.JsonSettings):
    def __init__(self, options: Options, prefix: str) -> None:
        super().__init__(options, prefix)
        database, table = self.optional_text("database.include"), self.optional_text(
            "table.include")
        self.database = None if database is None else re.compile(database)
        self.table = None if table is None else re.compile(table)


class _UnknownType(ValueError):
    pass


def changelog_reader(fields: list[Field], settings: CanalSettings
                     ) -> Callable[[str], list[Row]]:
    read = json_format.object_reader(fields, settings)
    names = [f.name for f in fields]
    ignore = settings.ignore_errors

    def wanted(event: dict[str, Any]) -> bool:
        for pattern, key in ((settings.database, "database"), (settings.table, "table")):
            if pattern is not None and not pattern.fullmatch(str(event.get(key))):
                return False
        return True

    def updates(event: dict[str, Any]) -> list[Row]:
        out = []
        for new, old in zip(event["data"], event["old"], strict=True):
            before = dict(new)
            before.update({k: v for k, v in old.items() if k in names})
            out.append(row_of(read(before), RowKind.UPDATE_BEFORE))
            out.append(row_of(read(new), RowKind.UPDATE_AFTER))
        return out

    def changes(event: Any, line: str) -> list[Row]:
        if not isinstance(event, dict):
            raise ValueError("not a JSON object")
        if not wanted(event):
            return []
        kind = event.get("type")
        if kind == "INSERT":
            return [row_of(read(node), RowKind.INSERT) for node in event["data"]]
        if kind == "UPDATE":
            return updates(event)
        if kind == "DELETE":
            return [row_of(read(node), RowKind.DELETE) for node in event["data"]]
        if kind == "CREATE":
            return []
        raise _UnknownType(f'Unknown "type" value "{kind}". The Canal JSON message is '
                           f"'{line}'")

    def parse(line: str) -> list[Row]:
        if not line.strip():
            return []
        try:
            return changes(json.loads(line), line)
        except _UnknownType as error:
            if ignore:
                return []
            raise FormatParseError(str(error)) from error
        except (ValueError, TypeError, KeyError, ArithmeticError, AttributeError) as error:
            if ignore:
                return []
            raise FormatParseError(f"Corrupt Canal JSON message '{line}'.") from error
    return parse


__all__ = ["OPTION_KEYS", "CanalSettings", "changelog_reader", "row_writer"]
