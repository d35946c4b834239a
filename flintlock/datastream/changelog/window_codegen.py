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
``accumulate.__source__``. Compiled on the task thread; nothing here is pickled.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from flintlock.datastream.changelog.aggregates import Inline

__all__ = ["WindowCalls", "compile_window_calls"]

_GENERIC = Inline(("{f}.create_accumulator()",), "{f}.accumulate({a0}, {args})", "",
                  "{f}.get_value({a0})")


@dataclass(frozen=True, slots=True)
class WindowCalls:
    create: Callable[[int], list[Any]]
    accumulate: Callable[[list[Any], list[Any], Any], None]
    results: Callable[[list[Any]], list[Any]]


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


def compile_window_calls(calls: Sequence[Any]) -> WindowCalls:
    namespace: dict[str, Any] = {}
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
    source = (
        f"def create(start):\n    return [start, {', '.join(slots)}]\n\n"
        "def accumulate(E, V, row):\n" + (_indent("\n".join(steps), 4) or "    pass") + "\n\n"
        f"def results(E):\n    return [{', '.join(values)}]\n")
    exec(compile(source, "<flintlock window aggregation>", "exec"), namespace)
    accumulate = namespace["accumulate"]
    accumulate.__source__ = source
    return WindowCalls(namespace["create"], accumulate, namespace["results"])
