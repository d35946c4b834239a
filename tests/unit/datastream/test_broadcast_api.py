"""``broadcast(descriptor)`` / ``connect`` / ``process`` build one broadcast operator; bad
input gets typed errors."""

import pytest

from flintlock.common.operator_spec import OperatorKind
from flintlock.datastream import (
    BroadcastProcessFunction,
    KeyedBroadcastProcessFunction,
    StreamExecutionEnvironment,
)
from flintlock.datastream.broadcast_stream import BroadcastConnectedStream, BroadcastStream
from flintlock.datastream.errors import KeyedStreamOperationError, KeyedStreamRequiredError
from flintlock.datastream.functions import FunctionTypeError
from flintlock.datastream.state import MapStateDescriptor, ValueStateDescriptor

RULES = MapStateDescriptor("rules", None, None)


class Plain(BroadcastProcessFunction):
    def process_element(self, value, ctx):
        yield value

    def process_broadcast_element(self, value, ctx):
        yield value


class Keyed(KeyedBroadcastProcessFunction):
    def process_element(self, value, ctx):
        yield value

    def process_broadcast_element(self, value, ctx):
        yield value


@pytest.fixture
def env():
    return StreamExecutionEnvironment.get_execution_environment()


def test_a_broadcast_stream_connects_into_a_two_input_operator(env):
    rules = env.from_collection([("a", 1)]).broadcast(RULES)
    assert isinstance(rules, BroadcastStream)
    connected = env.from_collection(["x"]).connect(rules)
    assert isinstance(connected, BroadcastConnectedStream)
    out = connected.process(Plain())
    spec = out._transformation.spec
    assert spec.kind is OperatorKind.BROADCAST_PROCESS and spec.broadcast_states == (RULES,)
    assert [i for _, i in out._transformation.inputs] == [0, 1]
    keyed = env.from_collection(["x"]).key_by(lambda v: v).connect(rules).process(Keyed())
    assert keyed._transformation.spec.kind is OperatorKind.KEYED_BROADCAST_PROCESS
    assert keyed._transformation.key_selectors[1] is None


def test_broadcast_without_descriptors_is_still_a_partitioning(env):
    assert not isinstance(env.from_collection([1]).broadcast(), BroadcastStream)


def test_bad_broadcast_input_is_a_typed_error(env):
    stream = env.from_collection([("a", 1)])
    with pytest.raises(TypeError, match="MapStateDescriptor"):
        stream.broadcast(ValueStateDescriptor("v"))
    with pytest.raises(ValueError, match="share a name"):
        stream.broadcast(RULES, MapStateDescriptor("rules", None, None))
    with pytest.raises(KeyedStreamOperationError):
        stream.key_by(lambda v: v[0]).broadcast(RULES)
    rules = stream.broadcast(RULES)
    with pytest.raises(KeyedStreamRequiredError):
        env.from_collection([1]).connect(rules).process(Keyed())
    with pytest.raises(FunctionTypeError):
        env.from_collection([1]).key_by(lambda v: v).connect(rules).process(Plain())
    with pytest.raises(FunctionTypeError):
        env.from_collection([1]).connect(rules).process(lambda v: v)
    with pytest.raises(TypeError, match="DataStream or a BroadcastStream"):
        stream.connect("rules")
