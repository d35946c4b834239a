"""The SQL binder: a query's syntax tree (sqlglot, Flink dialect) becomes a logical plan.

``QueryBinder.bind(query)`` resolves a SELECT block in SQL's order — FROM (tables, views,
subqueries, joins, LATERAL TABLE, VALUES), WHERE, GROUP BY / HAVING with the aggregates of the
SELECT list, the SELECT list itself (``*``, ``t.*``, aliases; unnamed items are ``EXPR$<i>``
as Calcite names them), DISTINCT, ORDER BY / LIMIT — and set operations and WITH around it.
``ROW_NUMBER() OVER (PARTITION BY .. ORDER BY ..)`` filtered by ``rn <= N`` in the enclosing
query becomes a ``Rank`` (Flink's Top-N); without such a filter it is refused.

Names come from the catalog (``Catalog`` protocol: tables, views, functions). Errors are
``ValidationError`` naming the closest known name, or ``UnsupportedFeatureError`` naming the
construct. Pure: binding has no effect on the catalog.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from sqlglot import exp

from flintlock.table import types as t
from flintlock.table.errors import UnsupportedFeatureError, ValidationError
from flintlock.table.plan import nodes as n
from flintlock.table.plan import type_rules as tr
from flintlock.table.plan.joins import (
    coerce,
    conjuncts,
    filtered_join,
    join_scope,
    keyed_join,
    semi_join,
    set_difference,
    time_bounded,
)
from flintlock.table.plan.lookup_join import bind_lookup_join
from flintlock.table.plan.over import bind_over, has_over_aggregates
from flintlock.table.plan.resolver import (
    AggregatePlan,
    AggregateResolver,
    ExpressionResolver,
    FunctionCatalog,
    Scope,
    function_name,
    function_operands,
    is_aggregate_call,
)
from flintlock.table.plan.rewrite import (
    drop_unused_rank_number,
    fuse_calcs,
    identity,
    project_fields,
)
from flintlock.table.plan.rex import Call, InputRef, Literal, Rex, input_refs
from flintlock.table.plan.temporal_join import bind_temporal_join
from flintlock.table.plan.windows import (
    bind_window_tvf,
    legacy_group_window,
    window_aggregate,
    window_join,
    window_rank,
)


class Catalog(FunctionCatalog, Protocol):
    def relation(self, path: tuple[str, ...]) -> n.PlanNode:
        """The plan of a table or view by its (possibly qualified) name."""


@dataclass
class Relation:
    """A plan with the names its fields are reachable by in the enclosing query."""

    plan: n.PlanNode
    scope: Scope


class RowNumberMarker(n.PlanNode):
    """A ``ROW_NUMBER() OVER (...)`` column over ``input`` awaiting its ``rn <= N`` filter."""

    def __init__(self, fields: tuple[n.Field, ...], input: n.PlanNode,
                 partition: tuple[int, ...], order: tuple[n.SortKey, ...]) -> None:
        object.__setattr__(self, "fields", fields)
        object.__setattr__(self, "input", input)
        object.__setattr__(self, "partition", partition)
        object.__setattr__(self, "order", order)

    @property
    def inputs(self) -> tuple[n.PlanNode, ...]:
        return (self.__dict__["input"],)


def alias_of(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Alias):
        return node.alias
    return None


def default_name(node: exp.Expression, position: int) -> str:
    """The name Flink gives a SELECT item: its alias, a column's name, else ``EXPR$i``."""
    alias = alias_of(node)
    if alias:
        return alias
    if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
        return node.name
    if isinstance(node, exp.Dot):
        return str(node.expression.name)
    return f"EXPR${position}"


def unique_names(names: list[str]) -> list[str]:
    """Names made unique as Calcite does: a repeated ``a`` becomes ``a0``, ``a1``, ..."""
    seen: dict[str, int] = {}
    result = []
    taken = set(names)
    for name in names:
        if name not in seen:
            seen[name] = 0
            result.append(name)
            continue
        index = seen[name]
        candidate = f"{name}{index}"
        while candidate in taken:
            index += 1
            candidate = f"{name}{index}"
        seen[name] = index + 1
        taken.add(candidate)
        result.append(candidate)
    return result


