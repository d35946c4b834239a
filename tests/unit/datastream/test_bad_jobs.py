"""Bad jobs fail before submission with errors that name the culprit."""

import pickle
import threading
from typing import Any

import pytest

from flintlock.common import Types
from flintlock.common.key_encoding import UnstableKeyError
from flintlock.common.operator_spec import UnhashableKeyError, check_key
from flintlock.datastream import MapFunction, StreamExecutionEnvironment
from flintlock.datastream.errors import (
    EmptyJobError,
    EnvironmentClosedError,
    ForeignStreamError,
    InvalidOperatorSettingError,
    KeyedStreamOperationError,
    KeyedStreamRequiredError,
    NotAnOperatorError,
    UnionTypeMismatchError,
    UnpicklableFunctionError,
)
from flintlock.datastream.pickle_check import check_picklable
from flintlock.graph.errors import DuplicateUidError, ForwardPartitioningError, ParallelismError


class Holder:
    def __init__(self) -> None:
        self.ok = 1
        self.lock = threading.Lock()


class LockingMap(MapFunction):
    def __init__(self) -> None:
        self.name = "fine"
        self.resources = {"db": Holder()}

    def map(self, value: Any) -> Any:
        return value


def test_an_unpicklable_member_is_named(env: StreamExecutionEnvironment) -> None:
    env.from_collection([1]).map(LockingMap()).name("Enrich").print()
    with pytest.raises(UnpicklableFunctionError) as caught:
        env.get_stream_graph()
    message = str(caught.value)
    assert "operator 'Enrich'" in message
    assert "LockingMap" in message
    assert "resources['db'].lock" in message
    assert "lock" in caught.value.cause
    assert "open()" in message


def test_an_unpicklable_closure_variable_is_named(env: StreamExecutionEnvironment) -> None:
    guard = threading.Lock()

    def guarded(value: Any) -> Any:
        with guard:
            return value

    env.from_collection([1]).map(guarded).print()
    with pytest.raises(UnpicklableFunctionError, match="closure variable 'guard'"):
        env.get_stream_graph()


def test_an_unpicklable_key_selector_is_named(env: StreamExecutionEnvironment) -> None:
    lock = threading.Lock()
    env.from_collection([1]).key_by(lambda value: (lock, value)[1]).sum().print()
    with pytest.raises(UnpicklableFunctionError, match="key selector"):
        env.get_stream_graph()


def test_unpicklable_collection_elements_are_reported(env: StreamExecutionEnvironment) -> None:
    env.from_collection([1, threading.Lock()]).print()
    with pytest.raises(UnpicklableFunctionError, match=r"Collection Source.*elements\[1\]"):
        env.get_stream_graph()


def test_the_error_survives_pickling() -> None:
    with pytest.raises(UnpicklableFunctionError) as caught:
        check_picklable(Holder(), "Map", "the function Holder")
    copy = pickle.loads(pickle.dumps(caught.value))
    assert str(copy) == str(caught.value)
    assert caught.value.member == "lock (lock)"


def test_picklable_objects_pass() -> None:
    check_picklable(lambda value: value + 1, "Map", "a lambda")


def test_reduce_on_a_non_keyed_stream_points_to_key_by(env: StreamExecutionEnvironment) -> None:
    with pytest.raises(KeyedStreamRequiredError) as caught:
        env.from_collection([1]).reduce(lambda a, b: a + b)
    assert "reduce() needs a keyed stream: call key_by(key_selector) first" in str(caught.value)
    assert isinstance(caught.value, TypeError)


def test_a_sink_on_a_closed_environment_fails(env: StreamExecutionEnvironment) -> None:
    stream = env.from_collection([1])
    env.close()
    with pytest.raises(EnvironmentClosedError, match=r"Print to Std\. Out"):
        stream.print()


def test_unhashable_keys_are_caught_by_the_runtime_hook() -> None:
    assert check_key(("a", 1), "Keyed Reduce") == ("a", 1)
    with pytest.raises(UnhashableKeyError) as caught:
        check_key(["a", 1], "Keyed Reduce")
    message = str(caught.value)
    assert "'Keyed Reduce'" in message and "['a', 1]" in message and "a list" in message
    assert pickle.loads(pickle.dumps(caught.value)).key_type == "list"


def test_key_by_refuses_a_declared_key_type_that_cannot_be_a_key(
        env: StreamExecutionEnvironment) -> None:
    stream = env.from_collection([{"a": 1}])
    with pytest.raises(UnstableKeyError) as caught:
        stream.key_by(lambda d: d, key_type=Types.MAP(Types.STRING(), Types.INT()))
    assert str(caught.value).startswith(
        "key_by(key_type=Types.MAP(Types.STRING(), Types.INT())) gave a key of type "
        "Types.MAP(Types.STRING(), Types.INT()), which cannot be hashed the same way in every "
        "process (a dict is not hashable)")
    stream.key_by(lambda d: tuple(d), key_type=Types.TUPLE([Types.STRING()]))


def test_union_of_different_types_fails(env: StreamExecutionEnvironment) -> None:
    with pytest.raises(UnionTypeMismatchError, match=r"Types\.INT\(\) and Types\.STRING\(\)"):
        env.from_collection([1], Types.INT()).union(env.from_collection(["a"], Types.STRING()))


def test_explicit_forward_between_different_parallelisms_fails_at_build(
        env: StreamExecutionEnvironment) -> None:
    env.from_collection([1]).forward().map(str).set_parallelism(2).print()
    with pytest.raises(ForwardPartitioningError, match="'Collection Source'"):
        env.get_stream_graph()


def test_duplicate_uids_fail_at_build(env: StreamExecutionEnvironment) -> None:
    stream = env.from_collection([1])
    stream.map(str).uid("same").print()
    stream.map(repr).uid("same").print()
    with pytest.raises(DuplicateUidError, match="'same'"):
        env.get_stream_graph()


def test_parallelism_above_max_parallelism_fails_at_build(env: StreamExecutionEnvironment
                                                          ) -> None:
    env.from_collection([1]).map(str).set_max_parallelism(2).set_parallelism(3).print()
    with pytest.raises(ParallelismError, match="may not exceed max parallelism"):
        env.get_stream_graph()


@pytest.mark.parametrize("error", [
    EmptyJobError("x"), EnvironmentClosedError("print()"), ForeignStreamError("union()"),
    InvalidOperatorSettingError("Map", "parallelism", "0", "bad"),
    KeyedStreamOperationError("shuffle()", "no"), KeyedStreamRequiredError("sum()"),
    NotAnOperatorError("name", "shuffle()"), UnionTypeMismatchError("a", "b"),
    UnpicklableFunctionError("Map", "f", "x", "boom"),
])
def test_every_api_error_survives_pickling(error: Exception) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error) and str(copy) == str(error)
