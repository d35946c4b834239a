"""Partition commit of a partitioned ``filesystem`` table: the options, the partition time
extractor and the commit policies (Flink's ``FileSystemConnectorOptions`` partition-commit
keys, ``PartitionTimeExtractor`` and ``PartitionCommitPolicy``).

A partition is *committed* when its data is complete: after every subtask's files in it are
committed and the trigger says so (``partition_committer``). Committing a partition runs the
table's policies, in the order ``sink.partition-commit.policy.kind`` lists them:

* ``success-file`` writes an empty file ``sink.partition-commit.success-file.name``
  (``_SUCCESS``) into the partition's directory, overwriting one already there;
* ``custom`` calls ``commit(context)`` on an instance of ``sink.partition-commit.policy.class``,
  here a Python class path (``package.module.ClassName``; Flink takes a Java class), built
  with the strings of ``sink.partition-commit.policy.class.parameters`` (``;``-separated) as
  its arguments; ``context`` is a ``PartitionCommitContext``;
* ``metastore`` is refused with Flink's streaming error (``PartitionCommitPolicyError``, a
  ``ValidationError``): it is for Hive tables, and there is no Hive metastore here.

Partition time (trigger ``partition-time``): the default extractor builds a timestamp string
from the partition values — the first value, or ``partition.time-extractor.timestamp-pattern``
with every ``$key`` replaced by the key's value — and parses it with
``partition.time-extractor.timestamp-formatter`` (a Java ``DateTimeFormatter`` pattern: ``yyyy
MM dd HH mm ss`` and literals) or, without one, Flink's lenient ``yyyy-[M]M-[d]d[ [H]H:[m]m:[s]s
[.fraction]]``. ``partition.time-extractor.kind`` = ``custom`` takes a Python class path in
``partition.time-extractor.class`` whose ``extract(keys, values)`` returns a
``datetime.datetime``.

Everything here is a value or a pure function, built on the driver and shipped to the
committer subtask.
"""

from __future__ import annotations

import datetime
import importlib
import re
import zoneinfo
from dataclasses import dataclass
from typing import Any

import fsspec

from flintlock.datastream.connectors._buckets import java_pattern_to_strftime
from flintlock.table.connectors._options import Options
from flintlock.table.errors import ValidationError

TRIGGER = "sink.partition-commit.trigger"
DELAY = "sink.partition-commit.delay"
WATERMARK_TIME_ZONE = "sink.partition-commit.watermark-time-zone"
POLICY_KIND = "sink.partition-commit.policy.kind"
POLICY_CLASS = "sink.partition-commit.policy.class"
POLICY_CLASS_PARAMETERS = "sink.partition-commit.policy.class.parameters"
SUCCESS_FILE_NAME = "sink.partition-commit.success-file.name"
EXTRACTOR_KIND = "partition.time-extractor.kind"
EXTRACTOR_CLASS = "partition.time-extractor.class"
TIMESTAMP_PATTERN = "partition.time-extractor.timestamp-pattern"
TIMESTAMP_FORMATTER = "partition.time-extractor.timestamp-formatter"
OPTION_KEYS = frozenset({
    TRIGGER, DELAY, WATERMARK_TIME_ZONE, POLICY_KIND, POLICY_CLASS, POLICY_CLASS_PARAMETERS,
    SUCCESS_FILE_NAME, EXTRACTOR_KIND, EXTRACTOR_CLASS, TIMESTAMP_PATTERN, TIMESTAMP_FORMATTER,
})

PROCESS_TIME = "process-time"
PARTITION_TIME = "partition-time"

_LENIENT = re.compile(r"\s*(\d{1,10})-(\d{1,2})-(\d{1,2})"
                      r"(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,9}))?)?\s*$")


class PartitionCommitPolicyError(ValidationError):
    """A partition commit policy that cannot be built (unknown kind, missing class)."""


def load_class(path: str, option: str) -> Any:
    """The class at ``package.module.ClassName`` (a typed error naming ``option`` if not)."""
    module_name, _, name = path.rpartition(".")
    if not module_name:
        raise PartitionCommitPolicyError(
            f"'{option}' must be a Python class path 'package.module.ClassName', got '{path}'")
    try:
        return getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as exc:
        raise PartitionCommitPolicyError(
            f"Could not load class '{path}' of option '{option}': {exc}") from exc


