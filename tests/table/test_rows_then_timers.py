"""The event-time over aggregation and keep-first deduplication a batch at a time
(``changelog.timer_batches.RowsThenTimers`` under ``runtime.tasks.keyed_rows_operator``, issue
32) emit what ``ProcessOperator`` emits calling them record by record and timer by timer: the
same rows in the same order with the same timestamps and watermarks, late rows included, and
across a snapshot restored into a new operator halfway; a processing-time over aggregation
declines the batch path."""

from __future__ import annotations

import random
from typing import Any

import pytest

from flintlock.common.operator_spec import OperatorKind, OperatorSpec
from flintlock.datastream.changelog import aggregates
from flintlock.datastream.changelog.dedup_rowtime import RowTimeKeepFirstRowFunction
from flintlock.datastream.changelog.group_agg import AggregateCall
from flintlock.datastream.changelog.over_agg import OverAggFunction
from flintlock.datastream.changelog.rows import key_selector
from flintlock.datastream.changelog.timer_batches import RowsEmittedError
from flintlock.datastream.functions import KeyedProcessFunction
from flintlock.runtime.network.event_time import TimestampedBatch
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.tasks.keyed_rows_operator import KeyedRowsOperator
from flintlock.testing.operators import ManualTimers, open_operator
from tests.table.changelog_harness import r, show
from tests.table.restored_runs import run_restored


def _time(row: Any) -> int:
    return row[1]  # type: ignore[no-any-return]


class _PerRecord(KeyedProcessFunction):
    """The same function without the batch methods: ``ProcessOperator`` runs it."""

    def __init__(self, function: Any) -> None:
        self.function = function

    def open(self, runtime_context: Any) -> None:
        self.function.open(runtime_context)

    def process_element(self, value: Any, ctx: Any) -> Any:
        return self.function.process_element(value, ctx)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        return self.function.on_timer(timestamp, ctx)


def _function(kind: str) -> Any:
    calls = [AggregateCall(aggregates.Sum(), (2,)), AggregateCall(aggregates.Count1())]
    if kind == "dedup":
        return RowTimeKeepFirstRowFunction(_time)
    frames = {"rows-2": (True, 2), "range-3": (False, 3), "unbounded": (True, None)}
    rows, preceding = frames[kind]
    return OverAggFunction((0,), calls, _time, rows, preceding)


def _open(kind: str, batched: bool, backend: HeapKeyedStateBackend, restored: Any = False
          ) -> tuple[Any, Any]:
    function = _function(kind)
    spec = OperatorSpec(OperatorKind.KEYED_PROCESS,
                        function=function if batched else _PerRecord(function), keyed=True)
    operator, out = open_operator(spec, keyed_backend=backend, restored=restored,
                                  key_selectors=(key_selector((0,)),), timers=ManualTimers())
    assert (type(operator) is KeyedRowsOperator) == batched
    return operator, out


def _steps(seed: int) -> list[tuple[str, Any]]:
    rng = random.Random(seed)
    steps: list[tuple[str, Any]] = []
    watermark = 0
    for _ in range(30):
        if rng.random() < 0.3:
            watermark += rng.randrange(0, 6)
            steps.append(("watermark", watermark))
            continue
        rows = [r("+I", rng.randrange(3), max(0, watermark + rng.randrange(-3, 8)),
                  rng.randrange(10)) for _ in range(rng.randrange(1, 6))]
        if rng.random() < 0.5:
            rows = TimestampedBatch(rows, [row[1] for row in rows])
        steps.append(("rows", rows))
    steps.append(("watermark", 2**63 - 1))
    return steps


def _feed(operator: Any, steps: list[tuple[str, Any]]) -> None:
    for what, item in steps:
        if what == "watermark":
            operator.process_watermark(item)
        else:
            operator.process_batch(item[:])


def _run(kind: str, batched: bool, steps: list[tuple[str, Any]]) -> list[Any]:
    out, second_out = run_restored(
        lambda backend, restored: _open(kind, batched, backend, restored=restored),
        _feed, steps)
    return [*out.events, "restored", *second_out.events]


def _shown(events: list[Any]) -> list[Any]:
    return [(e[0], show(e[1]), e[2]) if isinstance(e, tuple) and e[0] == "record" else e
            for e in events]


@pytest.mark.parametrize("kind", ["dedup", "rows-2", "range-3", "unbounded"])
@pytest.mark.parametrize("seed", range(5))
def test_batches_emit_what_records_one_at_a_time_emit(kind: str, seed: int) -> None:
    steps = _steps(seed)
    per_record = _shown(_run(kind, False, steps))
    assert _shown(_run(kind, True, steps)) == per_record
    assert any(isinstance(e, tuple) and e[0] == "record" for e in per_record)


def test_processing_time_over_aggregation_declines_the_batch_path() -> None:
    function = OverAggFunction((0,), [AggregateCall(aggregates.Count1())], _time, True, None,
                               proctime=True)
    assert not function.takes_keyed_batches()
    assert not function.process_keyed_batch([r("+I", 1, 0, 0)], _time, print, None)


def test_a_row_that_emits_on_the_batch_path_is_an_error() -> None:
    function = _function("rows-2")
    function.process_element = lambda value, ctx: (value,)
    with pytest.raises(RowsEmittedError):
        function.process_keyed_batch([r("+I", 1, 0, 0)], _time, lambda key: None, None)
