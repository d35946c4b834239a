"""What ``execute_sql`` does with each kind of statement: DDL and session commands change the
catalog or the configuration and answer ``OK`` (or rows: SHOW, DESCRIBE, SET), queries and
INSERTs run jobs.

One function per statement type, chosen by an exhaustive ``match``. Runs on the caller's
thread against one ``TableEnvironment``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flintlock.table import types as t
from flintlock.table.catalog_manager import CatalogEntry
from flintlock.table.errors import UnsupportedFeatureError, ValidationError
from flintlock.table.explain_detail import ExplainDetail
from flintlock.table.plan import nodes as n
from flintlock.table.plan.resolver import ExpressionResolver, Scope
from flintlock.table.plan.sql_binder import rename
from flintlock.table.sql import statements as st
from flintlock.table.table_result import TableResult
from flintlock.table.time_attributes import materialized
from flintlock.table.udf import as_registered_function, load_python_function

if TYPE_CHECKING:
    from flintlock.table.table_environment import TableEnvironment


def run_statement(env: TableEnvironment, statement: st.Statement) -> TableResult:
    match statement:
        case st.QueryStatement():
            return env._execute_query(env._binder().bind(statement.query))
        case st.InsertStatement():
            return env._execute_inserts([env._insert_plan(statement)])
        case st.StatementSetStatement():
            return env._execute_inserts([env._insert_plan(i) for i in statement.inserts])
        case st.CreateTableStatement():
            return _create_table(env, statement)
        case st.CreateViewStatement():
            return _create_view(env, statement)
        case st.CreateFunctionStatement():
            return _create_function(env, statement)
        case st.DropStatement():
            return _drop(env, statement)
        case st.SetStatement():
            return _set(env, statement)
        case st.ResetStatement():
            return _reset(env, statement)
        case st.ShowStatement():
            return _show(env, statement)
        case st.DescribeStatement():
            return _describe(env, statement)
        case st.ExplainStatement():
            return _explain(env, statement)
        case st.UseStatement():
            return _use(env, statement)
    raise UnsupportedFeatureError(f"the statement {type(statement).__name__}")


def table_spec(env: TableEnvironment, path: tuple[str, str, str],
               statement: st.CreateTableStatement) -> n.TableSpec:
    """A catalog table from its DDL: physical columns typed, computed columns resolved over
    them (in the order written), the primary key's columns made NOT NULL."""
    key = set(statement.primary_key or ())
    physical: list[n.Field] = []
    computed_specs: list[st.ColumnSpec] = []
    order: list[str] = []
    names = [c.name for c in statement.columns]
    duplicates = sorted({nm for nm in names if names.count(nm) > 1})
    if duplicates:
        raise ValidationError(f"A column named '{duplicates[0]}' already exists in the table.")
    for column in statement.columns:
        order.append(column.name)
        if column.is_metadata:
            raise UnsupportedFeatureError(
                f"metadata column '{column.name}' (connector metadata comes with issue 32)")
        if column.is_computed:
            computed_specs.append(column)
            continue
        data_type = column.type
        assert data_type is not None
        if column.name in key:
            data_type = data_type.not_null()
        physical.append(n.Field(column.name, data_type))
    for name in key:
        if name not in names:
            raise ValidationError(f"Invalid primary key. Column '{name}' does not exist.")
    scope = Scope.of([f.name for f in physical], [f.type for f in physical])
    resolver = ExpressionResolver(scope, env)
    computed = tuple((c.name, resolver.resolve(c.expression))  # type: ignore[arg-type]
                     for c in computed_specs)
    watermark = None
    if statement.watermark is not None:
        watermark = (statement.watermark.column, statement.watermark.expression)
    from flintlock.table.sql.dialect import FLINK

    comments = tuple((c.name, c.comment) for c in statement.columns if c.comment is not None)
    computed_sql = tuple((c.name, c.expression.sql(dialect=FLINK, identify=True))
                         for c in computed_specs if c.expression is not None)
    return n.TableSpec(path, tuple(physical), dict(statement.options), computed,
                       statement.primary_key, watermark, tuple(statement.partition_keys),
                       tuple(order), comments, computed_sql)


