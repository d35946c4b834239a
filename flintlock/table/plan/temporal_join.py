"""Binding an event-time temporal join, Flink's ``TemporalJoin`` on row time:

    SELECT ... FROM orders AS o
    [LEFT] JOIN rates FOR SYSTEM_TIME AS OF o.o_ts AS r ON o.currency = r.currency

``bind_temporal_join`` takes the join when the ``AS OF`` expression is the left input's rowtime
attribute (else it returns None and the processing-time lookup join of ``lookup_join`` is
tried). The right side must be a versioned table: a table with a ``PRIMARY KEY`` and a
rowtime (a connector table, e.g. a changelog format or an insert-only table whose rows are
new versions of their key; a view over one that keeps both). The ON condition's equalities
must cover the primary key (Flink's errors otherwise); they key the join, the rest filters
it. INNER and LEFT only. The output's fields keep their time attributes (print_schema shows
both rowtimes, as Flink's does). A view keeping each key's latest row by rowtime
(``ROW_NUMBER() OVER (PARTITION BY k ORDER BY rowtime DESC) = 1`` over an insert-only table)
is a versioned table keyed by ``k``, as in Flink.

Pure: builds plan nodes on the driver.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from flintlock.table.errors import ValidationError
from flintlock.table.plan import nodes as n
from flintlock.table.plan.changelog import ChangelogKind, mode
from flintlock.table.plan.joins import join_scope, make_join
from flintlock.table.plan.resolver import ExpressionResolver, Scope
from flintlock.table.plan.rex import InputRef
from flintlock.table.plan.time_join_nodes import TemporalJoin
from flintlock.table.time_attributes import is_rowtime

__all__ = ["bind_temporal_join"]


def bind_temporal_join(catalog: Any, left: n.PlanNode, left_scope: Scope, target: exp.Table,
                       side: str, on: exp.Expression | None
                       ) -> tuple[n.PlanNode, Scope] | None:
    """The TemporalJoin of ``left`` with the versioned ``target`` and the joined scope, or
    None when ``FOR SYSTEM_TIME AS OF`` is not an event-time attribute."""
    moment = ExpressionResolver(left_scope, catalog).resolve(target.args["version"].expression)
    if not (isinstance(moment, InputRef) and is_rowtime(moment.type)):
        return None
    if side not in ("", "LEFT"):
        raise ValidationError("Temporal table join currently only supports INNER JOIN and "
                              f"LEFT JOIN, but was {side} JOIN.")
    path = tuple(p.name for p in (target.args.get("catalog"), target.args.get("db"),
                                  target.this) if p is not None)
    right = catalog.relation(path)
    name = ".".join(path)
    key = _primary_key(right)
    times = [i for i, f in enumerate(right.fields) if is_rowtime(f.type)]
    if key is None:
        raise ValidationError(
            "Temporal Table Join requires primary key in versioned table, but no primary key "
            f"can be found. The physical plan is: versioned table {name}")
    if not times:
        raise ValidationError(
            f"Event-Time Temporal Table Join requires both primary key and row time attribute "
            f"in versioned table, but no row time attribute can be found in {name}")
    scope = left_scope.merged(Scope.of(right.names, right.types, target.alias or path[-1],
                                       len(left.fields)))
    if on is None:
        raise ValidationError(f"Temporal table join requires an equality condition on fields "
                              f"of table [{name}].")
    kind = n.JoinKind.LEFT if side == "LEFT" else n.JoinKind.INNER
    join = make_join(left, right, kind, ExpressionResolver(scope, catalog).resolve(on))
    covered = {right.names[i] for i in join.right_keys}
    if not set(key) <= covered:
        raise ValidationError(
            f"Temporal table's primary key [{', '.join(key)}] must be included in the "
            f"equivalence condition of temporal join, but current temporal join condition is "
            f"[{', '.join(sorted(covered))}].")
    plan = TemporalJoin(join.fields, left, right, kind, join.left_keys, join.right_keys,
                        join.condition, moment.index, times[0])
    return plan, join_scope(plan, scope)


def _primary_key(plan: n.PlanNode) -> tuple[str, ...] | None:
    """The unique key of ``plan``'s versions, if its columns are all there: the primary key of
    the connector table it reads, or the partition of a deduplication keeping each key's
    latest row by rowtime (``ROW_NUMBER() OVER (PARTITION BY k ORDER BY rowtime DESC) = 1``
    over an insert-only input, Flink's versioned view)."""
    node = plan
    key: tuple[str, ...] | None = None
    while len(node.inputs) == 1:
        if isinstance(node, n.Rank):
            key = _deduplicated_key(node)
            break
        node = node.inputs[0]
    if isinstance(node, n.Scan) and node.table.primary_key:
        key = tuple(node.table.primary_key)
    return key if key is not None and set(key) <= set(plan.names) else None


def _deduplicated_key(rank: n.Rank) -> tuple[str, ...] | None:
    if rank.limit != 1 or rank.output_number or not rank.partition or not rank.order:
        return None
    first = rank.order[0]
    if first.ascending or not is_rowtime(rank.input.fields[first.index].type):
        return None
    if mode(rank.input) is not ChangelogKind.INSERT_ONLY:
        return None
    return tuple(rank.input.names[i] for i in rank.partition)
