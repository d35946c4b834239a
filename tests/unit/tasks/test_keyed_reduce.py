"""The keyed reduce's loop (``keyed_reduce``) in C against its Python twin: the same outputs,
the same table and the same calls, on random batches with reduces that return None (the entry
goes) and tables filled before; and the same errors."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flintlock.common.speedups import accelerator
from flintlock.runtime.tasks.keyed_reduce import reduce_direct_python

compiled = pytest.mark.skipif(accelerator is None, reason="the C accelerator is not built here")


def _run(implementation: Any, records: list[Any], table: dict[Any, Any]) -> tuple[Any, ...]:
    table = dict(table)
    calls: list[Any] = []

    def reduce(acc: Any, record: Any) -> Any:
        calls.append((acc, record))
        total = acc[1] + record[1]
        return None if total % 5 == 0 else (acc[0], total)  # None: the entry goes

    out = implementation(records, lambda record: record[0], reduce, table)
    return out, table, calls


@compiled
@given(records=st.lists(st.tuples(st.integers(0, 4), st.integers(-3, 9)), max_size=40),
       table=st.dictionaries(st.integers(0, 4), st.tuples(st.integers(0, 4), st.integers())))
def test_the_c_reduce_is_the_python_reduce(records: list[Any], table: dict[Any, Any]) -> None:
    assert accelerator is not None
    expected = _run(reduce_direct_python, records, table)
    assert _run(accelerator.reduce_into, records, table) == expected


def test_a_running_sum_per_key_and_a_none_removes_the_entry() -> None:
    out, table, _ = _run(reduce_direct_python, [(1, 2), (2, 1), (1, 3), (1, 4)], {})
    assert out == [(1, 2), (2, 1), None, (1, 4)]  # 2 + 3 = 5: None, the entry goes
    assert table == {1: (1, 4), 2: (2, 1)}


@pytest.mark.parametrize("implementation", [
    reduce_direct_python,
    pytest.param(getattr(accelerator, "reduce_into", None), marks=compiled)])
def test_errors_are_the_same_in_both(implementation: Any) -> None:
    table: dict[Any, Any] = {}
    with pytest.raises(ZeroDivisionError):  # the reduce's own error, earlier records stored
        implementation([(1, 1), (1, 2)], lambda r: r[0], lambda a, b: 1 // 0, table)
    assert table == {1: (1, 1)}
    with pytest.raises(TypeError):  # an unhashable key
        implementation([([1], 1)], lambda r: r[0], lambda a, b: a, {})
