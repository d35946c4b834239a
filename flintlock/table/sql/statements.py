"""What a Flink SQL statement says, as frozen dataclasses (the SQL front end's output).

``parser.parse_statements`` produces these; the binder and the TableEnvironment consume them.
DDL and commands are fully described here; the queries inside them stay sqlglot trees (node
types documented in ``dialect.py``). Names are tuples of their dotted parts as written
(``cat.db.t`` is ``('cat', 'db', 't')``; case kept, backticks removed). Keywords that name a
choice (``kind``, ``language``, explain details) are upper-case strings.

A column's type is written text until asked for: ``ColumnSpec.type`` reads it through
``flintlock.table.types.from_sql_string`` on access, so this module imports nothing of the
type system at import time and a type error surfaces where the binder reads the column.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from sqlglot import exp

if TYPE_CHECKING:
    from flintlock.table.types import DataType


def data_type_from_text(text: str, nullable: bool = True) -> DataType:
    """The DataType a type written as ``text`` names, made NOT NULL when ``nullable`` is
    False (a ``NOT NULL`` after the type, or a PRIMARY KEY column)."""
    from flintlock.table.types import from_sql_string

    data_type = from_sql_string(text)
    return data_type if nullable else data_type.not_null()


@dataclass(frozen=True, slots=True)
class ColumnSpec:
    """One column of CREATE TABLE: physical (``type_text``), computed (``expression``,
    ``c AS expr``) or metadata (``type_text`` and ``metadata_key``: ``c TYPE METADATA [FROM
    'k'] [VIRTUAL]``; ``metadata_key`` is the FROM key, else the column's own name)."""

    name: str
    type_text: str | None = None
    expression: exp.Expression | None = None
    metadata_key: str | None = None
    virtual: bool = False
    comment: str | None = None
    nullable: bool = True

    @property
    def type(self) -> DataType | None:
        """The declared type as a DataType (``None`` for a computed column)."""
        if self.type_text is None:
            return None
        return data_type_from_text(self.type_text, self.nullable)

    @property
    def is_metadata(self) -> bool:
        return self.metadata_key is not None

    @property
    def is_computed(self) -> bool:
        return self.expression is not None


@dataclass(frozen=True, slots=True)
class WatermarkSpec:
    """``WATERMARK FOR column AS expression``; ``column`` may be a nested path ``a.b``."""

    column: str
    expression: exp.Expression


@dataclass(frozen=True, slots=True)
class LikeSpec:
    """``LIKE source [(INCLUDING ALL, OVERWRITING OPTIONS, ...)]``: ``options`` are pairs such
    as ``('INCLUDING', 'ALL')`` in the order written."""

    source: tuple[str, ...]
    options: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class QueryStatement:
    """SELECT / WITH / UNION / VALUES."""

    query: exp.Query


@dataclass(frozen=True, slots=True)
class InsertStatement:
    """``INSERT INTO|OVERWRITE target [PARTITION (k = v, ..)] [(columns)] query``;
    ``partition`` holds the static partition's (name, literal) pairs."""

    target: tuple[str, ...]
    query: exp.Query
    columns: tuple[str, ...] | None = None
    overwrite: bool = False
    partition: tuple[tuple[str, exp.Expression], ...] = ()


@dataclass(frozen=True, slots=True)
class StatementSetStatement:
    """``EXECUTE STATEMENT SET BEGIN ...; END`` or ``BEGIN STATEMENT SET; ...; END;``."""

    inserts: tuple[InsertStatement, ...]


@dataclass(frozen=True, slots=True)
class CreateTableStatement:
    name: tuple[str, ...]
    columns: tuple[ColumnSpec, ...]
    watermark: WatermarkSpec | None
    primary_key: tuple[str, ...] | None
    partition_keys: tuple[str, ...]
    options: tuple[tuple[str, str], ...]
    temporary: bool = False
    if_not_exists: bool = False
    comment: str | None = None
    like: LikeSpec | None = None
    primary_key_name: str | None = None

    @property
    def options_dict(self) -> dict[str, str]:
        return dict(self.options)


@dataclass(frozen=True, slots=True)
class CreateViewStatement:
    name: tuple[str, ...]
    query: exp.Query
    columns: tuple[str, ...] | None = None
    temporary: bool = False
    if_not_exists: bool = False
    comment: str | None = None


FunctionLanguage = Literal["JAVA", "SCALA", "PYTHON"]


@dataclass(frozen=True, slots=True)
class CreateFunctionStatement:
    """``CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS] name AS 'path' [LANGUAGE ..]``;
    the language defaults to JAVA, as in Flink."""

    name: tuple[str, ...]
    class_path: str
    language: FunctionLanguage = "JAVA"
    temporary: bool = False
    system: bool = False
    if_not_exists: bool = False


DropKind = Literal["TABLE", "VIEW", "FUNCTION", "DATABASE", "CATALOG"]


@dataclass(frozen=True, slots=True)
class DropStatement:
    kind: DropKind
    name: tuple[str, ...]
    temporary: bool = False
    system: bool = False
    if_exists: bool = False


@dataclass(frozen=True, slots=True)
class SetStatement:
    """``SET`` (``key`` and ``value`` None: list the session's settings) or ``SET 'k' = 'v'``."""

    key: str | None = None
    value: str | None = None


@dataclass(frozen=True, slots=True)
class ResetStatement:
    """``RESET`` (all keys) or ``RESET 'k'``."""

    key: str | None = None


ShowKind = Literal[
    "TABLES", "VIEWS", "FUNCTIONS", "USER FUNCTIONS", "CATALOGS", "DATABASES",
    "CURRENT CATALOG", "CURRENT DATABASE", "CREATE TABLE", "CREATE VIEW", "COLUMNS",
    "MODULES", "FULL MODULES", "JOBS", "JARS",
]


@dataclass(frozen=True, slots=True)
class ShowStatement:
    """``SHOW <kind>``; ``name`` is the object of ``SHOW CREATE TABLE x`` / ``SHOW COLUMNS
    FROM x`` or the database of ``SHOW TABLES FROM db``; ``like`` the pattern of ``[NOT] LIKE
    'p'`` (``not_like`` for NOT LIKE)."""

    kind: ShowKind
    name: tuple[str, ...] | None = None
    like: str | None = None
    not_like: bool = False


@dataclass(frozen=True, slots=True)
class DescribeStatement:
    """``DESCRIBE|DESC [EXTENDED] name``."""

    name: tuple[str, ...]
    extended: bool = False


@dataclass(frozen=True, slots=True)
class ExplainStatement:
    """``EXPLAIN [PLAN FOR] statement`` or ``EXPLAIN d1, d2 statement`` with the details
    (``ESTIMATED_COST``, ``CHANGELOG_MODE``, ``JSON_EXECUTION_PLAN``, ``PLAN_ADVICE``)."""

    statement: Statement
    details: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class UseStatement:
    """``USE CATALOG c`` (database None), ``USE db`` (catalog None) or ``USE c.db``."""

    catalog: str | None
    database: str | None


Statement = (
    QueryStatement | InsertStatement | StatementSetStatement | CreateTableStatement
    | CreateViewStatement | CreateFunctionStatement | DropStatement | SetStatement
    | ResetStatement | ShowStatement | DescribeStatement | ExplainStatement | UseStatement
)
