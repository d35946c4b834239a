"""The SQL front end: Flink SQL text to statements (DDL and commands as frozen dataclasses,
queries and expressions as sqlglot trees parsed with flintlock's own Flink dialect).

Imports sqlglot, ``flintlock.table.errors`` and (lazily, when a column's type is read)
``flintlock.table.types``; nothing else of the Table layer. The binder imports this package.
"""

from flintlock.table.sql.dialect import FLINK, Flink, data_type_node, type_text
from flintlock.table.sql.parser import parse_expression, parse_statement, parse_statements
from flintlock.table.sql.statements import (
    ColumnSpec,
    CreateFunctionStatement,
    CreateTableStatement,
    CreateViewStatement,
    DescribeStatement,
    DropStatement,
    ExplainStatement,
    InsertStatement,
    LikeSpec,
    QueryStatement,
    ResetStatement,
    SetStatement,
    ShowStatement,
    Statement,
    StatementSetStatement,
    UseStatement,
    WatermarkSpec,
)

__all__ = [
    "FLINK",
    "ColumnSpec",
    "CreateFunctionStatement",
    "CreateTableStatement",
    "CreateViewStatement",
    "DescribeStatement",
    "DropStatement",
    "ExplainStatement",
    "Flink",
    "InsertStatement",
    "LikeSpec",
    "QueryStatement",
    "ResetStatement",
    "SetStatement",
    "ShowStatement",
    "Statement",
    "StatementSetStatement",
    "UseStatement",
    "WatermarkSpec",
    "data_type_node",
    "parse_expression",
    "parse_statement",
    "parse_statements",
    "type_text",
]
