"""Binding event time and windows (issue 32): watermarks on tables, the window table functions
TUMBLE, HOP, CUMULATE and SESSION, and Flink's rewrite of a GROUP BY over one into a window
aggregation.

* ``with_watermark(plan, column, expression, functions)``: a table's ``WATERMARK FOR column AS
  expression`` (DDL, ``Schema.watermark``) — ``column`` becomes the rowtime attribute
  (``TIMESTAMP(3) *ROWTIME*``) and the plan a ``WatermarkAssigner`` over it;
  ``SOURCE_WATERMARK()`` keeps a DataStream's own watermarks.
* ``bind_window_tvf(node, relation_of, functions)``: ``TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts),
  INTERVAL ...))`` and its siblings, positional or named (``DATA =>``, ``TIMECOL =>``,
  ``SIZE =>``, ``SLIDE =>``, ``STEP =>``, ``GAP =>``, ``OFFSET =>``), as a
  ``WindowTableFunction`` whose rows are the input's plus ``window_start``, ``window_end``
  and ``window_time``.
* ``window_aggregate(aggregate)``: an ``Aggregate`` whose keys include ``window_start`` and
  ``window_end`` of a window table function (Flink's rule) becomes a ``WindowAggregate`` over
  the function's input, with a Calc giving the aggregate's own fields; anything else is
  returned as it is (a regular, updating group aggregation).

Errors are Flink's ``ValidationError`` texts where a user can make them. Pure functions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from flintlock.table import types as t
from flintlock.table.errors import TableException, UnsupportedFeatureError, ValidationError
from flintlock.table.plan import nodes as n
from flintlock.table.plan.resolver import ExpressionResolver, FunctionCatalog, Scope
from flintlock.table.plan.rex import InputRef, Literal, Rex, input_refs, remap
from flintlock.table.plan.window_nodes import (
    WatermarkAssigner,
    WindowAggregate,
    WindowJoin,
    WindowRank,
    WindowSpec,
    WindowTableFunction,
)
from flintlock.table.sql.nodes import TableArgument
from flintlock.table.time_attributes import (
    as_rowtime,
    is_proctime,
    is_rowtime,
    materialized,
    proctime_type,
    time_attribute,
    valid_rowtime_type,
)

WINDOW_COLUMNS = ("window_start", "window_end", "window_time")

__all__ = ["WINDOW_COLUMNS", "bind_window_tvf", "window_aggregate", "window_join",
           "window_rank", "with_watermark"]


# -- watermarks --------------------------------------------------------------------------------

def with_watermark(plan: n.PlanNode, column: str, expression: exp.Expression,
                   functions: FunctionCatalog) -> n.PlanNode:
    """``plan`` with ``column`` as its rowtime attribute and the watermark ``expression``."""
    names = plan.names
    if column not in names:
        raise ValidationError(
            f"Invalid column name '{column}' for rowtime attribute in watermark declaration. "
            f"Available columns are: [{', '.join(names)}]")
    index = names.index(column)
    rowtime_type = plan.fields[index].type
    if not valid_rowtime_type(rowtime_type):
        raise ValidationError(
            f"Invalid data type of time field for watermark definition. The field must be of "
            f"type TIMESTAMP(p) or TIMESTAMP_LTZ(p), the supported precision 'p' is from 0 to "
            f"3, but the time field type is {t.sql_string(rowtime_type)}")
    fields = list(plan.fields)
    fields[index] = n.Field(column, as_rowtime(rowtime_type))
    if _is_source_watermark(expression):
        return WatermarkAssigner(tuple(fields), plan, index, None)
    scope = Scope.of(plan.names, [materialized(dt) for dt in plan.types])
    watermark = ExpressionResolver(scope, functions).resolve(expression)
    if not valid_rowtime_type(watermark.type) and not isinstance(
            watermark.type, (t.TimestampType, t.LocalZonedTimestampType)):
        raise ValidationError(
            f"Watermark strategy {expression.sql()} must be of type TIMESTAMP or TIMESTAMP_LTZ "
            f"but is of type '{t.sql_string(watermark.type)}'.")
    return WatermarkAssigner(tuple(fields), plan, index, watermark)


def _is_source_watermark(expression: exp.Expression) -> bool:
    name = expression.name if isinstance(expression, exp.Anonymous) else ""
    return str(name).upper() == "SOURCE_WATERMARK"


# -- window table functions --------------------------------------------------------------------

_PARAMETERS = {
    "TUMBLE": ("DATA", "TIMECOL", "SIZE", "OFFSET"),
    "HOP": ("DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"),
    "CUMULATE": ("DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"),
    "SESSION": ("DATA", "TIMECOL", "GAP"),
}


def is_window_tvf(node: exp.Expression) -> bool:
    call = node.this if isinstance(node, exp.TableFromRows) else None
    return isinstance(call, exp.Anonymous) and str(call.this).upper() in _PARAMETERS


def bind_window_tvf(node: exp.TableFromRows,
                    relation_of: Callable[[exp.Expression], tuple[n.PlanNode, Scope]],
                    functions: FunctionCatalog) -> tuple[n.PlanNode, Scope]:
    """The plan and scope of ``TABLE(<window function>(...)) [AS alias]``; ``relation_of``
    binds the table argument (a table name or a subquery) in the caller's context."""
    call = node.this
    kind = str(call.this).upper()
    if kind not in _PARAMETERS:
        raise UnsupportedFeatureError(f"the table function {call.this} in FROM")
    arguments = _arguments(kind, list(call.expressions))
    data = arguments.get("DATA")
    if not isinstance(data, TableArgument):
        raise ValidationError(f"The first argument of {kind} must be a table: TABLE t")
    plan, scope = relation_of(data.this)
    partition = tuple(scope.lookup(c.name, c.table or None).index
                      for c in data.args.get("partition_by") or [])
    if partition and kind != "SESSION":
        raise ValidationError(f"Only SESSION window supports PARTITION BY, not {kind}")
    time_field = _descriptor(arguments.get("TIMECOL"), scope, kind)
    time_type = _rowtime_type(
        plan.fields[time_field].type, "window functions on a processing-time attribute",
        f"The window function {kind}(TABLE table_name, DESCRIPTOR(timecol), ...) requires the "
        "timecol to be a time attribute type, but is {}.")
    resolver = ExpressionResolver(scope, functions)
    millis: dict[str, int] = {name: _interval(arguments.get(name), resolver, name, kind)
              for name in ("SIZE", "SLIDE", "STEP", "GAP", "OFFSET") if name in arguments}
    spec = _spec(kind, millis)
    fields = plan.fields + window_fields(time_type)
    window = WindowTableFunction(fields, plan, spec, time_field, partition)
    alias = node.args.get("alias")
    qualifier = alias.name if alias is not None and alias.name else None
    return window, Scope.of(window.names, window.types, qualifier)


