"""The window operator's per-batch loops in C against their Python twins
(``window_grouping``): ``tumbling_panes`` gives the same panes (starts, keys and values, in
first-seen order) on random batches, offsets and sizes, falling back to Python beyond 64
bits; ``fold_added`` the same accumulator."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flintlock.common.speedups import accelerator
from flintlock.common.windowing import TimeWindow
from flintlock.runtime.tasks.window_grouping import (
    fold_added_python,
    tumbling_panes,
    tumbling_panes_python,
)

compiled = pytest.mark.skipif(accelerator is None, reason="the C accelerator is not built here")
LONG = st.integers(-(2**63), 2**63 - 1)
EDGES = st.sampled_from([-(2**63), -(2**63) + 1, 2**63 - 1, 2**63 - 2, 0, -1, 1])


def _panes(implementation: Any, pairs: list[tuple[Any, int]], size: int, offset: int) -> Any:
    records = [value for value, _ in pairs]
    stamps = [stamp for _, stamp in pairs]
    calls: list[Any] = []

    def key_of(record: Any) -> Any:
        calls.append(record)
        return record[0]

    panes = implementation(records, stamps, key_of, size, offset)
    if panes is None:
        return None, calls
    return [(start, list(pane.items())) for start, pane in panes.items()], calls


@compiled
@given(pairs=st.lists(st.tuples(st.tuples(st.integers(0, 3), st.integers()),
                                st.one_of(LONG, EDGES, st.integers(-50, 50))), max_size=40),
       size=st.one_of(st.integers(1, 30), st.sampled_from([2**62, 2**63 - 1])),
       offset=st.one_of(st.integers(-40, 40), EDGES))
def test_the_c_panes_are_the_python_panes(pairs: list[Any], size: int, offset: int) -> None:
    assert accelerator is not None
    expected = _panes(tumbling_panes_python, pairs, size, offset)
    got = _panes(accelerator.tumbling_panes, pairs, size, offset)
    if got[0] is None:  # declined: nothing called, and the module's choice falls back
        assert got[1] == []
        got = _panes(tumbling_panes, pairs, size, offset)
    assert got == expected
    for start, pane in expected[0]:  # the window start of TimeWindow itself
        stamp = next(s for (value, s) in pairs if value[0] == pane[0][0]
                     and s - (s - offset) % size == start)
        assert start == TimeWindow.get_window_start_with_offset(stamp, offset, size)


@compiled
def test_beyond_64_bits_the_c_version_declines_and_python_groups() -> None:
    assert accelerator is not None
    records, stamps = [(1, "a"), (2, "b")], [2**64, 5]
    assert accelerator.tumbling_panes(records, stamps, lambda r: r[0], 10, 0) is None
    assert tumbling_panes(records, stamps, lambda r: r[0], 10, 0) == {
        2**64 - 6: {1: [(1, "a")]}, 0: {2: [(2, "b")]}}


@pytest.mark.parametrize("implementation", [
    tumbling_panes_python,
    pytest.param(getattr(accelerator, "tumbling_panes", None), marks=compiled)])
def test_grouping_errors_are_the_same_in_both(implementation: Any) -> None:
    with pytest.raises(ValueError, match="differ in length"):
        implementation([1], [], lambda r: r, 10, 0)
    with pytest.raises(TypeError):  # an unhashable key
        implementation([[1]], [3], lambda r: r, 10, 0)
    with pytest.raises(ZeroDivisionError):
        implementation([1], [3], lambda r: 1 // 0, 10, 0)


@compiled
@given(values=st.lists(st.integers(), max_size=20), start=st.integers())
def test_the_c_fold_is_the_python_fold(values: list[int], start: int) -> None:
    assert accelerator is not None
    trace: list[Any] = []

    def add(value: int, accumulator: int) -> int:  # order-revealing
        trace.append((value, accumulator))
        return accumulator * 3 + value

    expected = fold_added_python(add, values, start), list(trace)
    trace.clear()
    assert (accelerator.fold_added(add, values, start), trace) == expected
    with pytest.raises(ZeroDivisionError):
        accelerator.fold_added(lambda v, a: v // 0, [1], 0)
