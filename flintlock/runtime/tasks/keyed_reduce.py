"""The keyed reduce's loop on the heap backend (``operators.ReduceOperator``), in C where built.

``reduce_direct(records, get_key, reduce, table)`` folds each record into its key's
accumulator in ``table`` (the heap backend's dict of the reduce state: key -> accumulator):
the first record of a key is its accumulator, each later one ``reduce(accumulator, record)``;
an accumulator of None removes the key's entry (as ``ValueState.update(None)``). Returns the
accumulators in record order: what the operator emits.

Two implementations with the same behaviour: ``_speedups.reduce_into`` (the user's key
selector and reduce function per record, nothing interpreted around them) and
``reduce_direct_python`` below, used where the accelerator was not built
(``flintlock.common.speedups``). ``tests/unit/tasks/test_keyed_reduce.py`` holds them equal.

The task thread owns the table; no snapshot may share its values meanwhile (the operator takes
its copy-on-write loop then).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flintlock.common.speedups import accelerator

ReduceDirect = Callable[[list[Any], Callable[[Any], Any], Callable[[Any, Any], Any],
                         dict[Any, Any]], list[Any]]


def reduce_direct_python(records: list[Any], get_key: Callable[[Any], Any],
                         reduce: Callable[[Any, Any], Any], table: dict[Any, Any]) -> list[Any]:
    """The Python twin of ``_speedups.reduce_into`` (see the module docstring)."""
    out: list[Any] = []
    append, get = out.append, table.get
    for r in records:
        key = get_key(r)
        acc = get(key)
        acc = r if acc is None else reduce(acc, r)
        if acc is None:  # as ValueState.update(None): the entry goes
            table.pop(key, None)
        else:
            table[key] = acc
        append(acc)
    return out


reduce_direct: ReduceDirect = (reduce_direct_python if accelerator is None
                               else accelerator.reduce_into)
"""The implementation in use: the accelerator's, else the Python twin."""
