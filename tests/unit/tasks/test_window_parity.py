"""PyFlink window API parity: continuous event- and processing-time triggers driven through
the window operator with a manual clock; a custom assigner written to PyFlink's signatures
(``get_default_trigger(self, env)``, ``get_window_serializer``) resolved by the API with the
environment; the window serializers' byte formats."""

from __future__ import annotations

import io

import pytest

from flintlock.common import Time
from flintlock.common.operator_spec import WindowSpec
from flintlock.common.serializer import (
    CountWindowSerializer,
    GlobalWindowSerializer,
    TimeWindowSerializer,
    TypeSerializer,
)
from flintlock.common.windowing import (
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    CountWindow,
    EventTimeTrigger,
    GlobalWindow,
    InvalidWindowError,
    TimeWindow,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WindowAssigner,
)
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.window import (
    ContinuousEventTimeTrigger as ExportedContinuous,
)
from flintlock.datastream.window import TimeWindowSerializer as ExportedSerializer
from flintlock.runtime.network.event_time import MAX_WATERMARK
from flintlock.testing.operators import ManualTimers
from tests.unit.tasks.window_operators import stamped, sum_reduce, window_operator


def test_continuous_event_time_trigger_fires_every_interval_and_at_the_end():
    window = WindowSpec(TumblingEventTimeWindows.of(100), reduce_function=sum_reduce(),
                        trigger=ContinuousEventTimeTrigger.of(Time.milliseconds(30)))
    operator, out, _ = window_operator(window)
    operator.process_batch(stamped(("a", 1, 5), ("a", 2, 20)))
    operator.process_watermark(29)
    assert out.records() == []
    operator.process_watermark(30)
    assert out.records() == [(("a", 3), 99)]
    operator.process_batch(stamped(("a", 4, 50)))
    operator.process_watermark(60)
    assert out.records()[-1] == (("a", 7), 99)
    operator.process_watermark(MAX_WATERMARK)
    assert [r for r, _ in out.records()] == [("a", 3), ("a", 7), ("a", 7), ("a", 7)]


def test_a_watermark_jumping_several_intervals_fires_a_continuous_window_once():
    """The next firing, registered while the watermark's timers fire, waits for the next
    watermark (PyFlink's window timers), even though it is due already."""
    window = WindowSpec(TumblingEventTimeWindows.of(100), reduce_function=sum_reduce(),
                        trigger=ContinuousEventTimeTrigger.of(10))
    operator, out, _ = window_operator(window)
    operator.process_batch(stamped(("a", 1, 5)))
    operator.process_watermark(50)
    assert len(out.records()) == 1
    operator.process_watermark(51)
    assert len(out.records()) == 2


def test_continuous_event_time_trigger_fires_at_once_for_a_window_already_past():
    trigger = ContinuousEventTimeTrigger.of(10)
    window = WindowSpec(TumblingEventTimeWindows.of(100), reduce_function=sum_reduce(),
                        trigger=trigger, allowed_lateness_ms=1000)
    operator, out, _ = window_operator(window)
    operator.process_watermark(150)
    operator.process_batch(stamped(("a", 1, 40)))
    assert out.records() == [(("a", 1), 99)]


def test_continuous_processing_time_trigger_fires_on_the_clock():
    timers = ManualTimers()
    window = WindowSpec(TumblingProcessingTimeWindows.of(1000), reduce_function=sum_reduce(),
                        trigger=ContinuousProcessingTimeTrigger.of(Time.milliseconds(100)))
    operator, out, _ = window_operator(window, timers=timers)
    timers.now = 30
    operator.process_batch([("a", 1), ("a", 2)])
    timers.advance(69)
    assert out.records() == []
    timers.advance(1)
    assert out.records() == [(("a", 3), 999)]
    operator.process_batch([("a", 10)])
    timers.advance(100)
    assert out.records()[-1] == (("a", 13), 999)


def test_continuous_triggers_need_a_positive_interval():
    with pytest.raises(InvalidWindowError, match="interval"):
        ContinuousEventTimeTrigger.of(Time.milliseconds(0))
    with pytest.raises(TypeError):
        ContinuousProcessingTimeTrigger.of("1 s")


def test_the_window_module_exports_what_pyflink_has_there():
    assert ExportedContinuous is ContinuousEventTimeTrigger
    assert ExportedSerializer is TimeWindowSerializer


class DocTumblingAssigner(WindowAssigner):
    """The custom assigner of PyFlink's window documentation, with its signatures."""

    def __init__(self, size, offset, is_event_time):
        self._size, self._offset, self._is_event_time = size, offset, is_event_time
        self.envs = []

    def assign_windows(self, element, timestamp, context):
        start = TimeWindow.get_window_start_with_offset(timestamp, self._offset, self._size)
        return [TimeWindow(start, start + self._size)]

    def get_default_trigger(self, env):
        self.envs.append(env)
        return EventTimeTrigger()

    def get_window_serializer(self) -> TypeSerializer:
        return TimeWindowSerializer()

    def is_event_time(self):
        return self._is_event_time


def test_a_custom_assigners_default_trigger_is_asked_with_the_environment():
    env = StreamExecutionEnvironment.get_execution_environment()
    assigner = DocTumblingAssigner(10, 0, True)
    (env.from_collection([("a", 1)]).key_by(lambda v: v[0]).window(assigner)
        .reduce(lambda a, b: a))
    assert assigner.envs == [env]


def test_the_window_operator_calls_a_pyflink_style_assigner_when_the_api_did_not():
    assigner = DocTumblingAssigner(10, 0, True)
    operator, out, _ = window_operator(WindowSpec(assigner, reduce_function=sum_reduce()))
    operator.process_batch(stamped(("a", 1, 1), ("a", 2, 9)))
    operator.process_watermark(9)
    assert out.records() == [(("a", 3), 9)]
    assert assigner.envs == [None]


@pytest.mark.parametrize(("serializer", "value", "size"), [
    (TimeWindowSerializer(), TimeWindow(-5, 2**40), 16),
    (CountWindowSerializer(), CountWindow(7), 8),
    (GlobalWindowSerializer(), GlobalWindow(), 1),
])
def test_window_serializers_round_trip_with_fixed_sizes(serializer, value, size):
    stream = io.BytesIO()
    serializer.serialize(value, stream)
    assert len(stream.getvalue()) == size
    stream.seek(0)
    assert serializer.deserialize(stream) == value
    assert serializer == type(serializer)()


def test_a_truncated_window_is_a_clear_error():
    with pytest.raises(ValueError, match="truncated TimeWindow"):
        TimeWindowSerializer().deserialize(io.BytesIO(b"\x00" * 9))


def test_built_in_assigners_name_their_window_serializer():
    assert TumblingEventTimeWindows.of(5).get_window_serializer() == TimeWindowSerializer()