class QueryBinder:
    """Binds queries against ``catalog``; ``ctes`` are the WITH names in scope."""

    def __init__(self, catalog: Catalog, ctes: dict[str, n.PlanNode] | None = None,
                 table_api: bool = False) -> None:
        self.catalog = catalog
        self.ctes = dict(ctes or {})
        self.table_api = table_api
        """The Table API names unnamed expressions EXPR$0, EXPR$1, ... in order; SQL by their
        position in the SELECT list."""

    def _names(self, items: Sequence[exp.Expression], aggregate: bool = False) -> list[str]:
        """SQL names an unnamed item ``EXPR$<position>``. The Table API names an unnamed
        expression ``_c<position>``, but in a grouped select an unnamed aggregate call
        ``EXPR$<n>``, n counting the select's aggregate calls, as Flink does."""
        names = []
        calls = 0
        for position, item in enumerate(items):
            name = default_name(item, position)
            inner = item.this if isinstance(item, exp.Alias) else item
            is_call = aggregate and is_aggregate_call(inner, self.catalog)
            if self.table_api and name.startswith("EXPR$") and alias_of(item) is None:
                name = f"EXPR${calls}" if is_call else f"_c{position}"
            calls += is_call
            names.append(name)
        return names

    # -- queries ------------------------------------------------------------------------------

    def bind(self, query: Any) -> n.PlanNode:
        """The plan of a query (an ``exp.Query`` or a subquery expression)."""
        with_ = query.args.get("with_") or query.args.get("with")
        if with_ is not None:
            inner = QueryBinder(self.catalog, self.ctes)
            for cte in with_.expressions:
                inner.ctes[cte.alias] = rename(inner.bind(cte.this), _cte_columns(cte))
            stripped = query.copy()
            stripped.set("with_", None)
            stripped.set("with", None)
            return inner.bind(stripped)
        if isinstance(query, exp.Subquery):
            return self.bind(query.this)
        if isinstance(query, exp.Select):
            return self._select(query)
        if isinstance(query, exp.Union):
            return self._union(query)
        if isinstance(query, (exp.Intersect, exp.Except)):
            return self._intersect_except(query)
        if isinstance(query, exp.Values):
            return self._values(query)
        raise UnsupportedFeatureError(f"the query {query.sql()[:60]!r}")

    def _union(self, query: exp.Union) -> n.PlanNode:
        left = self.bind(query.this)
        right = self.bind(query.expression)
        if len(left.fields) != len(right.fields):
            raise ValidationError(
                "Set operator cannot combine queries with different numbers of columns: "
                f"{len(left.fields)} and {len(right.fields)}")
        types = [tr.common_type([a, b], "UNION") for a, b in zip(left.types, right.types,
                                                                  strict=True)]
        members = tuple(coerce(member, types) for member in (left, right))
        union: n.PlanNode = n.Union(n.fields_of(left.names, types), members)
        if query.args.get("distinct", True):
            union = n.Aggregate(union.fields, union, tuple(range(len(types))), ())
        return self._order_limit(union, query, Scope.of(union.names, union.types))

    def _intersect_except(self, query: exp.Expression) -> n.PlanNode:
        left = self.bind(query.this)
        right = self.bind(query.expression)
        if not query.args.get("distinct", True):
            kind = "INTERSECT ALL" if isinstance(query, exp.Intersect) else "EXCEPT ALL"
            raise UnsupportedFeatureError(kind)
        plan = set_difference(left, right, isinstance(query, exp.Except))
        return self._order_limit(plan, query, Scope.of(plan.names, plan.types))

    def _values(self, query: exp.Values) -> n.PlanNode:
        resolver = ExpressionResolver(Scope(), self.catalog)
        rows = [[resolver.resolve(v) for v in (row.expressions if isinstance(row, exp.Tuple)
                                                else [row])] for row in query.expressions]
        width = len(rows[0])
        types = [tr.common_type([r[i].type for r in rows], "VALUES") for i in range(width)]
        for row in rows:
            if not all(isinstance(v, Literal) for v in row):
                raise UnsupportedFeatureError("VALUES with non-literal expressions")
        names = _alias_columns(query) or [f"EXPR${i}" for i in range(width)]
        values = tuple(tuple(_literal_as(v, dt) for v, dt in zip(row, types, strict=True))
                       for row in rows)
        return n.Values(n.fields_of(names, types), values)

    # -- SELECT -------------------------------------------------------------------------------

    def _select(self, query: exp.Select) -> n.PlanNode:
        relation = self._from(query)
        where = query.args.get("where")
        if where is not None:
            relation = self._where(relation, where.this)
        group = query.args.get("group")
        items = list(query.expressions)
        if has_over_aggregates(items, self.catalog):  # agg(x) OVER (...) (issue 32)
            relation, items = self._over(relation, items, query.args.get("windows") or [])
        having = query.args.get("having")
        if group is not None or having is not None or self._has_aggregates(items):
            plan = self._aggregate(relation, group, items, having)
        else:
            plan = drop_unused_rank_number(self._project(relation, items))
        if query.args.get("distinct") is not None:
            plan = n.Aggregate(plan.fields, plan, tuple(range(len(plan.fields))), ())
        return self._order_limit(plan, query, Scope.of(plan.names, plan.types))

    def _has_aggregates(self, items: Sequence[exp.Expression]) -> bool:
        for item in items:
            for node in item.walk():
                if isinstance(node, exp.Expression) and is_aggregate_call(
                        node, self.catalog) and node.find_ancestor(
                        exp.Window) is None:
                    return True
        return False

    def _where(self, relation: Relation, condition: exp.Expression) -> Relation:
        rest: list[exp.Expression] = []
        for conjunct in _sql_conjuncts(condition):
            negated = isinstance(conjunct, exp.Not)
            inner = conjunct.this if negated else conjunct
            if isinstance(inner, exp.In) and inner.args.get("query") is not None:
                relation = self._in_subquery(relation, inner, negated)
            elif isinstance(inner, exp.Exists):
                relation = self._exists(relation, inner.this, negated)
            else:
                rest.append(conjunct)
        if not rest:
            return relation
        plan = relation.plan
        resolver = ExpressionResolver(relation.scope, self.catalog,
                                      subquery=self._scalar_subquery)
        condition_node: Any = rest[0] if len(rest) == 1 else exp.and_(*rest)
        predicate = resolver.resolve(condition_node)
        if not (tr.is_boolean(predicate.type) or tr.is_null_type(predicate.type)):
            raise ValidationError(
                f"WHERE clause must be a condition, got {tr.sql_name(predicate.type)}")
        filtered = filtered_join(n.Calc(plan.fields, plan, identity(plan), predicate),
                                 _finish_filter)
        if filtered is not plan and not isinstance(filtered, n.Calc):  # a join, keyed
            return Relation(filtered, join_scope(filtered, relation.scope))
        return Relation(_finish_filter(filtered), relation.scope)

    # -- IN / EXISTS subqueries: semi and anti joins ----------------------------------------

    def _in_subquery(self, relation: Relation, node: exp.In, anti: bool) -> Relation:
        """``x IN (SELECT y ...)``: the rows with a match among the subquery's DISTINCT values
        (a semi join); ``NOT IN`` the rows without one (an anti join: a left join keeping the
        rows whose match is NULL, so a match arriving later retracts the row)."""
        subquery = self.bind(node.args["query"].this)
        if len(subquery.fields) != 1:
            raise ValidationError(
                f"The subquery of IN must return one column, it returns {len(subquery.fields)}")
        operand = ExpressionResolver(relation.scope, self.catalog).resolve(node.this)
        return Relation(semi_join(relation.plan, [operand], subquery, anti), relation.scope)

    def _exists(self, relation: Relation, query: exp.Expression, anti: bool) -> Relation:
        """``EXISTS (SELECT .. FROM w WHERE w.x = t.a AND ..)``: the equalities between the
        subquery's and the outer query's columns become the keys of a semi (anti) join over
        the subquery's other conditions; any other correlation is refused."""
        if not isinstance(query, exp.Select):
            raise UnsupportedFeatureError("EXISTS over a set operation")
        inner_from = query.args.get("from_") or query.args.get("from")
        names = {t.alias_or_name for t in query.find_all(exp.Table)}
        where = query.args.get("where")
        keys: list[tuple[exp.Expression, exp.Expression]] = []
        local: list[exp.Expression] = []
        for conjunct in _sql_conjuncts(where.this) if where is not None else []:
            pair = _correlation(conjunct, names, relation.scope)
            if pair is not None:
                keys.append(pair)
            elif _outer_columns(conjunct, names, relation.scope):
                raise UnsupportedFeatureError(
                    "a correlated EXISTS condition other than inner.column = outer.column")
            else:
                local.append(conjunct)
        if not keys:
            raise UnsupportedFeatureError("an uncorrelated EXISTS subquery")
        inner = exp.Select(expressions=[k[0] for k in keys], from_=inner_from,
                           joins=query.args.get("joins"))
        if local:
            inner.set("where", exp.Where(this=exp.and_(*local)))
        subquery = self.bind(inner)
        outer = ExpressionResolver(relation.scope, self.catalog)
        return Relation(semi_join(relation.plan, [outer.resolve(k[1]) for k in keys], subquery,
                                  anti), relation.scope)

    def _project(self, relation: Relation, items: Sequence[exp.Expression]) -> n.PlanNode:
        resolver = ExpressionResolver(relation.scope, self.catalog)
        names: list[str] = []
        projections: list[Rex] = []
        marker: tuple[tuple[int, ...], tuple[n.SortKey, ...]] | None = None
        item_names = self._names(items)
        for position, item in enumerate(items):
            inner = item.this if isinstance(item, exp.Alias) else item
            if _is_star(inner):
                for field in self._star_fields(relation.scope, inner):
                    names.append(field.name)
                    projections.append(InputRef(field.type, field.index))
                continue
            if isinstance(inner, exp.Window):
                marker = self._row_number(inner, resolver)
                names.append(item_names[position])
                projections.append(InputRef(t.BigIntType(False), len(relation.plan.fields)))
                continue
            names.append(item_names[position])
            projections.append(resolver.resolve(inner))
        source = relation.plan
        if marker is not None:
            fields = (*source.fields, n.Field("$rn", t.BigIntType(False)))
            source = RowNumberMarker(fields, source, marker[0], marker[1])
        names = unique_names(names)
        return fuse_calcs(n.Calc(n.fields_of(names, [p.type for p in projections]), source,
                                 tuple(projections)))

    def _row_number(self, window: exp.Window, resolver: ExpressionResolver
                    ) -> tuple[tuple[int, ...], tuple[n.SortKey, ...]]:
        call = window.this
        name = function_name(call) if isinstance(call, exp.Func) else ""
        if name not in ("ROW_NUMBER", "RANK", "DENSE_RANK"):
            raise UnsupportedFeatureError(
                f"{name or 'an expression'} OVER (...) (over aggregations come with issue 32)")
        if name != "ROW_NUMBER":
            raise UnsupportedFeatureError(f"{name}() for Top-N (only ROW_NUMBER() is)")
        partition = []
        for expression in window.args.get("partition_by") or []:
            ref = resolver.resolve(expression)
            if not isinstance(ref, InputRef):
                raise UnsupportedFeatureError("PARTITION BY an expression (use a column)")
            partition.append(ref.index)
        order = window.args.get("order")
        keys = sort_keys(order.expressions if order is not None else [], resolver)
        return tuple(partition), keys

    def _star_fields(self, scope: Scope, star: exp.Expression) -> list[Any]:
        qualifier = star.table if isinstance(star, exp.Column) and star.table else None
        fields = [f for f in scope.fields if qualifier is None or f.qualifier == qualifier]
        if qualifier is not None and not fields:
            raise ValidationError(f"Unknown identifier '{qualifier}'")
        return [f for f in fields if not f.name.startswith("$")]

    def _aggregate(self, relation: Relation, group: exp.Group | None,
                   items: Sequence[exp.Expression], having: exp.Having | None) -> n.PlanNode:
        group_nodes = list(group.expressions) if group is not None else []
        legacy = legacy_group_window(relation.plan, relation.scope, group_nodes, list(items),
                                     self.catalog)  # GROUP BY TUMBLE(ts, ...) (issue 32)
        if legacy is not None:
            relation = Relation(legacy[0], legacy[1])
            group_nodes, items = legacy[2], legacy[3]
        input_resolver = ExpressionResolver(relation.scope, self.catalog)
        group_rex = [input_resolver.resolve(self._group_item(g, items)) for g in group_nodes]
        plan = AggregatePlan(list(group_rex))
        resolver = AggregateResolver(relation.scope, plan, self.catalog, bool(group_rex))
        outputs: list[Rex] = []
        for item in items:
            inner = item.this if isinstance(item, exp.Alias) else item
            if _is_star(inner):
                raise ValidationError("'*' is not allowed in a GROUP BY query's SELECT list")
            outputs.append(resolver.resolve(inner))
        names = self._names(items, aggregate=True)
        condition = resolver.resolve(having.this) if having is not None else None
        pre = n.Calc(n.fields_of([f"$f{i}" for i in range(len(plan.pre_projection))],
                                 [r.type for r in plan.pre_projection]),
                     relation.plan, tuple(plan.pre_projection))
        pre_plan = fuse_calcs(pre)
        group_names = [_group_name(g, i) for i, g in enumerate(group_nodes)]
        aggregate = n.Aggregate(
            n.fields_of(group_names + [f"EXPR${i}" for i in range(len(plan.calls))],
                        [r.type for r in group_rex] + [c.type for c in plan.calls]),
            pre_plan, tuple(range(len(group_rex))), tuple(plan.calls))
        aggregate = window_aggregate(aggregate)  # type: ignore[assignment]
        names = unique_names(names)
        return fuse_calcs(n.Calc(n.fields_of(names, [o.type for o in outputs]), aggregate,
                                 tuple(outputs), condition))

    def _group_item(self, node: exp.Expression, items: Sequence[exp.Expression]
                    ) -> exp.Expression:
        """GROUP BY may name a SELECT alias or position (``GROUP BY 1``)."""
        if isinstance(node, exp.Literal) and not node.is_string:
            index = int(node.this) - 1
            item = items[index]
            return item.this if isinstance(item, exp.Alias) else item
        return node

    def _order_limit(self, plan: n.PlanNode, query: exp.Expression, scope: Scope
                     ) -> n.PlanNode:
        order = query.args.get("order")
        limit = query.args.get("limit")
        offset = query.args.get("offset")
        fetch = _integer(limit.expression if limit is not None else None)
        skip = _integer(offset.expression if offset is not None else None) or 0
        if order is not None:
            keys = sort_keys(order.expressions, ExpressionResolver(scope, self.catalog))
            return n.Sort(plan.fields, plan, keys, skip, fetch)
        if fetch is not None or skip:
            return n.Limit(plan.fields, plan, skip, fetch)
        return plan

    # -- FROM ---------------------------------------------------------------------------------

    def _from(self, query: exp.Select) -> Relation:
        source = query.args.get("from_") or query.args.get("from")
        if source is None:
            one = n.Values((n.Field("ZERO", t.IntType(False)),), ((0,),))
            relation = Relation(one, Scope())
        else:
            relation = self._table_source(source.this)
        for join in query.args.get("joins") or []:
            relation = self._join(relation, join)
        return relation

    def _table_source(self, node: exp.Expression) -> Relation:
        if isinstance(node, exp.Table):
            if node.args.get("version") is not None:
                raise UnsupportedFeatureError("FOR SYSTEM_TIME AS OF (temporal joins come with "
                                              "issue 32)")
            path = tuple(p.name for p in (node.args.get("catalog"), node.args.get("db"),
                                          node.this) if p is not None)
            if len(path) == 1 and path[0] in self.ctes:
                plan = self.ctes[path[0]]
            else:
                plan = self.catalog.relation(path)
            alias = node.alias or path[-1]
            plan = rename(plan, _alias_columns(node))
            return Relation(plan, Scope.of(plan.names, plan.types, alias))
        if isinstance(node, exp.Subquery):
            plan = self.bind(node.this)
            plan = rename(plan, _alias_columns(node))
            return Relation(plan, Scope.of(plan.names, plan.types, node.alias or None))
        if isinstance(node, exp.Values):
            plan = self._values(node)
            return Relation(plan, Scope.of(plan.names, plan.types, node.alias or None))
        if isinstance(node, exp.Lateral):
            raise ValidationError("LATERAL TABLE needs a table before it in FROM")
        if isinstance(node, exp.TableFromRows):  # TUMBLE, HOP, CUMULATE, SESSION (issue 32)
            plan, scope = bind_window_tvf(node, self._window_input, self.catalog)
            return Relation(plan, scope)
        raise UnsupportedFeatureError(f"the FROM item {node.sql()[:60]!r}")

    def _over(self, relation: Relation, items: list[exp.Expression],
              windows: Sequence[exp.Expression]) -> tuple[Relation, list[exp.Expression]]:
        """The over aggregations of a SELECT list (``plan.over``); ``windows``: its WINDOW
        clause's named windows."""
        named = {w.this.name: w for w in windows}
        plan, scope, rewritten = bind_over(relation.plan, relation.scope, items,
                                           self._names(items), self.catalog, named)
        return Relation(plan, scope), rewritten

    def _window_input(self, node: exp.Expression) -> tuple[n.PlanNode, Scope]:
        """The table argument of a window table function (``TABLE t`` or a subquery)."""
        relation = self._table_source(node)
        return relation.plan, relation.scope

    def _join(self, left: Relation, join: exp.Join) -> Relation:
        target = join.this
        side = (join.args.get("side") or "").upper()
        kind = (join.args.get("kind") or "").upper()
        if isinstance(target, exp.Lateral):
            return self._lateral(left, target, side == "LEFT", join.args.get("on"))
        if isinstance(target, exp.Table) and target.args.get("version") is not None:
            temporal = bind_temporal_join(self.catalog, left.plan, left.scope, target, side,
                                          join.args.get("on"))  # event time (issue 32)
            if temporal is not None:
                return Relation(*temporal)
            return Relation(*bind_lookup_join(self.catalog, left.plan, left.scope, target,
                                              side, join.args.get("on")))
        right = self._table_source(target)
        offset = len(left.plan.fields)
        right_scope = Scope.of([f.name for f in right.scope.fields],
                               [f.type for f in right.scope.fields],
                               right.scope.fields[0].qualifier if right.scope.fields else None,
                               offset)
        right_scope = Scope([replace(f, index=f.index) for f in right_scope.fields])
        scope = left.scope.merged(right_scope)
        join_kind = {"LEFT": n.JoinKind.LEFT, "RIGHT": n.JoinKind.RIGHT,
                     "FULL": n.JoinKind.FULL}.get(side, n.JoinKind.INNER)
        on = join.args.get("on")
        using = join.args.get("using")
        if using:
            conditions = [exp.EQ(this=exp.column(u.name, left_name(left, u.name)),
                                 expression=exp.column(u.name, right_name(right, u.name)))
                          for u in using]
            on = conditions[0] if len(conditions) == 1 else exp.and_(*conditions)
        condition = ExpressionResolver(scope, self.catalog).resolve(on) if on is not None else (
            None)
        if condition is None and kind != "CROSS" and join_kind is not n.JoinKind.INNER:
            raise ValidationError(f"{side} JOIN needs an ON condition")
        plan = keyed_join(left.plan, right.plan, join_kind, condition,  # an interval join,
                          lambda join: time_bounded(window_join(join)))  # or regular (issue 32)
        return Relation(plan, join_scope(plan, scope))

    def _lateral(self, left: Relation, lateral: exp.Lateral, left_outer: bool,
                 on: exp.Expression | None) -> Relation:
        call = lateral.this
        if isinstance(call, exp.Anonymous) and str(call.this).upper() == "TABLE":
            call = call.expressions[0]
        name = function_name(call)
        function = self.catalog.user_function(name)
        if function is None or getattr(function, "_flintlock_kind", "") != "table":
            raise ValidationError(f"No table function '{name}' is registered")
        resolver = ExpressionResolver(left.scope, self.catalog)
        operands = tuple(resolver.resolve(o) for o in function_operands(call))
        result_types = function.result_types()
        alias = lateral.args.get("alias")
        columns = [c.name for c in alias.columns] if alias is not None and alias.columns else (
            [f"f{i}" for i in range(len(result_types))] if len(result_types) > 1 else ["f0"])
        qualifier = alias.name if alias is not None and alias.name else None
        offset = len(left.plan.fields)
        fields = left.plan.fields + n.fields_of(
            columns, [tr.with_nullability(dt, True) for dt in result_types])
        scope = left.scope.merged(Scope.of(columns, result_types, qualifier, offset))
        condition = None
        if on is not None:
            resolved = ExpressionResolver(scope, self.catalog).resolve(on)
            if not (isinstance(resolved, Literal) and resolved.value is True):
                condition = resolved
        plan = n.Correlate(fields, left.plan, function, operands, left_outer, condition, name)
        return Relation(plan, scope)

    def _scalar_subquery(self, node: exp.Expression) -> n.PlanNode:
        raise UnsupportedFeatureError("scalar subqueries")




