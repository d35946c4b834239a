"""The group aggregation's batch step in C, for the built-in aggregates (issue 28).

``native_batch(spec, python_step)`` returns a ``process_batch(records, table, copied, own)``
that hands a batch to the C kernel (``_crows.GroupAggKernel``) while no snapshot is in flight
and the batch holds plain rows (or columns: a ``ColumnBatch``, read by
``GroupAggKernel.columns`` with no row built), and to ``python_step`` (``agg_codegen``'s
compiled batch step, the kernel's Python twin) otherwise; or None when the kernel cannot
run ``spec``: the C accelerator is not built (or ``FLINTLOCK_PURE_PYTHON`` is set),
``spec.inline`` is off, or a call is not one of COUNT(*), COUNT(x), SUM, SUM0, AVG, MIN, MAX,
FIRST_VALUE, LAST_VALUE (exactly those classes of ``aggregates``) over one argument field
without FILTER or DISTINCT.

What the kernel does is what the compiled Python does, statement for statement: the same
accumulator list per key ([record count, the calls' slots]), the same slot layout as
``agg_codegen._compile`` assigns, the same output rows (+I for a new key, -D when the count
reaches 0, -U/+U, nothing for an unchanged result when ``suppress_unchanged``), SUM's Java
overflow through ``Sum.wrap`` and AVG's value through ``Avg.quotient`` (the C calls them).
``tests/table/test_agg_kernel.py`` runs both on random changelogs and compares rows and state.

Per row the C step saves the Python statements of the compiled body (about twenty): the
aggregation's stage cost in ``benchmarks/table_sql_stages.py`` drops to less than half (what
is left is mostly allocating the output rows and the new totals). Task thread only (the
kernel is built in ``open``, never pickled).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flintlock.common.column_batches import KINDS, ColumnBatch
from flintlock.common.row_batches import accelerator
from flintlock.datastream.changelog import aggregates as a
from flintlock.datastream.changelog.rows import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE

# the kernel's op codes (``_crows.c``, enum OP_*), by the function's exact class
_CODES: dict[type, int] = {
    a.Count1: 0, a.Count: 1, a.Sum: 2, a.Sum0: 3, a.Avg: 4,
    a.Min: 5, a.Max: 6, a.FirstValue: 7, a.LastValue: 8,
}
_SLOTS = {0: 0, 1: 1, 2: 2, 3: 1, 4: 2, 5: 1, 6: 1, 7: 1, 8: 1}


def kernel_ops(spec: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]] | None:
    """(ops, initial accumulator) of ``spec`` for ``GroupAggKernel``, or None if a call is
    not one the kernel runs. The slots follow ``agg_codegen._compile``: slot 0 the record
    count, then each call's slots in call order (none for COUNT(*))."""
    if not spec.inline:
        return None
    ops: list[tuple[Any, ...]] = []
    init: list[Any] = [1]
    for call in spec.calls:
        fn = call.function
        code = _CODES.get(type(fn))
        if code is None or call.filter is not None or call.distinct:
            return None
        if code == 0:
            ops.append((0, 0, 1, fn, 0))
            continue
        if callable(call.arguments) or len(call.arguments) != 1:
            return None
        ops.append((code, call.arguments[0], len(init), fn, getattr(fn, "bits", None) or 0))
        init.extend(_initial_slots(fn, code))
    return tuple(ops), tuple(init)


def _initial_slots(fn: Any, code: int) -> list[Any]:
    """A new key's slots of one call, as the call's ``Inline.slots`` templates give them."""
    if code == 3:  # SUM0 starts at its type's zero
        return [fn.zero]
    if code >= 5:  # MIN, MAX, FIRST_VALUE, LAST_VALUE: nothing seen yet
        return [None]
    return [0] * _SLOTS[code]


def native_batch(spec: Any, python_step: Callable[..., list[Any]]
                 ) -> Callable[..., list[Any]] | None:
    """The batch step through the C kernel (see the module docstring), or None."""
    if accelerator is None:
        return None
    shape = kernel_ops(spec)
    if shape is None:
        return None
    ops, init = shape
    if KINDS != (INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE):  # the kernel's codes 0-3
        return None
    kernel = accelerator.GroupAggKernel(
        tuple(spec.grouping), ops, init, (INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE),
        spec.generate_update_before, spec.suppress_unchanged)

    def process_batch(records: Any, table: dict[Any, Any], copied: Any,
                      own: Any) -> list[Any]:
        out: list[Any] | None
        if type(records) is ColumnBatch:
            columns = records.columns
            if copied is None and columns is not None and type(table) is dict:
                out = kernel.columns(records.kinds, columns, table)
                if out is not None:
                    return out
            records = records.rows()
        if copied is None and type(records) is list and type(table) is dict:
            out = kernel(records, table)
            if out is not None:
                return out
        return python_step(records, table, copied, own)

    process_batch.__source__ = getattr(python_step, "__source__", "")  # type: ignore[attr-defined]
    process_batch.kernel = kernel  # type: ignore[attr-defined]
    process_batch.python = python_step  # type: ignore[attr-defined]
    return process_batch
