"""Table formats: how a connector turns a row into a line of text and back (``csv``, ``json``,
``raw``, and the changelog formats ``canal-json`` and ``debezium-json``), with Flink's option
names and encodings.

``lookup(name)`` gives a ``TableFormat``: its option keys (without the ``<format>.`` prefix),
whether it encodes row kinds (a changelog format, which lets a sink accept updates), and
``writer(fields, options, prefix)`` / ``reader(fields, options, prefix)`` building the
per-row functions; ``batch_reader`` a batch of lines' rows as columns (``_columns``: csv
and json convert whole columns); ``changelog_reader`` gives a line's rows with their row
kinds (several for a changelog event, one ``+I`` row for the other formats). ``prefix`` is
where the format's options live: ``csv`` for ``'format' = 'csv'``, ``value.csv`` for Kafka's
``'value.format' = 'csv'``.

Imports only ``flintlock.common`` and the table layer's types and errors; runs on the driver,
the built functions on task threads.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from flintlock.common.types import Row, row_of
from flintlock.table.connectors._options import Options
from flintlock.table.errors import UnsupportedFeatureError, ValidationError
from flintlock.table.formats import _columns, canal_json, csv, debezium_json, json, raw
from flintlock.table.formats._base import FormatParseError, FormatSettings
from flintlock.table.plan.nodes import Field


@dataclass(frozen=True)
class TableFormat:
    name: str
    option_keys: frozenset[str]
    changelog: bool
    _settings: Any
    _writer: Any
    _reader: Any = None
    _changelog_reader: Any = None
    _batch_reader: Any = None

    def settings(self, options: Options, prefix: str) -> FormatSettings:
        return self._settings(options, prefix)  # type: ignore[no-any-return]

    def writer(self, fields: list[Field], options: Options, prefix: str
               ) -> Callable[[Any], str]:
        """A function from a row to its line (without the line feed)."""
        return self._writer(fields, self.settings(options, prefix))  # type: ignore[no-any-return]

    def reader(self, fields: list[Field], options: Options, prefix: str
               ) -> Callable[[str], list[Any] | None]:
        """A function from a line to the row's values (None: skip the line)."""
        if self._reader is None:
            raise UnsupportedFeatureError(f"reading the '{self.name}' format",
                                          "it is supported for writing only")
        return self._reader(fields, self.settings(options, prefix))  # type: ignore[no-any-return]

    def batch_reader(self, fields: list[Field], options: Options, prefix: str,
                     wanted: Collection[int] | None = None) -> _columns.BatchRead:
        """A function from a batch of lines to their rows as columns (``_columns``); only
        the columns in ``wanted`` (all by default) are converted."""
        if self._batch_reader is not None:
            return self._batch_reader(  # type: ignore[no-any-return]
                fields, self.settings(options, prefix), wanted)
        return _columns.per_line(self.reader(fields, options, prefix), len(fields), wanted)

    def changelog_reader(self, fields: list[Field], options: Options, prefix: str
                         ) -> Callable[[str], list[Row]]:
        """A function from a line to its rows with their kinds (empty: skip the line)."""
        if self._changelog_reader is not None:
            return self._changelog_reader(  # type: ignore[no-any-return]
                fields, self.settings(options, prefix))
        read = self.reader(fields, options, prefix)

        def rows(line: str) -> list[Row]:
            values = read(line)
            return [] if values is None else [row_of(values)]
        return rows


FORMATS = {
    "csv": TableFormat("csv", csv.OPTION_KEYS, False, csv.CsvSettings, csv.row_writer,
                       csv.line_reader, _batch_reader=csv.batch_reader),
    "json": TableFormat("json", json.OPTION_KEYS, False, json.JsonSettings, json.row_writer,
                        json.line_reader, _batch_reader=json.batch_reader),
    "raw": TableFormat("raw", raw.OPTION_KEYS, False, raw.RawSettings, raw.row_writer,
                       raw.line_reader),
    "canal-json": TableFormat("canal-json", canal_json.OPTION_KEYS, True,
                              canal_json.CanalSettings, canal_json.row_writer, None,
                              canal_json.changelog_reader),
    "debezium-json": TableFormat("debezium-json", debezium_json.OPTION_KEYS, True,
                                 debezium_json.DebeziumSettings, debezium_json.row_writer, None,
                                 debezium_json.changelog_reader),
}


def lookup(name: str | None, option: str = "format") -> TableFormat:
    if name is None:
        raise ValidationError(f"Could not find required option '{option}'.")
    found = FORMATS.get(name)
    if found is None:
        close = difflib.get_close_matches(name, list(FORMATS), n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise ValidationError(
            f"Could not find any format factory for identifier '{name}' in the classpath.{hint}"
            "\n\nAvailable format identifiers are:\n\n" + "\n".join(sorted(FORMATS)))
    return found


__all__ = ["FORMATS", "FormatParseError", "TableFormat", "lookup"]
