"""Window assigners and triggers (pure logic)."""

import pickle

import pytest

from flintlock.common.time import Duration, Time
from flintlock.common.windowing import (
    CountWindow,
    EventTimeSessionWindows,
    GlobalWindow,
    InvalidWindowError,
    MissingTimestampError,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TimeWindow,
    TriggerResult,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
)


class Clock:
    def __init__(self, now):
        self.now = now

    def get_current_processing_time(self):
        return self.now


def test_tumbling_windows_hold_their_timestamp_and_honour_the_offset():
    assigner = TumblingEventTimeWindows.of(Time.seconds(1))
    assert assigner.assign_windows("x", 1500, None) == [TimeWindow(1000, 2000)]
    assert assigner.assign_windows("x", -1, None) == [TimeWindow(-1000, 0)]
    shifted = TumblingEventTimeWindows.of(Duration.of_millis(1000), Duration.of_millis(250))
    assert shifted.assign_windows("x", 1200, None) == [TimeWindow(250, 1250)]
    assert TumblingEventTimeWindows.of(10).is_event_time()


def test_sliding_windows_assign_every_window_covering_the_timestamp():
    assigner = SlidingEventTimeWindows.of(Time.milliseconds(10), Time.milliseconds(5))
    assert sorted(assigner.assign_windows("x", 12, None)) == [
        TimeWindow(5, 15), TimeWindow(10, 20)]


def test_processing_time_assigners_use_the_clock():
    assert TumblingProcessingTimeWindows.of(100).assign_windows("x", 5, Clock(250)) == [
        TimeWindow(200, 300)]
    assert len(SlidingProcessingTimeWindows.of(100, 50).assign_windows("x", 0, Clock(260))) == 2
    assert not TumblingProcessingTimeWindows.of(100).is_event_time()


def test_event_time_assigners_reject_records_without_a_timestamp():
    with pytest.raises(MissingTimestampError, match="assign_timestamps_and_watermarks"):
        TumblingEventTimeWindows.of(10).assign_windows("x", -(2**63), None)


@pytest.mark.parametrize("build", [
    lambda: TumblingEventTimeWindows.of(0),
    lambda: TumblingEventTimeWindows.of(Time.seconds(-1)),
    lambda: TumblingEventTimeWindows.of(10, 10),
    lambda: SlidingEventTimeWindows.of(10, 0),
    lambda: EventTimeSessionWindows.with_gap(0),
])
def test_bad_sizes_are_typed_errors(build):
    with pytest.raises(InvalidWindowError):
        build()


def test_a_size_must_be_a_time_or_milliseconds():
    with pytest.raises(TypeError, match="Time, Duration or int"):
        TumblingEventTimeWindows.of("5 s")


def test_sessions_merge_overlapping_windows():
    merged = []

    class Callback:
        def merge(self, members, result):
            merged.append((sorted(members), result))

    EventTimeSessionWindows.with_gap(10).merge_windows(
        [TimeWindow(0, 10), TimeWindow(5, 15), TimeWindow(30, 40)], Callback())
    assert merged == [([TimeWindow(0, 10), TimeWindow(5, 15)], TimeWindow(0, 15))]


def test_dynamic_session_gaps_come_from_the_element():
    assigner = EventTimeSessionWindows.with_dynamic_gap(lambda element: element)
    assert assigner.assign_windows(7, 100, None) == [TimeWindow(100, 107)]


def test_windows_are_values():
    assert TimeWindow(0, 10).max_timestamp() == 9
    assert pickle.loads(pickle.dumps(TimeWindow(0, 10))) == TimeWindow(0, 10)
    assert {CountWindow(1), CountWindow(1)} == {CountWindow(1)}
    assert repr(TimeWindow(0, 10)) == "TimeWindow(start=0, end=10)"
    assert repr(CountWindow(3)) == "CountWindow(id=3)"
    assert GlobalWindow.get().max_timestamp() == 2**63 - 1


def test_trigger_results_say_whether_to_fire_and_purge():
    assert TriggerResult.FIRE_AND_PURGE.is_fire() and TriggerResult.FIRE_AND_PURGE.is_purge()
    assert not TriggerResult.CONTINUE.is_fire() and not TriggerResult.CONTINUE.is_purge()
