"""flintlock's Table API and SQL, laid out like PyFlink's ``pyflink.table``: replace ``pyflink``
by ``flintlock`` in a Table program's imports.

Layers (DESIGN.md §8; tests/unit/test_layering.py): this package may import
``flintlock.common`` and ``flintlock.datastream``; nothing below it imports it. Inside, SQL text
goes through ``sql`` (syntax), ``plan`` (binder, logical plan, changelog modes) and ``planner``
(DataStream transformations); ``codegen`` compiles expressions to Python functions;
``connectors`` are the table sources and sinks. docs/table.md describes what is supported.

Names load lazily (a TaskManager that runs a compiled SQL function imports only what it calls).
"""

from __future__ import annotations

import importlib
from typing import Any

from flintlock.common.types import Row, RowKind  # noqa: F401  (PyFlink exports them here)

_LAZY = {
    "DataTypes": "flintlock.table.types",
    "EnvironmentSettings": "flintlock.table.environment_settings",
    "TableEnvironment": "flintlock.table.table_environment",
    "StreamTableEnvironment": "flintlock.table.table_environment",
    "TableConfig": "flintlock.table.table_config",
    "Table": "flintlock.table.table",
    "GroupedTable": "flintlock.table.table",
    "AggregatedTable": "flintlock.table.table",
    "FlatAggregateTable": "flintlock.table.table",
    "GroupWindowedTable": "flintlock.table.table",
    "WindowGroupedTable": "flintlock.table.table",
    "OverWindowedTable": "flintlock.table.table",
    "TableResult": "flintlock.table.table_result",
    "ResultKind": "flintlock.table.result_kind",
    "StatementSet": "flintlock.table.statement_set",
    "TablePipeline": "flintlock.table.statement_set",
    "ExplainDetail": "flintlock.table.explain_detail",
    "SqlDialect": "flintlock.table.sql_dialect",
    "Schema": "flintlock.table.schema",
    "TableSchema": "flintlock.table.table_schema",
    "TableDescriptor": "flintlock.table.table_descriptor",
    "FormatDescriptor": "flintlock.table.table_descriptor",
    "ChangelogMode": "flintlock.table.changelog_mode",
    "Expression": "flintlock.table.expression",
    "ScalarFunction": "flintlock.table.udf",
    "TableFunction": "flintlock.table.udf",
    "AggregateFunction": "flintlock.table.udf",
    "TableAggregateFunction": "flintlock.table.udf",
    "FunctionContext": "flintlock.table.udf",
    "AsyncScalarFunction": "flintlock.table.udf",
    "ListView": "flintlock.table.data_view",
    "MapView": "flintlock.table.data_view",
    "DataView": "flintlock.table.data_view",
    "ValidationError": "flintlock.table.errors",
    "TableException": "flintlock.table.errors",
    "UserDefinedType": "flintlock.table.types",
}

__all__ = sorted([*_LAZY, "Row", "RowKind"])


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'flintlock.table' has no attribute '{name}'")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
