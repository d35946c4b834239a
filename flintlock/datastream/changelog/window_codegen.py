"""Compiles the aggregate calls of an aligned window (TUMBLE, HOP, CUMULATE) into three Python
functions over one flat list per window, as ``agg_codegen`` does for a group aggregation
(issue 32: the window aggregation's per-row cost).

``compile_window_calls(calls) -> WindowCalls`` with

* ``create(start) -> entry``: ``[start, slots of call 0, slots of call 1, ...]`` — a built-in's
  ``Inline`` slots, a DISTINCT call's extra dict of the argument tuples seen, one slot holding
  ``create_accumulator()`` for other functions;
* ``accumulate(entry, values, row)``: the row's arguments read by index (or the call's
  argument callable), its FILTER, DISTINCT, and the built-in's template pasted in — no method
  call per row for COUNT, SUM, MIN, MAX...;
* ``results(entry) -> list``: one value per call.

Semantics are ``window_agg.CallAccumulators``': a DISTINCT call sees each argument tuple
once (NULLs included; the functions skip NULLs themselves). The generated source is kept on
``accumulate.__source__``.

``compile_window_step(calls, spec)`` -> ``process_element(row, ctx)``: the whole per-row
work of an event-time aligned window aggregation in one generated function (issue 32: the
method's calls per row cost more than its arithmetic): the INSERT check, the rowtime read
(``StepSpec.rowtime_field``: ``(V[i] - EPOCH) // ONE_MS`` for a naive datetime, anything else
through the ``rowtime`` callable, with its errors), the TUMBLE window's start inline (Java's
remainder, as ``window_assigners.window_start``; HOP and CUMULATE through the assigner's
``windows_of``), the late-row check against the timer service's watermark, one
``MapState`` get and put, the timer registered when a window's entry is created, and the
calls' accumulate code pasted in. Same state, timers and drops as
``WindowAggFunction.process_element``'s general path (tests/table/test_window_codegen.py
holds the two equal); it returns None (nothing to emit: the operator skips its output
bookkeeping for the row).

``compile_window_batch(calls, spec)`` -> ``process_keyed_batch(rows, get_key, set_key, ctx)``:
the same for a whole batch (``runtime.tasks.keyed_rows_operator``): the watermark read once
(it cannot move within a batch), each row's windows computed and the row dropped from those
that fired (a row's time converted once for a run of equal times), the rows grouped by
(key, window end) in their order, then per group one key
switch, one get and put, the timer when the window is new and the rows accumulated in order.
Groups are applied in the order of their first row, so timers are registered (and windows
fire) in the order the per-row step registers them.

Compiled on the task thread; nothing here is pickled.
"""

from __future__ import annotations

import datetime
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from flintlock.datastream.changelog.aggregates import Inline
from flintlock.datastream.changelog.errors import NotInsertOnlyError
from flintlock.datastream.changelog.rows import INSERT, new_row

__all__ = ["StepSpec", "WindowCalls", "compile_local_fold", "compile_window_batch",
           "compile_window_calls", "compile_window_step"]

_EPOCH = datetime.datetime(1970, 1, 1)
_ONE_MS = datetime.timedelta(milliseconds=1)

_GENERIC = Inline(("{f}.create_accumulator()",), "{f}.accumulate({a0}, {args})", "",
                  "{f}.get_value({a0})")


@dataclass(frozen=True, slots=True)
class WindowCalls:
    create: Callable[[int], list[Any]]
    accumulate: Callable[[list[Any], list[Any], Any], None]
    results: Callable[[list[Any]], list[Any]]


@dataclass(frozen=True, slots=True)
class StepSpec:
    """What ``compile_window_step`` pastes in: the window (``("TUMBLE", size, 0, offset)``
    inlined; HOP, CUMULATE through ``windows_of``), the ``rowtime`` callable and, where it
    reads one field (the planner's ``RowtimeOf``), that field's index, the time zone
    ``shift``, the ``windows`` MapState and the function's name for errors."""

    window: tuple[str, int, int, int]
    rowtime: Callable[[Any], int]
    rowtime_field: int | None
    shift: int
    windows: Any
    windows_of: Callable[[int], list[tuple[int, int]]]
    name: str


def _indent(code: str, spaces: int) -> str:
    return textwrap.indent(code, " " * spaces)


