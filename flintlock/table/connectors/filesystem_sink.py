"""The ``filesystem`` table's sink: rows encoded by the table's format into ``FileSink`` part
files, per ``k=v`` partition directory when the table is ``PARTITIONED BY``, and the partition
commit that follows (Flink's ``FileSystemTableSink`` in its streaming shape).

Files: a part-file prefix ``part-<uuid>`` generated per sink, so committed files are named
``part-<uuid>-<subtask>-<counter>`` as Flink's streaming file sink names them, and
``part-<uuid>-task-<subtask>-file-<counter>`` in batch mode, as Flink's batch sink names them
(one counter per subtask across partitions). Part files become visible when the checkpoint
covering them completes, or at the end of a bounded input without checkpoints (exactly once;
``flintlock.datastream.connectors._file_sink``). Rolling: ``sink.rolling-policy.file-size``
(128 MB), ``.rollover-interval`` (30 min), ``.inactivity-interval`` (30 min), and always at a
checkpoint; ``.check-interval`` is read and checked (the time-based rolling is looked at when
records arrive and at checkpoints).

Partitions: each row goes into ``path/k1=v1/k2=v2/`` without the partition columns in the
file; a NULL or empty value is ``partition.default-name`` (``__DEFAULT_PARTITION__``); a value
is written as Flink writes it (``partition_text``: a DATE as its epoch day, as Flink's
partition computer writes the internal value) and escaped as Flink's
``PartitionPathUtils.escapePathName`` (``a/b`` -> ``a%2Fb``).

Partition commit (``sink.partition-commit.policy.kind`` set on a partitioned table): the
writers report after each commit (``PartitionCommitInfo``) to one ``PartitionCommitter``
subtask, which commits a partition once all writers' files in it are published and the
trigger allows it (``partition_committer``, ``partition_commit``).

Built on the driver; writers and the committer run on task threads.
"""

from __future__ import annotations

import datetime
import posixpath
import re
import uuid
from collections.abc import Callable
from typing import Any

import fsspec

from flintlock.common.operator_spec import OperatorKind, OperatorSpec
from flintlock.common.serialization import Encoder
from flintlock.common.types import row_of
from flintlock.datastream.connectors._buckets import BucketAssigner, OutputFileConfig
from flintlock.datastream.connectors._file_sink import (
    FileSinkSettings,
    FileSinkWriter,
    PendingFile,
)
from flintlock.datastream.connectors._rolling import DefaultRollingPolicy
from flintlock.datastream.connectors.base import Sink
from flintlock.datastream.data_stream import DataStream
from flintlock.table.connectors._options import Options
from flintlock.table.connectors.partition_commit import PartitionCommitSettings
from flintlock.table.connectors.partition_committer import (
    END_INPUT,
    CommitterSettings,
    PartitionCommitInfo,
    PartitionCommitterSink,
)
from flintlock.table.formatting.java_values import java_double
from flintlock.table.plan.nodes import TableSpec

DEFAULT_PARTITION = "__DEFAULT_PARTITION__"
MB = 1024 * 1024
MINUTE_MS = 60 * 1000
SINK_OPTIONS = frozenset({
    "sink.rolling-policy.file-size", "sink.rolling-policy.rollover-interval",
    "sink.rolling-policy.inactivity-interval", "sink.rolling-policy.check-interval",
    "sink.parallelism", "partition.default-name", "sink.shuffle-by-partition.enable",
    "auto-compaction",
})


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


_EPOCH_DAY = datetime.date(1970, 1, 1)


def partition_text(value: Any) -> str:
    """A partition value as Flink writes it: the ``toString`` of its *internal* value — so a
    DATE is its number of days since 1970-01-01 (``19781``, not ``2024-02-28``), a TIMESTAMP
    Java's ``LocalDateTime`` text (``2020-05-01T10:00``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime.datetime):
        return _java_local_date_time(value)
    if isinstance(value, datetime.date):
        return str((value - _EPOCH_DAY).days)
    if isinstance(value, float):
        return java_double(value)  # Java's Double.toString: 1.0E20, 0.5
    return str(value)


def _java_local_date_time(value: datetime.datetime) -> str:
    """Java's ``LocalDateTime.toString``: seconds and the fraction only when not zero."""
    text = value.strftime("%Y-%m-%dT%H:%M")
    if value.second or value.microsecond:
        text += f":{value.second:02d}"
    if value.microsecond:
        micros = f"{value.microsecond:06d}"
        text += "." + (micros[:3] if micros.endswith("000") else micros)
    return text


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
            text = self.default_name if value is None or value == "" else partition_text(value)
            parts.append(f"{escape_partition(key)}={escape_partition(text)}")
        return "/".join(parts)


