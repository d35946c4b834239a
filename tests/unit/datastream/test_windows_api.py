"""The windowed-stream API builds window operators and rejects bad input with typed errors."""

import pytest

from flintlock.common.operator_spec import OperatorKind, WindowFunctionKind
from flintlock.common.windowing import InvalidWindowError
from flintlock.datastream import (
    AllWindowFunction,
    OutputTag,
    ProcessWindowFunction,
    StreamExecutionEnvironment,
    WindowFunction,
)
from flintlock.datastream.errors import KeyedStreamRequiredError
from flintlock.datastream.functions import FunctionTypeError
from flintlock.datastream.window import (
    CountTrigger,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
)


class Apply(WindowFunction):
    def apply(self, key, window, inputs):
        yield key


class Process(ProcessWindowFunction):
    def process(self, key, context, elements):
        yield key


class ApplyAll(AllWindowFunction):
    def apply(self, window, inputs):
        yield 1


@pytest.fixture
def keyed():
    env = StreamExecutionEnvironment.get_execution_environment()
    return env.from_collection([("a", 1)]).key_by(lambda r: r[0])


def _spec(stream):
    return stream._transformation.spec


def test_a_window_function_builds_one_keyed_window_operator(keyed):
    stream = keyed.window(TumblingEventTimeWindows.of(10)).trigger(CountTrigger.of(2)) \
        .allowed_lateness(5).side_output_late_data(OutputTag("late")).apply(Apply())
    spec = _spec(stream)
    assert spec.kind is OperatorKind.WINDOW and spec.keyed
    assert spec.window.window_function_kind is WindowFunctionKind.WINDOW
    assert spec.window.trigger == CountTrigger.of(2)
    assert spec.window.allowed_lateness_ms == 5 and spec.window.late_output_tag == "late"
    assert stream._transformation.key_selectors


def test_reduce_keeps_the_stream_type_and_count_windows_pick_their_assigner(keyed):
    reduced = keyed.count_window(3).reduce(lambda a, b: a)
    assert _spec(reduced).window.keep_last is None
    sliding = keyed.count_window(3, 1).process(Process())
    assert _spec(sliding).window.keep_last == 3
    assert _spec(sliding).window.window_function_kind is WindowFunctionKind.PROCESS


def test_all_windows_run_at_parallelism_one():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(4)
    stream = env.from_collection([1, 2]).count_window_all(2).apply(ApplyAll())
    assert stream._transformation.parallelism == 1
    assert _spec(stream).window.window_function_kind is WindowFunctionKind.ALL_WINDOW


@pytest.mark.parametrize(("build", "error"), [
    (lambda k: k.count_window(0), InvalidWindowError),
    (lambda k: k.count_window(3, -1), InvalidWindowError),
    (lambda k: k.count_window("3"), TypeError),
    (lambda k: k.window("hourly"), TypeError),
    (lambda k: k.window(TumblingEventTimeWindows.of(10)).apply(lambda *a: a), FunctionTypeError),
    (lambda k: k.window(TumblingEventTimeWindows.of(10)).process(Apply()), FunctionTypeError),
    (lambda k: k.window(TumblingEventTimeWindows.of(10)).apply(ApplyAll()), FunctionTypeError),
    (lambda k: k.window(TumblingEventTimeWindows.of(10)).aggregate(object()), TypeError),
    (lambda k: k.window(TumblingEventTimeWindows.of(10)).allowed_lateness(-1), ValueError),
    (lambda k: k.window(TumblingProcessingTimeWindows.of(10)).allowed_lateness(5), ValueError),
    (lambda k: k.window(TumblingEventTimeWindows.of(10)).side_output_late_data("x"), TypeError),
    (lambda k: k.window(TumblingEventTimeWindows.of(10)).trigger("always"), TypeError),
])
def test_bad_window_input_is_a_typed_error(keyed, build, error):
    with pytest.raises(error):
        build(keyed)


def test_windows_on_a_non_keyed_stream_point_to_key_by():
    env = StreamExecutionEnvironment.get_execution_environment()
    stream = env.from_collection([1])
    with pytest.raises(KeyedStreamRequiredError, match="key_by"):
        stream.window(TumblingEventTimeWindows.of(10))
    with pytest.raises(KeyedStreamRequiredError, match="count_window_all"):
        stream.count_window(3)