def _call_source(index: int, call: Any, base: int) -> tuple[list[str], str, str]:
    """(slot initialisers, accumulate code, value expression) of call ``index`` whose slots
    start at ``entry[base]``."""
    inline = getattr(call.function, "inline", None)
    template = inline if isinstance(inline, Inline) else _GENERIC
    t = f"_t{index}"
    pre = ""
    if callable(call.arguments):
        pre = f"{t}a = tuple(X{index}(row))\n"
        exprs = [f"{t}a[{j}]" for j in range(call.argument_count)]
        args, key = f"*{t}a", f"{t}a"
    else:
        exprs = [f"V[{i}]" for i in call.arguments]
        args = ", ".join(exprs)
        key = "(" + "".join(f"{e}, " for e in exprs) + ")"
    names: dict[str, str] = {f"a{j}": f"E[{base + j}]" for j in range(len(template.slots))}
    names.update({f"x{j}": e for j, e in enumerate(exprs)})
    names.update(t=t, f=f"F{index}", args=args,
                 nonnull=" and ".join(f"{e} is not None" for e in exprs) or "True")
    slots = [s.format(**names) for s in template.slots]
    accumulate = template.accumulate.format(**names)
    if call.distinct:
        seen = f"E[{base + len(slots)}]"
        accumulate = (f"{t}k = {key}\nif {t}k not in {seen}:\n    {seen}[{t}k] = True\n"
                      + _indent(accumulate, 4))
        slots.append("{}")
    accumulate = pre + accumulate
    if call.filter is not None:
        accumulate = f"if P{index}(row):\n" + _indent(accumulate, 4)
    return slots, accumulate, template.value.format(**names)


def _calls_source(calls: Sequence[Any], namespace: dict[str, Any]
                  ) -> tuple[list[str], list[str], list[str]]:
    """(slot initialisers, accumulate steps, value expressions) of ``calls``, their functions,
    argument callables and filters put into ``namespace``."""
    slots: list[str] = []
    steps: list[str] = []
    values: list[str] = []
    for index, call in enumerate(calls):
        namespace[f"F{index}"] = call.function
        if callable(call.arguments):
            namespace[f"X{index}"] = call.arguments
        if call.filter is not None:
            namespace[f"P{index}"] = call.filter
        call_slots, step, value = _call_source(index, call, 1 + len(slots))
        slots += call_slots
        steps.append(step)
        values.append(value)
    return slots, steps, values


def compile_window_calls(calls: Sequence[Any]) -> WindowCalls:
    namespace: dict[str, Any] = {}
    slots, steps, values = _calls_source(calls, namespace)
    source = (
        f"def create(start):\n    return [start, {', '.join(slots)}]\n\n"
        "def accumulate(E, V, row):\n" + (_indent("\n".join(steps), 4) or "    pass") + "\n\n"
        f"def results(E):\n    return [{', '.join(values)}]\n")
    exec(compile(source, "<flintlock window aggregation>", "exec"), namespace)
    accumulate = namespace["accumulate"]
    accumulate.__source__ = source
    return WindowCalls(namespace["create"], accumulate, namespace["results"])


_TIME_OF_FIELD = """try:
    t = (V[{field}] - EPOCH) // ONE_MS
except TypeError:
    t = ROWTIME(row)
"""

_TUMBLE = """a = t - {offset} + {size}
start = t - (a % {size} if a >= 0 else -(-a % {size}))
end = start + {size}
"""

_WINDOW = """fires = end - 1{shift}
if fires > timers.current_watermark():
    E = W.get(end)
    if E is None:
        E = [start, {slots}]
        timers.register_event_time_timer(fires)
{accumulate}
    W.put(end, E)
"""


def _step_namespace(spec: StepSpec) -> dict[str, Any]:
    return {"EPOCH": _EPOCH, "ONE_MS": _ONE_MS, "ROWTIME": spec.rowtime, "W": spec.windows,
            "WINDOWS_OF": spec.windows_of, "INSERT": INSERT, "NOT_INSERT": NotInsertOnlyError,
            "NAME": spec.name, "NEVER": object()}


def _time_source(spec: StepSpec, of_field: str = _TIME_OF_FIELD) -> str:
    """``t = `` the row's time in (shifted) epoch milliseconds (``of_field``: how a field's
    time is read)."""
    time = ("t = ROWTIME(row)\n" if spec.rowtime_field is None
            else of_field.format(field=spec.rowtime_field))
    if spec.shift:
        time += f"t += {spec.shift}\n"
    return time


def compile_window_step(calls: Sequence[Any], spec: StepSpec) -> Callable[[Any, Any], Any]:
    """The generated ``process_element(row, ctx)`` of an event-time aligned window
    aggregation (see the module docstring); its source on ``__source__``."""
    kind, size, _, offset = spec.window
    namespace = _step_namespace(spec)
    slots, steps, _ = _calls_source(calls, namespace)
    time = _time_source(spec)
    window = _WINDOW.format(shift=f" - {spec.shift}" if spec.shift else "",
                            slots=", ".join(slots),
                            accumulate=_indent("\n".join(steps) or "pass", 4))
    if kind == "TUMBLE":
        body = _TUMBLE.format(offset=offset, size=size) + window
    else:
        body = "for start, end in WINDOWS_OF(t):\n" + _indent(window, 4)
    source = ("def process_element(row, ctx):\n"
              "    if row._row_kind is not INSERT:\n"
              "        raise NOT_INSERT(NAME, row._row_kind.name)\n"
              "    V = row._values\n    timers = ctx.timer_service()\n"
              + _indent(time + body, 4))
    exec(compile(source, "<flintlock window aggregation step>", "exec"), namespace)
    step: Callable[[Any, Any], Any] = namespace["process_element"]
    step.__source__ = source  # type: ignore[attr-defined]
    return step


