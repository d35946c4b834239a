"""The group aggregation's C kernel (``agg_kernel``, ``_crows.GroupAggKernel``) against its
Python twin, the compiled batch step of ``agg_codegen``: the same output rows (values and
kinds, in order) and the same accumulators per key, on random changelogs — the kernel over
rows and over the same batches as columns (``GroupAggKernel.columns``)."""

from __future__ import annotations

import random
from decimal import Decimal
from typing import Any

import pytest

from flintlock.common import row_batches
from flintlock.common.column_batches import KINDS, ColumnBatch
from flintlock.common.types import Row, RowKind, row_of
from flintlock.datastream.changelog import aggregates as a
from flintlock.datastream.changelog.agg_codegen import (
    StepSpec,
    _batch_source,
    _compile,
    compile_group_batch,
)
from flintlock.datastream.changelog.agg_kernel import kernel_ops, native_batch
from flintlock.datastream.changelog.aggregates import RetractionNotSupportedError
from flintlock.datastream.changelog.aggregates_retract import ListAgg
from flintlock.datastream.changelog.group_agg import AggregateCall

pytestmark = pytest.mark.skipif(row_batches.accelerator is None,
                                reason="the C accelerator is not built (FLINTLOCK_PURE_PYTHON)")

ACCUMULATE = (RowKind.INSERT, RowKind.UPDATE_AFTER)
RETRACT = (RowKind.UPDATE_BEFORE, RowKind.DELETE)
BIG = 2**63 - 5


def python_step(spec: StepSpec) -> Any:
    return _compile(spec, _batch_source, "process_batch", None)


def c_step(spec: StepSpec) -> Any:
    step = native_batch(spec, lambda *args: pytest.fail("the kernel fell back to Python"))
    assert step is not None
    return step


def changelog(rng: random.Random, count: int, retract: bool, value: Any) -> list[Row]:
    rows = []
    for _ in range(count):
        kinds = ACCUMULATE + RETRACT if retract else ACCUMULATE
        kind = rng.choice(kinds)
        rows.append(row_of([rng.randrange(4), rng.randrange(3), value(rng)], kind))
    return rows


def as_columns(batch: list[Row]) -> ColumnBatch:
    """The batch as the column decoder hands it to the kernel (``kernel.columns``)."""
    split = row_batches.split_columns(batch, KINDS)
    return ColumnBatch(*split) if split is not None else ColumnBatch(b"", [[], [], []])


def run_both(spec: StepSpec, batches: list[list[Row]]) -> None:
    """The Python step over rows, the kernel over the same rows and over their columns."""
    tables: tuple[dict[Any, Any], ...] = ({}, {}, {})
    python, native = python_step(spec), c_step(spec)
    for batch in batches:
        expected = python(batch, tables[0], None, None)
        columns = as_columns(batch)
        by_rows = native(batch, tables[1], None, None)
        by_columns = native.kernel.columns(columns.kinds, columns.columns, tables[2])
        assert by_columns is not None  # the kernel took the batch, no fall-back
        for table, got in ((tables[1], by_rows), (tables[2], by_columns)):
            # repr: NaN equals NaN, -0.0 differs from 0.0, a Decimal's digits count
            assert repr([(r._row_kind, r._values) for r in got]) == repr([
                (r._row_kind, r._values) for r in expected])
            assert all(type(r) is Row and r._fields is None for r in got)
            assert repr(table) == repr(tables[0])


def spec(calls: list[AggregateCall], grouping: tuple[int, ...] = (0,), before: bool = True,
         suppress: bool = True) -> StepSpec:
    return StepSpec(grouping, tuple(calls), before, suppress, True)


def ints(rng: random.Random) -> Any:
    return rng.choice([None, rng.randrange(-5, 6), BIG, -BIG, 2**31 - 2, rng.randrange(10**6)])


RETRACTING = [AggregateCall(a.Count1()), AggregateCall(a.Count(), (2,)),
              AggregateCall(a.Sum(bits=64), (2,)), AggregateCall(a.Sum(bits=32), (2,)),
              AggregateCall(a.Sum(), (2,)), AggregateCall(a.Sum0(bits=64), (2,)),
              AggregateCall(a.Avg("integral"), (2,)), AggregateCall(a.Avg("float"), (2,))]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("shape", [
    {"grouping": (0,)}, {"grouping": (0, 1)}, {"grouping": ()},
    {"grouping": (1,), "before": False}, {"grouping": (0,), "suppress": False},
])
def test_retracting_calls_give_the_python_steps_rows_and_state(seed: int,
                                                               shape: dict[str, Any]) -> None:
    rng = random.Random(seed)
    batches = [changelog(rng, rng.randrange(0, 60), True, ints) for _ in range(5)]
    run_both(spec(RETRACTING, **shape), batches)


