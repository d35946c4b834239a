"""The changelog operators' state is plain keyed state, so it rescales by key group (issue 28):
a group aggregation, a join and a retractable Top-N snapshotted at parallelism 1 and restored
at parallelism 3 (each subtask reading only its key groups) continue with exactly the
changelog an uninterrupted run emits."""

from __future__ import annotations

import random

import pytest

from flintlock.datastream.changelog.aggregates import Count1, Sum
from flintlock.datastream.changelog.aggregates_retract import MaxWithRetract
from flintlock.datastream.changelog.group_agg import AggregateCall, GroupAggFunction
from flintlock.datastream.changelog.join import JoinType, StreamingJoinFunction
from flintlock.datastream.changelog.sort_keys import sort_key_selector
from flintlock.datastream.changelog.topn_retract import RetractableTopNFunction
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange, assign_key_to_operator
from tests.table.changelog_harness import Harness, r

MAX_PARALLELISM = 128


def _events(n: int, seed: int) -> list[tuple[int, object]]:
    """(side, row): inserts and retractions of earlier inserts on two inputs, 9 keys."""
    rng, present, events = random.Random(seed), {0: [], 1: []}, []
    for i in range(n):
        side = rng.randrange(2)
        if present[side] and rng.random() < 0.3:
            key, value = present[side].pop(rng.randrange(len(present[side])))
            events.append((side, r("-D", key, value)))
        else:
            key, value = rng.randrange(9), i
            present[side].append((key, value))
            events.append((side, r("+I", key, value)))
    return events


def _functions():
    return {
        "aggregation": lambda: GroupAggFunction((0,), [AggregateCall(Count1()),
                                                       AggregateCall(Sum(), (1,)),
                                                       AggregateCall(MaxWithRetract(), (1,))]),
        "join": lambda: StreamingJoinFunction(JoinType.FULL, 2, 2, (0,), (0,)),
        "top-n": lambda: RetractableTopNFunction((0,), sort_key_selector([1], [False]), 3),
    }


def _harness(make, backend):
    function = make()
    keys = ([function.left_key_selector(), function.right_key_selector()]
            if isinstance(function, StreamingJoinFunction) else [function.key_selector()])
    return Harness(function, keys, state=backend)


def _feed(harness, events, two_inputs):
    out = []
    for side, row in events:
        out += harness.feed(row, side=side if two_inputs else 0)
    return out


@pytest.mark.parametrize("name", ["aggregation", "join", "top-n"])
def test_state_restored_at_another_parallelism_continues_exactly(name) -> None:
    make, two_inputs = _functions()[name], name == "join"
    events = _events(400, seed=len(name))
    if not two_inputs:  # one input: both sides' rows in one stream, still consistent
        events = [(0, row) for _, row in events]
    whole = _harness(make, HeapKeyedStateBackend(KeyGroupRange(0, 127), MAX_PARALLELISM))
    expected = _feed(whole, events, two_inputs)

    first = _harness(make, HeapKeyedStateBackend(KeyGroupRange(0, 127), MAX_PARALLELISM))
    got = _feed(first, events[:200], two_inputs)
    handle, writer = first.snapshot()
    subtasks = []
    for index in range(3):
        backend = HeapKeyedStateBackend(KeyGroupRange.for_subtask(MAX_PARALLELISM, 3, index),
                                        MAX_PARALLELISM)
        backend.restore([handle], writer.read)
        subtasks.append(_harness(make, backend))
    for side, row in events[200:]:
        owner = subtasks[assign_key_to_operator(row[0], MAX_PARALLELISM, 3)]
        got += owner.feed(row, side=side if two_inputs else 0)
    assert got == expected
