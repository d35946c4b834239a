"""User function classes: callables are wrapped without overhead, instances pass through,
anything else is rejected with the API's name; wrappers survive cloudpickle."""


import cloudpickle
import pytest

from flintlock.datastream import (
    FilterFunction,
    KeyedProcessFunction,
    MapFunction,
    NullByteKeySelector,
    OutputTag,
    ProcessFunction,
    SinkFunction,
    SourceFunction,
    TimeDomain,
)
from flintlock.datastream import functions as fn
from flintlock.datastream.functions import FunctionTypeError


def double(value: int) -> int:
    return value * 2


class Doubler(MapFunction):
    def map(self, value: int) -> int:
        return value * 2


def test_a_callable_becomes_the_method_itself() -> None:
    wrapped = fn.wrap_map(double)
    assert isinstance(wrapped, MapFunction)
    assert wrapped.map is double
    assert wrapped.map(4) == 8


def test_each_wrapper_exposes_its_method() -> None:
    assert list(fn.wrap_flat_map(lambda v: [v, v]).flat_map(1)) == [1, 1]
    assert fn.wrap_filter(lambda v: v > 1).filter(2)
    assert fn.wrap_reduce(lambda a, b: a + b).reduce(1, 2) == 3
    assert fn.wrap_key_selector(lambda v: v[0]).get_key(("k", 1)) == "k"
    assert fn.wrap_partitioner(lambda key, n: key % n).partition(7, 3) == 1


def test_an_instance_passes_through_unchanged() -> None:
    doubler = Doubler()
    assert fn.wrap_map(doubler) is doubler


@pytest.mark.parametrize("bad", [3, "x", None])
def test_a_non_callable_is_rejected_naming_the_api(bad: object) -> None:
    with pytest.raises(FunctionTypeError, match="my_api: expected a MapFunction or a callable"):
        fn.wrap_map(bad, "my_api")


def test_a_function_of_the_wrong_class_is_rejected() -> None:
    class KeepAll(FilterFunction):
        def filter(self, value: object) -> bool:
            return True

    with pytest.raises(FunctionTypeError, match="a KeepAll"):
        fn.wrap_map(KeepAll())


def test_require_accepts_only_the_named_classes() -> None:
    class Echo(ProcessFunction):
        def process_element(self, value, ctx):
            yield value

    echo = Echo()
    assert fn.require(echo, (ProcessFunction,), "process") is echo
    with pytest.raises(FunctionTypeError, match="process: expected a KeyedProcessFunction"):
        fn.require(echo, (KeyedProcessFunction,), "process")
    with pytest.raises(FunctionTypeError):
        fn.require(lambda v: v, (ProcessFunction,), "process")


def test_wrappers_round_trip_through_cloudpickle() -> None:
    offset = 10
    wrapped = fn.wrap_map(lambda v: v + offset)
    copy = cloudpickle.loads(cloudpickle.dumps(wrapped))
    assert copy.map(1) == 11


def test_lifecycle_hooks_default_to_no_ops_and_on_timer_yields_nothing() -> None:
    class Counter(KeyedProcessFunction):
        def process_element(self, value, ctx):
            yield value

    counter = Counter()
    assert counter.open(None) is None  # type: ignore[arg-type]
    assert counter.close() is None
    assert counter.on_timer(1, None) is None  # type: ignore[arg-type]
    assert KeyedProcessFunction.Context is fn.KeyedContext
    assert KeyedProcessFunction.OnTimerContext is fn.TimerContext


def test_null_byte_key_selector_puts_everything_under_one_key() -> None:
    assert NullByteKeySelector().get_key("anything") == 0


def test_legacy_source_and_sink_functions_are_not_supported() -> None:
    with pytest.raises(NotImplementedError, match="legacy SourceFunction"):
        SourceFunction()
    with pytest.raises(NotImplementedError, match="legacy SinkFunction"):
        SinkFunction()


def test_function_names_for_error_messages() -> None:
    assert fn.function_name(double).endswith("test_functions.double")
    assert fn.function_name(fn.wrap_map(double)).endswith("test_functions.double")
    assert fn.function_name(Doubler()).endswith("Doubler")
    assert TimeDomain.PROCESSING_TIME.value == 1


def test_output_tags_compare_by_id_and_need_one() -> None:
    # side outputs run end to end in tests/integration/test_side_outputs.py
    tag = OutputTag("late", None)
    assert tag == OutputTag("late")
    with pytest.raises(ValueError):
        OutputTag("")
