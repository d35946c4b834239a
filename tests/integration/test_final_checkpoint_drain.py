"""A bounded source that has emitted everything into a backpressured pipeline: with unaligned
checkpoints its barriers overtake the queued records, so checkpoints keep completing while
the pipeline drains, and the source ends only after a checkpoint that held no in-flight data
(everything before it was processed), so nothing is left uncommitted."""

import time

import pytest

from flintlock.datastream import CheckpointingMode
from flintlock.testing.environments import local_environment
from flintlock.testing.faults import RaiseRepeatedly
from flintlock.testing.recording import Recording

N = 2000
SEEN = Recording("drain.seen")  # every record the slow map saw


def _slow(value):
    time.sleep(0.001)  # the backpressure whose drain is checkpointed: what is tested
    SEEN.append(value)
    return value


@pytest.mark.parametrize("unaligned", [True, False], ids=["unaligned", "aligned"])
def test_checkpoints_while_a_finished_source_drains(executor, tmp_path, unaligned):
    env = local_environment(tmp_path, 1, options={
        "execution.checkpointing.unaligned.enabled": unaligned})
    env.enable_checkpointing(50, CheckpointingMode.EXACTLY_ONCE)
    # N small records fit the exchange's buffers: the source's input ends at once, and the
    # slow map then needs about N ms to drain them.
    env.from_collection(list(range(N))).rebalance().map(_slow).filter(lambda v: False).print()
    client = env.execute_async("drain")
    client.wait(120)
    stats = client.jm.describe().checkpoints
    assert sorted(SEEN) == list(range(N))
    completed = [c for c in stats.history if c.status.name == "COMPLETED"]
    if unaligned:
        # about N ms of draining at a 50 ms interval: many complete, most with in-flight data
        assert len(completed) >= 5, [(c.checkpoint_id, c.end_to_end_duration_ms)
                                     for c in stats.history]
    else:
        # aligned barriers queue behind the records: the drain holds every checkpoint up
        assert all(c.end_to_end_duration_ms > 0 for c in completed)


class _SlowFailing:
    """The slow map, failing during the drain once a checkpoint completed (one holding
    in-flight data: the source had finished, its records were still queued)."""

    def __init__(self, fail):
        self.fail = fail

    def __call__(self, value):
        self.fail(value)
        time.sleep(0.0005)  # the backpressure whose drain is checkpointed
        return value


def test_failures_while_a_finished_source_drains_keep_the_output_exactly_once(
        executor, tmp_path):
    env = local_environment(tmp_path, 1, restart_attempts=3, restart_delay="10 ms", options={
        "execution.checkpointing.unaligned.enabled": True})
    env.enable_checkpointing(50, CheckpointingMode.EXACTLY_ONCE)
    fail = RaiseRepeatedly(tmp_path / "failure", tmp_path / "chk", 1, every=50)
    out = list(env.from_collection(list(range(N))).rebalance().map(_SlowFailing(fail))
               .execute_and_collect("drain with failures"))
    assert fail.failures() == 1
    assert sorted(out) == list(range(N))  # the restored in-flight data, once
