"""PyFlink's ``TableEnvironment`` and ``StreamTableEnvironment``: the entry point of the Table
API and SQL.

A table environment owns a catalog (``catalog_manager``), a ``TableConfig`` and, for each job it
runs, a ``StreamExecutionEnvironment`` configured from that config (``StreamTableEnvironment``
uses the one it was created with, so tables and DataStreams mix in one job). ``sql_query`` and
the Table API build logical plans; ``execute_sql`` runs DDL on the catalog and submits INSERTs;
``Table.execute()`` and ``TableResult.collect()/print()`` run a query and bring its changelog
back through ``execute_and_collect``. Statements are parsed by ``flintlock.table.sql`` and bound
by ``plan.sql_binder``; jobs are planned by ``planner.translate``.

Used from the thread that builds jobs; the jobs run on the DataStream runtime (embedded Spark,
a cluster, or TaskManager threads in tests).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable, Sequence
from typing import Any

from flintlock.common.config import Configuration
from flintlock.common.options import execution
from flintlock.common.options import table as table_options
from flintlock.common.types import Row
from flintlock.datastream.stream_execution_environment import StreamExecutionEnvironment
from flintlock.table import types as t
from flintlock.table.catalog_manager import CatalogEntry, CatalogManager, split_path
from flintlock.table.environment_settings import EnvironmentSettings
from flintlock.table.errors import TableException, UnsupportedFeatureError, ValidationError
from flintlock.table.explain_detail import ExplainDetail
from flintlock.table.plan import nodes as n
from flintlock.table.plan.changelog import check_sink
from flintlock.table.plan.joins import coerce
from flintlock.table.plan.resolver import ExpressionResolver, Scope, cast_to
from flintlock.table.plan.rex import InputRef, Rex
from flintlock.table.plan.sql_binder import QueryBinder
from flintlock.table.sql import statements as st
from flintlock.table.sql.parser import parse_expression, parse_statement, parse_statements
from flintlock.table.table import Table
from flintlock.table.table_config import TableConfig
from flintlock.table.table_result import TableResult
from flintlock.table.udf import as_registered_function as _user_function
from flintlock.table.udf import load_python_function

_LOG = logging.getLogger(__name__)

__all__ = ["StreamTableEnvironment", "TableEnvironment"]


class TableEnvironment:
    """The Table API's entry point (``TableEnvironment.create(settings)``)."""

    def __init__(self, settings: EnvironmentSettings,
                 stream_env: StreamExecutionEnvironment | None = None) -> None:
        self._settings = settings
        if stream_env is not None:
            configuration = stream_env.get_configuration()
        else:
            configuration = Configuration.load()
            configuration.add_all(settings.get_configuration())
        self._config = TableConfig(configuration)
        self._stream_env = stream_env
        self._catalog = CatalogManager(settings.get_built_in_catalog_name(),
                                       settings.get_built_in_database_name())
        self._unnamed = itertools.count()
        self._python_files: list[tuple[str, Any]] = []

    @staticmethod
    def create(environment_settings: EnvironmentSettings | Configuration) -> TableEnvironment:
        if isinstance(environment_settings, Configuration):
            environment_settings = EnvironmentSettings.from_configuration(environment_settings)
        return TableEnvironment(environment_settings)

    # -- configuration --------------------------------------------------------------------------

    def get_config(self) -> TableConfig:
        return self._config

    def _is_streaming(self) -> bool:
        mode = self._config.get_configuration().get(execution.RUNTIME_MODE)
        return mode != "batch"

    # -- what the binder asks -------------------------------------------------------------------

    def relation(self, path: tuple[str, ...]) -> n.PlanNode:
        entry = self._catalog.get(path)
        if entry.view is not None:
            return entry.view
        return scan_of(entry.table)  # type: ignore[arg-type]

    def user_function(self, name: str) -> Any | None:
        return self._catalog.user_function(name)

    def _binder(self) -> QueryBinder:
        return QueryBinder(self)

    # -- tables from data -----------------------------------------------------------------------

    def from_elements(self, elements: Iterable[Any], schema: Any = None,
                      verify_schema: bool = True) -> Table:
        """A table of the given rows; names and types inferred as PyFlink infers them."""
        elements = list(elements)
        if isinstance(schema, t.RowType):
            row_type = schema
            if verify_schema:
                verify = t._create_type_verifier(schema)
                for element in elements:
                    verify(element)
        elif isinstance(schema, t.DataType):
            row_type = t.RowType([t.RowField("value", schema)])
            elements = [(e,) for e in elements]
        elif schema is None or isinstance(schema, (list, tuple)):
            row_type = t.infer_schema_from_data(elements, names=schema)
        else:
            raise TypeError(f"schema should be RowType, list, tuple or None, but got: {schema}")
        converter = t._create_converter(row_type)
        rows = tuple(tuple(_row_values(converter(e), row_type)) for e in elements)
        fields = n.fields_of(list(row_type.names), list(row_type.field_types()))
        return Table(self, n.Values(fields, rows, "PythonInputFormatTableSource"))

    def from_path(self, path: str) -> Table:
        parts = split_path(path)
        table = Table(self, self.relation(parts), parts[-1])
        table._catalog_path = parts
        return table

    def from_descriptor(self, descriptor: Any) -> Table:
        name = f"*anonymous_{descriptor.get_options().get('connector', 'table')}$" \
               f"{next(self._unnamed)}*"
        spec = table_spec_from_descriptor(self, (name,), descriptor)
        return Table(self, scan_of(spec))

    def from_pandas(self, pdf: Any, schema: Any = None, splits_num: int = 1) -> Table:
        names = list(pdf.columns) if schema is None or isinstance(schema, t.RowType) else (
            list(schema))
        records = [tuple(_pandas_value(v) for v in row) for row in pdf.itertuples(index=False)]
        if isinstance(schema, t.RowType):
            return self.from_elements(records, schema)
        if schema is None and len(records) > 0:
            return self.from_elements(records, names)
        inferred = t.RowType([t.RowField(str(name), _pandas_type(pdf[name].dtype))
                              for name in pdf.columns])
        return self.from_elements(records, inferred)

    # -- catalog --------------------------------------------------------------------------------

    def create_temporary_view(self, view_path: str, table_or_data_stream: Any,
                              *fields_or_schema: Any) -> None:
        if isinstance(table_or_data_stream, Table):
            plan = table_or_data_stream._plan
        else:
            plan = self._stream_table(table_or_data_stream, fields_or_schema)._plan
        path = self._catalog.qualify(split_path(view_path))
        self._catalog.register(CatalogEntry(path, view=plan, temporary=True))

    def create_view(self, view_path: str, table: Table, ignore_if_exists: bool = False) -> None:
        path = self._catalog.qualify(split_path(view_path))
        self._catalog.register(CatalogEntry(path, view=table._plan), ignore_if_exists)

    def create_temporary_table(self, path: str, descriptor: Any,
                               ignore_if_exists: bool = False) -> None:
        qualified = self._catalog.qualify(split_path(path))
        spec = table_spec_from_descriptor(self, qualified, descriptor)
        self._catalog.register(CatalogEntry(qualified, table=spec, temporary=True),
                               ignore_if_exists)

    def create_table(self, path: str, descriptor: Any, ignore_if_exists: bool = False) -> None:
        qualified = self._catalog.qualify(split_path(path))
        spec = table_spec_from_descriptor(self, qualified, descriptor)
        self._catalog.register(CatalogEntry(qualified, table=spec), ignore_if_exists)

    def create_temporary_function(self, path: str, function: Any) -> None:
        self._catalog.register_function(split_path(path)[-1], _user_function(function))

    def create_temporary_system_function(self, name: str, function: Any) -> None:
        self._catalog.register_function(name, _user_function(function), system=True)

    def create_function(self, path: str, function_class_name: Any,
                        ignore_if_exists: bool | None = None) -> None:
        function = function_class_name
        if isinstance(function, str):
            function = load_python_function(function)
        self._catalog.register_function(split_path(path)[-1], _user_function(function),
                                        temporary=False, ignore_if_exists=bool(ignore_if_exists))

    def create_java_function(self, path: str, function_class_name: str,
                             ignore_if_exists: bool | None = None) -> None:
        raise UnsupportedFeatureError("Java user-defined functions",
                                      "flintlock runs Python functions only")

    def create_java_temporary_function(self, path: str, function_class_name: str) -> None:
        self.create_java_function(path, function_class_name)

    def create_java_temporary_system_function(self, name: str, function_class_name: str
                                              ) -> None:
        self.create_java_function(name, function_class_name)

    def drop_function(self, path: str) -> bool:
        return self._catalog.drop_function(split_path(path)[-1], temporary=False)

    def drop_temporary_function(self, path: str) -> bool:
        return self._catalog.drop_function(split_path(path)[-1])

    def drop_temporary_system_function(self, name: str) -> bool:
        return self._catalog.drop_function(name, system=True)

    def drop_temporary_table(self, table_path: str) -> bool:
        return self._catalog.drop(split_path(table_path), temporary=True, view=False,
                                  if_exists=True)

    def drop_table(self, table_path: str, ignore_if_not_exists: bool = True) -> bool:
        return self._catalog.drop(split_path(table_path), temporary=False, view=False,
                                  if_exists=ignore_if_not_exists)

    def drop_temporary_view(self, view_path: str) -> bool:
        return self._catalog.drop(split_path(view_path), temporary=True, view=True,
                                  if_exists=True)

    def drop_view(self, view_path: str, ignore_if_not_exists: bool = True) -> bool:
        return self._catalog.drop(split_path(view_path), temporary=False, view=True,
                                  if_exists=ignore_if_not_exists)

    def list_catalogs(self) -> list[str]:
        return sorted(self._catalog.catalogs)

    def list_databases(self) -> list[str]:
        return sorted(self._catalog.catalogs[self._catalog.current_catalog])

    def list_tables(self) -> list[str]:
        return self._catalog.names()

    def list_views(self) -> list[str]:
        return self._catalog.names(views_only=True)

    def list_temporary_tables(self) -> list[str]:
        return self._catalog.names(temporary_only=True)

    def list_temporary_views(self) -> list[str]:
        return self._catalog.names(temporary_only=True, views_only=True)

    def list_user_defined_functions(self) -> list[str]:
        return self._catalog.function_names()

    def list_functions(self) -> list[str]:
        from flintlock.table.plan import functions

        builtins = {name.lower() for name in functions.REGISTRY if name.isidentifier()}
        return sorted(builtins | set(self._catalog.function_names()))

    def list_modules(self) -> list[str]:
        return ["core"]

    def get_current_catalog(self) -> str:
        return self._catalog.current_catalog

    def get_current_database(self) -> str:
        return self._catalog.current_database

    def use_catalog(self, catalog_name: str) -> None:
        if catalog_name not in self._catalog.catalogs:
            raise ValidationError(f"A catalog with name [{catalog_name}] does not exist.")
        self._catalog.current_catalog = catalog_name

    def use_database(self, database_name: str) -> None:
        if database_name not in self._catalog.catalogs[self._catalog.current_catalog]:
            raise ValidationError(
                f"A database with name [{database_name}] does not exist in the catalog: "
                f"[{self._catalog.current_catalog}].")
        self._catalog.current_database = database_name

    def _register_unnamed(self, table: Table) -> str:
        name = f"UnnamedTable${next(self._unnamed)}"
        path = self._catalog.qualify((name,))
        self._catalog.register(CatalogEntry(path, view=table._plan, temporary=True))
        return name

    # -- SQL --------------------------------------------------------------------------------------

    def sql_query(self, query: str) -> Table:
        statement = parse_statement(query)
        if not isinstance(statement, st.QueryStatement):
            raise ValidationError(
                "Unsupported SQL query! sql_query() only accepts a single SQL query.")
        return Table(self, self._binder().bind(statement.query))

    def execute_sql(self, stmt: str) -> TableResult:
        statement = parse_statement(stmt)
        from flintlock.table.statements_runner import run_statement

        return run_statement(self, statement)

    def explain_sql(self, stmt: str, *extra_details: ExplainDetail) -> str:
        statement = parse_statement(stmt)
        from flintlock.table.explain import explain_plan

        if isinstance(statement, st.QueryStatement):
            return explain_plan([self._binder().bind(statement.query)], extra_details)
        if isinstance(statement, st.InsertStatement):
            return explain_plan([self._insert_plan(statement)], extra_details)
        raise ValidationError("explain_sql() explains a query or an INSERT statement")

    def create_statement_set(self) -> Any:
        from flintlock.table.statement_set import StatementSet

        return StatementSet(self)

    def execute_script(self, script: str) -> list[TableResult]:
        """Every statement of a script in order (what ``flintlock sql -f`` runs)."""
        from flintlock.table.statements_runner import run_statement

        return [run_statement(self, statement) for statement in parse_statements(script)]

    # -- INSERT -----------------------------------------------------------------------------------

    def _insert_plan(self, statement: st.InsertStatement) -> n.Sink:
        query = self._binder().bind(statement.query)
        return self.sink_plan(statement.target, query, statement.columns, statement.overwrite)

    def sink_plan(self, target: Sequence[str], query: n.PlanNode,
                  columns: Sequence[str] | None = None, overwrite: bool = False) -> n.Sink:
        entry = self._catalog.get(tuple(target))
        if entry.table is None:
            raise ValidationError(f"'{'.'.join(entry.path)}' is a view; INSERT needs a table")
        spec = entry.table
        physical = spec.physical
        if columns is not None:
            query = _reorder_for_columns(query, physical, columns)
        if len(query.fields) != len(physical):
            raise ValidationError(
                f"Column types of query result and sink for '{'.'.join(entry.path)}' do not "
                f"match.\nCause: Different number of columns.\n\nQuery schema: "
                f"{_schema_text(query.fields)}\nSink schema:  {_schema_text(physical)}")
        for field, target_field in zip(query.fields, physical, strict=True):
            if not _assignable(field.type, target_field.type):
                raise ValidationError(
                    f"Column types of query result and sink for '{'.'.join(entry.path)}' do "
                    f"not match.\nCause: Incompatible types for sink column "
                    f"'{target_field.name}' at position {physical.index(target_field)}.\n\n"
                    f"Query schema: {_schema_text(query.fields)}\nSink schema:  "
                    f"{_schema_text(physical)}")
        query = coerce(query, [f.type for f in physical])
        from flintlock.table.connectors.registry import factory

        sink_factory = factory(spec.options.get("connector"), spec.name)
        if self._is_streaming():  # a BATCH job writes final rows only
            check_sink(".".join(entry.path), bool(sink_factory.accepts_updates(spec)), query)
        return n.Sink(query.fields, query, spec, overwrite)

    # -- running jobs -----------------------------------------------------------------------------

    def _job_environment(self) -> StreamExecutionEnvironment:
        if self._stream_env is not None:
            return self._stream_env
        configuration = Configuration(self._config.get_configuration())
        env = StreamExecutionEnvironment(configuration)
        parallelism = configuration.get(table_options.DEFAULT_PARALLELISM)
        if parallelism > 0:
            env.set_parallelism(parallelism)
        return env

    def _translator(self, env: StreamExecutionEnvironment) -> Any:
        from flintlock.table.connectors.registry import ConnectorContext, Connectors
        from flintlock.table.planner.translate import MiniBatch, Translator

        configuration = self._config.get_configuration()
        context = ConnectorContext(env, self._is_streaming(), env.get_parallelism(),
                                   configuration, self._config.get_local_timezone())
        ttl = configuration.get(table_options.STATE_TTL)
        return Translator(env, Connectors(context), self._is_streaming(), int(ttl or 0),
                          MiniBatch.of(configuration))

    def _execute_query(self, plan: n.PlanNode, job_name: str | None = None) -> TableResult:
        env = self._job_environment()
        stream = self._translator(env).final(plan)
        iterator = stream.execute_and_collect(job_name or _job_name("collect", plan))
        return TableResult.for_query(self, plan, iterator)

    def _execute_inserts(self, sinks: Sequence[n.Sink], job_name: str | None = None
                         ) -> TableResult:
        from flintlock.table.planner.update_kinds import aggregates_without_update_before

        env = self._job_environment()
        translator = self._translator(env)
        translator.no_update_before = aggregates_without_update_before(sinks)
        for sink in sinks:
            translator.stream(sink)
        names = [".".join(sink.table.path) for sink in sinks]
        client = env.execute_async(job_name or "insert-into_" + ",".join(names))
        result = TableResult.for_insert(names, client)
        if self._config.get_configuration().get(table_options.DML_SYNC):
            result.wait()
        return result

    def execute_plan(self, plan_reference: Any) -> TableResult:
        raise UnsupportedFeatureError("compiled plans (execute_plan)")

    # -- Python dependencies (as the DataStream environment's) -------------------------------------

    def add_python_file(self, file_path: str) -> None:
        self._with_job_settings(lambda env: env.add_python_file(file_path))

    def set_python_requirements(self, requirements_file_path: str,
                                requirements_cache_dir: str | None = None) -> None:
        self._with_job_settings(lambda env: env.set_python_requirements(
            requirements_file_path, requirements_cache_dir))

    def add_python_archive(self, archive_path: str, target_dir: str | None = None) -> None:
        self._with_job_settings(lambda env: env.add_python_archive(archive_path, target_dir))

    def _with_job_settings(self, change: Any) -> None:
        """Records a Python dependency as a DataStream environment does, in the configuration
        this table environment's jobs are made from (the user's environment for a
        ``StreamTableEnvironment``)."""
        if self._stream_env is not None:
            change(self._stream_env)
            return
        env = StreamExecutionEnvironment(self._config.get_configuration())
        change(env)
        self._config.get_configuration().add_all(env.get_configuration())

    def _stream_table(self, stream: Any, fields_or_schema: Sequence[Any]) -> Table:
        raise ValidationError("a DataStream becomes a table in a StreamTableEnvironment")


