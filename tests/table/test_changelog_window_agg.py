"""Window aggregation and the window table functions on their own
(``flintlock.datastream.changelog.window_agg`` / ``window_tvf``, issue 32): results when the
watermark reaches a window's end - 1, late rows dropped per window as Flink's slices drop
them, CUMULATE's steps, session merging (a bridging row merges two sessions and moves the
timer), and pending windows carried through a snapshot and restore."""

from __future__ import annotations

import datetime

import pytest

from flintlock.datastream.changelog import aggregates
from flintlock.datastream.changelog.errors import NotInsertOnlyError
from flintlock.datastream.changelog.group_agg import AggregateCall
from flintlock.datastream.changelog.rows import key_selector
from flintlock.datastream.changelog.window_agg import WindowAggFunction
from flintlock.datastream.changelog.window_assigners import WindowAssigner, merge_session
from flintlock.datastream.changelog.window_tvf import (
    AlignedWindowTableFunction,
    SessionWindowTableFunction,
)
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange
from tests.table.changelog_harness import Harness, r

END = 2**63 - 1


def _ts(row) -> int:
    return row[1]


def _t(millis: int) -> datetime.datetime:
    return datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=millis)


def _agg(window, grouping=(0,)) -> WindowAggFunction:
    calls = [AggregateCall(aggregates.Count1()), AggregateCall(aggregates.Sum(), (2,))]
    return WindowAggFunction(grouping, calls, window, _ts)


def _harness(function, state=None, restored=False) -> Harness:
    return Harness(function, [function.key_selector()], state=state, restored=restored)


def _out(key, count, total, start, end) -> str:
    return f"+I[{key}, {count}, {total}, {_t(start)}, {_t(end)}, {_t(end - 1)}]"


def test_assigners_follow_flinks_alignment_and_order() -> None:
    assert WindowAssigner("TUMBLE", 10).windows_of(-3) == [(-10, 0)]
    assert WindowAssigner("TUMBLE", 10, offset=3).windows_of(12) == [(3, 13)]
    assert WindowAssigner("HOP", 10, 5).windows_of(7) == [(5, 15), (0, 10)]
    assert WindowAssigner("CUMULATE", 15, 5).windows_of(7) == [(0, 10), (0, 15)]
    assert merge_session([(0, 3), (5, 8), (20, 23)], 3, 6) == ((0, 8), [(0, 3), (5, 8)])


def test_tumble_fires_at_the_window_end_and_drops_late_rows() -> None:
    h = _harness(_agg(("TUMBLE", 10, 0, 0)))
    assert h.feed(r("+I", "a", 3, 1), r("+I", "b", 12, 2), r("+I", "a", 1, 10)) == []
    assert h.watermark(8) == []
    assert h.watermark(9) == [_out("a", 2, 11, 0, 10)]
    assert h.feed(r("+I", "a", 5, 100)) == []  # its window fired: dropped
    assert h.watermark(END) == [_out("b", 1, 2, 10, 20)]


def test_hop_keeps_a_late_row_in_its_windows_that_have_not_fired() -> None:
    h = _harness(_agg(("HOP", 10, 5, 0)))
    h.feed(r("+I", "a", 7, 1))
    assert h.watermark(9) == [_out("a", 1, 1, 0, 10)]
    assert h.feed(r("+I", "a", 6, 10)) == []  # [0, 10) fired, [5, 15) not
    assert h.watermark(END) == [_out("a", 2, 11, 5, 15)]


def test_cumulate_emits_each_step_and_a_late_row_counts_in_later_steps() -> None:
    h = _harness(_agg(("CUMULATE", 15, 5, 0), grouping=()))
    h.feed(r("+I", "x", 1, 1), r("+I", "x", 6, 2))
    assert h.watermark(4) == ["+I[1, 1, " + f"{_t(0)}, {_t(5)}, {_t(4)}]"]
    h.feed(r("+I", "x", 2, 100))  # step [0, 5) fired; [0, 10) and [0, 15) not
    assert h.watermark(END) == [
        f"+I[3, 103, {_t(0)}, {_t(10)}, {_t(9)}]", f"+I[3, 103, {_t(0)}, {_t(15)}, {_t(14)}]"]