@pytest.mark.parametrize("seed", range(4))
def test_insert_only_calls_and_other_value_types(seed: int) -> None:
    rng = random.Random(seed)
    calls = [AggregateCall(a.Min(), (2,)), AggregateCall(a.Max(), (2,)),
             AggregateCall(a.FirstValue(), (2,)), AggregateCall(a.LastValue(), (2,)),
             AggregateCall(a.Sum(), (2,)), AggregateCall(a.Sum0(Decimal(0)), (2,)),
             AggregateCall(a.Avg("decimal", 2), (2,)), AggregateCall(a.Count1())]
    decimals = [changelog(rng, 40, False, lambda r: r.choice(
        [None, Decimal(r.randrange(-999, 999)).scaleb(-2)])) for _ in range(3)]
    run_both(spec(calls), decimals)
    floats = [changelog(rng, 40, False, lambda r: r.choice(
        [None, r.random(), float("nan"), -0.0, 0.0])) for _ in range(3)]
    run_both(spec([*calls[:5], AggregateCall(a.Avg("float"), (2,))]), floats)


def test_java_overflow_wraps_as_the_python_step_does() -> None:
    rows = [row_of([1, 0, BIG], RowKind.INSERT) for _ in range(3)]
    rows += [row_of([1, 0, BIG], RowKind.DELETE), row_of([1, 0, -BIG], RowKind.INSERT)]
    calls = [AggregateCall(a.Sum(bits=64), (2,)), AggregateCall(a.Sum0(bits=16), (2,))]
    run_both(spec(calls), [rows])
    out = c_step(spec(calls))(rows[:2], {}, None, None)
    assert out[-1]._values == [1, a.wrap_integer(2 * BIG, 64), a.wrap_integer(2 * BIG, 16)]


def test_a_retraction_into_an_insert_only_call_raises_its_error() -> None:
    s = spec([AggregateCall(a.Max(), (2,))])
    rows = [row_of([1, 0, 5], RowKind.INSERT), row_of([1, 0, 6], RowKind.INSERT),
            row_of([1, 0, 5], RowKind.UPDATE_BEFORE)]
    with pytest.raises(RetractionNotSupportedError):
        python_step(s)(rows, {}, None, None)
    with pytest.raises(RetractionNotSupportedError):
        c_step(s)(rows, {}, None, None)


def test_other_records_and_snapshots_take_the_python_step() -> None:
    calls = (AggregateCall(a.Count1()), AggregateCall(a.Sum(bits=64), (1,)))
    step = compile_group_batch(spec(list(calls)))
    assert hasattr(step, "kernel")
    table: dict[Any, Any] = {}

    class Sub(Row):
        __slots__ = ()

    sub = Sub(7, 1)
    assert step.kernel([sub], table) is None and table == {}  # not a plain Row: no change
    assert [r._values for r in step([sub], table, None, None)] == [[7, 1, 1]]
    copied: set[Any] = set()
    rows = [row_of([7, 2], RowKind.INSERT)]
    out = step(rows, table, copied, lambda acc: list(acc))
    assert copied == {7} and [r._values for r in out] == [[7, 1, 1], [7, 2, 3]]


def test_calls_the_kernel_does_not_run_keep_the_compiled_step() -> None:
    assert kernel_ops(spec([AggregateCall(a.Count(), (1, 2))])) is None
    assert kernel_ops(spec([AggregateCall(a.Sum(), (1,), filter=bool)])) is None
    assert kernel_ops(spec([AggregateCall(a.Sum(), (1,), distinct=True)])) is None
    assert kernel_ops(spec([AggregateCall(a.Sum(), lambda r: (1,))])) is None
    assert kernel_ops(StepSpec((0,), (AggregateCall(a.Sum(), (1,)),), True, True, False)) is None
    assert not hasattr(compile_group_batch(spec([AggregateCall(ListAgg(), (1,))])), "kernel")
    ops, init = kernel_ops(spec(RETRACTING))  # type: ignore[misc]
    assert init == (1,) + (0,) * 12
    assert [op[2] for op in ops] == [1, 1, 2, 4, 6, 8, 9, 11]