def _finish_filter(plan: n.PlanNode) -> n.PlanNode:
    """A WHERE's filter once placed: fused with a Calc below, a ``rn <= N`` filter a Top-N."""
    return window_rank(rank_from_filter(fuse_calcs(plan)))


def _sql_conjuncts(node: exp.Expression) -> list[exp.Expression]:
    if isinstance(node, exp.And):
        return _sql_conjuncts(node.this) + _sql_conjuncts(node.expression)
    if isinstance(node, exp.Paren):
        return _sql_conjuncts(node.this)
    return [node]


def _is_outer(column: exp.Column, inner_names: set[str], outer: Scope) -> bool:
    qualifier = column.table
    if qualifier:
        return qualifier not in inner_names and any(
            f.qualifier == qualifier for f in outer.fields)
    return False


def _outer_columns(node: exp.Expression, inner_names: set[str], outer: Scope) -> bool:
    return any(_is_outer(c, inner_names, outer) for c in node.find_all(exp.Column))


def _correlation(node: exp.Expression, inner_names: set[str], outer: Scope
                 ) -> tuple[exp.Expression, exp.Expression] | None:
    """(inner column, outer column) of ``inner.c = outer.c``, else None."""
    if not isinstance(node, exp.EQ):
        return None
    a, b = node.this, node.expression
    if not (isinstance(a, exp.Column) and isinstance(b, exp.Column)):
        return None
    if _is_outer(b, inner_names, outer) and not _is_outer(a, inner_names, outer):
        return a, b
    if _is_outer(a, inner_names, outer) and not _is_outer(b, inner_names, outer):
        return b, a
    return None


