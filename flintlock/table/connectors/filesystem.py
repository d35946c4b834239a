"""The ``filesystem`` table connector: a directory of text files in a format (csv, json, raw;
canal-json for changelog output), read as a bounded (or monitored) source and written
exactly once (Flink's ``FileSystemTableFactory``).

Options: ``path`` and ``format`` (required) with the format's ``<format>.*`` options;
``source.monitor-interval`` (unset: read the files present at the start, then end);
``sink.rolling-policy.file-size`` (128 MB), ``sink.rolling-policy.rollover-interval`` (30 min),
``sink.rolling-policy.inactivity-interval`` (30 min), ``sink.rolling-policy.check-interval``
(accepted; rolling is checked as records arrive and at checkpoints), ``sink.parallelism``,
``partition.default-name`` (``__DEFAULT_PARTITION__``).

Reading: every file under ``path`` whose name does not start with ``.`` or ``_`` (in-progress
and pending part files are hidden), through ``FileSource``'s splits (its checkpointed
position per file: a restore neither repeats nor skips a line), a poll's lines decoded at once
by the format (``_file_rows``; skipped lines are dropped); a Calc over the table runs inside
the source (``accepts_calc``), as for datagen. A partitioned table (``PARTITIONED BY``) lists the
``k=v`` directories when the job is planned and reads each with its partition values appended.

Writing (``filesystem_sink``): ``FileSink`` part files named as Flink names them
(``part-<uuid>-<subtask>-<n>`` streaming, ``part-<uuid>-task-<subtask>-file-<n>`` batch),
visible when the checkpoint covering them completes or at the end of a bounded input (exactly
once); a partitioned table writes each row into its ``k=v`` directory without the partition
columns, and with ``sink.partition-commit.policy.kind`` its partitions are committed
(``_SUCCESS`` files, custom policies) by a single committer (``partition_committer``). A sink
accepts update rows only with a changelog format (``canal-json``, ``debezium-json``).

The factory runs on the driver; decoding and writing on task threads.
"""

from __future__ import annotations

import datetime
import os
import posixpath
from dataclasses import replace
from typing import Any
from urllib.parse import unquote

import fsspec

from flintlock.common.changelog_rows import CHANGELOG_ROWS
from flintlock.common.time import Duration
from flintlock.common.watermark_strategy import WatermarkStrategy
from flintlock.datastream.connectors.file_system import FileSource, StreamFormat
from flintlock.datastream.data_stream import DataStream
from flintlock.table import formats, types
from flintlock.table.connectors import registry
from flintlock.table.connectors._file_rows import Decoding, RowFileSource, calc_columns
from flintlock.table.connectors._options import Options, check_keys
from flintlock.table.connectors._sinks import sink_fields, sink_parallelism
from flintlock.table.connectors._sources import check_bounded
from flintlock.table.connectors.filesystem_partitions import partition_predicate
from flintlock.table.connectors.filesystem_sink import (
    DEFAULT_PARTITION,
    SINK_OPTIONS,
    TableFileSink,
    TableRowEncoder,
    add_sink,
    escape_partition,
    file_sink_settings,
)
from flintlock.table.connectors.partition_commit import OPTION_KEYS as COMMIT_OPTIONS
from flintlock.table.errors import UnsupportedFeatureError, ValidationError
from flintlock.table.plan.nodes import Field, TableSpec

CONNECTOR_OPTIONS = {"connector", "path", "format", "source.monitor-interval"} | set(
    SINK_OPTIONS) | set(COMMIT_OPTIONS)


def _absolute(path: str) -> str:
    return path if "://" in path else os.path.abspath(path)


def table_format(spec: TableSpec) -> formats.TableFormat:
    """The table's format, after refusing options that neither the connector nor it knows."""
    options = Options(spec.options)
    found = formats.lookup(options.get_str("format"))
    check_keys("filesystem", spec.options,
               CONNECTOR_OPTIONS | {f"{found.name}.{key}" for key in found.option_keys})
    if options.get_bool("auto-compaction", False):
        raise UnsupportedFeatureError("the filesystem sink's 'auto-compaction'")
    return found


def _split(spec: TableSpec, fields: tuple[Field, ...]) -> tuple[list[int], list[int]]:
    """Indexes of the data columns and of the partition columns among ``fields``."""
    names = [f.name for f in fields]
    for key in spec.partition_keys:
        if key not in names:
            raise ValidationError(f"Partition column '{key}' not defined in the table schema. "
                                  f"Available columns: [{', '.join(names)}]")
    partition = [names.index(key) for key in spec.partition_keys]
    return [i for i in range(len(fields)) if i not in partition], partition


# -- source --------------------------------------------------------------------------------------

def _partition_directories(base: str, keys: tuple[str, ...]) -> list[tuple[str, list[str]]]:
    """(directory, raw values) of every ``k1=v1/k2=v2`` directory under ``base``."""
    fs, root = fsspec.core.url_to_fs(base)
    found: list[tuple[str, list[str]]] = []
    if not fs.exists(root):
        return found

    def walk(directory: str, depth: int, values: list[str]) -> None:
        if depth == len(keys):
            found.append((directory, values))
            return
        for entry in sorted(fs.ls(directory, detail=True), key=lambda e: e["name"]):
            name = posixpath.basename(entry["name"].rstrip("/"))
            if entry["type"] == "directory" and name.startswith(keys[depth] + "="):
                walk(entry["name"], depth + 1, [*values, unquote(name.split("=", 1)[1])])
    walk(root, 0, [])
    protocol = base.split("://", 1)[0] + "://" if "://" in base else ""
    return [(d if not protocol or "://" in d else protocol + d, v) for d, v in found]


