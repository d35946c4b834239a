"""The interval and temporal joins a batch at a time (``runtime.tasks.co_batch_operator`` with
their ``process_batch`` / ``on_event_timers``, issue 32) emit exactly what the per-record path
(``CoOperator``: ``process_element1/2`` and ``on_timer`` per timer) emits — the same rows in
the same order, each with the same timestamp, the same watermarks — for every interval join
type and both temporal join types, on plain and timestamped batches, with late rows, several
rows per key and time, version updates and deletions, and a snapshot restored into a new
operator halfway (cached rows, versions and timers)."""

from __future__ import annotations

import datetime
import random
from typing import Any

import pytest

from flintlock.common.operator_spec import OperatorKind, OperatorSpec
from flintlock.datastream.changelog.interval_join import IntervalJoinFunction
from flintlock.datastream.changelog.join import JoinType
from flintlock.datastream.changelog.temporal_join import TemporalRowTimeJoinFunction
from flintlock.datastream.functions import KeyedCoProcessFunction
from flintlock.runtime.network.event_time import TimestampedBatch
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.tasks.co_batch_operator import KeyedCoBatchOperator
from flintlock.runtime.tasks.operators import CoOperator
from flintlock.table.planner.windows import RowtimeNullError, RowtimeOf
from flintlock.testing.operators import (
    CollectingOutput,
    ManualTimers,
    MemoryStateWriter,
    open_operator,
)
from tests.table.changelog_harness import r, show
from tests.table.restored_runs import run_restored


class _TimeOf:
    def __call__(self, row: Any) -> int:
        return row[1]  # type: ignore[no-any-return]


class _PerRecord(KeyedCoProcessFunction):
    """The same join without the batch methods: ``CoOperator`` runs it per record."""

    def __init__(self, join: Any) -> None:
        self.join = join
        self.output_watermark_delay = getattr(join, "output_watermark_delay", 0)

    def open(self, runtime_context: Any) -> None:
        self.join.open(runtime_context)

    def process_element1(self, value: Any, ctx: Any) -> Any:
        return self.join.process_element1(value, ctx)

    def process_element2(self, value: Any, ctx: Any) -> Any:
        return self.join.process_element2(value, ctx)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        return self.join.on_timer(timestamp, ctx)


_EPOCH = datetime.datetime(1970, 1, 1)


def _join(join_type: JoinType | str) -> Any:
    """An interval join of that type, or a temporal join ("temporal" / "temporal-left");
    "rowtime-<type>": the interval join on a TIMESTAMP rowtime read as the planner reads it
    (``RowtimeOf``, a batch at a time through ``of_rows``); "plain-<type>": without a
    condition beyond the keys and times (its one-time join path)."""
    condition = lambda left, right: left[2] != right[2] or left[2] == 0  # noqa: E731
    if isinstance(join_type, str) and join_type.startswith("rowtime-"):
        return IntervalJoinFunction(JoinType[join_type[8:]], 3, 3, (0,), (0,), -4, 2,
                                    RowtimeOf(1), RowtimeOf(1), condition)
    if isinstance(join_type, str) and join_type.startswith("plain-"):  # no other condition
        return IntervalJoinFunction(JoinType[join_type[6:]], 3, 3, (0,), (0,), -4, 2,
                                    _TimeOf(), _TimeOf())
    if isinstance(join_type, str) and join_type.startswith("true-"):  # a condition, always met
        return IntervalJoinFunction(JoinType[join_type[5:]], 3, 3, (0,), (0,), -4, 2,
                                    _TimeOf(), _TimeOf(), lambda left, right: True)
    if isinstance(join_type, JoinType):
        return IntervalJoinFunction(join_type, 3, 3, (0,), (0,), -4, 2, _TimeOf(), _TimeOf(),
                                    condition)
    return TemporalRowTimeJoinFunction(3, 3, (0,), (0,), _TimeOf(), _TimeOf(), condition,
                                       left_outer=join_type == "temporal-left")


def _open(join_type: JoinType | str, batched: bool, backend: HeapKeyedStateBackend,
          restored: Any = False) -> tuple[Any, CollectingOutput]:
    join = _join(join_type)
    function = join if batched else _PerRecord(join)
    spec = OperatorSpec(OperatorKind.KEYED_CO_PROCESS, function=function, keyed=True)
    operator, out = open_operator(spec, keyed_backend=backend, restored=restored,
                                  key_selectors=(join.left_key_selector(),
                                                 join.right_key_selector()),
                                  timers=ManualTimers())
    assert type(operator) is (KeyedCoBatchOperator if batched else CoOperator)
    return operator, out


def _steps(seed: int) -> list[tuple[str, Any]]:
    """Batches of either side (timestamped or not) and watermarks, with late rows; right
    rows are sometimes updates or deletions (the temporal join's versions)."""
    rng = random.Random(seed)
    steps: list[tuple[str, Any]] = []
    watermark = 0
    for _ in range(40):
        if rng.random() < 0.3:
            watermark += rng.randrange(0, 6)
            steps.append(("watermark", watermark))
            continue
        side = "left" if rng.random() < 0.5 else "right"
        kinds = ["+I"] if side == "left" else ["+I", "+I", "+U", "-U", "-D"]
        rows = [r(rng.choice(kinds), rng.randrange(4), max(0, watermark + rng.randrange(-6, 8)),
                  rng.randrange(3)) for _ in range(rng.randrange(1, 6))]
        if rng.random() < 0.5:
            rows = TimestampedBatch(rows, [row[1] for row in rows])
        steps.append((side, rows))
    steps.append(("watermark", 2**63 - 1))
    return steps