_BATCH_TIME_OF_FIELD = """value = V[{field}]
if value == last:
    t = last_time
else:
    try:
        t = last_time = (value - EPOCH) // ONE_MS
        last = value
    except TypeError:
        t = ROWTIME(row)
"""

_GROUP = """if end{shift} > watermark:
    group = groups.get((key, end))
    if group is None:
        groups[(key, end)] = [start, row]
    else:
        group.append(row)
"""

_APPLY = """for (key, end), group in groups.items():
    set_key(key)
    E = W.get(end)
    if E is None:
        E = [group[0], {slots}]
        timers.register_event_time_timer(end{shift})
    for index in range(1, len(group)):
        row = group[index]
        V = row._values
{accumulate}
    W.put(end, E)
return True
"""


def compile_window_batch(calls: Sequence[Any], spec: StepSpec) -> Callable[..., bool]:
    """The generated ``process_keyed_batch(rows, get_key, set_key, ctx)`` of an event-time
    aligned window aggregation (see the module docstring); its source on ``__source__``."""
    namespace = _step_namespace(spec)
    slots, steps, _ = _calls_source(calls, namespace)
    shift = f" - 1 - {spec.shift}" if spec.shift else " - 1"
    group = _GROUP.format(shift=shift)
    kind, size, _, offset = spec.window
    if kind == "TUMBLE":
        windows = _TUMBLE.format(offset=offset, size=size) + group
    else:
        windows = "for start, end in WINDOWS_OF(t):\n" + _indent(group, 4)
    time = _time_source(spec, _BATCH_TIME_OF_FIELD)  # equal times in a row: converted once
    loop = ("last, last_time = NEVER, 0\nfor row in rows:\n"
            "    if row._row_kind is not INSERT:\n"
            "        raise NOT_INSERT(NAME, row._row_kind.name)\n    V = row._values\n"
            "    key = get_key(row)\n" + _indent(time + windows, 4))
    apply = _APPLY.format(slots=", ".join(slots), shift=shift,
                          accumulate=_indent("\n".join(steps) or "pass", 8))
    source = ("def process_keyed_batch(rows, get_key, set_key, ctx):\n"
              "    timers = ctx.timer_service()\n    watermark = timers.current_watermark()\n"
              "    groups = {}\n" + _indent(loop + apply, 4))
    exec(compile(source, "<flintlock window aggregation batch>", "exec"), namespace)
    batch: Callable[..., bool] = namespace["process_keyed_batch"]
    batch.__source__ = source  # type: ignore[attr-defined]
    return batch


_LOCAL_FOLD = """def fold(B, rows):
    last, lowest = NEVER, NO_END
    for row in rows:
        if row._row_kind is not INSERT:
            raise NOT_INSERT(NAME, row._row_kind.name)
        V = row._values
        value = V[{field}]
        if value != last:
            try:
                t = (value - EPOCH) // ONE_MS
            except TypeError:
                t = ROWTIME(row)
            last = value
{tumble}
            if end < lowest:
                lowest = end
        k = (end, {keys})
        E = B.get(k)
        if E is None:
            B[k] = E = [start, {slots}]
{accumulate}
    return lowest


def finish(B, FROM_MILLIS):
    return [NEW_ROW([{key_values}{values}FROM_MILLIS(k[0] - 1)], INSERT) for k, E in B.items()]
"""


def compile_local_fold(calls: Sequence[Any], grouping: Sequence[int],
                       window: tuple[str, int, int, int], rowtime_field: int,
                       rowtime: Callable[[Any], int], name: str
                       ) -> tuple[Callable[[dict[Any, Any], list[Any]], int], Callable[..., Any]]:
    """The local phase of a two-phase TUMBLE aggregation (``window_local``): ``fold(bundle,
    rows) -> lowest window end`` puts each row into its entry ``bundle[(end, keys...)]``
    (created at its first row: ``[start, slots...]``) and accumulates it; ``finish(bundle,
    from_millis)`` gives one ``+I[keys..., results..., window_time]`` per entry, in order."""
    _, size, _, offset = window
    namespace: dict[str, Any] = {
        "EPOCH": _EPOCH, "ONE_MS": _ONE_MS, "ROWTIME": rowtime, "INSERT": INSERT,
        "NOT_INSERT": NotInsertOnlyError, "NAME": name, "NEVER": object(), "NO_END": 1 << 63,
        "NEW_ROW": new_row}
    slots, steps, values = _calls_source(calls, namespace)
    source = _LOCAL_FOLD.format(
        field=rowtime_field, tumble=_indent(_TUMBLE.format(offset=offset, size=size), 12),
        keys="".join(f"V[{i}], " for i in grouping), slots=", ".join(slots),
        accumulate=_indent("\n".join(steps) or "pass", 8),
        key_values="".join(f"k[{j + 1}], " for j in range(len(grouping))),
        values="".join(f"{v}, " for v in values))
    exec(compile(source, "<flintlock local window aggregation>", "exec"), namespace)
    return namespace["fold"], namespace["finish"]
