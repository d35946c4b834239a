"""The ``debezium-json`` format (Flink's ``DebeziumJsonFormatFactory``): Debezium's change
events as a changelog.

Reading (``DebeziumJsonDeserializationSchema``): one event per line,
``{"before": {...}, "after": {...}, "op": "c"}`` (or, with ``debezium-json.schema-include``,
the same inside ``{"schema": ..., "payload": {...}}``). ``op`` ``c`` (create) and ``r``
(snapshot read) give ``+I`` of ``after``; ``u`` gives ``-U`` of ``before`` then ``+U`` of
``after``; ``d`` gives ``-D`` of ``before``. Field values are read as the ``json`` format reads
them (numbers from strings, missing fields NULL). An empty line (a Kafka tombstone) is skipped.
A line that is not JSON is ``Corrupt Debezium JSON message '...'``, an unknown ``op`` names
itself, and an update or delete without ``before`` asks for PostgreSQL's ``REPLICA IDENTITY
FULL``, as Flink's messages do; with ``debezium-json.ignore-parse-errors`` such lines are
skipped.

Writing (``DebeziumJsonSerializationSchema``): ``+I``/``+U`` rows as
``{"before":null,"after":{row},"op":"c"}``, ``-U``/``-D`` rows as
``{"before":{row},"after":null,"op":"d"}``.

Built on the driver; readers and writers run on task threads.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from flintlock.common.types import Row, RowKind, row_of
from flintlock.table.connectors._options import Options
from flintlock.table.formats import json as json_format
from flintlock.table.formats._base import FormatParseError
from flintlock.table.plan.nodes import Field

OPTION_KEYS = frozenset({
    "schema-include", "ignore-parse-errors", "timestamp-format.standard", "map-null-key.mode",
    "map-null-key.literal", "encode.decimal-as-plain-number", "encode.ignore-null-fields",
})
_INSERTS = ("c", "r")


class DebeziumSettings(json_format.JsonSettings):
    def __init__(self, options: Options, prefix: str) -> None:
        super().__init__(options, prefix)
        self.schema_include = self.flag("schema-include")


class ChangelogError(ValueError):
    """An event that parses as JSON but is not a change event this format can read."""


def changelog_reader(fields: list[Field], settings: DebeziumSettings
                     ) -> Callable[[str], list[Row]]:
    read = json_format.object_reader(fields, settings)
    ignore = settings.ignore_errors
    schema_include = settings.schema_include

    def changes(event: Any, line: str) -> list[Row]:
        if schema_include:
            event = event.get("payload") if isinstance(event, dict) else None
        if not isinstance(event, dict):
            raise ValueError("not a JSON object")
        op = event.get("op")
        before, after = event.get("before"), event.get("after")
        if op in _INSERTS:
            return [row_of(read(after), RowKind.INSERT)]
        if op not in ("u", "d"):
            raise ChangelogError(f'Unknown "op" value "{op}". The Debezium JSON message is '
                                 f"'{line}'")
        if before is None:
            raise ChangelogError(
                f'The "before" field of {"UPDATE" if op == "u" else "DELETE"} message is null, '
                "if you are using Debezium Postgres Connector, please check the Postgres table "
                "has been set REPLICA IDENTITY to FULL level.")
        if op == "d":
            return [row_of(read(before), RowKind.DELETE)]
        return [row_of(read(before), RowKind.UPDATE_BEFORE),
                row_of(read(after), RowKind.UPDATE_AFTER)]

    def parse(line: str) -> list[Row]:
        if not line.strip():
            return []
        try:
            return changes(json.loads(line), line)
        except ChangelogError as error:
            if ignore:
                return []
            raise FormatParseError(str(error)) from error
        except (ValueError, TypeError, ArithmeticError, AttributeError) as error:
            if ignore:
                return []
            raise FormatParseError(f"Corrupt Debezium JSON message '{line}'.") from error
    return parse


def row_writer(fields: list[Field], settings: json_format.JsonSettings
               ) -> Callable[[Any], str]:
    data = json_format.row_writer(fields, settings)

    def write(row: Any) -> str:
        if row.get_row_kind() in (RowKind.INSERT, RowKind.UPDATE_AFTER):
            return '{"before":null,"after":' + data(row) + ',"op":"c"}'
        return '{"before":' + data(row) + ',"after":null,"op":"d"}'
    return write


__all__ = ["OPTION_KEYS", "DebeziumSettings", "changelog_reader", "row_writer"]