def _rowtime_type(time_type: t.DataType, proctime_feature: str, not_time: str,
                  proctime: bool = True) -> t.DataType:
    """``time_type`` if it is a time attribute (a processing-time one only with ``proctime``,
    else refused as ``proctime_feature``); anything else is refused with ``not_time`` (``{}``:
    the type)."""
    if is_proctime(time_type):
        if proctime:
            return time_type
        raise UnsupportedFeatureError(proctime_feature,
                                      "declare a WATERMARK and window on the rowtime column")
    if not is_rowtime(time_type):
        raise ValidationError(not_time.format(t.sql_string(time_type)))
    return time_type


def window_fields(time_type: t.DataType, nullable: bool = False,
                  time_nullable: bool | None = None) -> tuple[n.Field, ...]:
    """``window_start`` and ``window_end`` TIMESTAMP(3) NOT NULL, ``window_time`` the rowtime
    attribute (TIMESTAMP_LTZ(3) for a TIMESTAMP_LTZ time column); ``nullable`` for the Table
    API's group windows, whose properties Flink types as nullable (``time_nullable``: the
    legacy SQL group windows' ``*_ROWTIME``, nullable where start and end are not)."""
    ltz = isinstance(time_type, t.LocalZonedTimestampType)
    null_time = nullable if time_nullable is None else time_nullable
    time = t.LocalZonedTimestampType(3, null_time) if ltz else t.TimestampType(3, null_time)
    return (n.Field("window_start", t.TimestampType(3, nullable)),
            n.Field("window_end", t.TimestampType(3, nullable)),
            n.Field("window_time", proctime_type() if is_proctime(time_type)
                    else as_rowtime(time)))


