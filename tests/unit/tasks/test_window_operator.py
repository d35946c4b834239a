"""The window operator driven directly: event-time, processing-time, session and count
windows; triggers; allowed lateness and late data; window functions; restore."""

import pytest

from flintlock.common.operator_spec import (
    WindowFunctionKind,
    WindowSpec,
)
from flintlock.common.state import ValueStateDescriptor
from flintlock.common.windowing import (
    CountSlidingWindowAssigner,
    CountTrigger,
    CountTumblingWindowAssigner,
    EventTimeSessionWindows,
    SlidingEventTimeWindows,
    TimeWindow,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
)
from flintlock.datastream.functions import (
    AggregateFunction,
    ProcessWindowFunction,
    WindowFunction,
    wrap_reduce,
)
from flintlock.runtime.network.event_time import MAX_WATERMARK
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.testing.operators import (
    ManualTimers,
    MemoryStateWriter,
)
from tests.unit.tasks.window_operators import stamped, sum_reduce, window_operator


def test_tumbling_event_time_windows_fire_on_the_watermark_with_the_windows_end():
    operator, out, _ = window_operator(WindowSpec(TumblingEventTimeWindows.of(10),
                                          reduce_function=sum_reduce()))
    operator.process_batch(stamped(("a", 1, 1), ("a", 2, 9), ("b", 5, 3), ("a", 4, 12)))
    assert out.records() == []
    operator.process_watermark(9)
    assert out.records() == [(("a", 3), 9), (("b", 5), 9)]
    assert out.watermarks() == [9]
    operator.process_watermark(MAX_WATERMARK)
    assert out.records()[-1] == (("a", 4), 19)


def test_sliding_windows_emit_each_window_an_element_belongs_to():
    class Collect(WindowFunction):
        def apply(self, key, window, inputs):
            yield (key, window.start, sorted(v for _, v in inputs))

    operator, out, _ = window_operator(WindowSpec(
        SlidingEventTimeWindows.of(10, 5), window_function=Collect(),
        window_function_kind=WindowFunctionKind.WINDOW))
    operator.process_batch(stamped(("a", 1, 3), ("a", 2, 7), ("a", 3, 12)))
    operator.process_watermark(MAX_WATERMARK)
    assert [r for r, _ in out.records()] == [
        ("a", -5, [1]), ("a", 0, [1, 2]), ("a", 5, [2, 3]), ("a", 10, [3])]


def test_sessions_merge_and_fire_once_per_session():
    class Describe(ProcessWindowFunction):
        def process(self, key, context, elements):
            window = context.window()
            yield (key, window.start, window.end, sorted(v for _, v in elements))

    operator, out, _ = window_operator(WindowSpec(
        EventTimeSessionWindows.with_gap(10), window_function=Describe(),
        window_function_kind=WindowFunctionKind.PROCESS))
    operator.process_batch(stamped(("a", 1, 0), ("a", 2, 25), ("a", 3, 8), ("b", 9, 4)))
    operator.process_watermark(20)
    assert [r for r, _ in out.records()] == [("b", 4, 14, [9]), ("a", 0, 18, [1, 3])]
    operator.process_batch(stamped(("a", 4, 30), ("a", 5, 17)))  # 17 joins the session at 25
    operator.process_watermark(MAX_WATERMARK)
    assert [r for r, _ in out.records()][2:] == [("a", 17, 40, [2, 4, 5])]


def test_incremental_session_accumulators_merge():
    operator, out, _ = window_operator(WindowSpec(EventTimeSessionWindows.with_gap(5),
                                          reduce_function=sum_reduce()))
    operator.process_batch(stamped(("a", 1, 0), ("a", 2, 8), ("a", 4, 4)))
    operator.process_watermark(MAX_WATERMARK)
    assert out.records() == [(("a", 7), 12)]


def test_late_elements_go_to_the_side_output_and_lateness_fires_again():
    operator, out, late = window_operator(WindowSpec(
        TumblingEventTimeWindows.of(10), reduce_function=sum_reduce(), allowed_lateness_ms=5,
        late_output_tag="late"), late_tag=True)
    operator.process_batch(stamped(("a", 1, 2)))
    operator.process_watermark(10)
    assert out.records() == [(("a", 1), 9)]
    operator.process_batch(stamped(("a", 2, 3)))  # late but within lateness: fires again
    assert out.records()[-1] == (("a", 3), 9)
    operator.process_watermark(14)  # cleanup time 9 + 5 = 14: the window is dropped
    operator.process_batch(stamped(("a", 4, 5)))
    assert late.records() == [(("a", 4), 5)]
    assert len(out.records()) == 2


