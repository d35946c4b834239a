"""PyFlink's ``pyflink.datastream.connectors.file_system``: ``FileSource`` (text lines from
files, bounded or continuously monitored) and ``FileSink`` (row-format part files, exactly
once by two-phase commit).

Reading::

    source = (FileSource.for_record_stream_format(StreamFormat.text_line_format(), "/data/in")
              .monitor_continuously(Duration.of_seconds(10))   # or leave out: bounded
              .build())
    lines = env.from_source(source, WatermarkStrategy.no_watermarks(), "files")

Writing::

    sink = (FileSink.for_row_format("/data/out", Encoder.simple_string_encoder())
            .with_rolling_policy(RollingPolicy.default_rolling_policy(part_size=1 << 20))
            .with_output_file_config(OutputFileConfig.builder().with_part_suffix(".txt").build())
            .build())
    lines.sink_to(sink)

How splits, positions, part files and commits work is described in ``_file_source`` and
``_file_sink``; the guarantees and what is not supported are in docs/connectors.md. The
builders are used in the user's program; the built ``FileSource`` and ``FileSink`` are
immutable and travel with the job.
"""

from __future__ import annotations

import os
from typing import Any

from flintlock.common.serialization import Encoder, checked_charset
from flintlock.common.time import Duration
from flintlock.datastream.connectors._buckets import (
    BasePathBucketAssigner,
    BucketAssigner,
    DateTimeBucketAssigner,
    OutputFileConfig,
    OutputFileConfigBuilder,
)
from flintlock.datastream.connectors._enumeration import DealingEnumerator, EnumeratorSnapshot
from flintlock.datastream.connectors._file_sink import FileSinkSettings, FileSinkWriter
from flintlock.datastream.connectors._file_source import FileDiscovery, TextLineReader
from flintlock.datastream.connectors._rolling import (
    DefaultRollingPolicy,
    OnCheckpointRollingPolicy,
    RollingPolicy,
)
from flintlock.datastream.connectors.base import Sink, Source
from flintlock.datastream.unsupported import unsupported


class StreamFormat:
    """How a ``FileSource`` turns a file into records; only text lines are supported."""

    def __init__(self, charset_name: str = "UTF-8") -> None:
        self._charset = checked_charset(charset_name)

    @staticmethod
    def text_line_format(charset_name: str = "UTF-8") -> StreamFormat:
        """One record per line, without the line terminator, decoded with ``charset_name``."""
        return StreamFormat(charset_name)

    @property
    def charset(self) -> str:
        return self._charset

    def __repr__(self) -> str:
        return f"StreamFormat.text_line_format({self._charset!r})"


def _absolute(path: str) -> str:
    """A relative local path made absolute where the job is built: the TaskManagers' working
    directory is not the user's (a Spark executor's work directory; the archives' directory
    with ``add_python_archive``). URLs (``scheme://...``) stay as they are."""
    return path if "://" in path else os.path.abspath(path)


def _is_bulk(file_format: Any) -> bool:
    """A bulk format makes its own split reader (``create_split_reader()``)."""
    return callable(getattr(file_format, "create_split_reader", None))


def _check_paths(paths: tuple[Any, ...]) -> tuple[str, ...]:
    if not paths:
        raise ValueError("FileSource needs at least one path")
    for path in paths:
        if not isinstance(path, str) or not path:
            raise TypeError(f"FileSource paths must be non-empty str, got {path!r}")
    return tuple(_absolute(path) for path in paths)


class FileSourceBuilder:
    """``FileSource.for_record_stream_format(...)`` returns one; ``build()`` ends it."""

    def __init__(self, stream_format: Any, paths: tuple[str, ...]) -> None:
        if not isinstance(stream_format, StreamFormat) and not _is_bulk(stream_format):
            raise TypeError(f"expected a StreamFormat or a bulk format (e.g. "
                            f"ParquetColumnarRowInputFormat), got {stream_format!r}")
        self._format = stream_format
        self._paths = _check_paths(paths)
        self._interval_ms: int | None = None

    def monitor_continuously(self, discovery_interval: Duration) -> FileSourceBuilder:
        """Unbounded: list the paths again every ``discovery_interval`` for new files."""
        if not isinstance(discovery_interval, Duration) or discovery_interval.to_milliseconds() < 1:
            raise ValueError(f"discovery_interval must be a Duration of at least 1 ms, got "
                             f"{discovery_interval!r}")
        self._interval_ms = discovery_interval.to_milliseconds()
        return self

    def process_static_file_set(self) -> FileSourceBuilder:
        """Bounded (the default): read the files present at the start, then end."""
        self._interval_ms = None
        return self

    set_file_enumerator = unsupported("custom file enumerators")
    set_split_assigner = unsupported("custom split assigners")

    def build(self) -> FileSource:
        return FileSource(self._format, self._paths, self._interval_ms)


