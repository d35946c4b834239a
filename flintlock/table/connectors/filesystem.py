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

Writing: ``FileSink`` with a part-file prefix ``part-<uuid>`` generated per sink, so committed
files are named ``part-<uuid>-<subtask>-<counter>`` as Flink's streaming file sink names them;
part files become visible when the checkpoint covering them completes, or at the end of a
bounded input (exactly once; see ``flintlock.datastream.connectors._file_sink``). In batch mode
Flink names files ``part-<uuid>-task-<n>-file-<m>``; flintlock keeps the streaming names there
(docs/table.md). A partitioned table writes each row into its ``k=v`` directory, without the
partition columns in the file, as Flink. A sink accepts update rows only with a changelog
format (``canal-json``).

The factory runs on the driver; decoding and writing on task threads.
"""

from __future__ import annotations

import os
import posixpath
import re
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any
from urllib.parse import unquote

import fsspec

from flintlock.common.changelog_rows import CHANGELOG_ROWS
from flintlock.common.serialization import Encoder
from flintlock.common.time import Duration
from flintlock.common.types import row_of
from flintlock.common.watermark_strategy import WatermarkStrategy
from flintlock.datastream.connectors._buckets import BucketAssigner, OutputFileConfig
from flintlock.datastream.connectors._file_sink import FileSinkSettings, FileSinkWriter
from flintlock.datastream.connectors._rolling import DefaultRollingPolicy
from flintlock.datastream.connectors.base import Sink
from flintlock.datastream.connectors.file_system import FileSource, StreamFormat
from flintlock.datastream.data_stream import DataStream
from flintlock.table import formats
from flintlock.table.connectors import registry
from flintlock.table.connectors._file_rows import Decoding, RowFileSource, calc_columns
from flintlock.table.connectors._options import Options, check_keys
from flintlock.table.connectors._sinks import sink_fields, sink_parallelism
from flintlock.table.connectors._sources import check_bounded
from flintlock.table.errors import UnsupportedFeatureError, ValidationError
from flintlock.table.plan.nodes import Field, TableSpec

DEFAULT_PARTITION = "__DEFAULT_PARTITION__"
MB = 1024 * 1024
MINUTE_MS = 60 * 1000
CONNECTOR_OPTIONS = {
    "connector", "path", "format", "source.monitor-interval",
    "sink.rolling-policy.file-size", "sink.rolling-policy.rollover-interval",
    "sink.rolling-policy.inactivity-interval", "sink.rolling-policy.check-interval",
    "sink.parallelism", "partition.default-name", "sink.shuffle-by-partition.enable",
    "auto-compaction",
}


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
    reader = formats.lookup("csv").reader([field], Options({}), "csv")
    values = reader(text)
    return None if values is None else values[0]


def create_source(spec: TableSpec, context: registry.ConnectorContext, calc: Any = None
                  ) -> DataStream:
    """The table's rows, or with ``calc`` (a fused column Calc) the Calc's rows."""
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
    streams = []
    for directory, raw in _partition_directories(base, spec.partition_keys):
        values = [_partition_value(text, fields[i], default_name or DEFAULT_PARTITION)
                  for text, i in zip(raw, partition, strict=True)]
        constants = tuple(zip(partition, values, strict=True))
        streams.append(_read(context, directory, interval,
                             replace(decoding, constants=constants), spec))
    if not streams:
        return _read(context, base, interval, decoding, spec)
    return streams[0].union(*streams[1:]) if len(streams) > 1 else streams[0]


def _read(context: registry.ConnectorContext, path: str, interval: int | None,
          decoding: Decoding, spec: TableSpec) -> DataStream:
    if interval is not None:  # FileSource's check of a discovery interval
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), path
                                            ).monitor_continuously(Duration.of_millis(interval))
    source = RowFileSource((path,), interval, "UTF-8", decoding)
    return context.env.from_source(source, WatermarkStrategy.no_watermarks(),
                                   f"filesystem[{spec.name}]", CHANGELOG_ROWS)


# -- sink ----------------------------------------------------------------------------------------

class TableRowEncoder(Encoder):
    """Rows as lines of a table format, for the ``FileSink`` writer."""

    def __init__(self, write: Callable[[Any], str], charset: str = "UTF-8") -> None:
        super().__init__(charset)
        self._write = write

    def for_type(self, type_info: Any) -> Encoder:
        return self

    def encode(self, record: Any) -> bytes:
        return (self._write(record) + "\n").encode(self.charset, "surrogateescape")

    def encode_all(self, records: list[Any]) -> bytes:
        if not records:
            return b""
        return ("\n".join(map(self._write, records)) + "\n").encode(self.charset,
                                                                      "surrogateescape")


_UNSAFE = re.compile(r'[\x00-\x1f"#%\'*/:=?\\\x7f{\[\]^]')


def escape_partition(text: str) -> str:
    """Flink's ``PartitionPathUtils.escapePathName``: unsafe characters as ``%XX``."""
    return _UNSAFE.sub(lambda m: f"%{ord(m.group()):02X}", text)