def _create_table(env: TableEnvironment, statement: st.CreateTableStatement) -> TableResult:
    if statement.like is not None:
        raise UnsupportedFeatureError("CREATE TABLE ... LIKE")
    path = env._catalog.qualify(statement.name)
    if not statement.temporary and env._catalog.lookup(statement.name) is not None and (
            statement.if_not_exists):
        return TableResult.ok()
    spec = table_spec(env, path, statement)
    if spec.watermark is not None:  # a bad WATERMARK fails here, as in Flink (issue 32)
        from flintlock.table.plan.resolver import NoFunctions
        from flintlock.table.plan.windows import with_watermark

        fields = spec.physical + tuple(n.Field(name, rex.type) for name, rex in spec.computed)
        with_watermark(n.Scan(fields, spec), spec.watermark[0], spec.watermark[1],
                       NoFunctions())
    env._catalog.register(CatalogEntry(path, table=spec, temporary=statement.temporary),
                          statement.if_not_exists)
    return TableResult.ok()


def _create_view(env: TableEnvironment, statement: st.CreateViewStatement) -> TableResult:
    plan = env._binder().bind(statement.query)
    if statement.columns:
        plan = rename(plan, list(statement.columns))
    path = env._catalog.qualify(statement.name)
    env._catalog.register(CatalogEntry(path, view=plan, temporary=statement.temporary),
                          statement.if_not_exists)
    return TableResult.ok()


def _create_function(env: TableEnvironment, statement: st.CreateFunctionStatement
                     ) -> TableResult:
    if statement.language != "PYTHON":
        raise UnsupportedFeatureError(
            f"{statement.language} functions", "flintlock runs Python functions: add "
            "LANGUAGE PYTHON and name a Python function (module.name)")
    function = as_registered_function(load_python_function(statement.class_path))
    env._catalog.register_function(statement.name[-1], function,
                                   temporary=statement.temporary, system=statement.system,
                                   ignore_if_exists=statement.if_not_exists)
    return TableResult.ok()


def _drop(env: TableEnvironment, statement: st.DropStatement) -> TableResult:
    if statement.kind == "FUNCTION":
        dropped = env._catalog.drop_function(statement.name[-1], statement.temporary,
                                             statement.system)
        if not dropped and not statement.if_exists:
            raise ValidationError(f"Function '{'.'.join(statement.name)}' does not exist")
        return TableResult.ok()
    if statement.kind in ("TABLE", "VIEW"):
        env._catalog.drop(statement.name, statement.temporary, statement.kind == "VIEW",
                          statement.if_exists)
        return TableResult.ok()
    raise UnsupportedFeatureError(f"DROP {statement.kind}")


def _set(env: TableEnvironment, statement: st.SetStatement) -> TableResult:
    configuration = env.get_config().get_configuration()
    if statement.key is None:
        items = sorted(configuration.to_dict().items())
        return TableResult.of_rows(["key", "value"], [t.DataTypes.STRING().not_null()] * 2,
                                   items)
    configuration.set_string(statement.key, statement.value or "")
    return TableResult.ok()


def _reset(env: TableEnvironment, statement: st.ResetStatement) -> TableResult:
    configuration = env.get_config().get_configuration()
    if statement.key is None:
        for key in list(configuration.to_dict()):
            configuration.remove_config(key)
    else:
        configuration.remove_config(statement.key)
    return TableResult.ok()


def _show(env: TableEnvironment, statement: st.ShowStatement) -> TableResult:
    kind = statement.kind
    listing: dict[str, tuple[str, Any]] = {
        "TABLES": ("table name", env.list_tables),
        "VIEWS": ("view name", env.list_views),
        "FUNCTIONS": ("function name", env.list_functions),
        "USER FUNCTIONS": ("function name", env.list_user_defined_functions),
        "CATALOGS": ("catalog name", env.list_catalogs),
        "DATABASES": ("database name", env.list_databases),
        "MODULES": ("module name", env.list_modules),
    }
    if kind in listing:
        column, read = listing[kind]
        names = read()
        if statement.like is not None:
            from flintlock.table.codegen.sql_functions import like

            names = [nm for nm in names if like(nm, statement.like) != statement.not_like]
        return TableResult.of_rows([column], [t.DataTypes.STRING().not_null()],
                                   [[nm] for nm in names])
    if kind == "CURRENT CATALOG":
        return TableResult.of_rows(["current catalog name"],
                                   [t.DataTypes.STRING().not_null()],
                                   [[env.get_current_catalog()]])
    if kind == "CURRENT DATABASE":
        return TableResult.of_rows(["current database name"],
                                   [t.DataTypes.STRING().not_null()],
                                   [[env.get_current_database()]])
    raise UnsupportedFeatureError(f"SHOW {kind}")