def test_processing_time_windows_fire_on_the_clock():
    timers = ManualTimers()
    operator, out, _ = window_operator(WindowSpec(TumblingProcessingTimeWindows.of(100),
                                          reduce_function=sum_reduce()), timers=timers)
    timers.now = 30
    operator.process_batch([("a", 1), ("a", 2)])
    timers.advance(60)
    assert out.records() == []
    timers.advance(10)
    assert out.records() == [(("a", 3), 99)]


def test_tumbling_count_windows_fire_every_n_and_drop_the_rest_at_the_end():
    operator, out, _ = window_operator(WindowSpec(CountTumblingWindowAssigner.of(2),
                                          reduce_function=sum_reduce()))
    operator.process_batch([("a", 1), ("b", 1), ("a", 2), ("a", 4), ("a", 8)])
    operator.process_watermark(MAX_WATERMARK)
    operator.end_input()
    assert [r for r, _ in out.records()] == [("a", 3), ("a", 12)]


def test_sliding_count_windows_keep_the_last_n_elements():
    class Values(WindowFunction):
        def apply(self, key, window, inputs):
            yield [v for _, v in inputs]

    operator, out, _ = window_operator(WindowSpec(
        CountSlidingWindowAssigner.of(3, 2), window_function=Values(),
        window_function_kind=WindowFunctionKind.WINDOW, keep_last=3))
    operator.process_batch([("a", i) for i in range(1, 8)])
    assert [r for r, _ in out.records()] == [[1, 2], [2, 3, 4], [4, 5, 6]]


def test_aggregate_with_a_custom_trigger():
    class Average(AggregateFunction):
        def create_accumulator(self):
            return (0, 0)

        def add(self, value, accumulator):
            return (accumulator[0] + value[1], accumulator[1] + 1)

        def get_result(self, accumulator):
            return accumulator[0] / accumulator[1]

        def merge(self, a, b):
            return (a[0] + b[0], a[1] + b[1])

    operator, out, _ = window_operator(WindowSpec(TumblingEventTimeWindows.of(100),
                                          trigger=CountTrigger.of(2),
                                          aggregate_function=Average()))
    operator.process_batch(stamped(("a", 1, 1), ("a", 3, 2), ("a", 8, 3)))
    assert [r for r, _ in out.records()] == [2.0]
    operator.process_watermark(MAX_WATERMARK)  # a count trigger ignores event time
    assert [r for r, _ in out.records()] == [2.0]


def test_process_window_function_state_is_scoped_to_the_window():
    class Fires(ProcessWindowFunction):
        def process(self, key, context, elements):
            count = context.window_state().get_state(ValueStateDescriptor("fires"))
            count.update((count.value() or 0) + 1)
            yield (context.window().start, count.value(), len(list(elements)))

    operator, out, _ = window_operator(WindowSpec(
        TumblingEventTimeWindows.of(10), trigger=CountTrigger.of(1), window_function=Fires(),
        window_function_kind=WindowFunctionKind.PROCESS))
    operator.process_batch(stamped(("a", 1, 1), ("a", 1, 2), ("a", 1, 15)))
    assert [r for r, _ in out.records()] == [(0, 1, 1), (0, 2, 2), (10, 1, 1)]


def test_window_contents_and_timers_survive_a_restore():
    window = WindowSpec(TumblingEventTimeWindows.of(10), reduce_function=sum_reduce())
    operator, _, _ = window_operator(window)
    operator.process_batch(stamped(("a", 1, 1), ("b", 2, 3), ("a", 4, 14)))
    files = MemoryStateWriter()
    handle = operator.context.keyed_backend.snapshot().write(files, "keyed")
    restored = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
    restored.restore([handle], lambda h: files.files[h.uri.split("//")[1]])
    operator, out, _ = window_operator(window, backend=restored)
    operator.process_batch(stamped(("a", 10, 5)))
    operator.process_watermark(9)
    assert sorted(out.records()) == [(("a", 11), 9), (("b", 2), 9)]
    operator.process_watermark(MAX_WATERMARK)
    assert out.records()[-1] == (("a", 4), 19)


def test_a_snapshot_in_flight_keeps_the_window_contents_it_was_taken_with():
    """Batches handled while a snapshot's asynchronous part is pending change the live
    accumulators, never the snapshot's (the grouped path writes the heap state's dict directly
    only when no snapshot shares it); a restore of it sees only what came before."""
    window = WindowSpec(TumblingEventTimeWindows.of(10), aggregate_function=_Concat())
    operator, out, _ = window_operator(window)
    operator.process_batch(stamped(("a", "1", 1), ("b", "2", 3)))
    snapshot = operator.context.keyed_backend.snapshot()
    operator.process_batch(stamped(("a", "3", 2), ("b", "4", 4), ("c", "5", 5)))
    files = MemoryStateWriter()
    handle = snapshot.write(files, "keyed")
    operator.process_watermark(MAX_WATERMARK)
    assert sorted(out.values()) == [",1,3", ",2,4", ",5"]
    restored = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
    restored.restore([handle], lambda h: files.files[h.uri.split("//")[1]])
    operator, out, _ = window_operator(window, backend=restored)
    operator.process_batch(stamped(("a", "6", 6)))
    operator.process_watermark(MAX_WATERMARK)
    assert sorted(out.values()) == [",1,6", ",2"]