class StreamTableEnvironment(TableEnvironment):
    """A table environment over a ``StreamExecutionEnvironment``: tables and DataStreams mix."""

    @staticmethod
    def create(  # type: ignore[override]  # PyFlink's signature differs from the base's
            stream_execution_environment: StreamExecutionEnvironment | None = None,
               environment_settings: EnvironmentSettings | None = None
               ) -> StreamTableEnvironment:
        if stream_execution_environment is None:
            stream_execution_environment = StreamExecutionEnvironment.get_execution_environment()
        settings = environment_settings or EnvironmentSettings.new_instance().with_configuration(
            stream_execution_environment.get_configuration()).build()
        return StreamTableEnvironment(settings, stream_execution_environment)

    def from_data_stream(self, data_stream: Any, *fields_or_schema: Any) -> Table:
        return self._stream_table(data_stream, fields_or_schema)

    def from_changelog_stream(self, data_stream: Any, schema: Any = None,
                              changelog_mode: Any = None) -> Table:
        from flintlock.table.stream_conversions import table_from_stream

        return table_from_stream(self, data_stream, (schema,) if schema is not None else (),
                                 changelog=True)

    def _stream_table(self, stream: Any, fields_or_schema: Sequence[Any]) -> Table:
        from flintlock.table.stream_conversions import table_from_stream

        return table_from_stream(self, stream, fields_or_schema, changelog=False)

    def to_data_stream(self, table: Table) -> Any:
        from flintlock.table.stream_conversions import stream_from_table

        return stream_from_table(self, table, changelog=False)

    def to_changelog_stream(self, table: Table, target_schema: Any = None,
                            changelog_mode: Any = None) -> Any:
        from flintlock.table.stream_conversions import stream_from_table

        return stream_from_table(self, table, changelog=True)

    def to_append_stream(self, table: Table, type_info: Any) -> Any:
        from flintlock.table.stream_conversions import stream_from_table

        return stream_from_table(self, table, changelog=False, type_info=type_info)

    def to_retract_stream(self, table: Table, type_info: Any) -> Any:
        from flintlock.table.stream_conversions import retract_stream

        return retract_stream(self, table, type_info)