class FileSource(Source):
    """Reads text files line by line, or files of a bulk format (Parquet); one split per file
    (see ``_file_source``)."""

    def __init__(self, stream_format: Any, paths: tuple[str, ...],
                 discovery_interval_ms: int | None = None) -> None:
        self._format = stream_format
        self._paths = _check_paths(paths)
        self._interval_ms = discovery_interval_ms

    @staticmethod
    def for_record_stream_format(stream_format: StreamFormat, *paths: str) -> FileSourceBuilder:
        return FileSourceBuilder(stream_format, tuple(paths))

    @staticmethod
    def for_bulk_file_format(bulk_format: Any, *paths: str) -> FileSourceBuilder:
        """Files read by a bulk format (``ParquetColumnarRowInputFormat``), one split per
        file, its position the number of records already read."""
        if not _is_bulk(bulk_format):
            raise TypeError(f"expected a bulk format (e.g. ParquetColumnarRowInputFormat), got "
                            f"{bulk_format!r}")
        return FileSourceBuilder(bulk_format, tuple(paths))

    def is_bounded(self) -> bool:
        return self._interval_ms is None

    @property
    def paths(self) -> tuple[str, ...]:
        return self._paths

    def create_enumerator(self, parallelism: int,
                          restored_state: EnumeratorSnapshot | None) -> DealingEnumerator:
        seen = restored_state.discovery if restored_state is not None else None
        discovery = FileDiscovery(self._paths, continuous=not self.is_bounded(),
                                  seen=seen or frozenset())
        return DealingEnumerator(parallelism, restored_state, discovery,
                                 bounded=self.is_bounded(),
                                 discovery_interval_ms=self._interval_ms)

    def create_reader(self, subtask_index: int, parallelism: int) -> Any:
        if _is_bulk(self._format):
            return self._format.create_split_reader()
        return TextLineReader(self._format.charset)

    def __repr__(self) -> str:
        mode = "bounded" if self.is_bounded() else f"every {self._interval_ms} ms"
        return f"FileSource({', '.join(self._paths)}; {mode})"


class RowFormatBuilder:
    """``FileSink.for_row_format(...)`` returns one; ``build()`` ends it."""

    def __init__(self, base_path: str, encoder: Encoder) -> None:
        if not isinstance(base_path, str) or not base_path:
            raise TypeError(f"FileSink base_path must be a non-empty str, got {base_path!r}")
        if not isinstance(encoder, Encoder):
            raise TypeError(f"FileSink needs an Encoder, got {encoder!r}")
        self._base_path = _absolute(base_path)
        self._encoder = encoder
        self._policy: RollingPolicy = DefaultRollingPolicy()
        self._assigner: BucketAssigner = DateTimeBucketAssigner()
        self._output_config = OutputFileConfig()

    def with_bucket_check_interval(self, interval: int) -> RowFormatBuilder:
        """Accepted for compatibility: time-based rolling is checked when records arrive and
        at every checkpoint, not by a timer."""
        if isinstance(interval, bool) or not isinstance(interval, int) or interval <= 0:
            raise ValueError(f"interval must be a positive number of ms, got {interval!r}")
        return self

    def with_bucket_assigner(self, assigner: BucketAssigner) -> RowFormatBuilder:
        if not isinstance(assigner, (BasePathBucketAssigner, DateTimeBucketAssigner)):
            raise TypeError(f"expected BucketAssigner.base_path_bucket_assigner() or "
                            f"date_time_bucket_assigner(), got {assigner!r}")
        self._assigner = assigner
        return self

    def with_rolling_policy(self, policy: RollingPolicy) -> RowFormatBuilder:
        if not isinstance(policy, (DefaultRollingPolicy, OnCheckpointRollingPolicy)):
            raise TypeError(f"expected RollingPolicy.default_rolling_policy(...) or "
                            f"on_checkpoint_rolling_policy(), got {policy!r}")
        self._policy = policy
        return self

    def with_output_file_config(self, output_file_config: OutputFileConfig) -> RowFormatBuilder:
        if not isinstance(output_file_config, OutputFileConfig):
            raise TypeError(f"expected an OutputFileConfig, got {output_file_config!r}")
        self._output_config = output_file_config
        return self

    enable_compact = unsupported("file compaction")

    def disable_compact(self) -> RowFormatBuilder:
        return self

    def build(self) -> FileSink:
        return FileSink(FileSinkSettings(self._base_path, self._encoder, self._policy,
                                         self._assigner, self._output_config))