# -- partition time ------------------------------------------------------------------------------

def _lenient_timestamp(text: str) -> datetime.datetime:
    match = _LENIENT.match(text)
    if match is None:
        raise ValueError(f"Text '{text}' could not be parsed as a timestamp")
    year, month, day, hour, minute, second, fraction = match.groups()
    micros = int((fraction or "0").ljust(9, "0")[:6])
    return datetime.datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0),
                             int(second or 0), micros)


def parse_partition_time(text: str, formatter: str | None) -> datetime.datetime:
    """A partition's timestamp string as a local date-time (a date: its midnight)."""
    if formatter is None:
        return _lenient_timestamp(text)
    pattern = java_pattern_to_strftime(formatter)
    try:
        return datetime.datetime.strptime(text, pattern)
    except ValueError as exc:
        raise ValueError(f"Text '{text}' could not be parsed with pattern '{formatter}'"
                         ) from exc


@dataclass(frozen=True, slots=True)
class DefaultPartTimeExtractor:
    """Flink's default extractor: the first value, or the pattern with ``$key`` replaced."""

    pattern: str | None = None
    formatter: str | None = None

    def extract(self, keys: list[str], values: list[str]) -> datetime.datetime:
        if self.pattern is None:
            text = values[0]
        else:
            text = self.pattern
            for key, value in zip(keys, values, strict=True):
                text = text.replace("$" + key, value)
        return parse_partition_time(text, self.formatter)


def epoch_millis(moment: datetime.datetime, zone: str) -> int:
    """A local date-time in ``zone`` as epoch milliseconds."""
    tz = datetime.UTC if zone.upper() == "UTC" else _zone(zone)
    aware = moment.replace(tzinfo=tz) if moment.tzinfo is None else moment
    return (aware - _EPOCH) // datetime.timedelta(milliseconds=1)


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_GMT_OFFSET = re.compile(r"^(?:GMT|UTC)?([+-])(\d{1,2}):?(\d{2})?$")


def _zone(name: str) -> datetime.tzinfo:
    match = _GMT_OFFSET.match(name)
    if match is not None:
        sign, hours, minutes = match.groups()
        delta = datetime.timedelta(hours=int(hours), minutes=int(minutes or 0))
        return datetime.timezone(-delta if sign == "-" else delta)
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValidationError(
            "The supported watermark time zone is either a full name such as "
            "'America/Los_Angeles', or a custom time zone id such as 'GMT-08:00', but "
            f"configured time zone is '{name}'.") from None


# -- policies ------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class PartitionCommitContext:
    """What a commit policy knows of the partition it commits (Flink's
    ``PartitionCommitPolicy.Context``; the method names are Flink's, in snake case)."""

    catalog: str
    database: str
    table: str
    keys: tuple[str, ...]
    values: tuple[str, ...]
    path: str

    def catalog_name(self) -> str:
        return self.catalog

    def database_name(self) -> str:
        return self.database

    def table_name(self) -> str:
        return self.table

    def partition_keys(self) -> list[str]:
        return list(self.keys)

    def partition_values(self) -> list[str]:
        return list(self.values)

    def partition_path(self) -> str:
        return self.path

    def partition_spec(self) -> dict[str, str]:
        return dict(zip(self.keys, self.values, strict=True))


class PartitionCommitPolicy:
    """Base of the commit policies; a custom policy subclasses it (or just has ``commit``)."""

    SUCCESS_FILE = "success-file"
    METASTORE = "metastore"
    CUSTOM = "custom"

    def commit(self, context: PartitionCommitContext) -> None:
        raise NotImplementedError


class SuccessFileCommitPolicy(PartitionCommitPolicy):
    """Writes an empty success file into the partition's directory."""

    def __init__(self, file_name: str = "_SUCCESS") -> None:
        self.file_name = file_name

    def commit(self, context: PartitionCommitContext) -> None:
        fs, directory = fsspec.core.url_to_fs(context.path)
        fs.makedirs(directory, exist_ok=True)
        with fs.open(f"{directory.rstrip('/')}/{self.file_name}", "wb"):
            pass

    def __repr__(self) -> str:
        return f"SuccessFileCommitPolicy({self.file_name!r})"


