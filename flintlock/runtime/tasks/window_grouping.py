"""A timestamped batch grouped by tumbling window start, then key: the window operator's
per-record loops for tumbling event-time windows (``window_operator._process_tumbling``), in C
where built.

``tumbling_panes(records, stamps, key_of, size, offset)`` gives ``{start: {key: [values]}}``:
each record's window start is ``timestamp - (timestamp - offset) % size`` (Python's floored
remainder, as ``TimeWindow.get_window_start_with_offset``), its key ``key_of(record)`` (the
user's key selector, called once per record, in order); starts and keys in first-seen order,
values in batch order.

``fold_added(add, values, accumulator)`` folds a group's values into its accumulator with
an ``AggregateFunction``'s ``add(value, accumulator)``, in order (``WindowContents.fold_into``).

Two implementations of each with the same result: ``_speedups.tumbling_panes`` and
``tumbling_panes_python`` below, used where the accelerator was not built
(``flintlock.common.speedups``), and also when the C version declines a batch (returns
None: a timestamp, size or offset outside 64-bit arithmetic, which Python's integers handle).
``_speedups.fold_added`` has ``fold_added_python``. ``tests/unit/tasks/test_window_grouping.py``
holds each pair equal.

Pure functions: the task thread owns the batch and the result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flintlock.common.speedups import accelerator

Panes = dict[int, dict[Any, list[Any]]]


def tumbling_panes_python(records: list[Any], stamps: list[int], key_of: Callable[[Any], Any],
                          size: int, offset: int) -> Panes:
    """The Python twin of ``_speedups.tumbling_panes`` (see the module docstring)."""
    if len(records) != len(stamps):
        raise ValueError("tumbling_panes: values and timestamps differ in length")
    panes: Panes = {}
    last_start: int | None = None
    pane: dict[Any, list[Any]] = {}
    for value, timestamp in zip(records, stamps, strict=True):
        start = timestamp - (timestamp - offset) % size
        if start != last_start:  # a batch mostly stays in one window: one lookup
            found = panes.get(start)
            pane = panes[start] = {} if found is None else found
            last_start = start
        key = key_of(value)
        group = pane.get(key)
        if group is None:
            pane[key] = [value]
        else:
            group.append(value)
    return panes


def _tumbling_panes_c(records: list[Any], stamps: list[int], key_of: Callable[[Any], Any],
                      size: int, offset: int) -> Panes:
    assert accelerator is not None
    panes: Panes | None = accelerator.tumbling_panes(records, stamps, key_of, size, offset)
    if panes is None:  # beyond 64 bits: Python's integers
        return tumbling_panes_python(records, stamps, key_of, size, offset)
    return panes


tumbling_panes: Callable[[list[Any], list[int], Callable[[Any], Any], int, int], Panes] = (
    tumbling_panes_python if accelerator is None else _tumbling_panes_c)
"""The implementation in use: the accelerator's (with the twin beyond 64 bits), else the
Python twin."""


def fold_added_python(add: Callable[[Any, Any], Any], values: list[Any], accumulator: Any
                      ) -> Any:
    """The Python twin of ``_speedups.fold_added`` (see the module docstring)."""
    for value in values:
        accumulator = add(value, accumulator)
    return accumulator


fold_added: Callable[[Callable[[Any, Any], Any], list[Any], Any], Any] = (
    fold_added_python if accelerator is None else accelerator.fold_added)
"""The implementation in use: the accelerator's, else the Python twin."""