# -- helpers -------------------------------------------------------------------------------

def scan_of(spec: n.TableSpec) -> n.PlanNode:
    """The scan of a connector table: its physical columns, then its computed ones."""
    fields = spec.physical + tuple(n.Field(name, rex.type) for name, rex in spec.computed)
    if spec.columns_order:
        order = {f.name: f for f in fields}
        fields = tuple(order[name] for name in spec.columns_order if name in order)
    if spec.watermark is None:
        return n.Scan(fields, spec)
    from flintlock.table.plan.resolver import NoFunctions
    from flintlock.table.plan.windows import with_watermark

    return with_watermark(n.Scan(fields, spec), spec.watermark[0], spec.watermark[1],
                          NoFunctions())  # the rowtime column and its watermarks (issue 32)


def table_spec_from_descriptor(env: TableEnvironment, path: tuple[str, ...], descriptor: Any
                               ) -> n.TableSpec:
    schema = descriptor.get_schema()
    options = dict(descriptor.get_options())
    if schema is None:
        raise ValidationError(f"Table '{'.'.join(path)}' has no schema")
    physical: list[n.Field] = []
    computed: list[tuple[str, Any]] = []
    order: list[str] = []
    for column in schema_columns(schema):
        name, data_type, expression = column
        order.append(name)
        if expression is None:
            assert data_type is not None
            physical.append(n.Field(name, data_type))
        else:
            computed.append((name, expression))
    resolved = []
    scope = Scope.of([f.name for f in physical], [f.type for f in physical])
    for name, expression in computed:
        node = parse_expression(expression) if isinstance(expression, str) else expression._node
        resolved.append((name, ExpressionResolver(scope, env).resolve(node)))
    primary_key = schema_primary_key(schema)
    return n.TableSpec(tuple(path), tuple(physical), options, tuple(resolved), primary_key,
                       _descriptor_watermark(schema), tuple(descriptor.get_partition_keys()),
                       tuple(order))