def left_name(relation: Relation, column: str) -> str | None:
    for field in relation.scope.fields:
        if field.name == column:
            return field.qualifier
    return None


right_name = left_name


def sort_keys(items: Sequence[exp.Expression], resolver: ExpressionResolver
              ) -> tuple[n.SortKey, ...]:
    keys = []
    for item in items:
        node = item.this if isinstance(item, exp.Ordered) else item
        descending = bool(item.args.get("desc")) if isinstance(item, exp.Ordered) else False
        nulls_first = item.args.get("nulls_first") if isinstance(item, exp.Ordered) else None
        explicit = isinstance(item, exp.Ordered) and item.args.get("nulls_explicit")
        ref = resolver.resolve(node)
        if not isinstance(ref, InputRef):
            raise UnsupportedFeatureError("ORDER BY an expression (order by a column)")
        keys.append(n.SortKey(ref.index, not descending,
                              bool(nulls_first) if explicit else None))
    return tuple(keys)


def rank_from_filter(plan: n.PlanNode) -> n.PlanNode:
    """``rn <= N`` over a ROW_NUMBER column becomes a Top-N ``Rank`` (Flink's rule)."""
    if not isinstance(plan, n.Calc) or not isinstance(plan.input, RowNumberMarker):
        return plan
    marker: RowNumberMarker = plan.input
    rn_index = len(marker.fields) - 1
    limit = None
    rest: list[Rex] = []
    for conjunct in conjuncts(plan.condition):
        bound = _rank_bound(conjunct, rn_index)
        if bound is not None and limit is None:
            limit = bound
        else:
            rest.append(conjunct)
    if limit is None:
        return plan
    uses_number = any(rn_index in input_refs(p) for p in plan.projections) or any(
        rn_index in input_refs(r) for r in rest)
    source: n.PlanNode = marker.input  # type: ignore[attr-defined]
    fields = marker.fields if uses_number else marker.fields[:-1]
    rank = n.Rank(fields, source, marker.partition, marker.order, limit,  # type: ignore[attr-defined]
                  uses_number)
    condition = None
    if rest:
        condition = rest[0] if len(rest) == 1 else Call(t.BooleanType(True), "AND", tuple(rest))
    return n.Calc(plan.fields, rank, plan.projections, condition)