_RowFormatBuilder = RowFormatBuilder


class BulkFormatBuilder:
    """``FileSink.for_bulk_format(...)`` returns one: part files roll on every checkpoint
    (bulk formats cannot be appended to once closed), so there is no rolling policy to set."""

    def __init__(self, base_path: str, writer_factory: Any) -> None:
        if not isinstance(base_path, str) or not base_path:
            raise TypeError(f"FileSink base_path must be a non-empty str, got {base_path!r}")
        if not callable(getattr(writer_factory, "create", None)):
            raise TypeError("FileSink.for_bulk_format needs a bulk writer factory (e.g. "
                            f"ParquetBulkWriters.for_row_type(...)), got {writer_factory!r}")
        self._base_path = _absolute(base_path)
        self._factory = writer_factory
        self._assigner: BucketAssigner = DateTimeBucketAssigner()
        self._output_config = OutputFileConfig()

    def with_bucket_check_interval(self, interval: int) -> BulkFormatBuilder:
        """Accepted for compatibility (bulk parts roll at checkpoints only)."""
        if isinstance(interval, bool) or not isinstance(interval, int) or interval <= 0:
            raise ValueError(f"interval must be a positive number of ms, got {interval!r}")
        return self

    def with_bucket_assigner(self, assigner: BucketAssigner) -> BulkFormatBuilder:
        if not isinstance(assigner, (BasePathBucketAssigner, DateTimeBucketAssigner)):
            raise TypeError(f"expected BucketAssigner.base_path_bucket_assigner() or "
                            f"date_time_bucket_assigner(), got {assigner!r}")
        self._assigner = assigner
        return self

    def with_rolling_policy(self, policy: RollingPolicy) -> BulkFormatBuilder:
        if not isinstance(policy, OnCheckpointRollingPolicy):
            raise TypeError("bulk formats roll on checkpoints only: use "
                            f"RollingPolicy.on_checkpoint_rolling_policy(), got {policy!r}")
        return self

    def with_output_file_config(self, output_file_config: OutputFileConfig
                                ) -> BulkFormatBuilder:
        if not isinstance(output_file_config, OutputFileConfig):
            raise TypeError(f"expected an OutputFileConfig, got {output_file_config!r}")
        self._output_config = output_file_config
        return self

    enable_compact = unsupported("file compaction")

    def disable_compact(self) -> BulkFormatBuilder:
        return self

    def build(self) -> FileSink:
        return FileSink(FileSinkSettings(self._base_path, Encoder(), OnCheckpointRollingPolicy(),
                                         self._assigner, self._output_config, self._factory))


class FileSink(Sink):
    """Writes records as lines into part files under a base path, exactly once."""

    RowFormatBuilder = RowFormatBuilder

    def __init__(self, settings: FileSinkSettings) -> None:
        self._settings = settings

    @staticmethod
    def for_row_format(base_path: str, encoder: Encoder) -> _RowFormatBuilder:
        return _RowFormatBuilder(base_path, encoder)

    @staticmethod
    def for_bulk_format(base_path: str, writer_factory: Any) -> BulkFormatBuilder:
        """Part files written by a bulk format (``ParquetBulkWriters.for_row_type(...)``)."""
        return BulkFormatBuilder(base_path, writer_factory)

    @property
    def settings(self) -> FileSinkSettings:
        return self._settings

    def create_writer(self, subtask_index: int, parallelism: int) -> FileSinkWriter:
        return FileSinkWriter(self._settings, subtask_index, parallelism)

    def __repr__(self) -> str:
        return f"FileSink({self._settings.base_path!r})"


__all__ = [
    "BucketAssigner",
    "BulkFormatBuilder",
    "DefaultRollingPolicy",
    "FileSink",
    "FileSource",
    "FileSourceBuilder",
    "OnCheckpointRollingPolicy",
    "OutputFileConfig",
    "OutputFileConfigBuilder",
    "RollingPolicy",
    "StreamFormat",
]
