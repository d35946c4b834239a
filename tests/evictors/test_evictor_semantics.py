"""The evictors' rules on lists of elements, without a job (Java Flink's semantics; the jobs
are in test_evictors.py), and an evicting window's elements, timestamps included, through a
snapshot and restore of the window operator."""

from __future__ import annotations

import pickle

import pytest

from flintlock.common import Duration
from flintlock.common.operator_spec import WindowFunctionKind, WindowSpec
from flintlock.common.windowing import MAX_LONG, MIN_LONG, GlobalWindow
from flintlock.datastream.functions import WindowFunction
from flintlock.datastream.window import (
    CountEvictor,
    CountTrigger,
    DeltaEvictor,
    DeltaFunction,
    GlobalWindows,
    TimeEvictor,
    TimestampedValue,
)
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.testing.operators import MemoryStateWriter
from tests.unit.tasks.window_operators import stamped, window_operator

WINDOW = GlobalWindow()


def elements(*pairs):
    return [TimestampedValue(value, timestamp) for value, timestamp in pairs]


def values(items):
    return [item.get_value() for item in items]


def before(evictor, items):
    evictor.evict_before(items, len(items), WINDOW, None)
    return values(items)


def after(evictor, items):
    evictor.evict_after(items, len(items), WINDOW, None)
    return values(items)


def test_count_evictor_keeps_the_newest():
    assert before(CountEvictor.of(2), elements((1, 0), (2, 0), (3, 0))) == [2, 3]
    assert before(CountEvictor.of(5), elements((1, 0), (2, 0))) == [1, 2]
    assert before(CountEvictor.of(0), elements((1, 0), (2, 0))) == []


def test_an_evictor_evicts_before_or_after_never_both():
    assert after(CountEvictor.of(1), elements((1, 0), (2, 0))) == [1, 2]
    assert before(CountEvictor.of(1, True), elements((1, 0), (2, 0))) == [1, 2]
    assert after(CountEvictor.of(1, True), elements((1, 0), (2, 0))) == [2]


def test_time_evictor_keeps_what_is_newer_than_the_newest_minus_the_size():
    items = elements(("a", 10), ("b", 13), ("c", 17), ("d", 14))
    assert before(TimeEvictor.of(Duration.of_millis(4)), items) == ["c", "d"]
    assert before(TimeEvictor.of(3), elements(("a", 10), ("b", 13))) == ["b"]


def test_time_evictor_looks_at_the_first_element_for_timestamps():
    assert before(TimeEvictor.of(1), elements(("a", None), ("b", 5), ("c", 9))) == ["a", "b", "c"]
    assert TimestampedValue("a").get_timestamp() == MIN_LONG
    assert not TimestampedValue("a").has_timestamp()


def test_time_evictor_wraps_around_as_java_longs_do():
    # records without a timestamp carry Long.MIN_VALUE: MIN_VALUE - 1 wraps to MAX_VALUE
    assert before(TimeEvictor.of(1), elements(("a", MIN_LONG), ("b", MIN_LONG))) == []
    assert before(TimeEvictor.of(1), elements(("a", MAX_LONG), ("b", MAX_LONG))) == ["a", "b"]


class Distance(DeltaFunction):
    def get_delta(self, old_data_point, new_data_point):
        return abs(new_data_point - old_data_point)


def test_delta_evictor_removes_what_is_far_from_the_newest():
    items = elements((1, 0), (9, 0), (6, 0), (5, 0))
    assert before(DeltaEvictor.of(4, Distance()), items) == [6, 5]
    assert before(DeltaEvictor.of(4.0, lambda a, b: abs(a - b)),
                  elements((1, 0), (3, 0), (2, 0))) == [1, 3, 2]
    assert before(DeltaEvictor.of(0, Distance()), elements((1, 0), (2, 0))) == []


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError):
        CountEvictor.of(-1)
    with pytest.raises(TypeError):
        CountEvictor.of(2, "after")
    with pytest.raises(TypeError):
        DeltaEvictor.of(1.0, "distance")
    with pytest.raises(TypeError):
        TimeEvictor.of("5 seconds")


def test_evictors_travel_to_the_task_managers():
    for evictor in (CountEvictor.of(3, True), TimeEvictor.of(7), DeltaEvictor.of(2.5, Distance())):
        copy = pickle.loads(pickle.dumps(evictor))
        assert before(copy, elements((1, 1), (2, 2), (3, 3))) == before(
            evictor, elements((1, 1), (2, 2), (3, 3)))



class Collect(WindowFunction):
    def apply(self, key, window, inputs):
        yield key, [value for _, value in inputs]


def test_an_evicting_window_survives_a_restore():
    window = WindowSpec(GlobalWindows.create(), trigger=CountTrigger.of(2),
                        window_function=Collect(),
                        window_function_kind=WindowFunctionKind.WINDOW,
                        evictor=TimeEvictor.of(5))
    operator, out, _ = window_operator(window)
    operator.process_batch(stamped(("a", 1, 10), ("a", 2, 13)))
    assert [record for record, _ in out.records()] == [("a", [1, 2])]
    files = MemoryStateWriter()
    handle = operator.context.keyed_backend.snapshot().write(files, "keyed")
    restored = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
    restored.restore([handle], lambda h: files.files[h.uri.split("//")[1]])
    operator, out, _ = window_operator(window, backend=restored)
    operator.process_batch(stamped(("a", 3, 17), ("a", 4, 19)))
    # the restored elements kept their timestamps: 10 and 13 are at most 19 - 5, evicted
    assert [record for record, _ in out.records()] == [("a", [3, 4])]
