"""Restore-state assignment rules: channel state, non-restored state, parallelism bounds."""

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.runtime.state.assignment import assign_states, even_split
from flintlock.runtime.state.errors import (
    ChannelStateRescaleError,
    InvalidParallelismError,
    MaxParallelismMismatchError,
    NonRestoredStateError,
)
from flintlock.runtime.state.handles import ByteStateHandle
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.snapshots import KeyGroupsStateHandle, OperatorSubtaskState


def channel_states(parallelism):
    return {
        i: OperatorSubtaskState(input_channel_state=(ByteStateHandle(f"in-{i}".encode()),))
        for i in range(parallelism)
    }


def test_channel_state_stays_with_its_subtask_when_parallelism_is_unchanged():
    assigned = assign_states({"op": channel_states(2)}, {"op": 2}, {"op": 8})["op"]
    assert [s.input_channel_state for s in assigned.values()] == [
        (ByteStateHandle(b"in-0"),), (ByteStateHandle(b"in-1"),),
    ]


def test_channel_state_cannot_be_rescaled():
    with pytest.raises(ChannelStateRescaleError) as caught:
        assign_states({"op": channel_states(2)}, {"op": 3}, {"op": 8})
    error = pickle.loads(pickle.dumps(caught.value))
    assert (error.operator_id, error.old_parallelism, error.new_parallelism) == ("op", 2, 3)
    assert "aligned" in str(error)


def test_old_parallelism_can_be_given_explicitly():
    with pytest.raises(ChannelStateRescaleError):
        assign_states({"op": channel_states(1)}, {"op": 1}, {"op": 8}, old_parallelism={"op": 2})


def test_state_of_a_vanished_operator_needs_permission():
    states = {"gone": channel_states(1), "kept": {}}
    with pytest.raises(NonRestoredStateError, match="gone"):
        assign_states(states, {"kept": 1}, {"kept": 8})
    assigned = assign_states(states, {"kept": 1}, {"kept": 8}, allow_non_restored_state=True)
    assert assigned == {"kept": {0: OperatorSubtaskState()}}


def test_new_operator_gets_empty_state_per_subtask():
    assigned = assign_states({}, {"new": 3}, {"new": 8})
    assert assigned["new"] == {i: OperatorSubtaskState() for i in range(3)}


@pytest.mark.parametrize("parallelism", [0, 9])
def test_parallelism_must_be_within_max_parallelism(parallelism):
    with pytest.raises(InvalidParallelismError):
        assign_states({}, {"op": parallelism}, {"op": 8})


def test_keyed_state_needs_the_same_max_parallelism():
    handle = KeyGroupsStateHandle(KeyGroupRange(0, 7), (0,) * 9, ByteStateHandle(b""), 8)
    states = {"op": {0: OperatorSubtaskState(managed_keyed_state=(handle,))}}
    with pytest.raises(MaxParallelismMismatchError):
        assign_states(states, {"op": 2}, {"op": 16})


def test_keyed_handles_are_cut_to_each_subtasks_key_groups():
    offsets = tuple(range(0, 90, 10))
    handle = KeyGroupsStateHandle(KeyGroupRange(0, 7), offsets, ByteStateHandle(b"x" * 80), 8)
    states = {"op": {0: OperatorSubtaskState(managed_keyed_state=(handle,))}}
    assigned = assign_states(states, {"op": 3}, {"op": 8})["op"]
    ranges = [s.managed_keyed_state[0].key_group_range for s in assigned.values()]
    assert ranges == [KeyGroupRange(0, 2), KeyGroupRange(3, 5), KeyGroupRange(6, 7)]
    assert assigned[1].managed_keyed_state[0].offsets == (30, 40, 50, 60)
    assert [s.state_size for s in assigned.values()] == [30, 30, 20]


@settings(deadline=None)  # a shared, loaded machine: no per-example time limit
@given(count=st.integers(0, 100), parts=st.integers(1, 20))
def test_even_split_covers_everything_in_order(count, parts):
    runs = even_split(count, parts)
    assert len(runs) == parts
    assert [i for run in runs for i in run] == list(range(count))
    assert max(map(len, runs)) - min(map(len, runs)) <= 1
