"""A second reproduction of the restore stall of docs/known-issues.md, found while writing the
broadcast-state tests: a fast source that finishes at once, a slow source failing once after a
checkpoint (it holds half its records at a gate until one completed), two-input tasks after
them. On the parent commit of the event-time branch
(d90869f) the restored attempt hung in 3 of 5 runs: both sources wait for their final
checkpoint, every other task waits for input. No broadcast state or event time is involved
(the fast source goes through the plain ``broadcast()`` partitioner into a CoProcessFunction).
Marked like the first reproduction; it passes once the stall is fixed.
"""



from flintlock.datastream import (
    CheckpointingMode,
    CoProcessFunction,
)
from flintlock.testing.environments import local_environment
from flintlock.testing.faults import RaiseOnce
from flintlock.testing.files import completed_checkpoints
from flintlock.testing.gates import FileGate, gated_records, open_when


class FirstInputOnly(CoProcessFunction):
    def process_element1(self, value, ctx):
        yield value

    def process_element2(self, value, ctx):
        return None


def test_a_job_with_an_early_finished_source_recovers(executor, tmp_path):
    env = local_environment(tmp_path, 2, restart_attempts=3, restart_delay="20 ms")
    env.enable_checkpointing(30, CheckpointingMode.EXACTLY_ONCE)
    marker = tmp_path / "crashed"
    events = [(f"k{i % 7}", i) for i in range(1500)]
    gate = FileGate(tmp_path / "gate")
    opener = open_when(gate, lambda: completed_checkpoints(tmp_path / "chk"))
    fast = env.from_collection([("rule", 1), ("rule", 2)]).broadcast()
    slow = gated_records(env, gate, events, before_gate=750) \
        .map(RaiseOnce(marker, events[750])).set_parallelism(1)
    out = list(slow.key_by(lambda e: e[0]).connect(fast).process(FirstInputOnly())
               .execute_and_collect())
    opener.join(60)
    assert marker.exists(), "the failure was never injected"
    assert sorted(out) == sorted((f"k{i % 7}", i) for i in range(1500))
