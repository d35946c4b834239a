"""The broadcast process operator driven directly: a copy of the broadcast state per instance,
read-only on the non-broadcast side, keyed state and timers, snapshot and restore at another
parallelism."""

import pytest

from flintlock.common.operator_spec import OperatorKind, OperatorSpec
from flintlock.common.state import MapStateDescriptor, ValueStateDescriptor
from flintlock.datastream.functions import BroadcastProcessFunction, KeyedBroadcastProcessFunction
from flintlock.runtime.network.event_time import MAX_WATERMARK, TimestampedBatch
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.operator import OperatorStateBackend
from flintlock.runtime.tasks.broadcast_operator import (
    ReadOnlyBroadcastStateError,
    UnknownBroadcastStateError,
)
from flintlock.testing.operators import (
    MemoryStateWriter,
    open_operator,
)

RULES = MapStateDescriptor("rules", None, None)


class Rules(BroadcastProcessFunction):
    def process_element(self, value, ctx):
        yield (value, ctx.get_broadcast_state(RULES).get(value))

    def process_broadcast_element(self, value, ctx):
        ctx.get_broadcast_state(RULES).put(*value)


def _operator(function, keyed=False, subtask=0, parallelism=1, operator_backend=None):
    kind = OperatorKind.KEYED_BROADCAST_PROCESS if keyed else OperatorKind.BROADCAST_PROCESS
    spec = OperatorSpec(kind, function=function, keyed=keyed, broadcast_states=(RULES,))
    backend = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128) if keyed else None
    return open_operator(
        spec, restored=operator_backend is not None, subtask_index=subtask,
        parallelism=parallelism, keyed_backend=backend,
        operator_backend=operator_backend or OperatorStateBackend(),
        key_selectors=(lambda v: v, None) if keyed else ())


def test_the_broadcast_side_writes_and_the_other_side_reads():
    operator, out = _operator(Rules())
    operator.process_batch(["cpu"])
    operator.process_batch2([("cpu", 90)])
    operator.process_batch(["cpu"])
    assert [r for r, _ in out.records()] == [("cpu", None), ("cpu", 90)]


def test_writing_broadcast_state_in_process_element_is_refused():
    class Writes(Rules):
        def process_element(self, value, ctx):
            ctx.get_broadcast_state(RULES).put(value, 1)

    operator, _ = _operator(Writes())
    with pytest.raises(ReadOnlyBroadcastStateError, match="only allowed in process_broadcast"):
        operator.process_batch(["cpu"])


def test_a_descriptor_the_stream_was_not_broadcast_with_is_a_typed_error():
    class Other(Rules):
        def process_element(self, value, ctx):
            ctx.get_broadcast_state(MapStateDescriptor("other", None, None))

    operator, _ = _operator(Other())
    with pytest.raises(UnknownBroadcastStateError, match="'other'"):
        operator.process_batch(["x"])


def test_every_subtask_restores_a_copy_at_any_parallelism():
    operator, _ = _operator(Rules(), subtask=1, parallelism=2)
    operator.process_batch2([("cpu", 90), ("disk", 80)])
    operator.snapshot_state(1)
    snapshot = operator.context.operator_backend.snapshot()
    files = MemoryStateWriter()
    handle = snapshot.write(files, "op")
    for subtask in range(3):  # a new parallelism of 3: subtask 2 had no old copy
        backend = OperatorStateBackend()
        backend.restore([handle], lambda h: files.files[h.uri.split("//")[1]])
        restored, out = _operator(Rules(), subtask=subtask, parallelism=3,
                                  operator_backend=backend)
        restored.process_batch(["disk"])
        assert out.records()[0][0] == ("disk", 80)


class KeyedRules(KeyedBroadcastProcessFunction):
    """Counts elements per key; a broadcast "reset" zeroes every key's count; event-time timer
    at 100 reports the count."""

    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count"))

    def process_element(self, value, ctx):
        self.count.update((self.count.value() or 0) + 1)
        ctx.timer_service().register_event_time_timer(100)
        yield (ctx.get_current_key(), self.count.value(), ctx.timestamp())

    def process_broadcast_element(self, value, ctx):
        seen = []
        ctx.apply_to_keyed_state(ValueStateDescriptor("count"),
                                 lambda key, state: (seen.append(key), state.clear()))
        yield ("reset", sorted(seen))

    def on_timer(self, timestamp, ctx):
        yield (ctx.get_current_key(), "timer", self.count.value(), str(ctx.time_domain()))


def test_keyed_state_timers_and_apply_to_keyed_state():
    operator, out = _operator(KeyedRules(), keyed=True)
    operator.process_batch(TimestampedBatch(["a", "b", "a"], [1, 2, 3]))
    operator.process_batch2(["reset"])
    operator.process_batch(["a"])
    operator.process_watermark(MAX_WATERMARK)
    assert [r for r, _ in out.records()] == [
        ("a", 1, 1), ("b", 1, 2), ("a", 2, 3), ("reset", ["a", "b"]),
        ("a", 1, -(2**63)), ("a", "timer", 1, "TimeDomain.EVENT_TIME"),
        ("b", "timer", None, "TimeDomain.EVENT_TIME")]
