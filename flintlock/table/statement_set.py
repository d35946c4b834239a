"""PyFlink's ``StatementSet``: several INSERTs run as one job (their shared sub-plans computed
once), and ``TablePipeline`` (``table.insert_into(path)``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flintlock.table.catalog_manager import split_path
from flintlock.table.errors import ValidationError
from flintlock.table.plan import nodes as n
from flintlock.table.sql import statements as st
from flintlock.table.sql.parser import parse_statement

if TYPE_CHECKING:
    from flintlock.table.table import Table
    from flintlock.table.table_environment import TableEnvironment
    from flintlock.table.table_result import TableResult

__all__ = ["StatementSet", "TablePipeline"]


class TablePipeline:
    """A table bound for a sink table, to execute or add to a statement set."""

    def __init__(self, table: Table, path: str) -> None:
        self._table = table
        self._path = path

    def _sink(self) -> n.Sink:
        return self._table._t_env.sink_plan(split_path(self._path), self._table._plan)

    def execute(self) -> TableResult:
        return self._table._t_env._execute_inserts([self._sink()])

    def explain(self, *extra_details: Any) -> str:
        from flintlock.table.explain import explain_plan

        return explain_plan([self._sink()], extra_details)

    def get_sink_identifier(self) -> str:
        return ".".join(self._table._t_env._catalog.qualify(split_path(self._path)))


class StatementSet:
    def __init__(self, t_env: TableEnvironment) -> None:
        self._t_env = t_env
        self._sinks: list[n.Sink] = []

    def add(self, table_pipeline: TablePipeline) -> StatementSet:
        self._sinks.append(table_pipeline._sink())
        return self

    def add_insert_sql(self, stmt: str) -> StatementSet:
        statement = parse_statement(stmt)
        if not isinstance(statement, st.InsertStatement):
            raise ValidationError("add_insert_sql() only accepts a single INSERT statement")
        self._sinks.append(self._t_env._insert_plan(statement))
        return self

    def add_insert(self, target_path_or_descriptor: Any, table: Table,
                   overwrite: bool = False) -> StatementSet:
        if isinstance(target_path_or_descriptor, str):
            path = split_path(target_path_or_descriptor)
        else:
            name = f"*anonymous_sink${id(target_path_or_descriptor)}*"
            self._t_env.create_temporary_table(f"`{name}`", target_path_or_descriptor)
            path = (name,)
        self._sinks.append(self._t_env.sink_plan(path, table._plan, None, overwrite))
        return self

    def attach_as_datastream(self) -> None:
        from flintlock.table.errors import UnsupportedFeatureError

        raise UnsupportedFeatureError("StatementSet.attach_as_datastream()")

    def explain(self, *extra_details: Any) -> str:
        from flintlock.table.explain import explain_plan

        return explain_plan(self._sinks, extra_details)

    def print_explain(self, *extra_details: Any) -> None:
        print(self.explain(*extra_details))

    def execute(self) -> TableResult:
        if not self._sinks:
            raise ValidationError("No operators to execute: the statement set is empty")
        sinks, self._sinks = self._sinks, []
        return self._t_env._execute_inserts(sinks)
