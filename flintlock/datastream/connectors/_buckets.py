"""Where the ``FileSink`` puts records and how it names part files: PyFlink's
``BucketAssigner`` and ``OutputFileConfig``.

A bucket is a directory under the sink's base path; its id is the path relative to the base
(``""`` is the base path itself). ``BucketAssigner.date_time_bucket_assigner(format_str,
timezone_id)`` — the ``FileSink`` default, as in PyFlink — names the bucket after the
processing time at which a batch of records reaches the writer, formatted with a Java
``DateTimeFormatter`` pattern (letters ``yyyy yy MM dd HH mm ss`` are supported; anything in
single quotes or any other character is copied). ``base_path_bucket_assigner()`` writes
everything into the base path.

``OutputFileConfig`` gives committed part files the name ``<prefix>-<subtask>-<counter><suffix>``
(defaults ``part`` and ``""``). All values here are immutable and picklable.
"""

from __future__ import annotations

import datetime
import re
import zoneinfo
from typing import Any

_JAVA_FIELDS = {"yyyy": "%Y", "yy": "%y", "MM": "%m", "dd": "%d", "HH": "%H", "mm": "%M",
                "ss": "%S"}
_JAVA_TOKEN = re.compile(r"'[^']*'|yyyy|yy|MM|dd|HH|mm|ss|.", re.DOTALL)


def java_pattern_to_strftime(pattern: str) -> str:
    """``yyyy-MM-dd--HH`` → ``%Y-%m-%d--%H``; quoted text is copied without its quotes."""
    out = []
    for token in _JAVA_TOKEN.findall(pattern):
        if token in _JAVA_FIELDS:
            out.append(_JAVA_FIELDS[token])
        elif token.startswith("'") and len(token) > 1:
            out.append(token[1:-1].replace("%", "%%") or "'")
        else:
            out.append(token.replace("%", "%%"))
    return "".join(out)


class BucketAssigner:
    """Chooses the bucket (sub-directory of the base path) of a record."""

    @staticmethod
    def base_path_bucket_assigner() -> BasePathBucketAssigner:
        return BasePathBucketAssigner()

    @staticmethod
    def date_time_bucket_assigner(format_str: str = "yyyy-MM-dd--HH",
                                  timezone_id: str | None = None) -> DateTimeBucketAssigner:
        return DateTimeBucketAssigner(format_str, timezone_id)

    def get_bucket_id(self, record: Any, wall_ms: int) -> str:
        raise NotImplementedError


class BasePathBucketAssigner(BucketAssigner):
    def get_bucket_id(self, record: Any, wall_ms: int) -> str:
        return ""

    def __repr__(self) -> str:
        return "BasePathBucketAssigner()"


class DateTimeBucketAssigner(BucketAssigner):
    """Buckets named by the processing time (wall clock) in ``timezone_id`` (None: local)."""

    def __init__(self, format_str: str = "yyyy-MM-dd--HH", timezone_id: str | None = None) -> None:
        if not isinstance(format_str, str) or not format_str:
            raise ValueError(f"format_str must be a non-empty pattern, got {format_str!r}")
        self._format = format_str
        self._strftime = java_pattern_to_strftime(format_str)
        self._timezone_id = timezone_id
        if timezone_id is not None:
            zoneinfo.ZoneInfo(timezone_id)

    def get_bucket_id(self, record: Any, wall_ms: int) -> str:
        zone = zoneinfo.ZoneInfo(self._timezone_id) if self._timezone_id else None
        moment = datetime.datetime.fromtimestamp(wall_ms / 1000.0, tz=zone)
        return moment.strftime(self._strftime)

    def __repr__(self) -> str:
        return f"DateTimeBucketAssigner({self._format!r}, {self._timezone_id!r})"


class OutputFileConfig:
    """Prefix and suffix of part file names."""

    def __init__(self, part_prefix: str = "part", part_suffix: str = "") -> None:
        for name, value in (("part_prefix", part_prefix), ("part_suffix", part_suffix)):
            if not isinstance(value, str) or "/" in value:
                raise ValueError(f"{name} must be a str without '/', got {value!r}")
        self._prefix = part_prefix
        self._suffix = part_suffix

    @staticmethod
    def builder() -> OutputFileConfigBuilder:
        return OutputFileConfigBuilder()

    def get_part_prefix(self) -> str:
        return self._prefix

    def get_part_suffix(self) -> str:
        return self._suffix

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, OutputFileConfig)
                and (other._prefix, other._suffix) == (self._prefix, self._suffix))

    def __hash__(self) -> int:
        return hash((self._prefix, self._suffix))

    def __repr__(self) -> str:
        return f"OutputFileConfig({self._prefix!r}, {self._suffix!r})"


class OutputFileConfigBuilder:
    def __init__(self) -> None:
        self._prefix = "part"
        self._suffix = ""

    def with_part_prefix(self, prefix: str) -> OutputFileConfigBuilder:
        self._prefix = prefix
        return self

    def with_part_suffix(self, suffix: str) -> OutputFileConfigBuilder:
        self._suffix = suffix
        return self

    def build(self) -> OutputFileConfig:
        return OutputFileConfig(self._prefix, self._suffix)
