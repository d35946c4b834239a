"""What PyFlink has and flintlock does not (yet), as data, and the import errors that say so.

- ``MISSING``: whole modules. Importing one raises ``MissingPyFlinkModuleError`` (a
  ``ModuleNotFoundError``) naming PyFlink's module and pointing to docs/api.md, instead of a
  bare ``No module named ...`` that reads like a broken installation.
- ``MISSING_NAMES``: single names of modules flintlock has. ``from flintlock.x import Name``
  (or ``flintlock.x.Name``) raises ``MissingPyFlinkNameError``, an ``ImportError`` that names
  ``Name`` and PyFlink's module. It is deliberately not an ``AttributeError``: ``from x import
  Name`` turns an ``AttributeError`` into its generic "cannot import name" and the reason is
  lost. So ``hasattr(module, "Name")`` raises for a listed name rather than return False.

One finder on ``sys.meta_path`` (put first when ``flintlock`` is imported) answers for both:

- for a module in ``MISSING`` it first asks the ordinary path finder, and raises only when
  that finds nothing (so a listed module that comes into existence simply imports;
  ``tests/surface`` then reports the stale entry);
- for a module in ``MISSING_NAMES``, and for the package of a module in ``MISSING``, it returns
  the ordinary spec with its loader wrapped: after the module has run, a module-level
  ``__getattr__`` is installed that raises for the listed names (and missing submodules) and
  otherwise defers to the module's own ``__getattr__`` (PEP 562), if it has one.

A finder put in front of this one later — the TaskManagers' job-code loader, for flintlock's
parent-first modules (``flintlock.usercode.loader``) — bypasses the wrapping: a guarded module
first imported while it is active raises Python's plain "cannot import name" for a listed
name. The modules users import are imported on the driver, and by the runtime before that.

The manifest of PyFlink's names and the test that keeps these tables honest (every PyFlink
name imports from flintlock with the same kind, or is listed here and raises naming itself)
are in ``tests/surface/``. Everything here is immutable after import; no thread owns anything.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

MISSING: dict[str, str] = {
    "flintlock.common.config_options": "the typed option builder ConfigOptions",
    "flintlock.common.io": "Java input formats (InputFormat)",
    "flintlock.common.job_id": "JobID objects (flintlock's job ids are str)",
    "flintlock.datastream.connectors.cassandra": "the Cassandra sink",
    "flintlock.datastream.connectors.dynamic_kafka": "the dynamic Kafka source",
    "flintlock.datastream.connectors.elasticsearch": "the Elasticsearch sinks",
    "flintlock.datastream.connectors.kinesis": "the Kinesis connectors",
    "flintlock.datastream.connectors.pulsar": "the Pulsar connectors",
    "flintlock.datastream.connectors.rabbitmq": "the RabbitMQ connectors",
    "flintlock.datastream.formats.orc": "the ORC format",
    "flintlock.table.compiled_plan": "compiled plans (CompiledPlan: compile_plan_sql, "
                                     "execute_plan)",
    "flintlock.table.descriptors": "the legacy connector descriptors (Schema, Rowtime; use "
                                   "TableDescriptor and flintlock.table.Schema)",
    "flintlock.table.functions": "PyFlink's Python implementations of the built-in aggregate "
                                 "functions (SQL's COUNT, SUM, MIN, ... run as flintlock's "
                                 "own aggregates)",
    "flintlock.table.model_descriptor": "model descriptors (ML models in the catalog)",
    "flintlock.table.module": "table modules (Module, ModuleEntry, HiveModule; LOAD MODULE)",
    "flintlock.table.plan_reference": "plan references (FilePlanReference, ...) for compiled "
                                      "plans",
    "flintlock.table.resolved_expression": "Java's ResolvedExpression wrapped for Python",
}
"""Module name -> what PyFlink offers there."""

_LEGACY_KAFKA = "the legacy Kafka connector (use KafkaSource / KafkaSink)"
_JAVA_BACKEND = "a Java state backend or checkpoint storage wrapped for Python"
_FILE_EXTRAS = "the file connector's {} (docs/connectors.md lists what FileSource/FileSink do)"
_JAVA_CATALOG = "the Java catalog API's {} (flintlock's catalog is its own in-memory one)"
_EVENT_TIME = "{}, an event-time function (event time in the Table API is issue 32)"
_JSON_CONSTRUCTION = "{}, a JSON construction function (JSON_VALUE, JSON_EXISTS, JSON_QUOTE " \
                     "and JSON_STRING are supported)"

MISSING_NAMES: dict[str, dict[str, str]] = {
    "flintlock.common": {
        "AssignerWithPeriodicWatermarksWrapper": "the legacy watermark assigner wrapper "
                                                 "(use WatermarkStrategy)",
        "ConfigOptions": "the typed option builder (set options by key in a Configuration)",
        "JobID": "JobID objects (JobClient.get_job_id() returns the id as a str)",
    },
    "flintlock.common.serialization": {
        "BulkWriterFactory": "bulk writer factories for the FileSink (the formats' own "
                             "writers are in flintlock.datastream.formats)",
        "RowFieldExtractorSchema": "Kafka's row field extractor schema",
    },
    "flintlock.common.watermark_strategy": {
        "AssignerWithPeriodicWatermarksWrapper": "the legacy watermark assigner wrapper "
                                                 "(use WatermarkStrategy)",
    },
    "flintlock.datastream": {
        "CustomCheckpointStorage": _JAVA_BACKEND,
        "CustomStateBackend": _JAVA_BACKEND,
        "PredefinedOptions": "RocksDB's predefined Java options",
    },
    "flintlock.datastream.checkpoint_storage": {"CustomCheckpointStorage": _JAVA_BACKEND},
    "flintlock.datastream.state_backend": {
        "CustomStateBackend": _JAVA_BACKEND,
        "PredefinedOptions": "RocksDB's predefined Java options",
    },
    "flintlock.datastream.connectors.file_system": {
        "BulkFormat": _FILE_EXTRAS.format("Java bulk formats"),
        "FileCompactStrategy": _FILE_EXTRAS.format("compaction"),
        "FileCompactor": _FILE_EXTRAS.format("compaction"),
        "FileEnumeratorProvider": _FILE_EXTRAS.format("Java file enumerators"),
        "FileSplitAssignerProvider": _FILE_EXTRAS.format("Java split assigners"),
        "StreamingFileSink": "the legacy StreamingFileSink (use FileSink)",
    },
    "flintlock.datastream.connectors.kafka": {
        "FlinkKafkaConsumer": _LEGACY_KAFKA,
        "FlinkKafkaProducer": _LEGACY_KAFKA,
        "Semantic": _LEGACY_KAFKA,
    },
    "flintlock.datastream.formats.parquet": {
        "AvroParquetReaders": "Avro records read from Parquet files",
        "AvroParquetWriters": "Avro records written to Parquet files",
    },
    "flintlock.datastream.functions": {
        "AsyncFunctionDescriptor": "PyFlink's internal descriptor of an async function",
    },
    "flintlock.datastream.state": {
        "OperatorStateStore": "the operator state store (operator state of user functions)",
    },
    "flintlock.table": {
        "CompiledPlan": "compiled plans (compile_plan_sql, execute_plan)",
        "Module": "table modules (LOAD MODULE)",
        "ModuleEntry": "table modules (LOAD MODULE)",
        "PlanReference": "plan references for compiled plans",
    },
    "flintlock.table.catalog": {
        "Catalog": _JAVA_CATALOG.format("Catalog"),
        "CatalogBaseTable": _JAVA_CATALOG.format("tables"),
        "CatalogColumnStatistics": _JAVA_CATALOG.format("column statistics"),
        "CatalogDatabase": _JAVA_CATALOG.format("databases"),
        "CatalogDescriptor": _JAVA_CATALOG.format("catalog descriptors (CREATE CATALOG)"),
        "CatalogFunction": _JAVA_CATALOG.format("functions"),
        "CatalogPartition": _JAVA_CATALOG.format("partitions"),
        "CatalogPartitionSpec": _JAVA_CATALOG.format("partition specs"),
        "CatalogTableStatistics": _JAVA_CATALOG.format("table statistics"),
        "Constraint": "the constraint base class (UniqueConstraint, the only kind, is there)",
        "HiveCatalog": "the Hive catalog",
        "Procedure": _JAVA_CATALOG.format("procedures (CALL)"),
    },
    "flintlock.table.expressions": {
        "convert_tz": "convert_tz (CONVERT_TZ, with Java's time zone ids)",
        "current_database": "current_database() (CURRENT_DATABASE() in SQL)",
        "current_watermark": _EVENT_TIME.format("current_watermark"),
        "descriptor": "descriptor(), the column list argument of process table functions",
        "json": _JSON_CONSTRUCTION.format("json"),
        "json_array": _JSON_CONSTRUCTION.format("json_array"),
        "json_array_agg": _JSON_CONSTRUCTION.format("json_array_agg"),
        "json_object": _JSON_CONSTRUCTION.format("json_object"),
        "json_object_agg": _JSON_CONSTRUCTION.format("json_object_agg"),
        "source_watermark": _EVENT_TIME.format("source_watermark"),
        "temporal_overlaps": "temporal_overlaps (interval arithmetic over time points)",
        "timestamp_diff": "timestamp_diff (TIMESTAMPDIFF)",
        "to_timestamp_ltz": "to_timestamp_ltz (TO_TIMESTAMP_LTZ)",
    },
}
"""Module name -> {name PyFlink has there -> what it is}."""


def pyflink_name(flintlock_name: str) -> str:
    """``flintlock.x.y`` -> ``pyflink.x.y``."""
    return "pyflink" + flintlock_name[len("flintlock"):]


class MissingPyFlinkModuleError(ModuleNotFoundError):
    """A PyFlink module that flintlock does not have."""


class MissingPyFlinkNameError(ImportError):
    """A name of a PyFlink module that flintlock's module of the same path does not have.

    ``name`` is the module (as for every ``ImportError``), ``missing_name`` the name."""

    def __init__(self, message: str, *, name: str, missing_name: str) -> None:
        super().__init__(message, name=name)
        self.missing_name = missing_name

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_name_error, (self.msg, self.name, self.missing_name))


def _rebuild_name_error(message: str, name: str, missing_name: str) -> MissingPyFlinkNameError:
    return MissingPyFlinkNameError(message, name=name, missing_name=missing_name)


def missing_name_error(module: str, name: str) -> MissingPyFlinkNameError:
    what = MISSING_NAMES[module][name]
    return MissingPyFlinkNameError(
        f"cannot import {name} from {module}: flintlock does not have {what} (PyFlink's "
        f"{pyflink_name(module)}.{name}); docs/api.md lists what flintlock supports and what "
        "it does not", name=module, missing_name=name)


def missing_module_error(fullname: str) -> MissingPyFlinkModuleError:
    top = next(name for name in MISSING if fullname == name or fullname.startswith(name + "."))
    return MissingPyFlinkModuleError(
        f"{fullname}: flintlock does not have {MISSING[top]} yet (PyFlink's "
        f"{pyflink_name(top)}); docs/api.md lists what flintlock supports and what it does "
        "not", name=fullname)


def _is_missing_module(fullname: str) -> bool:
    return any(fullname == name or fullname.startswith(name + ".") for name in MISSING)


_GUARDED = frozenset(MISSING_NAMES) | {name.rpartition(".")[0] for name in MISSING}
"""Modules that get a ``__getattr__``: those with missing names, and the packages of missing
modules (``from flintlock.datastream.connectors import jdbc`` reaches the package's
``__getattr__`` after the import system swallowed the submodule's ``ModuleNotFoundError``)."""


def _guard(module: ModuleType) -> None:
    """Installs the ``__getattr__`` that raises for the module's listed names."""
    module_name = module.__name__
    missing = MISSING_NAMES.get(module_name, {})
    own: Callable[[str], Any] | None = module.__dict__.get("__getattr__")

    def __getattr__(name: str) -> Any:
        if name in missing:
            raise missing_name_error(module_name, name)
        if _is_missing_module(f"{module_name}.{name}"):
            raise missing_module_error(f"{module_name}.{name}")
        if own is not None:
            return own(name)
        raise AttributeError(f"module {module_name!r} has no attribute {name!r}")

    module.__getattr__ = __getattr__  # type: ignore[method-assign]


class _GuardingLoader(importlib.abc.Loader):
    """The ordinary loader of a module in ``MISSING_NAMES``, plus ``_guard`` after it ran."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        _guard(module)

    def __getattr__(self, name: str) -> Any:  # get_source, get_code, is_package, ...
        return getattr(self._loader, name)


class _PyFlinkSurfaceFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("flintlock."):
            return None
        if fullname in _GUARDED:
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is not None and spec.loader is not None:
                spec.loader = _GuardingLoader(spec.loader)
            return spec
        if not _is_missing_module(fullname) or (
                importlib.machinery.PathFinder.find_spec(fullname, path) is not None):
            return None
        raise missing_module_error(fullname)


def install() -> None:
    """Puts the finder first on ``sys.meta_path``, once (idempotent)."""
    if not any(isinstance(finder, _PyFlinkSurfaceFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _PyFlinkSurfaceFinder())