class PartitionedWriter:
    """A ``FileSinkWriter`` fed one partition at a time (it buckets a batch by its first
    record); with ``reports``, it sends a ``PartitionCommitInfo`` after each commit naming the
    partitions whose files that commit (or the restore before it) published."""

    def __init__(self, inner: FileSinkWriter, assigner: BucketAssigner, root: str,
                 subtask: int, parallelism: int, reports: bool) -> None:
        self.inner = inner
        self.assigner = assigner
        self.root = root
        self.subtask = subtask
        self.parallelism = parallelism
        self.reports = reports
        self.snapshot_state = inner.snapshot_state
        self.close = inner.close
        self._emit: Callable[[list[Any]], None] | None = None
        self._published: set[str] = set()
        self._checkpointing = False
        self._ended = False

    def set_output(self, emit: Callable[[list[Any]], None]) -> None:
        """The runtime's hook: where records this sink sends downstream go."""
        self._emit = emit

    def set_checkpointing(self, enabled: bool) -> None:
        self._checkpointing = enabled
        self.inner.set_checkpointing(enabled)

    def restore(self, state: list[Any]) -> None:
        self._note(self.inner.restore(state))

    def write(self, records: list[Any]) -> None:
        groups: dict[str, list[Any]] = {}
        bucket = self.assigner.get_bucket_id
        for record in records:
            groups.setdefault(bucket(record, 0), []).append(record)
        for group in groups.values():
            self.inner.write(group)

    def commit(self, checkpoint_id: int) -> None:
        self._note(self.inner.commit(checkpoint_id))
        self._report(checkpoint_id)

    def end_input(self) -> None:
        self._note(self.inner.end_input())
        self._ended = True
        if not self._checkpointing:
            self._report(END_INPUT)

    def _note(self, files: list[PendingFile]) -> None:
        for pending in files:
            relative = posixpath.relpath(posixpath.dirname(pending.final), self.root)
            self._published.add("" if relative == "." else relative)

    def _report(self, checkpoint_id: int) -> None:
        if not self.reports or self._emit is None:
            return
        partitions, self._published = tuple(sorted(self._published)), set()
        self._emit([PartitionCommitInfo(checkpoint_id, self.subtask, self.parallelism,
                                        partitions, self._ended)])


class TableFileSink(Sink):
    """The filesystem table's sink: a ``FileSink`` writer, per partition when partitioned."""

    def __init__(self, settings: FileSinkSettings, reports: bool = False) -> None:
        self.settings = settings
        self.reports = reports

    def create_writer(self, subtask_index: int, parallelism: int) -> Any:
        writer = FileSinkWriter(self.settings, subtask_index, parallelism)
        assigner = self.settings.bucket_assigner
        if isinstance(assigner, PartitionBucketAssigner) or self.reports:
            root = fsspec.core.url_to_fs(self.settings.base_path)[1]
            return PartitionedWriter(writer, assigner, root, subtask_index, parallelism,
                                     self.reports)
        return writer

    def __repr__(self) -> str:
        return f"TableFileSink({self.settings.base_path!r})"


class _BasePath(BucketAssigner):
    def get_bucket_id(self, record: Any, wall_ms: int) -> str:
        return ""


def rolling_policy(options: Options) -> DefaultRollingPolicy:
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


def file_sink_settings(base: str, options: Options, write: Callable[[Any], str],
                       data: list[int], partition: list[int], spec: TableSpec, charset: str,
                       batch: bool) -> FileSinkSettings:
    """The ``FileSink`` settings of a table's sink (``write`` encodes the data columns)."""
    encoder = TableRowEncoder(_projected(write, data, len(data) + len(partition)), charset)
    assigner: BucketAssigner = _BasePath()
    if partition:
        default_name = options.get_str("partition.default-name", DEFAULT_PARTITION)
        assigner = PartitionBucketAssigner(spec.partition_keys, partition,
                                           default_name or DEFAULT_PARTITION)
    return FileSinkSettings(base, encoder, rolling_policy(options), assigner,
                            OutputFileConfig(f"part-{uuid.uuid4()}", ""),
                            task_file_names=batch)


def add_sink(stream: DataStream, spec: TableSpec, settings: FileSinkSettings,
             options: Options, parallelism: int | None, streaming: bool = True) -> Any:
    """The sink after ``stream``; with a commit policy on a partitioned table (or, in batch
    mode, on any table: Flink's batch sink commits the table's directory too), the writers
    followed by the partition committer (parallelism 1)."""
    commit = PartitionCommitSettings.from_options(options)
    if not commit.enabled or (streaming and not spec.partition_keys):
        return stream._add_sink("Sink: filesystem", TableFileSink(settings),
                                parallelism=parallelism)
    writer = OperatorSpec(OperatorKind.SINK, output_type=None,
                          sink=TableFileSink(settings, reports=True))
    infos = stream._output_of("Sink: filesystem", writer,
                              [(stream_input, 0) for stream_input in stream._inputs],
                              parallelism=parallelism)
    committer = PartitionCommitterSink(CommitterSettings(
        settings.base_path, spec.path, spec.partition_keys, commit))
    return infos._add_sink("PartitionCommitter", committer, parallelism=1)


__all__ = [
    "DEFAULT_PARTITION",
    "SINK_OPTIONS",
    "PartitionBucketAssigner",
    "PartitionedWriter",
    "TableFileSink",
    "TableRowEncoder",
    "add_sink",
    "escape_partition",
    "file_sink_settings",
    "partition_text",
]