def _descriptor_watermark(schema: Any) -> tuple[str, Any] | None:
    """A ``Schema.watermark`` of a descriptor as the table's (column, expression) (issue 32)."""
    from flintlock.table.expression import to_node
    from flintlock.table.sql.parser import parse_expression

    specs = schema.get_watermark_specs()
    if not specs:
        return None
    spec = specs[0]
    expression = spec.expression
    node = parse_expression(expression) if isinstance(expression, str) else to_node(expression)
    return (spec.column_name, node)


def schema_columns(schema: Any) -> list[tuple[str, t.DataType | None, Any]]:
    """(name, type, computed expression or None) of a ``Schema``'s columns."""
    from flintlock.table.schema import (
        UnresolvedComputedColumn,
        UnresolvedMetadataColumn,
        UnresolvedPhysicalColumn,
    )

    found: list[tuple[str, t.DataType | None, Any]] = []
    for column in schema.get_columns():
        if isinstance(column, UnresolvedPhysicalColumn):
            data_type = column.data_type
            if isinstance(data_type, str):
                data_type = t.from_sql_string(data_type)
            found.append((column.name, data_type, None))
        elif isinstance(column, UnresolvedComputedColumn):
            found.append((column.name, None, column.expression))
        elif isinstance(column, UnresolvedMetadataColumn):
            raise UnsupportedFeatureError(
                f"metadata column '{column.name}' (connector metadata comes with issue 32)")
    return found


