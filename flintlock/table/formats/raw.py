"""The ``raw`` format: the single column's value as the line itself (Flink's ``RawFormatFactory``).

The table must have exactly one physical column; STRING / VARCHAR / CHAR values are written in
``raw.charset`` (UTF-8), BYTES as they are. Lines are separated by a line feed in files, so a
value holding one reads back as two rows, as in Flink's filesystem connector. NULL writes an
empty line; an empty line reads as the empty string. Numeric raw columns (Flink writes them in
binary with ``raw.endianness``) are refused with ``FormatParseError``.
Built on the driver; writers and readers run on task threads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flintlock.common.serialization import checked_charset
from flintlock.table import types as t
from flintlock.table.connectors._options import Options
from flintlock.table.errors import ValidationError
from flintlock.table.formats._base import FormatParseError, FormatSettings
from flintlock.table.plan.nodes import Field

OPTION_KEYS = frozenset({"charset", "endianness"})


class RawSettings(FormatSettings):
    def __init__(self, options: Options, prefix: str) -> None:
        super().__init__(options, prefix)
        self.charset = checked_charset(self.text("charset", "UTF-8"))
        self.choice("endianness", ("big-endian", "little-endian"), "big-endian")


def _single(fields: list[Field]) -> t.DataType:
    if len(fields) != 1:
        raise ValidationError(
            "The 'raw' format only supports single physical column. However the defined "
            "schema contains multiple physical columns: ["
            + ", ".join(f"`{f.name}` {t.sql_string(f.type)}" for f in fields) + "]")
    data_type = fields[0].type
    if not isinstance(data_type, (t.CharType, t.VarCharType, t.BinaryType, t.VarBinaryType)):
        raise FormatParseError(
            f"flintlock's 'raw' format writes character and binary columns only, not "
            f"{t.sql_string(data_type)}")
    return data_type


def row_writer(fields: list[Field], settings: RawSettings) -> Callable[[Any], str]:
    """The line of a row: its one value (BYTES decoded with the charset and
    ``surrogateescape``, so the sink's encoding with the same charset restores them)."""
    if isinstance(_single(fields), (t.BinaryType, t.VarBinaryType)):
        return lambda row: "" if row[0] is None else bytes(row[0]).decode(settings.charset,
                                                                            "surrogateescape")
    return lambda row: "" if row[0] is None else row[0]


def line_reader(fields: list[Field], settings: RawSettings
                ) -> Callable[[str], list[Any] | None]:
    if isinstance(_single(fields), (t.BinaryType, t.VarBinaryType)):
        return lambda line: [line.encode(settings.charset, "surrogateescape")]
    return lambda line: [line]


__all__ = ["OPTION_KEYS", "RawSettings", "line_reader", "row_writer"]
