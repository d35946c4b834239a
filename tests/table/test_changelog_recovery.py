"""The changelog operators as jobs on TaskManager threads (issue 28): a group aggregation
fails once after a completed checkpoint, restarts from it, and the changelog it returns
through ``execute_and_collect`` (exactly-once) is exactly the one an uninterrupted run emits
— the accumulators, the record counts and the distinct maps restored from keyed state; and a
left join wired with connect/key_by/process describes the join of its inputs."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from flintlock.datastream import CheckpointingMode
from flintlock.datastream.changelog.aggregates import Count, Count1, Sum
from flintlock.datastream.changelog.aggregates_retract import MaxWithRetract
from flintlock.datastream.changelog.group_agg import AggregateCall, GroupAggFunction
from flintlock.datastream.changelog.join import JoinType, StreamingJoinFunction
from flintlock.testing.environments import local_environment
from flintlock.testing.executor import use_thread_executor
from flintlock.testing.faults import RaiseOnce
from flintlock.testing.files import completed_checkpoints
from flintlock.testing.gates import FileGate, gated_records, open_when
from flintlock.testing.recording import Recording
from tests.table.changelog_harness import Harness, apply_changelog, r, show


@pytest.fixture
def executor(monkeypatch):
    """Thread TaskManagers for ``env.execute()`` (as tests/integration's fixture)."""
    Recording.clear_all()
    return use_thread_executor(monkeypatch)


def _changelog(n: int) -> list:
    """(key, sequence number) rows: inserts, and retractions of earlier inserts of the same
    key; every row unique, so the failure trigger is one record."""
    rng, present, rows = random.Random(28), {}, []
    for i in range(n):
        key = rng.randrange(7)
        earlier = present.setdefault(key, [])
        if earlier and rng.random() < 0.35:
            value = earlier.pop(rng.randrange(len(earlier)))
            rows.append(r(rng.choice(["-D", "-U"]), key, value))
        else:
            earlier.append(i)
            rows.append(r("+I", key, i))
    return rows


def _function() -> GroupAggFunction:
    return GroupAggFunction((0,), [
        AggregateCall(Count1()), AggregateCall(Sum(), (1,)),
        AggregateCall(MaxWithRetract(), (1,)),
        AggregateCall(Count(), lambda row: (row[1] % 10,), distinct=True)])


def test_group_aggregation_restores_its_state_exactly_after_a_failure(executor, tmp_path):
    n = 3000
    rows = _changelog(n)
    reference = Harness(_function(), [_function().key_selector()])
    expected = sorted(reference.feed(*rows))

    env = local_environment(tmp_path, 2, restart_attempts=3, restart_delay="20 ms")
    env.enable_checkpointing(20, CheckpointingMode.EXACTLY_ONCE)
    marker = tmp_path / "crashed"
    gate = FileGate(tmp_path / "gate")  # the second half waits for a completed checkpoint
    opener = open_when(gate, lambda: completed_checkpoints(tmp_path / "chk"))
    function = _function()
    stream = (gated_records(env, gate, rows, before_gate=n // 2)
              .map(RaiseOnce(marker, rows[n // 2])).set_parallelism(1)
              .key_by(function.key_selector()).process(function))
    out = list(stream.execute_and_collect())
    opener.join(60)
    assert marker.exists(), "the failure was never injected"
    assert sorted(show(row) for row in out) == expected


def test_a_left_join_job_wired_as_the_planner_wires_it(executor, tmp_path):
    """connect + key_by(left, right selectors) + process on thread TaskManagers at
    parallelism 2: whatever order the inputs interleave in, the changelog describes the join
    of the net inputs."""
    env = local_environment(tmp_path, 2)
    left = [r("+I", k, f"l{k}") for k in range(20)] + [r("-D", 3, "l3")]
    right = ([r("+I", k % 10, f"r{k}") for k in range(30)]
             + [r("-D", 4, "r4"), r("-D", 4, "r14"), r("-D", 4, "r24")])
    join = StreamingJoinFunction(JoinType.LEFT, 2, 2, (0,), (0,))
    out = list(env.from_collection(left).connect(env.from_collection(right))
               .key_by(join.left_key_selector(), join.right_key_selector())
               .process(join).execute_and_collect())
    expected = Counter()
    for k in range(20):
        if k == 3:
            continue
        matches = [f"r{j}" for j in range(30) if j % 10 == k and k != 4]
        for name in matches or [None]:
            expected[(k, f"l{k}", None if name is None else k, name)] += 1
    assert apply_changelog(out) == expected
