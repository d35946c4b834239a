"""Compiles a group aggregation's per-record step into one Python function (what Flink's
planner generates as an ``AggsHandleFunction`` plus ``GroupAggFunction.processElement``).

``compile_group_step(spec, state)`` returns ``process_element(row, ctx)``, specialised for
the grouping fields and aggregate calls of ``spec``: the argument fields are read by index
from the row's value list, the built-ins' ``Inline`` templates are pasted in (no method call
per record), and the accumulators live in one list ``accs`` = [record count, the slots of
call 0, of call 1, ...] stored in ``state`` (a ``ValueState``), read once and written once per
record. The semantics are those of ``group_agg.GroupAggFunction``'s docstring.

The generated source is kept on the function (``__source__``) for debugging and for
``explain``-style output. Compiled on the task thread in ``open``; nothing here is pickled.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from flintlock.datastream.changelog.agg_kernel import native_batch
from flintlock.datastream.changelog.aggregates import Count1, Inline
from flintlock.datastream.changelog.rows import (
    DELETE,
    INSERT,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    new_row,
)

_GENERIC = Inline(("{f}.create_accumulator()",), "{f}.accumulate({a0}, {args})",
                  "{f}.retract({a0}, {args})", "{f}.get_value({a0})")


@dataclass(frozen=True, slots=True)
class StepSpec:
    """What the step is compiled from (see ``group_agg.AggregateCall``)."""

    grouping: tuple[int, ...]
    calls: tuple[Any, ...]
    generate_update_before: bool
    suppress_unchanged: bool
    inline: bool


@dataclass(slots=True)
class _CallCode:
    slots: list[str]
    accumulate: str
    retract: str
    value: str


def _indent(code: str, spaces: int) -> str:
    return textwrap.indent(code, " " * spaces)


def _call_code(index: int, call: Any, base: int, use_inline: bool) -> _CallCode:
    fn = call.function
    if use_inline and isinstance(fn, Count1) and call.filter is None and not call.distinct:
        # COUNT(*) is the record count every key keeps anyway (Flink's indexOfCountStar)
        return _CallCode([], "", "", "accs[0]")
    inline = getattr(fn, "inline", None) if use_inline else None
    template = inline if isinstance(inline, Inline) else _GENERIC
    t = f"_t{index}"
    pre = ""
    if callable(call.arguments):
        pre = f"{t}a = X{index}(row)\n"
        exprs = [f"{t}a[{j}]" for j in range(call.argument_count)]
        args = f"*{t}a"
    else:
        exprs = [f"V[{i}]" for i in call.arguments]
        args = ", ".join(exprs)
    names: dict[str, str] = {f"a{j}": f"accs[{base + j}]" for j in range(len(template.slots))}
    names.update({f"x{j}": e for j, e in enumerate(exprs)})
    names.update(t=t, f=f"F{index}", args=args,
                 nonnull=" and ".join(f"{e} is not None" for e in exprs) or "True")
    slots = [s.format(**names) for s in template.slots]
    accumulate = template.accumulate.format(**names)
    retract = template.retract.format(**names)
    if call.distinct:
        accumulate, retract = _distinct(exprs, f"accs[{base + len(slots)}]", t,
                                        accumulate, retract)
        slots.append("{}")
    accumulate, retract = pre + accumulate, pre + retract
    if call.filter is not None:
        accumulate = f"if P{index}(row):\n" + _indent(accumulate, 4)
        retract = f"if P{index}(row):\n" + _indent(retract, 4)
    return _CallCode(slots, accumulate, retract, template.value.format(**names))


def _distinct(exprs: Sequence[str], seen: str, t: str, accumulate: str,
              retract: str) -> tuple[str, str]:
    """Wrap a call's code so it sees each distinct argument value once: ``seen`` counts the
    rows per value; the function accumulates a value on its first row and retracts it when
    its last row is retracted. A single null argument is skipped (SQL's DISTINCT aggregates
    ignore nulls)."""
    key = exprs[0] if len(exprs) == 1 else "(" + ", ".join(exprs) + ",)"
    guard = f"if {t}k is not None:\n" if len(exprs) == 1 else "if True:\n"
    acc = (f"{t}k = {key}\n{guard}"
           f"    {t}c = {seen}.get({t}k, 0)\n    {seen}[{t}k] = {t}c + 1\n"
           f"    if {t}c == 0:\n" + _indent(accumulate, 8))
    ret = (f"{t}k = {key}\n{guard}"
           f"    {t}c = {seen}.get({t}k, 0) - 1\n"
           f"    if {t}c > 0:\n        {seen}[{t}k] = {t}c\n"
           f"    else:\n        {seen}.pop({t}k, None)\n"
           f"        if {t}c == 0:\n" + _indent(retract, 12))
    return acc, ret


def _emit(name: str, values: str, kind: str) -> str:
    """The statement building the output row ``name`` (``rows.new_row``: C where built)."""
    return f"{name} = NEW_ROW({values}, {kind})\n"


@dataclass(frozen=True, slots=True)
class _Flavour:
    """How the body reads and writes the state and hands out rows: a ``ValueState`` and
    ``return`` (the per-record step), or a dict and a list (the batch step)."""

    load: str
    store: str
    store_existing: str
    clear: str
    done: Callable[[tuple[str, ...]], str]


_STEP = _Flavour("accs = S.value()\n", "S.update(accs)\n", "S.update(accs)\n", "S.clear()\n",
                 lambda rows: "return (" + "".join(f"{r}, " for r in rows) + ")\n"
                 if rows else "return None\n")
_BATCH = _Flavour(
    "accs = get(key)\nif key not in copied:\n    copied.add(key)\n"
    "    if accs is not None:\n        accs = own(accs)\n        table[key] = accs\n",
    "table[key] = accs\n", "", "del table[key]\n",
    lambda rows: "".join(f"append({r})\n" for r in rows) + "continue\n")
_BATCH_NO_SNAPSHOT = replace(_BATCH, load="accs = get(key)\n")
"""The batch step while no snapshot is in flight (``copied`` None): no copy-on-write check."""


def _body(spec: StepSpec, codes: list[_CallCode], flavour: _Flavour) -> str:
    """The statements handling one ``row`` (its values ``V``), ending in ``flavour.done``."""
    keys = [f"V[{g}]" for g in spec.grouping]
    slots = ", ".join(["1", *(s for c in codes for s in c.slots)])
    acc_block = "\n".join(c.accumulate for c in codes if c.accumulate) or "pass"
    ret_block = "\n".join(c.retract for c in codes if c.retract) or "pass"
    prev = "".join(f"p{i} = {c.value}\n" for i, c in enumerate(codes))
    new = "".join(f"n{i} = {c.value}\n" for i, c in enumerate(codes))
    p_row = "[" + ", ".join(keys + [f"p{i}" for i in range(len(codes))]) + "]"
    n_row = "[" + ", ".join(keys + [f"n{i}" for i in range(len(codes))]) + "]"
    first_row = "[" + ", ".join(keys + [c.value for c in codes]) + "]"
    same = " and ".join(f"n{i} == p{i}" for i in range(len(codes))) or "True"
    done = flavour.done
    changed = (_emit("o1", p_row, "UPDATE_BEFORE") + _emit("o2", n_row, "UPDATE_AFTER")
               + done(("o1", "o2")) if spec.generate_update_before
               else _emit("o2", n_row, "UPDATE_AFTER") + done(("o2",)))
    unchanged = f"if {same}:\n" + _indent(done(()), 4) if spec.suppress_unchanged else ""
    return (
        "V = row._values\n" + flavour.load + "k = row._row_kind\n"
        "if k is INSERT or k is UPDATE_AFTER:\n"
        "    if accs is None:\n"
        f"        accs = [{slots}]\n"
        + _indent(acc_block, 8) + "\n" + _indent(flavour.store, 8)
        + _indent(_emit("o1", first_row, "INSERT") + done(("o1",)), 8)
        + _indent(prev, 4) + "    accs[0] += 1\n" + _indent(acc_block, 4) + "\n"
        "else:\n"
        "    if accs is None:\n" + _indent(done(()), 8)
        + _indent(prev, 4) + "    accs[0] -= 1\n"
        "    if accs[0] == 0:\n" + _indent(flavour.clear, 8)
        + _indent(_emit("o1", p_row, "DELETE") + done(("o1",)), 8)
        + _indent(ret_block, 4) + "\n"
        + flavour.store_existing + new + unchanged + changed)


def _key_expression(grouping: tuple[int, ...]) -> str:
    """What ``rows.key_selector(grouping)`` returns, as an expression over ``V``."""
    if len(grouping) == 1:
        return f"V[{grouping[0]}]"
    return "(" + "".join(f"V[{g}], " for g in grouping) + ")"


def _step_source(spec: StepSpec, codes: list[_CallCode]) -> str:
    return "def process_element(row, ctx):\n" + _indent(_body(spec, codes, _STEP), 4)


def _batch_source(spec: StepSpec, codes: list[_CallCode]) -> str:
    key = f"V = row._values\nkey = {_key_expression(spec.grouping)}\n"
    plain = _body(spec, codes, _BATCH_NO_SNAPSHOT).replace("V = row._values\n", key, 1)
    copying = _body(spec, codes, _BATCH).replace("V = row._values\n", key, 1)
    return ("def process_batch(records, table, copied, own):\n"
            "    out = []\n    append = out.append\n    get = table.get\n"
            "    if copied is None:\n        for row in records:\n" + _indent(plain, 12)
            + "    else:\n        for row in records:\n" + _indent(copying, 12)
            + "    return out\n")


def _compile(spec: StepSpec, source_of: Callable[[StepSpec, list[_CallCode]], str],
             name: str, state: Any) -> Any:
    codes: list[_CallCode] = []
    base = 1
    for index, call in enumerate(spec.calls):
        code = _call_code(index, call, base, spec.inline)
        codes.append(code)
        base += len(code.slots)
    source = source_of(spec, codes)
    namespace: dict[str, Any] = {
        "S": state, "NEW_ROW": new_row, "INSERT": INSERT,
        "UPDATE_BEFORE": UPDATE_BEFORE, "UPDATE_AFTER": UPDATE_AFTER, "DELETE": DELETE,
    }
    for index, call in enumerate(spec.calls):
        namespace[f"F{index}"] = call.function
        namespace[f"P{index}"] = call.filter
        if callable(call.arguments):
            namespace[f"X{index}"] = call.arguments
    exec(compile(source, f"<flintlock group aggregation: {name}>", "exec"), namespace)
    function = namespace[name]
    function.__source__ = source
    return function


def compile_group_step(spec: StepSpec, state: Any) -> Callable[[Any, Any], Any]:
    """The compiled ``process_element(row, ctx)`` of ``spec`` over ``state``."""
    step: Callable[[Any, Any], Any] = _compile(spec, _step_source, "process_element", state)
    return step


def compile_group_batch(spec: StepSpec) -> Callable[..., list[Any]]:
    """The compiled ``process_batch(records, table, copied, own) -> output rows``: the same
    step over a whole batch, on a plain dict ``table`` (key -> accumulator list; a heap
    backend's ``direct_table``) instead of a ``ValueState``. ``copied`` and ``own`` are the
    heap backend's copy-on-write protocol while a snapshot is in flight (``copied_keys`` and
    ``own_value``): a key not in ``copied`` is added and its accumulator replaced by
    ``own(accs)`` before it is changed; ``copied`` None: no snapshot in flight. Where the C
    kernel runs ``spec``'s calls (``agg_kernel``), it handles the batches without a snapshot
    in flight and this compiled step the rest."""
    batch: Callable[..., list[Any]] = _compile(spec, _batch_source, "process_batch", None)
    return native_batch(spec, batch) or batch
