"""PyFlink's ``Table``, ``GroupedTable`` and friends: relational operations that build a
logical plan, one node per call.

A ``Table`` is an immutable handle on a plan node and the environment it belongs to. Its
operations resolve their expressions with the same binder as SQL (``plan.sql_binder``; the
Table API's expressions are the same syntax trees), so ``t.select(col('a') + 1)`` and
``SELECT a + 1 FROM t`` give the same plan. Nothing runs until ``execute()`` or
``execute_insert()``. ``str(table)`` registers the table under a generated name, as PyFlink
does, so it can be used in SQL text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from flintlock.table import types as t
from flintlock.table.errors import UnsupportedFeatureError, ValidationError
from flintlock.table.expression import Expression, to_node
from flintlock.table.expressions import ColumnSelection, _ColumnRange, col
from flintlock.table.plan import nodes as n
from flintlock.table.plan import type_rules as tr
from flintlock.table.plan.joins import coerce, keyed_join, time_bounded
from flintlock.table.plan.resolver import ExpressionResolver, PyLiteral, Scope, UdfNode
from flintlock.table.plan.rewrite import (
    drop_unused_rank_number,
    fuse_calcs,
    identity,
    project_fields,
)
from flintlock.table.plan.rex import Call, InputRef, Rex, UdfCall
from flintlock.table.plan.sql_binder import QueryBinder, Relation

if TYPE_CHECKING:
    from flintlock.table.table_environment import TableEnvironment
    from flintlock.table.table_result import TableResult

__all__ = ["AggregatedTable", "FlatAggregateTable", "GroupWindowedTable", "GroupedTable",
           "OverWindowedTable", "Table", "WindowGroupedTable"]


def _nodes(fields: Sequence[Any]) -> list[exp.Expression]:
    return [_field_node(f) for f in fields]


def _field_node(value: Any) -> exp.Expression:
    if isinstance(value, str):
        from flintlock.table.sql.parser import parse_expression

        return parse_expression(value)
    return to_node(value)


class Table:
    """A table of the Table API (see the module docstring)."""

    def __init__(self, t_env: TableEnvironment, plan: n.PlanNode,
                 name: str | None = None) -> None:
        self._t_env = t_env
        self._plan = plan
        self._name = name
        self._catalog_path: tuple[str, ...] | None = None

    # -- plumbing -------------------------------------------------------------------------------

    def _binder(self) -> QueryBinder:
        return QueryBinder(self._t_env, table_api=True)

    def _relation(self) -> Relation:
        return Relation(self._plan, Scope.of(self._plan.names, self._plan.types, self._name))

    def _derive(self, plan: n.PlanNode) -> Table:
        return Table(self._t_env, plan)

    def _expand(self, nodes: list[exp.Expression]) -> list[exp.Expression]:
        """``with_columns``/``without_columns``/``*`` turned into column references."""
        names = self._plan.names
        expanded: list[exp.Expression] = []
        for node in nodes:
            if isinstance(node, ColumnSelection):
                chosen = self._selected(node.expressions)
                keep = [nm for nm in names if (nm in chosen) != bool(node.this)]
                if node.this:
                    keep = [nm for nm in names if nm not in chosen]
                else:
                    keep = [nm for nm in names if nm in chosen]
                    keep.sort(key=chosen.index)
                expanded.extend(col(nm)._node for nm in keep)
            else:
                expanded.append(node)
        return expanded

    def _selected(self, selectors: list[exp.Expression]) -> list[str]:
        names = self._plan.names
        chosen: list[str] = []
        for selector in selectors:
            if isinstance(selector, _ColumnRange):
                start, end = selector.this, selector.args["expression"]
                first = names.index(start) if isinstance(start, str) else int(start) - 1
                last = names.index(end) if isinstance(end, str) else int(end) - 1
                chosen.extend(names[first:last + 1])
            elif isinstance(selector, PyLiteral):
                chosen.append(names[int(selector.this) - 1])
            elif isinstance(selector, exp.Column):
                chosen.append(selector.name)
            else:
                raise ValidationError(f"not a column selector: {selector}")
        return chosen

    def __getattr__(self, name: str) -> Expression[Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._plan.names:
            raise AttributeError(
                f"The current table has no column named '{name}', available columns: "
                f"[{', '.join(self._plan.names)}]")
        return col(name)

    def __str__(self) -> str:
        if self._name is None:
            self._name = self._t_env._register_unnamed(self)
        return self._name

    # -- projection and filter ------------------------------------------------------------------

    def select(self, *fields: Any) -> Table:
        items = self._expand(_nodes(fields))
        multi = [i for i, node in enumerate(items) if isinstance(node, exp.Aliases)]
        if multi:
            raise UnsupportedFeatureError("alias() with several names outside map/flat_map")
        binder = self._binder()
        if binder._has_aggregates(items):
            return self._derive(binder._aggregate(self._relation(), None, items, None))
        return self._derive(drop_unused_rank_number(binder._project(self._relation(), items)))

    def alias(self, field: str, *fields: str) -> Table:
        names = [field, *fields]
        if len(names) > len(self._plan.fields):
            raise ValidationError(
                f"Aliasing more fields than we actually have: {len(names)} > "
                f"{len(self._plan.fields)}")
        names += self._plan.names[len(names):]
        return self._derive(project_fields(self._plan, names))

    def filter(self, predicate: Any) -> Table:
        relation = self._binder()._where(self._relation(), _field_node(predicate))
        return self._derive(relation.plan)

    where = filter

    def add_columns(self, *fields: Any) -> Table:
        items = _nodes(fields)
        existing = set(self._plan.names)
        for node in items:
            name = node.alias if isinstance(node, exp.Alias) else None
            if name in existing:
                raise ValidationError(f"Field '{name}' already exists in the table")
        return self.select(*[col(nm) for nm in self._plan.names],
                           *[Expression(node) for node in items])

    def add_or_replace_columns(self, *fields: Any) -> Table:
        items = _nodes(fields)
        replaced: dict[str, exp.Expression] = {}
        extra: list[exp.Expression] = []
        for node in items:
            name = node.alias if isinstance(node, exp.Alias) else (
                node.name if isinstance(node, exp.Column) else None)
            if name in self._plan.names:
                replaced[str(name)] = node
            else:
                extra.append(node)
        selection = [Expression(replaced[nm]) if nm in replaced else col(nm)
                     for nm in self._plan.names]
        return self.select(*selection, *[Expression(node) for node in extra])

    def drop_columns(self, *fields: Any) -> Table:
        names = []
        for node in _nodes(fields):
            if isinstance(node, ColumnSelection):
                names.extend(self._selected(node.expressions))
            elif isinstance(node, exp.Column):
                names.append(node.name)
            else:
                raise ValidationError(f"drop_columns() takes column references, got {node}")
        for name in names:
            if name not in self._plan.names:
                raise ValidationError(f"Field '{name}' does not exist in the table")
        return self.select(*[col(nm) for nm in self._plan.names if nm not in names])

    def rename_columns(self, *fields: Any) -> Table:
        renames: dict[str, str] = {}
        for node in _nodes(fields):
            if not (isinstance(node, exp.Alias) and isinstance(node.this, exp.Column)):
                raise ValidationError("rename_columns() takes col('old').alias('new')")
            if node.this.name not in self._plan.names:
                raise ValidationError(f"Field '{node.this.name}' does not exist in the table")
            renames[node.this.name] = node.alias
        return self._derive(project_fields(self._plan, [renames.get(nm, nm)
                                                         for nm in self._plan.names]))

    def distinct(self) -> Table:
        return self._derive(n.Aggregate(self._plan.fields, self._plan,
                                        tuple(range(len(self._plan.fields))), ()))

    # -- grouping -------------------------------------------------------------------------------

    def group_by(self, *fields: Any) -> GroupedTable:
        return GroupedTable(self, self._expand(_nodes(fields)))

    def aggregate(self, func: Any) -> AggregatedTable:
        return AggregatedTable(self, [], func)

    def flat_aggregate(self, func: Any) -> FlatAggregateTable:
        return FlatAggregateTable(self, [], func)

    def window(self, window: Any) -> GroupWindowedTable:
        from flintlock.table.window import GroupWindow

        if not isinstance(window, GroupWindow):
            raise ValidationError("window() takes a group window: Tumble, Slide or Session")
        return GroupWindowedTable(self, window)

    def over_window(self, *over_windows: Any) -> OverWindowedTable:
        from flintlock.table.window import OverWindow

        if not over_windows or not all(isinstance(w, OverWindow) for w in over_windows):
            raise ValidationError("over_window() takes over windows: Over.partition_by(...)"
                                  ".order_by(...).preceding(...).alias('w')")
        return OverWindowedTable(self, over_windows)

    # -- joins ----------------------------------------------------------------------------------

    def _join(self, right: Table, predicate: Any, kind: n.JoinKind) -> Table:
        if right._t_env is not self._t_env:
            raise ValidationError("Only tables from the same TableEnvironment can be joined.")
        clash = set(self._plan.names) & set(right._plan.names)
        if clash:
            raise ValidationError(
                f"join relations with ambiguous names: {', '.join(sorted(clash))}")
        left_relation = self._relation()
        offset = len(self._plan.fields)
        scope = left_relation.scope.merged(Scope.of(right._plan.names, right._plan.types,
                                                    None, offset))
        condition = None
        if predicate is not None:
            condition = ExpressionResolver(scope, self._t_env).resolve(_field_node(predicate))
        elif kind is not n.JoinKind.INNER:
            raise ValidationError("an outer join needs a join predicate")
        return self._derive(keyed_join(self._plan, right._plan, kind, condition, time_bounded))

    def join(self, right: Table, join_predicate: Any = None) -> Table:
        return self._join(right, join_predicate, n.JoinKind.INNER)

    def left_outer_join(self, right: Table, join_predicate: Any = None) -> Table:
        return self._join(right, join_predicate, n.JoinKind.LEFT)

    def right_outer_join(self, right: Table, join_predicate: Any) -> Table:
        return self._join(right, join_predicate, n.JoinKind.RIGHT)

    def full_outer_join(self, right: Table, join_predicate: Any) -> Table:
        return self._join(right, join_predicate, n.JoinKind.FULL)

    def _lateral(self, call: Any, predicate: Any, left_outer: bool) -> Table:
        function, operands, names = self._table_function_call(call)
        result_types = function.result_types()
        if names is None:
            names = [f"f{i}" for i in range(len(result_types))] if len(result_types) > 1 else (
                ["f0"])
        fields = self._plan.fields + n.fields_of(
            names, [tr.with_nullability(dt, True) for dt in result_types])
        condition = None
        if predicate is not None:
            scope = Scope.of([f.name for f in fields], [f.type for f in fields])
            condition = ExpressionResolver(scope, self._t_env).resolve(_field_node(predicate))
        return self._derive(n.Correlate(fields, self._plan, function, operands, left_outer,
                                        condition, function._name))

    def _table_function_call(self, call: Any) -> tuple[Any, tuple[Rex, ...], list[str] | None]:
        """(function, operands, alias names) of a table function call or bare wrapper."""
        names: list[str] | None = None
        node = call
        if getattr(call, "_flintlock_kind", None) == "table":
            names = list(call._alias_names) or None
            return call, (self._whole_row(),), names
        node = _field_node(call)
        if isinstance(node, exp.Aliases):
            names = [i.name for i in node.expressions]
            node = node.this
        elif isinstance(node, exp.Alias):
            names = [node.alias]
            node = node.this
        if isinstance(node, UdfNode):
            function = node.this
        elif isinstance(node, exp.Anonymous):
            function = self._t_env.user_function(str(node.this))
        else:
            function = None
        if function is None or getattr(function, "_flintlock_kind", "") != "table":
            raise ValidationError(f"{node} is not a call of a table function")
        resolver = ExpressionResolver(self._relation().scope, self._t_env)
        operands = tuple(resolver.resolve(a) for a in node.expressions)
        return function, operands, names or (list(function._alias_names) or None)

    def _whole_row(self) -> Rex:
        """All columns as one named ROW (row-based operations pass the row to the function)."""
        fields = self._plan.fields
        row_type = t.RowType([t.RowField(f.name, f.type) for f in fields])
        return Call(row_type, "ROW", tuple(InputRef(f.type, i) for i, f in enumerate(fields)))

    def join_lateral(self, table_function_call: Any, join_predicate: Any = None) -> Table:
        return self._lateral(table_function_call, join_predicate, False)

    def left_outer_join_lateral(self, table_function_call: Any,
                                join_predicate: Any = None) -> Table:
        return self._lateral(table_function_call, join_predicate, True)

    # -- row-based operations -------------------------------------------------------------------

    def map(self, func: Any) -> Table:
        function, names = _function_and_names(func)
        if function is None or getattr(function, "_flintlock_kind", "") != "scalar":
            raise ValidationError("map() takes a scalar function (udf)")
        argument = self._whole_row() if isinstance(func, type(function)) or (
            func is function) else None
        if argument is not None:
            operands: tuple[Rex, ...] = (argument,)
        else:
            node = _field_node(func)
            node = node.this if isinstance(node, (exp.Alias, exp.Aliases)) else node
            resolver = ExpressionResolver(self._relation().scope, self._t_env)
            operands = tuple(resolver.resolve(a) for a in node.expressions)
        result_type = function.result_type_for([o.type for o in operands])
        call = UdfCall(result_type, function, function._name, operands)
        if isinstance(result_type, t.RowType):
            field_names = names or list(result_type.names)
            projections = tuple(
                Call(tr.with_nullability(f.data_type, True), "ITEM",
                     (call, _index_literal(i))) for i, f in enumerate(result_type.fields))
        else:
            field_names = names or ["_c0"]
            projections = (call,)  # type: ignore[assignment]
        plan = n.Calc(n.fields_of(field_names, [p.type for p in projections]), self._plan,
                      projections)
        return self._derive(plan)

    def flat_map(self, func: Any) -> Table:
        function, names, operands = self._udtf_operands(func)
        result_types = function.result_types()
        names = names or ([f"f{i}" for i in range(len(result_types))])
        fields = self._plan.fields + n.fields_of(
            names, [tr.with_nullability(dt, True) for dt in result_types])
        correlate = n.Correlate(fields, self._plan, function, operands, False, None,
                                function._name)
        width = len(self._plan.fields)
        projections = tuple(InputRef(f.type, width + i) for i, f in
                            enumerate(fields[width:]))
        return self._derive(n.Calc(fields[width:], correlate, projections))

    def _udtf_operands(self, func: Any) -> tuple[Any, list[str] | None, tuple[Rex, ...]]:
        function, names = _function_and_names(func)
        if function is None or getattr(function, "_flintlock_kind", "") != "table":
            raise ValidationError("flat_map() takes a table function (udtf)")
        if func is function:
            return function, names, (self._whole_row(),)
        _, operands, alias = self._table_function_call(func)
        return function, names or alias, operands

    # -- set operations, order, limit -----------------------------------------------------------

    def union_all(self, right: Table) -> Table:
        return self._set_operation(right, True)

    def union(self, right: Table) -> Table:
        return self._set_operation(right, False)

    def _set_operation(self, right: Table, all_rows: bool) -> Table:
        if len(right._plan.fields) != len(self._plan.fields):
            raise ValidationError("Union two tables of different column sizes: "
                                  f"{len(self._plan.fields)} and {len(right._plan.fields)}")
        types = [tr.common_type([a, b], "UNION") for a, b in zip(
            self._plan.types, right._plan.types, strict=True)]
        members = (coerce(self._plan, types), coerce(right._plan, types))
        plan: n.PlanNode = n.Union(n.fields_of(self._plan.names, types), members)
        if not all_rows:
            plan = n.Aggregate(plan.fields, plan, tuple(range(len(types))), ())
        return self._derive(plan)

    def minus(self, right: Table) -> Table:
        from flintlock.table.plan.joins import set_difference

        return self._derive(set_difference(self._plan, right._plan, True))

    def minus_all(self, right: Table) -> Table:
        raise UnsupportedFeatureError("minus_all()")

    def intersect(self, right: Table) -> Table:
        from flintlock.table.plan.joins import set_difference

        return self._derive(set_difference(self._plan, right._plan, False))

    def intersect_all(self, right: Table) -> Table:
        raise UnsupportedFeatureError("intersect_all()")

    def order_by(self, *fields: Any) -> Table:
        from flintlock.table.plan.sql_binder import sort_keys

        resolver = ExpressionResolver(self._relation().scope, self._t_env)
        keys = sort_keys(_nodes(fields), resolver)
        return self._derive(n.Sort(self._plan.fields, self._plan, keys, 0, None))

    def offset(self, offset: int) -> Table:
        return self._limit(offset, None)

    def fetch(self, fetch: int) -> Table:
        return self._limit(0, fetch)

    def limit(self, fetch: int, offset: int = 0) -> Table:
        return self._limit(offset, fetch)

    def _limit(self, offset: int, fetch: int | None) -> Table:
        plan = self._plan
        if isinstance(plan, n.Sort) and plan.fetch is None:
            return self._derive(n.Sort(plan.fields, plan.input, plan.order,
                                       plan.offset + offset, fetch))
        if isinstance(plan, n.Limit):
            total = plan.offset + offset
            new_fetch = fetch if plan.fetch is None else (
                min(plan.fetch - offset, fetch) if fetch is not None else plan.fetch - offset)
            return self._derive(n.Limit(plan.fields, plan.input, total, new_fetch))
        return self._derive(n.Limit(plan.fields, plan, offset, fetch))

    # -- results --------------------------------------------------------------------------------

    def execute(self) -> TableResult:
        return self._t_env._execute_query(self._plan)

    def execute_insert(self, table_path_or_descriptor: Any, overwrite: bool = False
                       ) -> TableResult:
        from flintlock.table.catalog_manager import split_path

        if isinstance(table_path_or_descriptor, str):
            path = split_path(table_path_or_descriptor)
        else:
            name = f"*anonymous_sink${id(table_path_or_descriptor)}*"
            self._t_env.create_temporary_table(f"`{name}`", table_path_or_descriptor)
            path = (name,)
        sink = self._t_env.sink_plan(path, self._plan, None, overwrite)
        return self._t_env._execute_inserts([sink])

    def insert_into(self, table_path: str) -> Any:
        from flintlock.table.statement_set import TablePipeline

        return TablePipeline(self, table_path)

    def explain(self, *extra_details: Any) -> str:
        from flintlock.table.explain import explain_plan

        return explain_plan([self._plan], extra_details)

    def get_schema(self) -> Any:
        from flintlock.table.table_schema import TableSchema

        return TableSchema(self._plan.names, self._plan.types)

    def get_resolved_schema(self) -> Any:
        from flintlock.table.resolved_schema import ResolvedSchema

        if self._catalog_path is not None:  # a table read from the catalog as it is
            from flintlock.table.statements_runner import resolved_schema_of

            return resolved_schema_of(self._t_env, self._catalog_path)
        declared = getattr(self, "_declared_schema", None)  # from_data_stream's (issue 32)
        if declared is not None:
            return declared
        return ResolvedSchema.physical(self._plan.names, self._plan.types)

    def print_schema(self) -> None:
        print(self.get_resolved_schema())

    def to_pandas(self) -> Any:
        import pandas as pd

        result = self.execute()
        rows = list(_final_rows(result.collect()))
        return pd.DataFrame([list(r) for r in rows], columns=self._plan.names)


class GroupedTable:
    def __init__(self, table: Table, keys: list[exp.Expression]) -> None:
        self._table = table
        self._keys = keys

    def select(self, *fields: Any) -> Table:
        table = self._table
        items = table._expand(_nodes(fields))
        plan = table._binder()._aggregate(table._relation(), exp.Group(expressions=self._keys),
                                          items, None)
        return table._derive(plan)

    def aggregate(self, func: Any) -> AggregatedTable:
        return AggregatedTable(self._table, self._keys, func)

    def flat_aggregate(self, func: Any) -> FlatAggregateTable:
        return FlatAggregateTable(self._table, self._keys, func)


class _GroupsAndFunction:
    """A table, its grouping keys (none: one group) and the function ``aggregate`` or
    ``flat_aggregate`` was given; ``select`` plans them."""

    def __init__(self, table: Table, keys: list[exp.Expression], func: Any) -> None:
        self._table = table
        self._keys = keys
        self._func = func


class AggregatedTable(_GroupsAndFunction):
    """``group_by(..).aggregate(udaf)``: the aggregate's ROW result expanded into columns."""

    def select(self, *fields: Any) -> Table:
        table = self._table
        function, arguments, names = _function_call(
            self._func, "aggregate", "aggregate() takes a call of an aggregate function (udaf)")
        arguments = arguments or [_table_whole_row_node(table)]
        binder = table._binder()
        aggregated_name = "$agg"
        items = [*[Expression(k) for k in self._keys],
                 Expression(UdfNode(this=function, expressions=arguments)).alias(aggregated_name)]
        plan = binder._aggregate(table._relation(),
                                 exp.Group(expressions=self._keys) if self._keys else None,
                                 [i._node for i in items], None)
        result_type = plan.fields[-1].type
        width = len(plan.fields) - 1
        projections: list[Rex] = [InputRef(f.type, i) for i, f in enumerate(plan.fields[:-1])]
        out_names = plan.names[:-1]
        last = InputRef(result_type, width)
        if isinstance(result_type, t.RowType):
            field_names = names or list(result_type.names)
            for index, (field, name) in enumerate(zip(result_type.fields, field_names,
                                                      strict=False)):
                projections.append(Call(tr.with_nullability(field.data_type, True), "ITEM",
                                        (last, _index_literal(index))))
                out_names.append(name)
        else:
            projections.append(last)
            out_names.append((names or ["EXPR$0"])[0])
        expanded = table._derive(fuse_calcs(n.Calc(
            n.fields_of(out_names, [p.type for p in projections]), plan, tuple(projections))))
        return expanded.select(*fields)


