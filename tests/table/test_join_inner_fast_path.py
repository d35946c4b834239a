"""The INNER regular join's one-function step (``StreamingJoinFunction._inner``, issue 33's
speed work) emits exactly the rows, in the same order and with the same kinds, as the general
accumulate / retract path it replaces for inner joins, with and without a residual condition,
over random changelogs of both sides (duplicates, retractions, null keys). And the join a
batch at a time (``process_batch`` on ``runtime.tasks.co_batch_operator``, every join type,
plain and timestamped batches of several keys) emits what it emits a record at a time."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.datastream.changelog.join import JoinType, StreamingJoinFunction
from flintlock.runtime.network.event_time import TimestampedBatch
from flintlock.runtime.tasks.co_batch_operator import KeyedCoBatchOperator
from flintlock.runtime.tasks.operators import CoOperator
from tests.table.changelog_harness import Harness, r, show
from tests.table.test_changelog_join import _changelogs


class _GeneralPath(StreamingJoinFunction):
    """The join with the general path for every join type, a record at a time (the
    reference)."""

    process_batch = None  # not offered: CoOperator calls process_element1/2 per record

    def process_element1(self, value: Any, ctx: Any) -> list[Any]:
        return self._process(value, self._left, self._right)

    def process_element2(self, value: Any, ctx: Any) -> list[Any]:
        return self._process(value, self._right, self._left)


class _PerRecord(StreamingJoinFunction):
    """The join's own per-record methods (no batch path)."""

    process_batch = None


def _harness(cls: type[StreamingJoinFunction], condition: Any,
             join_type: JoinType = JoinType.INNER) -> Harness:
    function = cls(join_type, 2, 2, (0,), (0,), condition)
    return Harness(function, [function.left_key_selector(), function.right_key_selector()])


def _different_values(left: Any, right: Any) -> bool:
    return bool(left[1] != right[1])


@settings(max_examples=150, deadline=None)
@given(events=_changelogs(), conditioned=st.booleans())
def test_the_inner_step_emits_what_the_general_path_emits(events: Any,
                                                          conditioned: bool) -> None:
    condition = _different_values if conditioned else None
    fast, general = _harness(StreamingJoinFunction, condition), _harness(_GeneralPath, condition)
    for side, kind, key, value in events:
        assert (fast.feed(r(kind, key, value), side=side)
                == general.feed(r(kind, key, value), side=side))


def _batches(events: list[Any], cuts: list[int]) -> list[tuple[int, list[Any]]]:
    """The events as runs of one side, each cut into batches at the drawn lengths."""
    out: list[tuple[int, list[Any]]] = []
    lengths = iter(cuts * (len(events) + 1) or [1] * (len(events) + 1))
    for side, kind, key, value in events:
        if out and out[-1][0] == side and len(out[-1][1]) < max(1, next(lengths)):
            out[-1][1].append(r(kind, key, value))
        else:
            out.append((side, [r(kind, key, value)]))
    return out


@settings(max_examples=150, deadline=None)
@given(events=_changelogs(), join_type=st.sampled_from(list(JoinType)),
       conditioned=st.booleans(), stamped=st.booleans(),
       cuts=st.lists(st.integers(1, 6), max_size=4))
def test_a_batch_at_a_time_emits_what_a_record_at_a_time_emits(
        events: Any, join_type: JoinType, conditioned: bool, stamped: bool,
        cuts: list[int]) -> None:
    condition = _different_values if conditioned else None
    batched = _harness(StreamingJoinFunction, condition, join_type)
    single = _harness(_PerRecord, condition, join_type)
    assert type(batched.operator) is KeyedCoBatchOperator
    assert type(single.operator) is CoOperator
    for number, (side, rows) in enumerate(_batches(events, cuts)):
        stamps = [number * 10 + i for i in range(len(rows))]
        batch: list[Any] = TimestampedBatch(rows, stamps) if stamped else rows
        want: list[tuple[str, int]] = []
        for row, stamp in zip(rows, stamps, strict=True):
            one: list[Any] = TimestampedBatch([row], [stamp]) if stamped else [row]
            want.extend(_feed(single, one, side))
        assert _feed(batched, batch, side) == want


def _feed(harness: Harness, batch: list[Any], side: int) -> list[tuple[str, int]]:
    """A batch fed whole; its outputs with their timestamps."""
    before = len(harness.out.events)
    if side == 0:
        harness.operator.process_batch(batch)
    else:
        harness.operator.process_batch2(batch)
    return [(show(event[1]), event[2]) for event in harness.out.events[before:]
            if event[0] == "record"]