def _describe(env: TableEnvironment, statement: st.DescribeStatement) -> TableResult:
    from flintlock.table.formatting import describe

    schema = resolved_schema_of(env, statement.name)
    names, types = zip(*describe.describe_columns(schema), strict=True)
    result = TableResult.of_rows(list(names), list(types),
                                 [list(r) for r in describe.describe_rows(schema)])
    result._renderer = lambda: describe.render_describe(schema)
    return result


def resolved_schema_of(env: TableEnvironment, name: tuple[str, ...]) -> Any:
    """A catalog object's schema as Flink resolves it: for a DDL table its comments, computed
    columns (with their SQL) and primary key; for a view its fields."""
    from flintlock.table.resolved_schema import Column, ResolvedSchema, UniqueConstraint

    entry = env._catalog.get(name)
    plan = env.relation(name)
    spec = entry.table
    if spec is None:
        return ResolvedSchema.physical(plan.names, plan.types)
    comments = dict(spec.comments)
    computed = dict(spec.computed)
    sql = dict(spec.computed_sql)
    columns = []
    for field in plan.fields:
        if field.name in computed:
            column: Any = Column.computed(field.name, field.type, computed[field.name],
                                          sql.get(field.name, field.name))
        else:
            column = Column.physical(field.name, field.type)
        if field.name in comments:
            column = column.with_comment(comments[field.name])
        columns.append(column)
    key = spec.primary_key
    constraint = UniqueConstraint.primary_key("PK_" + "_".join(key), key) if key else None
    return ResolvedSchema(tuple(columns), _watermark_specs(plan, spec), constraint)


def _watermark_specs(plan: n.PlanNode, spec: n.TableSpec) -> tuple[Any, ...]:
    """The table's ``WATERMARK FOR`` as Flink prints it (issue 32)."""
    from flintlock.table.plan.window_nodes import WatermarkAssigner
    from flintlock.table.resolved_schema import WatermarkSpec
    from flintlock.table.sql.dialect import FLINK

    if spec.watermark is None or not isinstance(plan, WatermarkAssigner):
        return ()
    column, expression = spec.watermark
    data_type = (plan.watermark.type if plan.watermark is not None
                 else plan.fields[plan.rowtime].type)
    return (WatermarkSpec.of(column, plan.watermark,
                             expression.sql(dialect=FLINK, identify=True),
                             materialized(data_type)),)


def _explain(env: TableEnvironment, statement: st.ExplainStatement) -> TableResult:
    from flintlock.table.explain import explain_plan

    inner = statement.statement
    if isinstance(inner, st.QueryStatement):
        plans: list[n.PlanNode] = [env._binder().bind(inner.query)]
    elif isinstance(inner, st.InsertStatement):
        plans = [env._insert_plan(inner)]
    elif isinstance(inner, st.StatementSetStatement):
        plans = [env._insert_plan(i) for i in inner.inserts]
    else:
        raise ValidationError("EXPLAIN explains a query, an INSERT or a statement set")
    details = tuple(ExplainDetail[d] for d in statement.details)
    text = explain_plan(plans, details)
    return TableResult.of_rows(["result"], [t.DataTypes.STRING().not_null()], [[text]])


def _use(env: TableEnvironment, statement: st.UseStatement) -> TableResult:
    if statement.catalog is not None:
        env.use_catalog(statement.catalog)
    if statement.database is not None:
        env.use_database(statement.database)
    return TableResult.ok()
