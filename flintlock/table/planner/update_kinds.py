"""Which group aggregations need not emit UPDATE_BEFORE rows (Flink's update-kind trait).

Flink's changelog-mode inference asks, from the sinks down, whether each node's consumers
need the ``-U`` row before a ``+U`` (BEFORE_AND_AFTER) or only the new row (ONLY_UPDATE_AFTER),
and a group aggregation emits ``-U`` only in the first case (``generateUpdateBefore``). The
sink decides first: the blackhole connector drops UPDATE_BEFORE from the changelog mode it
accepts, so a GROUP BY into a blackhole table emits ``+I``/``+U``/``-D`` only; a print,
collect, filesystem or Kafka sink keeps it. The requirement passes unchanged through a
projection (a Calc without a condition; Flink's FLINK-9528 rule: a Calc *with* a condition
needs ``-U``, a filter on an updated value must retract the old row) and a UNION ALL; every
other consumer — an aggregation retracting its input, a join, a rank — is taken to need
``-U``, as the rest of flintlock's planner assumes (conservative: never fewer rows than a
consumer needs). A node reached by several paths (a statement set) drops ``-U`` only if no
path needs it.

``aggregates_without_update_before(sinks)`` returns the ids of the ``Aggregate`` and ``Rank``
nodes (Top-N: Flink's rank honours the trait too) whose ``-U`` no consumer needs; the
translator builds those with ``generate_update_before=False``.
Pure function of the plan.
"""

from __future__ import annotations

from collections.abc import Iterable

from flintlock.table.plan import nodes as n

_NO_UPDATE_BEFORE_SINKS = frozenset({"blackhole"})
"""Connectors whose table sink accepts updates without UPDATE_BEFORE (Flink's
``BlackHoleTableSinkFactory`` removes it from the requested changelog mode)."""


def sink_needs_update_before(sink: n.Sink) -> bool:
    """Whether ``sink``'s connector wants the ``-U`` rows of an updating input."""
    return sink.table.options.get("connector") not in _NO_UPDATE_BEFORE_SINKS


def aggregates_without_update_before(sinks: Iterable[n.Sink]) -> frozenset[int]:
    """The ids of the ``Aggregate`` and ``Rank`` nodes under ``sinks`` that no consumer needs
    ``-U`` from."""
    needs: dict[int, bool] = {}
    aggregates: set[int] = set()
    pending: list[tuple[n.PlanNode, bool]] = [
        (sink.input, sink_needs_update_before(sink)) for sink in sinks]
    while pending:
        node, need = pending.pop()
        seen = needs.get(id(node))
        if seen is not None and (seen or not need):
            continue  # already visited with this requirement or a stronger one
        needs[id(node)] = need
        if type(node) is n.Aggregate or type(node) is n.Rank:  # Rank: issue 33 (q19)
            aggregates.add(id(node))
        passes = (isinstance(node, n.Calc) and node.condition is None) or isinstance(
            node, n.Union)
        pending.extend((child, need if passes else True) for child in node.inputs)
    return frozenset(i for i in aggregates if not needs[i])
