"""The changelog-mode pass: which row kinds each plan node emits, derived from its inputs.

Flink's planner decides, for every node, whether its output is *insert-only* (+I) or
*updating* (+I, -U, +U, -D): a group aggregation always updates (a key's result changes as
rows arrive); an outer join updates (a padded row is retracted when its match arrives); an
inner join, a projection, a filter, a correlate and a union update when an input does; Top-N
updates; deduplication keeping the first row is insert-only, keeping the last row updates; a
LIMIT without ORDER BY over an insert-only input stays insert-only (the first N rows, then
nothing). A sink that accepts only inserts refuses an updating input with Flink's error.

Pure functions of the plan.
"""

from __future__ import annotations

import enum

from flintlock.table.errors import TableException
from flintlock.table.plan import nodes as n


class ChangelogKind(enum.Enum):
    INSERT_ONLY = "I"
    UPDATES = "I,UB,UA,D"


def mode(node: n.PlanNode) -> ChangelogKind:
    """The row kinds ``node`` emits."""
    if isinstance(node, (n.Values,)):
        return ChangelogKind.INSERT_ONLY
    if isinstance(node, n.Scan):
        return ChangelogKind.UPDATES if scan_updates(node.table) else ChangelogKind.INSERT_ONLY
    if isinstance(node, n.StreamScan):
        return ChangelogKind.UPDATES if node.changelog else ChangelogKind.INSERT_ONLY
    if isinstance(node, (n.Aggregate, n.Rank, n.Sort)):
        return ChangelogKind.UPDATES
    if isinstance(node, n.Deduplicate):
        return ChangelogKind.UPDATES if node.keep_last else mode(node.input)
    if isinstance(node, n.Join) and node.kind in (n.JoinKind.LEFT, n.JoinKind.RIGHT,
                                                   n.JoinKind.FULL, n.JoinKind.ANTI):
        return ChangelogKind.UPDATES
    if type(node).__name__ == "TemporalJoin":  # the versioned side's changes are versions
        return mode(node.inputs[0])
    if any(mode(child) is ChangelogKind.UPDATES for child in node.inputs):
        return ChangelogKind.UPDATES
    return ChangelogKind.INSERT_ONLY


def scan_updates(table: n.TableSpec) -> bool:
    """Whether a connector table's source emits updates (changelog formats)."""
    fmt = table.options.get("format", table.options.get("value.format", ""))
    return fmt in ("debezium-json", "canal-json", "maxwell-json") or table.options.get(
        "connector") == "upsert-kafka"


def describe(node: n.PlanNode) -> str:
    """The node as Flink's error message names it: ``GroupAggregate(groupBy=[k], ...)``."""
    if isinstance(node, n.TableAggregate):
        group = ", ".join(node.input.names[i] for i in node.group)
        return f"GroupTableAggregate(groupBy=[{group}], select=[{', '.join(node.names)}])"
    if isinstance(node, n.Aggregate):
        group = ", ".join(node.input.names[i] for i in node.group)
        select = ", ".join(node.names)
        return f"GroupAggregate(groupBy=[{group}], select=[{select}])" if group else (
            f"GroupAggregate(select=[{select}])")
    if isinstance(node, n.Join):
        return f"Join(joinType=[{node.kind.value.title()}Join])"
    if isinstance(node, n.Rank):
        return "Rank(strategy=[RetractStrategy], rankType=[ROW_NUMBER])"
    return type(node).__name__


def first_updating(node: n.PlanNode) -> n.PlanNode:
    """The node nearest the sources that starts producing updates (for error messages)."""
    for child in node.inputs:
        if mode(child) is ChangelogKind.UPDATES:
            return first_updating(child)
    return node


def check_sink(sink_name: str, accepts_updates: bool, query: n.PlanNode) -> None:
    """Refuses an updating query into an append-only sink, as Flink does."""
    if accepts_updates or mode(query) is ChangelogKind.INSERT_ONLY:
        return
    raise TableException(
        f"Table sink '{sink_name}' doesn't support consuming update changes which is produced "
        f"by node {describe(first_updating(query))}")