class PartitionBucketAssigner(BucketAssigner):
    """The ``k1=v1/k2=v2`` directory of a row of a partitioned table."""

    def __init__(self, keys: tuple[str, ...], indexes: list[int], default_name: str) -> None:
        self.keys = keys
        self.indexes = indexes
        self.default_name = default_name

    def get_bucket_id(self, record: Any, wall_ms: int) -> str:
        parts = []
        for key, index in zip(self.keys, self.indexes, strict=True):
            value = record[index]
            text = self.default_name if value is None or value == "" else _partition_text(value)
            parts.append(f"{key}={escape_partition(text)}")
        return "/".join(parts)


def _partition_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class PartitionedWriter:
    """A ``FileSinkWriter`` fed one partition at a time (it buckets a batch by its first
    record), for a partitioned table."""

    def __init__(self, inner: FileSinkWriter, assigner: PartitionBucketAssigner) -> None:
        self.inner = inner
        self.assigner = assigner
        self.restore = inner.restore
        self.snapshot_state = inner.snapshot_state
        self.commit = inner.commit
        self.end_input = inner.end_input
        self.close = inner.close
        self.set_checkpointing = inner.set_checkpointing

    def write(self, records: list[Any]) -> None:
        groups: dict[str, list[Any]] = {}
        bucket = self.assigner.get_bucket_id
        for record in records:
            groups.setdefault(bucket(record, 0), []).append(record)
        for group in groups.values():
            self.inner.write(group)


class TableFileSink(Sink):
    """The filesystem table's sink: a ``FileSink`` writer, per partition when partitioned."""

    def __init__(self, settings: FileSinkSettings) -> None:
        self.settings = settings

    def create_writer(self, subtask_index: int, parallelism: int) -> Any:
        writer = FileSinkWriter(self.settings, subtask_index, parallelism)
        assigner = self.settings.bucket_assigner
        if isinstance(assigner, PartitionBucketAssigner):
            return PartitionedWriter(writer, assigner)
        return writer

    def __repr__(self) -> str:
        return f"TableFileSink({self.settings.base_path!r})"


class _BasePath(BucketAssigner):
    def get_bucket_id(self, record: Any, wall_ms: int) -> str:
        return ""


def _rolling_policy(options: Options) -> DefaultRollingPolicy:
    size = options.get_memory("sink.rolling-policy.file-size", 128 * MB)
    rollover = options.get_duration_ms("sink.rolling-policy.rollover-interval", 30 * MINUTE_MS)
    inactivity = options.get_duration_ms("sink.rolling-policy.inactivity-interval",
                                         30 * MINUTE_MS)
    options.get_duration_ms("sink.rolling-policy.check-interval", MINUTE_MS)
    return DefaultRollingPolicy(size, rollover or 1, inactivity or 1)


def _projected(write: Callable[[Any], str], data: list[int], width: int
               ) -> Callable[[Any], str]:
    if len(data) == width:
        return write

    def project(row: Any) -> str:
        projected = row_of([row[i] for i in data], row.get_row_kind())
        return write(projected)
    return project


def create_sink(stream: DataStream, spec: TableSpec, fields: tuple[Field, ...],
                context: registry.ConnectorContext) -> Any:
    found = table_format(spec)
    options = Options(spec.options)
    fields = sink_fields(spec, fields)
    data, partition = _split(spec, fields)
    write = found.writer([fields[i] for i in data], options, found.name)
    charset = options.get_str("raw.charset", "UTF-8") if found.name == "raw" else "UTF-8"
    encoder = TableRowEncoder(_projected(write, data, len(fields)), charset or "UTF-8")
    assigner: BucketAssigner = _BasePath()
    if partition:
        default_name = options.get_str("partition.default-name", DEFAULT_PARTITION)
        assigner = PartitionBucketAssigner(spec.partition_keys, partition,
                                           default_name or DEFAULT_PARTITION)
    settings = FileSinkSettings(_absolute(options.raw["path"]), encoder,
                                _rolling_policy(options), assigner,
                                OutputFileConfig(f"part-{uuid.uuid4()}", ""))
    return stream._add_sink("Sink: filesystem", TableFileSink(settings),
                            parallelism=sink_parallelism(spec))


class FileSystemFactory:
    identifier = "filesystem"

    def required_options(self) -> set[str]:
        return {"path", "format"}

    def optional_options(self) -> set[str]:
        patterns = {f"{name}.#" for name in formats.FORMATS}
        return (CONNECTOR_OPTIONS - {"connector", "path", "format"}) | patterns

    accepts_calc = True
    """The planner may fuse a Calc over the table into the source (``calc``)."""

    def create_source(self, spec: TableSpec, context: registry.ConnectorContext,
                      calc: Any = None) -> DataStream:
        return create_source(spec, context, calc)

    def create_sink(self, stream: DataStream, spec: TableSpec, fields: tuple[Field, ...],
                    context: registry.ConnectorContext) -> Any:
        return create_sink(stream, spec, fields, context)

    def accepts_updates(self, spec: TableSpec) -> bool:
        return table_format(spec).changelog


FACTORY = FileSystemFactory()
registry.FACTORIES[FACTORY.identifier] = FACTORY

__all__ = ["FileSystemFactory", "TableFileSink", "TableRowEncoder", "escape_partition"]