def _inserts(item: Any) -> Any:
    """A batch's rows as inserts (a watermark as it is)."""
    if not isinstance(item, list):
        return item
    rows = [r("+I", *row) for row in item]
    return TimestampedBatch(rows, item.timestamps) if type(item) is TimestampedBatch else rows


def _feed(operator: Any, steps: list[tuple[str, Any]]) -> None:
    for what, item in steps:
        if what == "watermark":
            operator.process_watermark(item)
        elif what == "left":
            operator.process_batch(item[:])
        else:
            operator.process_batch2(item[:])


def _events(out: CollectingOutput) -> list[tuple[Any, ...]]:
    return [(event[0], show(event[1]), event[2]) if event[0] == "record" else event
            for event in out.events]


def _run(join_type: JoinType | str, batched: bool, steps: list[tuple[str, Any]]
         ) -> list[Any]:
    """Half the steps, a snapshot restored into a new operator, the other half."""
    out, second_out = run_restored(
        lambda backend, restored: _open(join_type, batched, backend, restored=restored),
        _feed, steps)
    return [*_events(out), "restored", *_events(second_out)]


@pytest.mark.parametrize("join_type", [*JoinType, "temporal", "temporal-left"])
@pytest.mark.parametrize("seed", range(8))
def test_batches_emit_what_records_one_at_a_time_emit(join_type: JoinType | str,
                                                      seed: int) -> None:
    steps = _steps(seed)
    if isinstance(join_type, JoinType):  # insert-only inputs
        steps = [(what, _inserts(item)) for what, item in steps]
    per_record = _run(join_type, False, steps)
    assert _run(join_type, True, steps) == per_record
    assert any(event[0] == "record" for event in per_record)


@pytest.mark.parametrize("join_type", [JoinType.FULL, "temporal-left"])
@pytest.mark.parametrize("seed", range(4))
def test_rows_handled_while_a_snapshot_is_in_flight_do_not_reach_it(join_type: JoinType | str,
                                                                     seed: int) -> None:
    steps = _steps(seed)
    if isinstance(join_type, JoinType):
        steps = [(what, _inserts(item)) for what, item in steps]
    half = len(steps) // 2

    def continued(rows_in_flight: bool) -> list[Any]:
        backend = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
        operator, _ = _open(join_type, True, backend)
        _feed(operator, steps[:half])
        snapshot = backend.snapshot()
        if rows_in_flight:  # the cache lists are changed in place between value and update
            _feed(operator, steps[half:])
        writer = MemoryStateWriter()
        handle = snapshot.write(writer, "keyed")
        restored = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
        restored.restore([handle], writer.read)
        second, out = _open(join_type, True, restored, restored=True)
        _feed(second, steps[half:])
        return _events(out)

    assert continued(True) == continued(False)


def _timestamps(item: Any) -> Any:
    """A batch's rows as inserts with their times as TIMESTAMP values (ms after the epoch)."""
    if not isinstance(item, list):
        return item
    rows = [r("+I", row[0], _EPOCH + datetime.timedelta(milliseconds=row[1]), row[2])
            for row in item]
    return TimestampedBatch(rows, item.timestamps) if type(item) is TimestampedBatch else rows


@pytest.mark.parametrize("join_type", ["rowtime-INNER", "rowtime-FULL"])
@pytest.mark.parametrize("seed", range(4))
def test_the_planners_rowtime_a_batch_at_a_time_joins_as_per_record(join_type: str,
                                                                    seed: int) -> None:
    steps = [(what, _timestamps(item)) for what, item in _steps(seed)]
    per_record = _run(join_type, False, steps)
    assert _run(join_type, True, steps) == per_record
    assert any(event[0] == "record" for event in per_record)


@pytest.mark.parametrize("batched", [False, True])
def test_a_null_rowtime_in_a_batch_fails_as_one_row_does(batched: bool) -> None:
    operator, _ = _open("rowtime-INNER", batched,
                        HeapKeyedStateBackend(KeyGroupRange(0, 127), 128))
    rows = [r("+I", 1, _EPOCH, 0), r("+I", 2, None, 0)]
    with pytest.raises(RowtimeNullError):
        operator.process_batch(rows)


@pytest.mark.parametrize("join_type", ["plain-INNER", "plain-LEFT", "plain-RIGHT"])
@pytest.mark.parametrize("seed", range(6))
def test_a_join_without_a_condition_joins_as_with_one_always_met(join_type: str,
                                                                  seed: int) -> None:
    """The one-time path against the general one (a condition always met takes it)."""
    steps = [(what, _inserts(item)) for what, item in _steps(seed)]
    general = _run(join_type.replace("plain-", "true-"), False, steps)
    assert _run(join_type, False, steps) == general
    assert _run(join_type, True, steps) == general
    assert any(event[0] == "record" for event in general)