class FlatAggregateTable(_GroupsAndFunction):
    """``[group_by(..).]flat_aggregate(udtaf)``: each group's rows are its keys, then the
    fields of every row the table aggregate function emits (``n.TableAggregate``)."""

    def select(self, *fields: Any) -> Table:
        table = self._table
        function, arguments, names = _function_call(
            self._func, "table_aggregate",
            "flat_aggregate() takes a call of a table aggregate function (udtaf)")
        arguments = arguments or [_table_whole_row_node(table)]
        # bound as an aggregate call (the binder's GROUP BY path), then made a TableAggregate
        stand_in = _TableAggregateStandIn(function)
        items = [*self._keys, UdfNode(this=stand_in, expressions=arguments)]
        plan = table._binder()._aggregate(
            table._relation(), exp.Group(expressions=self._keys) if self._keys else None,
            items, None)
        while not isinstance(plan, n.Aggregate):
            plan = plan.inputs[0]
        result_type = function.result_type_for([])
        if isinstance(result_type, t.RowType):
            result_names = list(result_type.names)
            result_types = [f.data_type for f in result_type.fields]
        else:
            result_names, result_types = ["f0"], [result_type]
        if names is not None:
            if len(names) != len(result_names):
                raise ValidationError(
                    f"flat_aggregate: {len(names)} alias names for the {len(result_names)} "
                    "fields of the table aggregate function's result")
            result_names = names
        width = len(plan.group)
        out_fields = n.fields_of(plan.names[:width] + result_names,
                                 [f.type for f in plan.fields[:width]] + result_types)
        call = dataclasses.replace(plan.calls[0], function=function)
        aggregated = n.TableAggregate(out_fields, plan.input, plan.group, (call,))
        return table._derive(aggregated).select(*fields)