def _arguments(kind: str, operands: list[exp.Expression]) -> dict[str, exp.Expression]:
    names = _PARAMETERS[kind]
    found: dict[str, exp.Expression] = {}
    for position, operand in enumerate(operands):
        if isinstance(operand, exp.Kwarg):
            name = operand.this.name.upper()
            if name not in names:
                raise ValidationError(f"{kind} has no parameter named {name}; its parameters "
                                      f"are {', '.join(names)}")
            found[name] = operand.expression
        elif position < len(names):
            found[names[position]] = operand
        else:
            raise ValidationError(f"Too many arguments to {kind}: it takes {len(names)}")
    required = names[:-1] if names[-1] == "OFFSET" else names
    missing = [name for name in required if name not in found]
    if missing:
        raise ValidationError(f"{kind} is missing its {', '.join(missing)} argument")
    return found


def _descriptor(node: exp.Expression | None, scope: Scope, kind: str) -> int:
    if not (isinstance(node, exp.Anonymous) and str(node.this).upper() == "DESCRIPTOR"):
        raise ValidationError(f"The time column of {kind} is given as DESCRIPTOR(column)")
    columns = list(node.expressions)
    if len(columns) != 1 or not isinstance(columns[0], exp.Column):
        raise ValidationError(f"{kind} takes one time column in its DESCRIPTOR")
    return scope.lookup(columns[0].name).index


def _interval(node: exp.Expression | None, resolver: ExpressionResolver, name: str,
              kind: str) -> int:
    value = resolver.resolve(node) if node is not None else None
    if not isinstance(value, Literal) or not hasattr(value.value, "total_seconds"):
        raise ValidationError(f"The {name} of {kind} must be an interval literal such as "
                              "INTERVAL '10' MINUTES")
    seconds: float = value.value.total_seconds()
    millis = round(seconds * 1000)
    if millis <= 0 and name != "OFFSET":
        raise ValidationError(f"The {name} of {kind} must be positive")
    return millis


def _spec(kind: str, millis: dict[str, int]) -> WindowSpec:
    offset = millis.get("OFFSET", 0)
    if kind == "TUMBLE":
        return WindowSpec(kind, size=millis["SIZE"], offset=offset)
    if kind == "SESSION":
        return WindowSpec(kind, gap=millis["GAP"])
    size = millis["SIZE"]
    slide = millis["SLIDE"] if kind == "HOP" else millis["STEP"]
    if size % slide != 0:
        what = "slide" if kind == "HOP" else "step"
        raise ValidationError(
            f"{kind} table function based aggregate requires size must be an integral "
            f"multiple of {what}, but got size {size} ms and {what} {slide} ms.")
    return WindowSpec(kind, size=size, slide=slide, offset=offset)


# -- the Table API's group windows -------------------------------------------------------------

_GROUP_WINDOW_KINDS = {"TUMBLE": "TUMBLE", "SLIDE": "HOP", "SESSION": "SESSION"}


