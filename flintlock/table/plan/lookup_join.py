"""Binding a processing-time lookup join, Flink's ``LookupJoin``:

    SELECT ... FROM orders AS o
    [LEFT] JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer_id = c.id

The ``AS OF`` expression must be the probe side's processing-time attribute (a column made by
``PROCTIME()``); the dimension table must be a connector table with a lookup side (``jdbc``)
and no computed columns. The ON condition's equalities between a dimension column and a probe
expression are the lookup keys (at least one, as Flink requires); the rest of it filters the
joined rows. The join becomes a ``Correlate`` of the probe side with the connector's
``LookupTableFunction`` (``flintlock.table.connectors.lookup``): each probe row asks the
table for the rows of its key *now* (through the connector's cache, if it has one), so the
output is insert-only when the probe side is, and a LEFT join pads a probe row without a match
with NULLs. A rowtime ``AS OF`` (an event-time temporal join against a versioned table) is not
this module's: it stays an UnsupportedFeatureError here.

Pure: builds plan nodes on the driver. The connector's options and key columns are checked now
(``lookup.check``), so a wrong table fails when the query is planned.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from flintlock.table.errors import UnsupportedFeatureError, ValidationError
from flintlock.table.plan import nodes as n
from flintlock.table.plan.joins import make_join
from flintlock.table.plan.resolver import ExpressionResolver, Scope
from flintlock.table.plan.rex import InputRef
from flintlock.table.time_attributes import is_proctime, is_rowtime


def bind_lookup_join(catalog: Any, left: n.PlanNode, left_scope: Scope, target: exp.Table,
                     side: str, on: exp.Expression | None) -> tuple[n.PlanNode, Scope]:
    """The Correlate of ``left`` with the lookup of ``target``, and the joined scope."""
    from flintlock.table.connectors import lookup  # the connector layer, at planning time

    if side not in ("", "LEFT"):
        raise ValidationError("Temporal table join currently only supports INNER JOIN and "
                              f"LEFT JOIN, but was {side} JOIN.")
    _check_as_of(catalog, left_scope, target.args["version"])
    path = tuple(p.name for p in (target.args.get("catalog"), target.args.get("db"),
                                  target.this) if p is not None)
    right = catalog.relation(path)
    if not isinstance(right, n.Scan):
        raise UnsupportedFeatureError(f"a lookup join against {'.'.join(path)}",
                                      "it must be a connector table without computed columns")
    scope = left_scope.merged(Scope.of(right.names, right.types, target.alias or path[-1],
                                       len(left.fields)))
    if on is None:
        raise ValidationError(f"Temporal table join requires an equality condition on fields "
                              f"of table [{right.table.name}].")
    kind = n.JoinKind.LEFT if side == "LEFT" else n.JoinKind.INNER
    join = make_join(left, right, kind, ExpressionResolver(scope, catalog).resolve(on))
    if not join.left_keys:
        raise ValidationError(f"Temporal table join requires an equality condition on fields "
                              f"of table [{right.table.name}].")
    keys = [right.names[i] for i in join.right_keys]
    lookup.check(right.table, keys)
    operands = tuple(InputRef(left.types[i], i) for i in join.left_keys)
    plan = n.Correlate(join.fields, left, lookup.LookupTableFunction(right.table, keys),
                       operands, kind is n.JoinKind.LEFT, join.condition,
                       f"LookupJoin[{right.table.name}]")
    return plan, scope


def _check_as_of(catalog: Any, scope: Scope, version: exp.Expression) -> None:
    moment = ExpressionResolver(scope, catalog).resolve(version.expression)
    if is_proctime(moment.type):
        return
    if is_rowtime(moment.type):
        raise UnsupportedFeatureError("an event-time temporal join (FOR SYSTEM_TIME AS OF a "
                                      "rowtime attribute)")
    raise ValidationError("Temporal table join currently only supports 'FOR SYSTEM_TIME AS OF' "
                          "left table's time attribute field")


__all__ = ["bind_lookup_join"]