def _function_call(func: Any, kind: str, refusal: str
                   ) -> tuple[Any, list[exp.Expression], list[str] | None]:
    """The function, arguments and alias names of ``aggregate``'s or ``flat_aggregate``'s
    argument: a call ``f(col('a')).alias('x', 'y')`` or the bare function ``f`` (its alias
    names its own; no arguments: the whole row)."""
    if getattr(func, "_flintlock_kind", None) == kind:
        return func, [], list(func._alias_names) or None
    node = _field_node(func)
    names: list[str] | None = None
    if isinstance(node, exp.Aliases):
        names = [i.name for i in node.expressions]
        node = node.this
    elif isinstance(node, exp.Alias):
        names = [node.alias]
        node = node.this
    if not isinstance(node, UdfNode) or getattr(node.this, "_flintlock_kind", "") != kind:
        raise ValidationError(refusal)
    return node.this, list(node.expressions), names


class _TableAggregateStandIn:
    """A ``udtaf`` as the binder's aggregate resolution sees it (an aggregate function whose
    one value is its result row); replaced by the function itself in the plan."""

    _flintlock_kind = "aggregate"

    def __init__(self, function: Any) -> None:
        self._function = function
        self._name = getattr(function, "_name", None) or "udtaf"

    def result_type_for(self, argument_types: Sequence[t.DataType]) -> t.DataType:
        return self._function.result_type_for(argument_types)  # type: ignore[no-any-return]


