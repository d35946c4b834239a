"""The keyed reduce operator's direct-dict fast path and its copy-on-write fallback."""


from flintlock.common.operator_spec import OperatorKind, OperatorSpec
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.tasks.operator import OperatorContext
from flintlock.runtime.tasks.operators import REDUCE_STATE, ReduceOperator
from flintlock.testing.operators import MemoryStateWriter


class Collect:
    def __init__(self):
        self.records = []

    def collect_batch(self, records):
        self.records.extend(records)


class Extend:
    """A reduce function that mutates its accumulator in place (legal, if unwise)."""

    def reduce(self, acc, value):
        acc.extend(value)
        return acc


def _operator():
    backend = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
    spec = OperatorSpec(OperatorKind.REDUCE, function=Extend(), keyed=True)
    operator = ReduceOperator(spec)
    context = OperatorContext("t", "Reduce", "op", 0, 1, 128, 0, timers=None,
                              keyed_backend=backend,
                              key_selectors=(lambda v: v[0],))
    out = Collect()
    operator.setup(context, out)
    operator.open()
    return operator, backend, out


def test_running_reduce_per_key():
    operator, _, out = _operator()
    operator.process_batch([["a", 1], ["b", 2], ["a", 3]])
    assert out.records[-1] == ["a", 1, "a", 3]


def test_a_snapshot_in_flight_is_not_changed_by_in_place_mutation():
    operator, backend, _ = _operator()
    operator.process_batch([["a", 1]])
    snapshot = backend.snapshot()
    assert backend.snapshot_in_flight
    operator.process_batch([["a", 2]])  # mutates the accumulator of "a" in place
    written = MemoryStateWriter()
    handle = snapshot.write(written, "keyed")
    assert handle is not None
    restored = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
    restored.restore([handle], written.read)
    restored.set_current_key("a")
    assert restored.get_partitioned_state(REDUCE_STATE).value() == ["a", 1]


def _restored(written, handle):
    restored = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
    restored.restore([handle], written.read)
    values = {}
    for key in restored.keys(REDUCE_STATE.name):
        restored.set_current_key(key)
        values[key] = restored.get_partitioned_state(REDUCE_STATE).value()
    return values


def test_two_overlapping_snapshots_each_keep_the_state_of_their_barrier():
    operator, backend, out = _operator()
    operator.process_batch([["a", 1], ["b", 1]])
    first = backend.snapshot(1)
    operator.process_batch([["a", 2], ["a", 3], ["c", 1], ["c", 2]])
    second = backend.snapshot(2)
    operator.process_batch([["a", 4], ["b", 2], ["c", 3]])
    written = MemoryStateWriter()
    assert _restored(written, first.write(written, "first")) == {
        "a": ["a", 1], "b": ["b", 1]}
    assert _restored(written, second.write(written, "second")) == {
        "a": ["a", 1, "a", 2, "a", 3], "b": ["b", 1], "c": ["c", 1, "c", 2]}
    assert not backend.snapshot_in_flight
    operator.process_batch([["b", 3]])
    assert out.records[-1] == ["b", 1, "b", 2, "b", 3]