def group_window_input(plan: n.PlanNode, scope: Scope, window: Any,
                       functions: FunctionCatalog, legacy_sql: bool = False
                       ) -> tuple[n.PlanNode, Scope]:
    """The window table function a Table API group window (``flintlock.table.window.
    GroupWindow``) stands for, over ``plan``; its window columns are nullable, as Flink types
    the properties of a group window."""
    def to_node(value: Any) -> exp.Expression:  # a Table API Expression or a syntax tree
        node: exp.Expression = getattr(value, "_node", value)
        return node

    kind = _GROUP_WINDOW_KINDS[window.kind]
    if window.time_field is None:
        raise ValidationError(f"A {window.kind.title()} window needs its time field: "
                              ".on(col('rowtime'))")
    field = to_node(window.time_field)
    if not isinstance(field, exp.Column):
        raise ValidationError("A group window's time field must be a column: .on(col('ts'))")
    time_field = scope.lookup(field.name).index
    time_type = _rowtime_type(
        plan.fields[time_field].type, "processing-time group windows",
        "A group window expects a time attribute for grouping in a stream environment, but "
        f"'{field.name}' is {{}}.")
    resolver = ExpressionResolver(scope, functions)
    millis = {name: _interval(to_node(value), resolver, name, kind)
              for name, value in (("SIZE", window.size), ("SLIDE", window.slide),
                                  ("GAP", window.gap)) if value is not None}
    if kind == "HOP" and "SLIDE" not in millis:
        raise ValidationError("A Slide window needs its slide: Slide.over(size).every(slide)")
    spec = WindowSpec(kind, size=millis.get("SIZE", 0), slide=millis.get("SLIDE", 0),
                      gap=millis.get("GAP", 0))  # a Slide's size need not be a multiple
    fields = plan.fields + (window_fields(time_type, time_nullable=True) if legacy_sql
                            else window_fields(time_type, nullable=True))
    node = WindowTableFunction(fields, plan, spec, time_field)
    return node, scope.merged(Scope.of(list(WINDOW_COLUMNS), [f.type for f in fields[-3:]],
                                       None, len(plan.fields)))


# -- the legacy SQL group windows: GROUP BY TUMBLE(ts, INTERVAL ...) ------------------------

_LEGACY = {"TUMBLE": ("TUMBLE", ("SIZE",)), "HOP": ("SLIDE", ("SLIDE", "SIZE")),
           "SESSION": ("SESSION", ("GAP",))}
_LEGACY_PROPERTIES = {"_START": "window_start", "_END": "window_end",
                      "_ROWTIME": "window_time"}


@dataclass(frozen=True)
class _LegacyWindow:
    kind: str
    size: Any = None
    slide: Any = None
    gap: Any = None
    time_field: Any = None


def legacy_group_window(plan: n.PlanNode, scope: Scope, group: list[exp.Expression],
                        items: list[exp.Expression], functions: FunctionCatalog
                        ) -> tuple[n.PlanNode, Scope, list[exp.Expression],
                                   list[exp.Expression]] | None:
    """``GROUP BY TUMBLE(ts, size) | HOP(ts, slide, size) | SESSION(ts, gap)`` as the window
    table function over ``plan`` with the call replaced by the window's columns, and
    ``TUMBLE_START(...)`` / ``_END`` / ``_ROWTIME`` (and HOP_, SESSION_) in the SELECT list
    as those columns (keeping the names SQL gives them); None without such a GROUP BY."""
    calls = [g for g in group if isinstance(g, exp.Anonymous) and str(g.this).upper() in
             _LEGACY]
    if not calls:
        return None
    if len(calls) > 1:
        raise ValidationError("A GROUP BY may name one group window")
    call = calls[0]
    name = str(call.this).upper()
    kind, parameters = _LEGACY[name]
    operands = list(call.expressions)
    if len(operands) != len(parameters) + 1:
        raise ValidationError(f"{name} takes the time column and {' and '.join(parameters)}")
    window = _LegacyWindow(kind, time_field=operands[0], **{
        p.lower(): operand for p, operand in zip(parameters, operands[1:], strict=True)})
    window_plan, window_scope = group_window_input(plan, scope, window, functions, True)
    new_group = [g for g in group if g is not call] + [exp.column(c) for c in WINDOW_COLUMNS]
    named = []
    for position, item in enumerate(items):
        inner = item.this if isinstance(item, exp.Alias) else item
        if any(isinstance(x, exp.Anonymous) and str(x.this).upper().startswith(name + "_")
               for x in inner.walk()):
            replaced = inner.transform(lambda node: _legacy_property(node, name))
            alias = item.args["alias"] if isinstance(item, exp.Alias) else exp.to_identifier(
                _default_sql_name(inner, position), quoted=True)
            item = exp.Alias(this=replaced, alias=alias)
        named.append(item)
    return window_plan, window_scope, new_group, named


def _default_sql_name(node: exp.Expression, position: int) -> str:
    return node.name if isinstance(node, exp.Column) else f"EXPR${position}"


