"""A window aggregation's due windows fire a watermark at a time (issue 33).

``WindowAggFunction.on_event_timers`` lets ``KeyedRowsOperator`` hand it every event-time
timer a watermark makes due at once and send their rows as one timestamped batch (q5's HOP
windows fired a row per key and window, each its own batch through the chain and the
exchange). Checked here: the same rows, kinds, order and timestamps as the timers fired one at
a time through ``on_timer``, on aligned and session windows, on the heap and RocksDB; and one
batch per watermark. And a session window's rows grow in place (q11: a row joining a session
copied the session's rows, O(n^2) a session), in the same order as the copying merge."""

from __future__ import annotations

import datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.datastream.changelog.aggregates import Count1, Max, Sum
from flintlock.datastream.changelog.group_agg import AggregateCall
from flintlock.datastream.changelog.window_agg import WindowAggFunction
from flintlock.datastream.changelog.window_assigners import add_to_sessions, merge_session
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.rocksdb import RocksDBKeyedStateBackend
from flintlock.table.planner.windows import RowtimeOf
from tests.table.changelog_harness import Harness, r
from tests.table.test_window_codegen import _EVENTS


class _PerTimer(WindowAggFunction):
    """The same aggregation with its timers fired one at a time (``on_timer``)."""

    on_event_timers = None  # type: ignore[assignment]


_WINDOWS = st.sampled_from([("TUMBLE", 10, 0, 0), ("HOP", 10, 5, 0), ("HOP", 9, 3, 1),
                            ("CUMULATE", 12, 4, 0), ("SESSION", 5, 0, 0)])


def _make(cls: type, window: Any) -> Any:
    calls = [AggregateCall(Count1()), AggregateCall(Sum(), (2,)), AggregateCall(Max(), (2,))]
    return cls((0,), calls, window, RowtimeOf(1))


def _run(function: Any, events: list[Any], state: Any = None) -> tuple[list[Any], list[int]]:
    """Every record emitted (value shown, kind, timestamp) and the size of each output batch."""
    h = Harness(function, [function.key_selector()], state=state)
    sizes: list[int] = []
    collect = h.out.collect_batch

    def counted(records: list[Any]) -> None:
        sizes.append(len(records))
        collect(records)

    h.out.collect_batch = counted  # type: ignore[method-assign]
    for kind, item in [*events, ("watermark", 2**63 - 1)]:
        if kind == "rows":
            h.feed(*[r("+I", key, datetime.datetime(1970, 1, 1)
                       + datetime.timedelta(milliseconds=time), value)
                     for key, time, value in item])
        else:
            h.watermark(item)
    records = [(str(value), value.get_row_kind(), stamp) for value, stamp in h.out.records()]
    return records, sizes


@settings(max_examples=60, deadline=None)
@given(_WINDOWS, _EVENTS)
def test_a_watermark_fires_its_windows_as_one_batch(window, events) -> None:
    expected, _ = _run(_make(_PerTimer, window), events)
    got, sizes = _run(_make(WindowAggFunction, window), events)
    assert got == expected
    watermarks = sum(1 for kind, _ in events if kind == "watermark") + 1
    assert len(sizes) <= watermarks  # the rows feed nothing out: only watermarks emit


def test_many_keys_due_at_one_watermark_leave_in_one_batch(tmp_path) -> None:
    events = [("rows", [(key, time, 1) for key in "abcd" for time in (1, 7, 12)]),
              ("watermark", 30)]
    window = ("HOP", 10, 5, 0)
    expected, per_timer = _run(_make(_PerTimer, window), events)
    got, sizes = _run(_make(WindowAggFunction, window), events)
    assert got == expected and len(expected) == 16
    assert sizes == [16] and len(per_timer) == 16  # fails with the timers fired one at a time
    rocks = RocksDBKeyedStateBackend(KeyGroupRange(0, 127), 128, local_dir=str(tmp_path))
    assert _run(_make(WindowAggFunction, window), events, rocks) == (got, sizes)


class _Timers:
    """What ``add_to_sessions`` uses of a key's timer service."""

    def __init__(self, watermark: int) -> None:
        self.watermark, self.timers = watermark, set()

    def current_watermark(self) -> int:
        return self.watermark

    def register_event_time_timer(self, timestamp: int) -> None:
        self.timers.add(timestamp)

    def delete_event_time_timer(self, timestamp: int) -> None:
        self.timers.discard(timestamp)


def _copying_add(sessions: list[Any], values: list[Any], time: int, gap: int) -> Any:
    """``add_to_sessions`` as it was: every merged session's rows copied into a new list."""
    (start, end), merged = merge_session([(s[0], s[1]) for s in sessions], time, time + gap)
    rows = [row for s in sessions if (s[0], s[1]) in merged for row in s[2]]
    return [s for s in sessions if (s[0], s[1]) not in merged] + [
        [start, end, [*rows, list(values)]]]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 200), max_size=30), st.integers(1, 20))
def test_sessions_grow_in_place_with_the_rows_in_their_order(times, gap) -> None:
    sessions: list[Any] = []
    expected: list[Any] = []
    timers = _Timers(-1)
    for number, time in enumerate(times):
        grown = add_to_sessions(sessions, [number], time, gap, 0, timers)
        expected = _copying_add(expected, [number], time, gap)
        assert grown == expected
        assert timers.timers == {end - 1 for _, end, _ in expected}
        sessions = grown


def test_a_row_joining_one_session_does_not_copy_its_rows() -> None:
    timers = _Timers(-1)
    sessions = add_to_sessions([], ["a"], 10, 5, 0, timers)
    rows = sessions[-1][2]
    sessions = add_to_sessions(sessions, ["b"], 12, 5, 0, timers)
    assert sessions[-1][2] is rows and rows == [["a"], ["b"]]  # fails with the copying merge
    assert add_to_sessions(sessions, ["late"], 12, 5, 0, _Timers(100)) is None
    assert rows == [["a"], ["b"]]  # a late row changes nothing
