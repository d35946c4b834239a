"""Interval joins (``flintlock.datastream.changelog.interval_join``, issue 32): Flink's
``RowTimeIntervalJoin`` semantics — rows joined within the bounds in either arrival order,
outer rows NULL-padded when the watermark passes their bound (or at once when they arrive
too late to be cached), late rows still joining the cached ones, state cleared by the
clean-up timers, the cached rows visited in the order of Flink's HashMap, the output's
watermark held back, snapshot and restore — and the processing-time variant."""

from __future__ import annotations

import pytest

from flintlock.datastream.changelog.errors import InvalidOperatorArgumentError, NotInsertOnlyError
from flintlock.datastream.changelog.interval_join import IntervalJoinFunction, java_long_bucket
from flintlock.datastream.changelog.join import JoinType
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.testing.operators import ManualTimers
from tests.table.changelog_harness import Harness, r, show

END = 2**63 - 1


class TimeOf:
    """``row -> its field 1`` (the rowtime, already in milliseconds)."""

    def __call__(self, row):
        return row[1]


def _join(join_type=JoinType.INNER, lower=-5, upper=0, state=None, restored=False,
          condition=None, timers=None, proctime=False):
    function = IntervalJoinFunction(join_type, 3, 3, (0,), (0,), lower, upper,
                                    None if proctime else TimeOf(),
                                    None if proctime else TimeOf(), condition,
                                    proctime=proctime)
    harness = Harness(function, [function.left_key_selector(), function.right_key_selector()],
                      state=state, restored=restored, timers=timers)
    return harness, function


def _cached(harness, function, key):
    harness.backend.set_current_key(key)
    left, right = function._left.state.value(), function._right.state.value()
    return (sorted(left[3]) if left else [], sorted(right[3]) if right else [])


def test_rows_join_within_the_bounds_in_either_arrival_order():
    # left.t in [right.t - 5, right.t]
    h, _ = _join()
    assert h.feed(r("+I", 1, 10, "a")) == []
    assert h.feed(r("+I", 1, 12, "x"), side=1) == ["+I[1, 10, a, 1, 12, x]"]
    assert h.feed(r("+I", 1, 20, "y"), side=1) == []  # 10 < 20 - 5
    assert h.feed(r("+I", 1, 16, "b")) == ["+I[1, 16, b, 1, 20, y]"]
    assert h.feed(r("+I", 1, 13, "c")) == []  # out of order, not late; 12 < 13
    assert h.feed(r("+I", 2, 16, "z"), side=1) == []  # another key
    assert h.feed(r("+I", 1, 15, "w"), side=1) == ["+I[1, 10, a, 1, 15, w]",
                                                    "+I[1, 13, c, 1, 15, w]"]


def test_bounds_and_the_residual_condition_are_inclusive_and_applied():
    h, _ = _join(lower=0, upper=0, condition=lambda left, right: left[2] != right[2])
    h.feed(r("+I", 1, 10, "a"), r("+I", 1, 10, "b"))
    assert h.feed(r("+I", 1, 10, "a"), side=1) == ["+I[1, 10, b, 1, 10, a]"]
    assert h.feed(r("+I", 1, 11, "c"), side=1) == []


def test_state_is_cleaned_by_the_timers_and_late_rows_are_not_cached():
    h, f = _join()
    h.feed(r("+I", 1, 10, "a"))
    h.feed(r("+I", 1, 12, "x"), r("+I", 1, 20, "y"), side=1)
    assert _cached(h, f, 1) == ([10], [12, 20])
    assert h.watermark(15) == []  # the right rows' timer (12 + 0 + 2 + 1): 12 expires
    assert _cached(h, f, 1) == ([10], [20])
    assert h.watermark(18) == []  # the left rows' timer (10 + 5 + 2 + 1)
    assert _cached(h, f, 1) == ([], [20])
    assert h.feed(r("+I", 1, 14, "b")) == []  # 14 + 5 > 18: cached, 20 out of its bounds
    assert h.feed(r("+I", 1, 12, "c")) == []  # 12 + 5 <= 18: too late to be cached
    assert _cached(h, f, 1) == ([14], [20])
    assert h.watermark(END) == []
    assert _cached(h, f, 1) == ([], [])


def test_a_late_row_still_joins_the_cached_rows():
    h, _ = _join(lower=-10, upper=10)
    h.feed(r("+I", 1, 30, "x"), side=1)
    assert h.watermark(25) == []
    assert h.feed(r("+I", 1, 22, "a")) == ["+I[1, 22, a, 1, 30, x]"]  # behind the watermark