def _legacy_property(node: exp.Expression, window: str) -> exp.Expression:
    if not isinstance(node, exp.Anonymous):
        return node
    function = str(node.this).upper()
    for suffix, column in _LEGACY_PROPERTIES.items():
        if function == window + suffix:
            return exp.column(column)
    if function == window + "_PROCTIME":
        return exp.column("window_time")
    return node


# -- window aggregation ------------------------------------------------------------------------

def window_aggregate(aggregate: n.Aggregate) -> n.PlanNode:
    """``aggregate`` as a window aggregation when it groups a window table function's rows by
    ``window_start`` and ``window_end`` (module docstring); else ``aggregate`` itself."""
    below = aggregate.input
    calc = below if isinstance(below, n.Calc) else None
    window = calc.input if calc is not None else below
    if not isinstance(window, WindowTableFunction):
        return aggregate
    width = len(window.input.fields)
    projections = calc.projections if calc is not None else tuple(
        InputRef(f.type, i) for i, f in enumerate(window.fields))
    roles: dict[int, int] = {}  # group position -> 0, 1, 2 for window_start, _end, _time
    for position, index in enumerate(aggregate.group):
        projection = projections[index]
        if isinstance(projection, InputRef) and projection.index >= width:
            roles[position] = projection.index - width
    if not {0, 1} <= set(roles.values()):
        return aggregate
    window_group = {aggregate.group[p] for p in roles}
    uses_window = [i for i, p in enumerate(projections) if i not in window_group and any(
        ref >= width for ref in input_refs(p))]
    condition = calc.condition if calc is not None else None
    if uses_window or (condition is not None and any(r >= width for r in input_refs(condition))):
        raise UnsupportedFeatureError(
            "window_start, window_end or window_time inside an expression of a window "
            "aggregation (group by them as columns)")
    return _rewrite(aggregate, window, projections, condition, roles)


def _rewrite(aggregate: n.Aggregate, window: WindowTableFunction,
             projections: tuple[Rex, ...], condition: Rex | None,
             roles: dict[int, int]) -> n.PlanNode:
    source = window.input
    window_group = {aggregate.group[p] for p in roles}
    kept = [i for i in range(len(projections)) if i not in window_group]
    position_of = {old: new for new, old in enumerate(kept)}
    mapping: dict[int, Rex] = {i: InputRef(f.type, i) for i, f in enumerate(source.fields)}
    pre = [remap(projections[i], mapping) for i in kept]
    time_ref = InputRef(source.fields[window.time_field].type, window.time_field)
    pre.append(time_ref)
    pre_names = [aggregate.input.fields[i].name for i in kept] + ["$rowtime"]
    pre_calc = n.Calc(n.fields_of(pre_names, [p.type for p in pre]), source, tuple(pre),
                      remap(condition, mapping) if condition is not None else None)
    keys = tuple(position_of[g] for p, g in enumerate(aggregate.group) if p not in roles)
    calls = tuple(_remapped_call(call, position_of) for call in aggregate.calls)
    key_fields = tuple(pre_calc.fields[k] for k in keys)
    call_fields = aggregate.fields[len(aggregate.group):]
    fields = key_fields + call_fields + window.fields[-3:]
    node = WindowAggregate(fields, pre_calc, window.window, len(pre) - 1, keys, calls)
    outputs: list[Rex] = []
    key_position = 0
    for position in range(len(aggregate.group)):
        if position in roles:
            index = len(keys) + len(calls) + roles[position]
        else:
            index = key_position
            key_position += 1
        outputs.append(InputRef(fields[index].type, index))
    outputs += [InputRef(f.type, len(keys) + i) for i, f in enumerate(call_fields)]
    out_fields = tuple(n.Field(f.name, o.type) for f, o in zip(aggregate.fields, outputs,
                                                                strict=True))
    return n.Calc(out_fields, node, tuple(outputs))


def _remapped_call(call: n.AggregateCall, position_of: dict[int, int]) -> n.AggregateCall:
    from dataclasses import replace

    return replace(call, args=tuple(position_of[a] for a in call.args),
                   filter=position_of[call.filter] if call.filter is not None else None)