@dataclass(frozen=True, slots=True)
class PartitionCommitSettings:
    """The partition-commit options of one table, checked on the driver."""

    trigger: str = PROCESS_TIME
    delay_ms: int = 0
    watermark_time_zone: str = "UTC"
    policy_kinds: tuple[str, ...] = ()
    policy_class: str | None = None
    policy_parameters: tuple[str, ...] = ()
    success_file_name: str = "_SUCCESS"
    extractor_class: str | None = None
    timestamp_pattern: str | None = None
    timestamp_formatter: str | None = None

    @property
    def enabled(self) -> bool:
        """Flink adds the committer only when a policy kind is set."""
        return bool(self.policy_kinds)

    def policies(self) -> list[Any]:
        """The policies, in the order of ``policy.kind`` (built where they run)."""
        built: list[Any] = []
        for kind in self.policy_kinds:
            if kind == PartitionCommitPolicy.SUCCESS_FILE:
                built.append(SuccessFileCommitPolicy(self.success_file_name))
            else:  # custom (checked in from_options)
                cls = load_class(self.policy_class or "", POLICY_CLASS)
                built.append(cls(*self.policy_parameters))
        return built

    def extractor(self) -> Any:
        if self.extractor_class is not None:
            return load_class(self.extractor_class, EXTRACTOR_CLASS)()
        return DefaultPartTimeExtractor(self.timestamp_pattern, self.timestamp_formatter)

    @staticmethod
    def from_options(options: Options) -> PartitionCommitSettings:
        kinds = tuple(k.strip().lower() for k in (options.get_str(POLICY_KIND) or "").split(",")
                      if k.strip())
        _check_kinds(kinds, options)
        zone = options.get_str(WATERMARK_TIME_ZONE, "UTC") or "UTC"
        if zone.upper() != "UTC":
            _zone(zone)
        extractor_kind = options.get_choice(EXTRACTOR_KIND, ("default", "custom"), "default")
        extractor_class = options.get_str(EXTRACTOR_CLASS)
        if extractor_kind == "custom" and not extractor_class:
            raise PartitionCommitPolicyError(
                f"'{EXTRACTOR_CLASS}' must be set when '{EXTRACTOR_KIND}' is 'custom'")
        parameters = options.get_str(POLICY_CLASS_PARAMETERS)
        return PartitionCommitSettings(
            trigger=options.get_choice(TRIGGER, (PROCESS_TIME, PARTITION_TIME), PROCESS_TIME),
            delay_ms=options.get_duration_ms(DELAY, 0) or 0,
            watermark_time_zone=zone,
            policy_kinds=kinds,
            policy_class=options.get_str(POLICY_CLASS),
            policy_parameters=tuple(parameters.split(";")) if parameters else (),
            success_file_name=options.get_str(SUCCESS_FILE_NAME, "_SUCCESS") or "_SUCCESS",
            extractor_class=extractor_class if extractor_kind == "custom" else None,
            timestamp_pattern=options.get_str(TIMESTAMP_PATTERN),
            timestamp_formatter=options.get_str(TIMESTAMP_FORMATTER))


def _check_kinds(kinds: tuple[str, ...], options: Options) -> None:
    for kind in kinds:
        if kind == PartitionCommitPolicy.METASTORE:  # Flink's streaming sink's words
            raise PartitionCommitPolicyError(
                "Can not configure a 'metastore' partition commit policy for a file system "
                "table. You can only configure 'metastore' partition commit policy for a hive "
                "table.")
        if kind not in (PartitionCommitPolicy.SUCCESS_FILE, PartitionCommitPolicy.CUSTOM):
            raise PartitionCommitPolicyError(f"Unsupported partition commit policy: {kind}")
        if kind == PartitionCommitPolicy.CUSTOM:
            path = options.get_str(POLICY_CLASS)
            if not path:
                raise PartitionCommitPolicyError(
                    f"'{POLICY_CLASS}' must be set when '{POLICY_KIND}' includes 'custom'")
            load_class(path, POLICY_CLASS)


__all__ = [
    "OPTION_KEYS",
    "DefaultPartTimeExtractor",
    "PartitionCommitContext",
    "PartitionCommitPolicy",
    "PartitionCommitPolicyError",
    "PartitionCommitSettings",
    "SuccessFileCommitPolicy",
    "epoch_millis",
    "parse_partition_time",
]
