"""Operator list state: even-split and union redistribution on rescaling."""

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common.state import ListStateDescriptor, ValueStateDescriptor
from flintlock.runtime.state.assignment import assign_states
from flintlock.runtime.state.errors import SnapshotReleasedError, StateKindMismatchError
from flintlock.runtime.state.operator import OperatorStateBackend
from flintlock.runtime.state.snapshots import OperatorSubtaskState

OFFSETS = ListStateDescriptor("offsets")
TOPICS = ListStateDescriptor("topics")


def snapshot_subtasks(elements_per_subtask, union_per_subtask=None):
    """Operator states of old subtasks holding the given split (and union) elements."""
    states = {}
    for index, elements in enumerate(elements_per_subtask):
        backend = OperatorStateBackend()
        backend.get_list_state(OFFSETS).add_all(elements)
        if union_per_subtask is not None:
            backend.get_union_list_state(TOPICS).add_all(union_per_subtask[index])
        handle = backend.snapshot().write(writer=None, name=f"op-{index}")
        states[index] = OperatorSubtaskState(managed_operator_state=(handle,))
    return states


def restore_all(assigned, parallelism):
    restored = []
    for index in range(parallelism):
        backend = OperatorStateBackend()
        backend.restore(assigned[index].managed_operator_state, read_state=None)
        restored.append(backend)
    return restored


def test_list_state_basics():
    backend = OperatorStateBackend()
    state = backend.get_list_state(OFFSETS)
    assert backend.get_list_state(OFFSETS) is state
    assert list(state.get()) == []
    state.add(1)
    state.add_all([2, 3])
    assert list(state) == [1, 2, 3]
    state.update([7])
    assert state.get() == [7]
    state.clear()
    assert state.get() == []
    with pytest.raises(StateKindMismatchError):
        backend.get_union_list_state(OFFSETS)
    with pytest.raises(TypeError, match="list state"):
        backend.get_list_state(ValueStateDescriptor("v"))


def test_unchanged_parallelism_gives_each_subtask_its_own_elements():
    states = snapshot_subtasks([[1, 2, 3], [4], []])
    assigned = assign_states({"src": states}, {"src": 3}, {"src": 128})["src"]
    restored = restore_all(assigned, 3)
    assert [b.get_list_state(OFFSETS).get() for b in restored] == [[1, 2, 3], [4], []]


@settings(deadline=None)  # a shared, loaded machine: no per-example time limit
@given(
    elements=st.lists(st.lists(st.integers(), max_size=6), min_size=1, max_size=5),
    new=st.integers(1, 8),
)
def test_split_state_is_divided_evenly_and_union_state_goes_everywhere(elements, new):
    unions = [[f"topic-{i}"] for i in range(len(elements))]
    states = snapshot_subtasks(elements, unions)
    assigned = assign_states({"src": states}, {"src": new}, {"src": 128})["src"]
    restored = restore_all(assigned, new)
    shares = [b.get_list_state(OFFSETS).get() for b in restored]
    everything = [e for subtask in elements for e in subtask]
    assert [e for share in shares for e in share] == everything
    if new == len(elements):
        assert shares == elements
    else:
        assert max(map(len, shares)) - min(map(len, shares)) <= 1
    for backend in restored:
        assert backend.get_union_list_state(TOPICS).get() == [u for us in unions for u in us]


def test_snapshot_is_taken_in_the_synchronous_part():
    backend = OperatorStateBackend()
    state = backend.get_list_state(OFFSETS)
    state.add({"partition": 0, "offset": 5})
    pending = backend.snapshot()
    state.get()[0]["offset"] = 99
    state.add({"partition": 1, "offset": 1})
    handle = pending.write(writer=None, name="op")
    restored = OperatorStateBackend()
    restored.restore([pickle.loads(pickle.dumps(handle))], read_state=None)
    assert restored.get_list_state(OFFSETS).get() == [{"partition": 0, "offset": 5}]


def test_no_registered_state_writes_nothing():
    assert OperatorStateBackend().snapshot().write(writer=None, name="op") is None


def test_released_snapshot_refuses_to_write():
    backend = OperatorStateBackend()
    backend.get_list_state(OFFSETS).add(1)
    pending = backend.snapshot()
    pending.release()
    with pytest.raises(SnapshotReleasedError):
        pending.write(writer=None, name="op")