def _partition_value(text: str, field: Field, default_name: str) -> Any:
    if text == default_name:
        return None
    if isinstance(field.type, types.DateType) and text.lstrip("-").isdigit():
        # Flink writes a DATE partition as its epoch day (filesystem_sink.partition_text)
        return datetime.date(1970, 1, 1) + datetime.timedelta(days=int(text))
    reader = formats.lookup("csv").reader([field], Options({}), "csv")
    values = reader(text)
    return None if values is None else values[0]


def create_source(spec: TableSpec, context: registry.ConnectorContext, calc: Any = None,
                  condition: Any = None) -> DataStream:
    """The table's rows, or with ``calc`` (a fused column Calc) the Calc's rows; the Calc's
    ``condition`` prunes the partitions read (``filesystem_partitions``)."""
    found = table_format(spec)
    options = Options(spec.options)
    fields = spec.physical
    data, partition = _split(spec, fields)
    base = _absolute(options.raw["path"])
    interval = options.get_duration_ms("source.monitor-interval")
    check_bounded(spec, context, interval is None)
    width = len(fields)
    if found.changelog:  # debezium-json, canal-json: rows with their kinds
        if partition:
            raise UnsupportedFeatureError(f"a partitioned '{found.name}' filesystem table")
        changes = found.changelog_reader(list(fields), options, found.name)
        decoding = Decoding(None, tuple(data), width, calc=calc, changes=changes)
        return _read(context, base, interval, decoding, spec)
    wanted = calc_columns(calc)
    data_wanted = None if wanted is None else [j for j, i in enumerate(data) if i in wanted]
    read = found.batch_reader([fields[i] for i in data], options, found.name, data_wanted)
    decoding = Decoding(read, tuple(data), width, calc=calc)
    if not partition:
        return _read(context, base, interval, decoding, spec)
    default_name = options.get_str("partition.default-name", DEFAULT_PARTITION)
    keep = partition_predicate(condition, partition, width)
    streams, skipped = [], None
    for directory, raw in _partition_directories(base, spec.partition_keys):
        values = [_partition_value(text, fields[i], default_name or DEFAULT_PARTITION)
                  for text, i in zip(raw, partition, strict=True)]
        part = replace(decoding, constants=tuple(zip(partition, values, strict=True)))
        if keep is not None and not keep(values):
            skipped = skipped or (directory, part)  # pruned: its files are not read
            continue
        streams.append(_read(context, directory, interval, part, spec))
    if not streams:  # nothing (left) to read: one directory, or the base, gives no row
        directory, part = skipped or (base, decoding)
        return _read(context, directory, interval, part, spec)
    return streams[0].union(*streams[1:]) if len(streams) > 1 else streams[0]


def _read(context: registry.ConnectorContext, path: str, interval: int | None,
          decoding: Decoding, spec: TableSpec) -> DataStream:
    if interval is not None:  # FileSource's check of a discovery interval
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), path
                                            ).monitor_continuously(Duration.of_millis(interval))
    source = RowFileSource((path,), interval, "UTF-8", decoding)
    return context.env.from_source(source, WatermarkStrategy.no_watermarks(),
                                   f"filesystem[{spec.name}]", CHANGELOG_ROWS)


# -- sink (flintlock.table.connectors.filesystem_sink) --------------------------------------------

def create_sink(stream: DataStream, spec: TableSpec, fields: tuple[Field, ...],
                context: registry.ConnectorContext) -> Any:
    found = table_format(spec)
    options = Options(spec.options)
    fields = sink_fields(spec, fields)
    data, partition = _split(spec, fields)
    write = found.writer([fields[i] for i in data], options, found.name)
    charset = options.get_str("raw.charset", "UTF-8") if found.name == "raw" else "UTF-8"
    settings = file_sink_settings(_absolute(options.raw["path"]), options, write, data,
                                  partition, spec, charset or "UTF-8", not context.streaming)
    return add_sink(stream, spec, settings, options, sink_parallelism(spec), context.streaming)


class FileSystemFactory:
    identifier = "filesystem"

    def required_options(self) -> set[str]:
        return {"path", "format"}

    def optional_options(self) -> set[str]:
        patterns = {f"{name}.#" for name in formats.FORMATS}
        return (CONNECTOR_OPTIONS - {"connector", "path", "format"}) | patterns

    accepts_calc = True
    """The planner may fuse a Calc over the table into the source (``calc``)."""
    prunes_partitions = True
    """With a fused Calc, the planner passes its ``condition`` too (partition pruning)."""

    def create_source(self, spec: TableSpec, context: registry.ConnectorContext,
                      calc: Any = None, condition: Any = None) -> DataStream:
        return create_source(spec, context, calc, condition)

    def create_sink(self, stream: DataStream, spec: TableSpec, fields: tuple[Field, ...],
                    context: registry.ConnectorContext) -> Any:
        return create_sink(stream, spec, fields, context)

    def accepts_updates(self, spec: TableSpec) -> bool:
        return table_format(spec).changelog


FACTORY = FileSystemFactory()
registry.FACTORIES[FACTORY.identifier] = FACTORY

__all__ = ["FileSystemFactory", "TableFileSink", "TableRowEncoder", "escape_partition"]
