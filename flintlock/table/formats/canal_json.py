"""The ``canal-json`` format, for writing changelog rows (Flink's ``CanalJsonFormatFactory``).

Each row is one line ``{"data":[<row as the json format writes it>],"type":"INSERT"}``:
+I and +U rows are ``INSERT``, -U and -D rows ``DELETE``, as Flink's
``CanalJsonSerializationSchema`` writes them. Options ``canal-json.timestamp-format.standard``,
``canal-json.map-null-key.mode`` / ``.literal``, ``canal-json.encode.decimal-as-plain-number``
and ``canal-json.encode.ignore-null-fields`` mean what they mean for ``json``. Reading a
canal-json table (a changelog source) is not supported yet.

Built on the driver; the writer runs on the sink subtask's task thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flintlock.common.types import RowKind
from flintlock.table.formats import json as json_format
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


__all__ = ["OPTION_KEYS", "row_writer"]