def test_window_outputs_keep_window_timestamps_across_operators():
    operator, out, _ = window_operator(WindowSpec(TumblingEventTimeWindows.of(10),
                                          reduce_function=sum_reduce()))
    operator.process_batch(stamped(("a", 1, 1)))
    operator.process_watermark(MAX_WATERMARK)
    (record,) = out.events[:1]
    assert record == ("record", ("a", 1), 9)
    assert TimeWindow(0, 10).max_timestamp() == 9


def test_a_window_spec_needs_a_function():
    with pytest.raises(ValueError, match="needs a reduce, aggregate or window function"):
        WindowSpec(TumblingEventTimeWindows.of(10))


def test_processing_time_sessions_merge_and_fire_on_the_clock():
    from flintlock.common.windowing import ProcessingTimeSessionWindows

    timers = ManualTimers()
    operator, out, _ = window_operator(WindowSpec(ProcessingTimeSessionWindows.with_gap(50),
                                          reduce_function=sum_reduce()), timers=timers)
    operator.process_batch([("a", 1)])
    timers.advance(30)
    operator.process_batch([("a", 2)])  # joins the session: it now ends at 80
    timers.advance(30)
    assert out.records() == []
    timers.advance(20)
    assert out.records() == [(("a", 3), 79)]


def test_a_process_window_function_may_emit_to_a_side_output():
    class Split(ProcessWindowFunction):
        def process(self, key, context, elements):
            values = [v for _, v in elements]
            context.output(_TAG, min(values))
            yield max(values)

    from flintlock.common.output_tag import OutputTag

    _TAG = OutputTag("late")  # the side output the helper wires up
    operator, out, side = window_operator(WindowSpec(
        TumblingEventTimeWindows.of(10), window_function=Split(),
        window_function_kind=WindowFunctionKind.PROCESS), late_tag=True)
    operator.process_batch(stamped(("a", 4, 1), ("a", 2, 3)))
    operator.process_watermark(MAX_WATERMARK)
    assert out.records() == [(4, 9)]
    assert side.records() == [(2, 9)]


class _Concat(AggregateFunction):
    """An aggregate whose result shows the order of accumulation."""

    def create_accumulator(self):
        return ""

    def add(self, value, accumulator):
        return accumulator + "," + value[1]

    def get_result(self, accumulator):
        return accumulator

    def merge(self, a, b):
        return a + b


def _sliding_reduce():
    return WindowSpec(SlidingEventTimeWindows.of(20, 10),
                      reduce_function=wrap_reduce(lambda a, b: (a[0], a[1] + "," + b[1])),
                      allowed_lateness_ms=15, late_output_tag="late")


def _tumbling_aggregate(offset, lateness):
    return WindowSpec(TumblingEventTimeWindows.of(20, offset), aggregate_function=_Concat(),
                      allowed_lateness_ms=lateness, late_output_tag="late")


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("spec", [_sliding_reduce, lambda: _tumbling_aggregate(0, 0),
                                  lambda: _tumbling_aggregate(7, 15),
                                  lambda: _tumbling_aggregate(-3, 0)],
                         ids=["sliding-reduce", "tumbling", "tumbling-offset-lateness",
                              "tumbling-negative-offset"])
def test_batches_handled_per_key_and_window_give_what_per_element_handling_gives(seed, spec):
    """The grouped paths (event-time trigger, incremental function, time windows; tumbling
    windows by arithmetic on the timestamps) against the per-element path on random batches,
    watermarks and late elements; the functions are not commutative, so the order of
    accumulation shows too."""
    import random

    rng = random.Random(seed)
    script = []
    watermark = 0
    for _ in range(30):
        batch = [(rng.choice("abc"), str(rng.randrange(100)), rng.randrange(watermark - 30,
                                                                             watermark + 60))
                 for _ in range(rng.randrange(1, 20))]
        script.append(("batch", batch))
        watermark += rng.randrange(0, 25)
        script.append(("watermark", watermark))
    script.append(("watermark", MAX_WATERMARK))

    def run(grouped):
        operator, out, late = window_operator(spec(), late_tag=True)
        assert operator._grouping
        operator._grouping = grouped
        for kind, item in script:
            if kind == "batch":
                operator.process_batch(stamped(*item))
            else:
                operator.process_watermark(item)
        return out.events, late.events

    assert run(True) == run(False)