def describe_window(node: Any) -> str:
    """A window node as ``explain`` names it."""
    return str(node.window.describe())


# -- window Top-N and deduplication ------------------------------------------------------------

def window_role(plan: n.PlanNode, index: int, feature: str = "Window TopN"
                ) -> tuple[int, bool] | None:
    """(0, 1 or 2 for window_start, window_end, window_time; whether on TIMESTAMP_LTZ) when
    field ``index`` of ``plan`` is a window bound read as it is, through Calcs, from a window
    table function or window aggregation; else None. A processing-time window's bound is
    refused as Flink refuses ``feature`` on it."""
    while True:
        if isinstance(plan, n.Calc):
            projection = plan.projections[index]
            if not isinstance(projection, InputRef):
                return None
            plan, index = plan.input, projection.index
        elif isinstance(plan, (WindowTableFunction, WindowAggregate)):
            base = len(plan.fields) - 3
            if index >= base and is_proctime(plan.fields[-1].type):
                raise TableException(f"Processing time {feature} is not supported yet.")
            ltz = isinstance(plan.fields[-1].type, t.LocalZonedTimestampType)
            return (index - base, ltz) if index >= base else None
        elif isinstance(plan, WindowRank) and index < len(plan.input.fields):
            plan = plan.input
        else:
            return None


def window_rank(plan: n.PlanNode) -> n.PlanNode:
    """A Top-N (``n.Rank``, under the Calc ``rank_from_filter`` puts over it) whose PARTITION
    BY holds ``window_start`` and ``window_end`` becomes a ``WindowRank`` (Flink's window
    Top-N; with ``rn <= 1`` over the rowtime, its window deduplication)."""
    rank = plan.input if isinstance(plan, n.Calc) else plan
    if not isinstance(rank, n.Rank):
        return plan
    roles: dict[int, int] = {}
    ltz = False
    order = rank.order
    on_time = len(order) == 1 and time_attribute(rank.input.fields[order[0].index].type)
    feature = "Window Deduplication" if rank.limit == 1 and on_time else "Window TopN"
    for index in rank.partition:
        role = window_role(rank.input, index, feature)
        if role is not None:
            roles[role[0]] = index
            ltz = role[1]
    if not {0, 1} <= set(roles):
        return plan
    keep_last = (rank.limit == 1 and len(order) == 1 and not order[0].ascending
                 and is_rowtime(rank.input.fields[order[0].index].type))
    node = WindowRank(rank.fields, rank.input, rank.partition, order, rank.limit,
                      rank.output_number, roles[1], keep_last, ltz)
    if isinstance(plan, n.Calc):
        return n.Calc(plan.fields, node, plan.projections, plan.condition)
    return node


# -- window join --------------------------------------------------------------------------------

def window_join(join: n.Join) -> n.PlanNode:
    """A join whose equi-keys pair both sides' ``window_start`` and ``window_end`` of window
    table functions (Flink's rule) as a ``WindowJoin``; any other join as it is."""
    if join.kind not in (n.JoinKind.INNER, n.JoinKind.LEFT, n.JoinKind.RIGHT, n.JoinKind.FULL):
        return join
    pairs: dict[int, tuple[int, int]] = {}
    ltz = False
    for left, right in zip(join.left_keys, join.right_keys, strict=True):
        left_role = _tvf_role(join.left, left)
        right_role = _tvf_role(join.right, right)
        if left_role is not None and right_role is not None and left_role[0] == right_role[0]:
            pairs[left_role[0]] = (left, right)
            ltz = left_role[1]
    if not {0, 1} <= set(pairs):
        return join
    return WindowJoin(join.fields, join.left, join.right, join.kind, join.left_keys,
                      join.right_keys, join.condition, pairs[1][0], pairs[1][1], ltz)


def _tvf_role(plan: n.PlanNode, index: int) -> tuple[int, bool] | None:
    """``window_role`` for a window table function's rows (not an aggregation's)."""
    node = plan
    while isinstance(node, n.Calc):
        node = node.input
    return (window_role(plan, index, "Window Join") if isinstance(node, WindowTableFunction)
            else None)