class GroupWindowedTable:
    """``table.window(w)``: awaiting ``group_by`` with the window's alias (issue 32)."""

    def __init__(self, table: Table, window: Any) -> None:
        self._table = table
        self._window = window

    def group_by(self, *fields: Any) -> WindowGroupedTable:
        return WindowGroupedTable(self._table, self._window, _nodes(fields))


class WindowGroupedTable:
    """``table.window(w).group_by(col('w'), ...)``; ``select`` is a window aggregation
    (``flintlock.table.window.group_window_select``)."""

    def __init__(self, table: Table, window: Any, keys: list[exp.Expression]) -> None:
        self._table = table
        self._window = window
        self._keys = keys

    def select(self, *fields: Any) -> Table:
        from flintlock.table.window import group_window_select

        table = self._table
        items = table._expand(_nodes(fields))
        return table._derive(group_window_select(table, self._window, self._keys, items))


class OverWindowedTable:
    """``table.over_window(w, ...)``; ``select`` computes ``agg.over(col('w'))`` calls
    (``flintlock.table.window.over_window_select``, issue 32)."""

    def __init__(self, table: Table, windows: tuple[Any, ...]) -> None:
        self._table = table
        self._windows = windows

    def select(self, *fields: Any) -> Table:
        from flintlock.table.window import over_window_select

        table = self._table
        items = table._expand(_nodes(fields))
        return table._derive(over_window_select(table, self._windows, items))