def test_sessions_merge_when_a_row_bridges_them() -> None:
    h = _harness(_agg(("SESSION", 3, 0, 0)))
    h.feed(r("+I", "a", 0, 1), r("+I", "a", 5, 2))
    h.feed(r("+I", "a", 3, 4))  # [3, 6) touches [0, 3) and overlaps [5, 8)
    assert h.watermark(2) == []  # the first session's timer moved to the merged end
    assert h.watermark(7) == [_out("a", 3, 7, 0, 8)]
    assert h.feed(r("+I", "a", 4, 1)) == []  # its merged session fired: late
    assert h.watermark(END) == []


def test_pending_windows_survive_a_snapshot_and_restore() -> None:
    first = _harness(_agg(("TUMBLE", 10, 0, 0)))
    first.feed(r("+I", "a", 1, 1), r("+I", "b", 2, 2), r("+I", "a", 15, 3))
    assert first.watermark(5) == []
    handle, writer = first.snapshot()
    backend = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
    backend.restore([handle], writer.read)
    second = _harness(_agg(("TUMBLE", 10, 0, 0)), state=backend, restored=True)
    second.feed(r("+I", "a", 4, 10))
    assert sorted(second.watermark(END)) == sorted(
        [_out("a", 2, 11, 0, 10), _out("b", 1, 2, 0, 10), _out("a", 1, 3, 10, 20)])


def test_distinct_and_filter_calls() -> None:
    calls = [AggregateCall(aggregates.Count(), (2,), distinct=True),
             AggregateCall(aggregates.Count1(), filter=lambda row: row[2] > 1)]
    h = _harness(WindowAggFunction((0,), calls, ("TUMBLE", 10, 0, 0), _ts))
    h.feed(r("+I", "a", 1, 1), r("+I", "a", 2, 1), r("+I", "a", 3, 2))
    assert h.watermark(END) == [f"+I[a, 2, 1, {_t(0)}, {_t(10)}, {_t(9)}]"]


def test_window_aggregation_refuses_updates() -> None:
    h = _harness(_agg(("TUMBLE", 10, 0, 0)))
    with pytest.raises(NotInsertOnlyError):
        h.feed(r("-D", "a", 1, 1))


def test_window_table_functions_on_their_own() -> None:
    hop = AlignedWindowTableFunction(("HOP", 10, 5, 0), _ts)
    assert [list(row) for row in hop.flat_map(r("+I", "a", 7))] == [
        ["a", 7, _t(5), _t(15), _t(14)], ["a", 7, _t(0), _t(10), _t(9)]]
    session = SessionWindowTableFunction((0,), ("SESSION", 3, 0, 0), _ts)
    h = Harness(session, [key_selector((0,))])
    h.feed(r("+I", "a", 1), r("+I", "b", 2), r("+I", "a", 3))
    assert h.watermark(5) == [f"+I[b, 2, {_t(2)}, {_t(5)}, {_t(4)}]",
                              f"+I[a, 1, {_t(1)}, {_t(6)}, {_t(5)}]",
                              f"+I[a, 3, {_t(1)}, {_t(6)}, {_t(5)}]"]
    assert h.feed(r("+I", "a", 2)) == []  # late for the fired session


def _rank(limit, output_number=False, keep_last=False, ascending=False):
    from flintlock.datastream.changelog.sort_keys import SortKeySelector
    from flintlock.datastream.changelog.window_rank import WindowRankFunction

    # rows: [key, value, window_end]; partition by window_end, order by value
    return WindowRankFunction((2,), SortKeySelector([1], [ascending], [ascending]), limit, 2,
                              output_number, keep_last)


def test_window_top_n_emits_each_windows_first_rows_when_it_ends() -> None:
    function = _rank(2, output_number=True)
    h = Harness(function, [function.key_selector()])
    h.feed(r("+I", "a", 3, _t(10)), r("+I", "b", 9, _t(10)), r("+I", "c", 5, _t(10)),
           r("+I", "d", 1, _t(20)))
    assert h.watermark(8) == []
    assert h.watermark(9) == [f"+I[b, 9, {_t(10)}, 1]", f"+I[c, 5, {_t(10)}, 2]"]
    assert h.feed(r("+I", "e", 99, _t(10))) == []  # its window fired: dropped
    assert h.watermark(END) == [f"+I[d, 1, {_t(20)}, 1]"]


