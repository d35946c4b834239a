"""``explain()``: a plan in flintlock's own words.

Flink prints Calcite's abstract syntax tree and its optimized plans; flintlock prints its
logical plan (what the binder made) and what each node runs as (the operator the planner uses,
with its changelog mode), indented as a tree::

    == Logical Plan ==
    Aggregate(group=[country], calls=[COUNT(id), MAX($f2)])
    +- Calc(select=[country, id, CAST(tel AS BIGINT) AS $f2])
       +- Values(fields=[id, data], rows=4)

    == Physical Plan ==
    GroupAggregate(groupBy=[country], select=[country, EXPR$0, EXPR$1]) [changelog: I,UB,UA,D]
    ...

Pure functions of the plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flintlock.table import types as t
from flintlock.table.explain_detail import ExplainDetail
from flintlock.table.plan import nodes as n
from flintlock.table.plan.changelog import mode
from flintlock.table.plan.rex import Call, InputRef, Literal, Rex, UdfCall


def explain_plan(plans: Sequence[n.PlanNode], details: Sequence[Any] = ()) -> str:
    logical = "\n".join(_tree(plan, _logical) for plan in plans)
    physical = "\n".join(_tree(plan, _physical(ExplainDetail.CHANGELOG_MODE in details))
                         for plan in plans)
    return f"== Logical Plan ==\n{logical}\n\n== Physical Plan ==\n{physical}\n"


def _tree(plan: n.PlanNode, describe: Any, prefix: str = "", child_prefix: str = "") -> str:
    lines = [prefix + describe(plan)]
    children = plan.inputs
    for index, child in enumerate(children):
        last = index == len(children) - 1
        lines.append(_tree(child, describe, child_prefix + ("+- " if last else ":- "),
                           child_prefix + ("   " if last else ":  ")))
    return "\n".join(lines)


def rex_text(rex: Rex, names: Sequence[str]) -> str:
    if isinstance(rex, InputRef):
        return names[rex.index] if rex.index < len(names) else f"${rex.index}"
    if isinstance(rex, Literal):
        return "NULL" if rex.value is None else (
            f"'{rex.value}'" if isinstance(rex.value, str) else str(rex.value))
    if isinstance(rex, UdfCall):
        return f"{rex.name}({', '.join(rex_text(o, names) for o in rex.operands)})"
    if isinstance(rex, Call):
        operands = [rex_text(o, names) for o in rex.operands]
        if rex.function in ("CAST", "TRY_CAST"):
            return f"{rex.function}({operands[0]} AS {t.sql_string(rex.type)})"
        if not rex.function.isidentifier() and len(operands) == 2:
            return f"{operands[0]} {rex.function} {operands[1]}"
        return f"{rex.function}({', '.join(operands)})"
    return repr(rex)


def _logical(plan: n.PlanNode) -> str:
    if isinstance(plan, n.Calc):
        names = plan.input.names
        select = ", ".join(_aliased(rex_text(p, names), name)
                           for p, name in zip(plan.projections, plan.names, strict=True))
        where = f", where=[{rex_text(plan.condition, names)}]" if plan.condition else ""
        return f"Calc(select=[{select}]{where})"
    if isinstance(plan, n.TableAggregate):
        names = plan.input.names
        group = ", ".join(names[i] for i in plan.group)
        return f"TableAggregate(group=[{group}], call=[{_call_text(plan.calls[0], names)}])"
    if isinstance(plan, n.Aggregate):
        names = plan.input.names
        group = ", ".join(names[i] for i in plan.group)
        calls = ", ".join(_call_text(c, names) for c in plan.calls)
        return f"Aggregate(group=[{group}], calls=[{calls}])"
    if isinstance(plan, n.Scan):
        return f"Scan(table=[{plan.table.name}], fields=[{', '.join(plan.names)}])"
    if isinstance(plan, n.Values):
        return f"Values(fields=[{', '.join(plan.names)}], rows={len(plan.rows)})"
    if isinstance(plan, n.Join):
        names = plan.left.names + plan.right.names
        keys = ", ".join(f"{plan.left.names[a]} = {plan.right.names[b]}"
                         for a, b in zip(plan.left_keys, plan.right_keys, strict=True))
        rest = f", where=[{rex_text(plan.condition, names)}]" if plan.condition else ""
        return f"Join(joinType=[{plan.kind.value}], keys=[{keys}]{rest})"
    if isinstance(plan, n.Correlate):
        return f"Correlate(function=[{plan.function_name}], fields=[{', '.join(plan.names)}], " \
               f"joinType=[{'LEFT' if plan.left_outer else 'INNER'}])"
    if isinstance(plan, n.Rank):
        names = plan.input.names
        return (f"Rank(partitionBy=[{', '.join(names[i] for i in plan.partition)}], "
                f"orderBy=[{_order(plan.order, names)}], rankRange=[1..{plan.limit}], "
                f"rankNumber=[{str(plan.output_number).lower()}])")
    if isinstance(plan, n.Sort):
        return f"Sort(orderBy=[{_order(plan.order, plan.input.names)}], offset=[{plan.offset}]" \
               f", fetch=[{plan.fetch}])"
    if isinstance(plan, n.Limit):
        return f"Limit(offset=[{plan.offset}], fetch=[{plan.fetch}])"
    if isinstance(plan, n.Union):
        return f"Union(all=[true], fields=[{', '.join(plan.names)}])"
    if isinstance(plan, n.Sink):
        return f"Sink(table=[{plan.table.name}], fields=[{', '.join(plan.names)}])"
    summary = getattr(plan, "explain_summary", None)  # the window nodes' own (issue 32)
    if summary is not None:
        return str(summary())
    return f"{type(plan).__name__}(fields=[{', '.join(plan.names)}])"


def _physical(with_mode: bool) -> Any:
    def describe(plan: n.PlanNode) -> str:
        text = _logical(plan)
        operator = {n.Aggregate: "GroupAggregate (keyed process function)",
                    n.TableAggregate: "GroupTableAggregate (keyed, a bundle at a time)",
                    n.Join: "Join (keyed co-process function)",
                    n.Rank: "Rank (keyed process function)",
                    n.Calc: "Calc (compiled map/filter)",
                    n.Correlate: "Correlate (flat map)"}.get(type(plan))
        if operator is not None:
            text += f" -> {operator}"
        if with_mode:
            text += f", changelogMode=[{mode(plan).value}]"
        return text
    return describe


def _aliased(text: str, name: str) -> str:
    return text if text == name else f"{text} AS {name}"


def _call_text(call: n.AggregateCall, names: Sequence[str]) -> str:
    args = ", ".join(names[i] for i in call.args) or "*"
    distinct = "DISTINCT " if call.distinct else ""
    return f"{call.name.upper()}({distinct}{args})"


def _order(keys: Sequence[n.SortKey], names: Sequence[str]) -> str:
    return ", ".join(f"{names[k.index]} {'ASC' if k.ascending else 'DESC'}" for k in keys)