def _rank_bound(condition: Rex, rn_index: int) -> int | None:
    if not isinstance(condition, Call) or len(condition.operands) != 2:
        return None
    a, b = condition.operands
    if isinstance(a, InputRef) and a.index == rn_index and isinstance(b, Literal):
        value = int(b.value)
        return {"<=": value, "<": value - 1, "=": value if value == 1 else None}.get(
            condition.function)
    if isinstance(b, InputRef) and b.index == rn_index and isinstance(a, Literal):
        value = int(a.value)
        return {">=": value, ">": value - 1}.get(condition.function)
    return None


def rename(plan: n.PlanNode, names: list[str] | None) -> n.PlanNode:
    """``plan`` with its fields renamed (``AS t(a, b)``); the same plan when no names."""
    if not names:
        return plan
    if len(names) != len(plan.fields):
        raise ValidationError(
            f"List of column aliases must have same degree as table; table has "
            f"{len(plan.fields)} columns ({', '.join(plan.names)}), whereas alias list has "
            f"{len(names)} columns")
    return project_fields(plan, names)


def _alias_columns(node: exp.Expression) -> list[str] | None:
    alias = node.args.get("alias")
    if isinstance(alias, exp.TableAlias) and alias.columns:
        return [c.name for c in alias.columns]
    return None


def _cte_columns(cte: exp.CTE) -> list[str] | None:
    return _alias_columns(cte)


def _is_star(node: exp.Expression) -> bool:
    return isinstance(node, exp.Star) or (isinstance(node, exp.Column)
                                          and isinstance(node.this, exp.Star))


def _group_name(node: exp.Expression, index: int) -> str:
    if isinstance(node, exp.Column):
        return node.name
    return f"$g{index}"


def _integer(node: exp.Expression | None) -> int | None:
    if node is None:
        return None
    if isinstance(node, exp.Literal) and not node.is_string:
        return int(node.this)
    raise UnsupportedFeatureError("LIMIT/OFFSET with a non-literal count")


def _literal_as(literal: Rex, data_type: t.DataType) -> Any:
    value = literal.value if isinstance(literal, Literal) else None
    if value is None:
        return None
    if isinstance(data_type, t.CharType) and isinstance(value, str):
        return value.ljust(data_type.length)
    if isinstance(data_type, (t.DoubleType, t.FloatType)) and not isinstance(value, float):
        return float(value)
    if isinstance(data_type, t.DecimalType):
        import decimal

        return decimal.Decimal(value).quantize(decimal.Decimal(1).scaleb(-data_type.scale))
    return value