def schema_primary_key(schema: Any) -> tuple[str, ...] | None:
    key = schema.get_primary_key()
    return tuple(key.column_names) if key is not None else None


def _row_values(value: Any, row_type: t.RowType) -> list[Any]:
    if isinstance(value, Row):
        return list(value)
    if isinstance(value, dict):
        return [value.get(name) for name in row_type.names]
    if isinstance(value, (tuple, list)):
        return list(value)
    return [value]


def _pandas_value(value: Any) -> Any:
    item = getattr(value, "item", None)
    if item is not None and not isinstance(value, (str, bytes)):
        try:
            return item()
        except (TypeError, ValueError):
            return value
    return value


def _pandas_type(dtype: Any) -> t.DataType:
    kind = getattr(dtype, "kind", "O")
    return {"i": t.BigIntType(), "u": t.BigIntType(), "f": t.DoubleType(),
            "b": t.BooleanType(), "M": t.TimestampType(3)}.get(kind, t.VarCharType(0x7FFFFFFF))


def _reorder_for_columns(query: n.PlanNode, physical: Sequence[n.Field],
                         columns: Sequence[str]) -> n.PlanNode:
    names = [f.name for f in physical]
    for column in columns:
        if column not in names:
            raise ValidationError(f"Unknown target column '{column}'")
    projections: list[Rex] = []
    for field in physical:
        if field.name in columns:
            index = list(columns).index(field.name)
            projections.append(InputRef(query.fields[index].type, index))
        else:
            from flintlock.table.plan.rex import Literal

            projections.append(Literal(t.NullType(), None))
    projections = [cast_to(p, f.type) if not isinstance(p, InputRef) else p
                   for p, f in zip(projections, physical, strict=True)]
    return n.Calc(n.fields_of(names, [p.type for p in projections]), query,
                  tuple(projections))


def _assignable(source: t.DataType, target: t.DataType) -> bool:
    from flintlock.table.plan import type_rules as tr

    if tr.is_null_type(source):
        return True
    if tr.family(source) == tr.family(target):
        return True
    timestamps = (t.TimestampType, t.LocalZonedTimestampType)  # issue 32: cast in the zone
    if isinstance(source, timestamps) and isinstance(target, timestamps):
        return True
    return tr.is_numeric(source) and tr.is_numeric(target)


def _schema_text(fields: Sequence[n.Field]) -> str:
    return "[" + ", ".join(f"{f.name}: {t.sql_string(f.type)}" for f in fields) + "]"


def _job_name(kind: str, plan: n.PlanNode) -> str:
    return f"{kind}"


__all__ += ["TableException"]