def test_left_outer_rows_are_padded_when_the_watermark_passes_their_bound():
    h, _ = _join(JoinType.LEFT)
    assert h.feed(r("+I", 1, 10, "a"), r("+I", 2, 10, "b")) == []
    assert h.feed(r("+I", 2, 14, "x"), side=1) == ["+I[2, 10, b, 2, 14, x]"]
    assert h.watermark(17) == []
    assert h.watermark(18) == ["+I[1, 10, a, null, null, null]"]  # b joined: no padding
    # too late to be cached and joined with nothing: padded at once
    assert h.feed(r("+I", 1, 3, "c")) == ["+I[1, 3, c, null, null, null]"]


def test_right_and_full_outer_rows_are_padded_on_their_side():
    h, _ = _join(JoinType.RIGHT)
    h.feed(r("+I", 1, 12, "x"), r("+I", 1, 30, "y"), side=1)
    assert h.feed(r("+I", 1, 10, "a")) == ["+I[1, 10, a, 1, 12, x]"]
    assert h.watermark(END) == ["+I[null, null, null, 1, 30, y]"]
    h, _ = _join(JoinType.FULL)
    h.feed(r("+I", 1, 12, "x"), side=1)
    h.feed(r("+I", 1, 1, "a"))
    assert sorted(h.watermark(END)) == ["+I[1, 1, a, null, null, null]",
                                        "+I[null, null, null, 1, 12, x]"]


def test_cached_rows_are_visited_in_the_order_of_flinks_hash_map():
    assert java_long_bucket(17, 16) == 1 and java_long_bucket(3, 16) == 3
    assert java_long_bucket(1704067201000, 16) == java_long_bucket(1704067201000 & 0xFFFFFFFF
                                                                   ^ 1704067201000 >> 32, 16)
    h, _ = _join(lower=-20, upper=20)
    h.feed(r("+I", 1, 3, "early"), r("+I", 1, 17, "later"))
    assert h.feed(r("+I", 1, 10, "x"), side=1) == ["+I[1, 17, later, 1, 10, x]",
                                                    "+I[1, 3, early, 1, 10, x]"]


def test_the_output_watermark_is_held_back_by_the_larger_relative_size():
    h, _ = _join(lower=-5, upper=2)
    h.watermark(100)
    h.watermark(END)
    assert h.out.watermarks() == [95, END]


def test_cached_rows_and_timers_survive_a_snapshot_and_restore():
    first, _ = _join(JoinType.LEFT)
    first.feed(r("+I", 1, 10, "a"), r("+I", 1, 11, "b"))
    handle, writer = first.snapshot()
    backend = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
    backend.restore([handle], writer.read)
    second, f = _join(JoinType.LEFT, state=backend, restored=True)
    assert second.feed(r("+I", 1, 14, "x"), side=1) == ["+I[1, 10, a, 1, 14, x]",
                                                         "+I[1, 11, b, 1, 14, x]"]
    assert second.feed(r("+I", 1, 2, "c")) == []
    assert second.watermark(END) == ["+I[1, 2, c, null, null, null]"]
    assert _cached(second, f, 1) == ([], [])


def test_processing_time_rows_join_by_arrival_time():
    timers = ManualTimers(now=1000)
    h, _ = _join(JoinType.LEFT, lower=-5, upper=5, timers=timers, proctime=True)
    h.feed(r("+I", 1, 0, "a"))
    timers.advance(3)
    assert h.feed(r("+I", 1, 0, "x"), side=1) == ["+I[1, 0, a, 1, 0, x]"]
    h.feed(r("+I", 2, 0, "b"))
    timers.advance(20)
    # b's clean-up timer (1003 + 5 + 5 + 1) fired: never joined, padded
    assert [show(row) for row in h.rows()[-1:]] == ["+I[2, 0, b, null, null, null]"]


def test_bad_arguments_and_updates_are_refused():
    with pytest.raises(InvalidOperatorArgumentError):
        IntervalJoinFunction(JoinType.INNER, 1, 1, (0,), (0,), 5, 1, TimeOf(), TimeOf())
    with pytest.raises(InvalidOperatorArgumentError):
        IntervalJoinFunction(JoinType.INNER, 1, 1, (0,), (0,), 0, 1, None, None)
    h, _ = _join()
    with pytest.raises(NotInsertOnlyError):
        h.feed(r("-D", 1, 10, "a"))


def test_the_rocksdb_backend_gives_the_same_order_padding_and_clean_up(tmp_path):
    from flintlock.runtime.state.rocksdb import RocksDBKeyedStateBackend

    state = RocksDBKeyedStateBackend(KeyGroupRange(0, 127), 128, local_dir=str(tmp_path))
    h, f = _join(JoinType.FULL, lower=-20, upper=20, state=state)
    h.feed(r("+I", 1, 3, "early"), r("+I", 1, 17, "later"), r("+I", 1, 100, "alone"))
    assert h.feed(r("+I", 1, 10, "x"), side=1) == ["+I[1, 17, later, 1, 10, x]",
                                                    "+I[1, 3, early, 1, 10, x]"]
    assert h.watermark(END) == ["+I[1, 100, alone, null, null, null]"]
    assert _cached(h, f, 1) == ([], [])
