"""A window aggregation's due windows fire a watermark at a time (issue 33).

``WindowAggFunction.on_event_timers`` lets ``KeyedRowsOperator`` hand it every event-time
timer a watermark makes due at once and send their rows as one timestamped batch (q5's HOP
windows fired a row per key and window, each its own batch through the chain and the
exchange). Checked here: the same rows, kinds, order and timestamps as the timers fired one at
a time through ``on_timer``, on aligned and session windows, on the heap and RocksDB; and one
batch per watermark."""

from __future__ import annotations

import datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.datastream.changelog.aggregates import Count1, Max, Sum
from flintlock.datastream.changelog.group_agg import AggregateCall
from flintlock.datastream.changelog.window_agg import WindowAggFunction
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.rocksdb import RocksDBKeyedStateBackend
from flintlock.table.planner.windows import RowtimeOf
from tests.table.changelog_harness import Harness, r


class _PerTimer(WindowAggFunction):
    """The same aggregation with its timers fired one at a time (``on_timer``)."""

    on_event_timers = None  # type: ignore[assignment]


_WINDOWS = st.sampled_from([("TUMBLE", 10, 0, 0), ("HOP", 10, 5, 0), ("HOP", 9, 3, 1),
                            ("CUMULATE", 12, 4, 0), ("SESSION", 5, 0, 0)])
_ROWS = st.lists(st.tuples(st.sampled_from("abcd"), st.integers(-30, 60), st.integers(0, 9)),
                 min_size=1, max_size=8)
_EVENTS = st.lists(st.one_of(st.tuples(st.just("rows"), _ROWS),
                             st.tuples(st.just("watermark"), st.integers(-40, 70))), max_size=20)


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