def test_window_deduplication_keeps_the_later_of_equal_rowtimes_when_keeping_last() -> None:
    last = _rank(1, keep_last=True)
    h = Harness(last, [last.key_selector()])
    h.feed(r("+I", "a", 5, _t(10)), r("+I", "b", 5, _t(10)), r("+I", "c", 2, _t(10)))
    assert h.watermark(END) == [f"+I[b, 5, {_t(10)}]"]
    first = _rank(1, ascending=True)
    h = Harness(first, [first.key_selector()])
    h.feed(r("+I", "a", 5, _t(10)), r("+I", "b", 2, _t(10)), r("+I", "c", 2, _t(10)))
    assert h.watermark(END) == [f"+I[b, 2, {_t(10)}]"]


def _over(rows, preceding):
    from flintlock.datastream.changelog.over_agg import OverAggFunction

    calls = [AggregateCall(aggregates.Sum(), (2,)), AggregateCall(aggregates.Count1())]
    return OverAggFunction((0,), calls, _ts, rows, preceding)


def test_over_rows_frame_emits_each_row_with_its_preceding_rows_when_the_watermark_passes():
    function = _over(True, 1)
    h = Harness(function, [function.key_selector()])
    h.feed(r("+I", "a", 5, 1), r("+I", "a", 2, 10), r("+I", "a", 5, 100))
    assert h.watermark(4) == ["+I[a, 2, 10, 10, 1]"]
    assert h.watermark(5) == ["+I[a, 5, 1, 11, 2]", "+I[a, 5, 100, 101, 2]"]
    assert h.feed(r("+I", "a", 5, 7)) == []  # at the last rowtime emitted: late
    h.feed(r("+I", "a", 9, 1000))
    assert h.watermark(END) == ["+I[a, 9, 1000, 1100, 2]"]


def test_over_range_frame_shares_results_among_equal_rowtimes_and_forgets_old_rows():
    function = _over(False, 3)
    h = Harness(function, [function.key_selector()])
    h.feed(r("+I", "a", 1, 1), r("+I", "a", 4, 10), r("+I", "a", 4, 20), r("+I", "a", 5, 100))
    assert h.watermark(END) == ["+I[a, 1, 1, 1, 1]", "+I[a, 4, 10, 31, 3]",
                                "+I[a, 4, 20, 31, 3]", "+I[a, 5, 100, 130, 3]"]
    unbounded = _over(False, None)
    h = Harness(unbounded, [unbounded.key_selector()])
    h.feed(r("+I", "a", 1, 1), r("+I", "a", 1, 2), r("+I", "a", 9, 4))
    assert h.watermark(END) == ["+I[a, 1, 1, 3, 2]", "+I[a, 1, 2, 3, 2]", "+I[a, 9, 4, 7, 3]"]


def test_window_join_joins_a_windows_rows_when_it_ends_and_pads_outer_rows() -> None:
    from flintlock.datastream.changelog.join import JoinType
    from flintlock.datastream.changelog.window_join import WindowJoinFunction

    # left [k, end], right [k, end, v]; keys: k and window end
    function = WindowJoinFunction(JoinType.FULL, 2, 3, (0, 1), (0, 1), 1, 1,
                                  condition=lambda left, right: right[2] > 0)
    h = Harness(function, [function.left_key_selector(), function.right_key_selector()])
    h.feed(r("+I", "a", _t(10)), r("+I", "b", _t(10)))
    h.feed(r("+I", "a", _t(10), 1), r("+I", "a", _t(10), 0), r("+I", "c", _t(10), 5), side=1)
    assert h.watermark(8) == []
    assert sorted(h.watermark(9)) == sorted([
        f"+I[a, {_t(10)}, a, {_t(10)}, 1]", f"+I[b, {_t(10)}, null, null, null]",
        f"+I[null, null, a, {_t(10)}, 0]", f"+I[null, null, c, {_t(10)}, 5]"])
    assert h.feed(r("+I", "a", _t(10))) == []  # its window fired: dropped
    assert h.watermark(END) == []