def _table_whole_row_node(self: Table) -> exp.Expression:
    from flintlock.table.plan.resolver import ResolvedRef

    return ResolvedRef(this=self._whole_row())




def _function_and_names(func: Any) -> tuple[Any, list[str] | None]:
    if hasattr(func, "_flintlock_kind"):
        return func, (list(func._alias_names) or None)
    node = _field_node(func)
    names = None
    if isinstance(node, exp.Aliases):
        names = [i.name for i in node.expressions]
        node = node.this
    elif isinstance(node, exp.Alias):
        names = [node.alias]
        node = node.this
    if isinstance(node, UdfNode):
        return node.this, names
    return None, names


def _index_literal(index: int) -> Rex:
    """A field of a ROW value by position (a function may return a Row without names)."""
    from flintlock.table.plan.rex import Literal

    return Literal(t.IntType(False), index)


def _final_rows(rows: Any) -> list[Any]:
    """The table a changelog describes at its end (``to_pandas``)."""
    from flintlock.common.types import RowKind

    table: list[Any] = []
    for row in rows:
        kind = row.get_row_kind()
        plain = list(row)
        if kind in (RowKind.INSERT, RowKind.UPDATE_AFTER):
            table.append(plain)
        else:
            table.remove(plain)
    return table


__all__ += ["identity"]
