"""PyFlink-compatible descriptors and TTL configuration (flintlock.common.state)."""

import pickle

import pytest

from flintlock.common.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateKind,
    StateTtlConfig,
    ValueStateDescriptor,
    ttl_to_milliseconds,
)
from flintlock.datastream import state as datastream_state


class Seconds:
    def __init__(self, seconds: int) -> None:
        self.seconds = seconds

    def to_milliseconds(self) -> int:
        return self.seconds * 1000


class SumReduce:
    def reduce(self, a, b):
        return a + b


class Average:
    def create_accumulator(self):
        return (0, 0)

    def add(self, value, accumulator):
        return accumulator[0] + value, accumulator[1] + 1

    def get_result(self, accumulator):
        return accumulator[0] / accumulator[1]

    def merge(self, a, b):
        return a[0] + b[0], a[1] + b[1]


def test_descriptors_have_pyflink_names_and_kinds():
    cases = [
        (ValueStateDescriptor("v", "INT"), StateKind.VALUE),
        (ListStateDescriptor("l", "INT"), StateKind.LIST),
        (MapStateDescriptor("m", "STRING", "INT"), StateKind.MAP),
        (ReducingStateDescriptor("r", SumReduce(), "INT"), StateKind.REDUCING),
        (AggregatingStateDescriptor("a", Average(), "TUPLE"), StateKind.AGGREGATING),
    ]
    for descriptor, kind in cases:
        assert descriptor.kind is kind
        assert descriptor.get_name() == descriptor.name
        assert descriptor.ttl_config is None


def test_reduce_function_object_or_callable():
    assert ReducingStateDescriptor("r", SumReduce()).reduce(2, 3) == 5
    assert ReducingStateDescriptor("r", lambda a, b: a * b).reduce(2, 3) == 6
    with pytest.raises(TypeError, match="reduce"):
        ReducingStateDescriptor("r", 42)


def test_aggregate_function_is_duck_typed():
    with pytest.raises(TypeError, match="get_result"):
        AggregatingStateDescriptor("a", object())


def test_empty_name_is_rejected():
    with pytest.raises(ValueError, match="non-empty"):
        ValueStateDescriptor("")


def test_ttl_builder_chain_as_pyflink_documents_it():
    config = (
        StateTtlConfig.new_builder(Seconds(1))
        .set_update_type(StateTtlConfig.UpdateType.OnReadAndWrite)
        .set_state_visibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
        .cleanup_full_snapshot()
        .disable_cleanup_in_background()
        .build()
    )
    assert config.get_ttl_ms() == 1000
    assert config.get_ttl().to_milliseconds() == 1000
    assert config.get_update_type() is StateTtlConfig.UpdateType.OnReadAndWrite
    assert config.get_state_visibility() is StateTtlConfig.StateVisibility.NeverReturnExpired
    assert config.cleanup_full_snapshot and not config.cleanup_in_background
    assert config.is_enabled()
    descriptor = ValueStateDescriptor("v")
    descriptor.enable_time_to_live(config)
    assert descriptor.ttl_config == config
    assert pickle.loads(pickle.dumps(descriptor)).ttl_config == config


def test_ttl_builder_defaults_and_int_milliseconds():
    config = StateTtlConfig.new_builder(250).build()
    assert config.ttl_ms == 250
    assert config.update_type is StateTtlConfig.UpdateType.OnCreateAndWrite
    assert config.state_visibility is StateTtlConfig.StateVisibility.NeverReturnExpired


def test_disabled_ttl_leaves_descriptor_without_ttl():
    config = StateTtlConfig.new_builder(10).set_update_type(
        StateTtlConfig.UpdateType.Disabled
    ).build()
    descriptor = ListStateDescriptor("l")
    descriptor.enable_time_to_live(config)
    assert descriptor.ttl_config is None


@pytest.mark.parametrize("bad", [0, -5, True])
def test_ttl_must_be_a_positive_duration(bad):
    with pytest.raises((ValueError, TypeError)):
        ttl_to_milliseconds(bad)


def test_datastream_module_reexports_the_descriptors():
    assert datastream_state.ValueStateDescriptor is ValueStateDescriptor
    assert datastream_state.StateTtlConfig is StateTtlConfig
