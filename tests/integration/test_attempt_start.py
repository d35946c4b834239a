"""Subtasks that finish before the others have opened: a bounded source may end before its
consumers report RUNNING, and a source restored as finished ends at once. The attempt still
counts as running, and its periodic checkpoints still start."""

import os
import time

from flintlock.common.job_status import JobStatus
from flintlock.datastream import CheckpointingMode
from flintlock.datastream.functions import MapFunction
from flintlock.testing.environments import local_environment
from flintlock.testing.gates import FileGate, gated_numbers
from flintlock.testing.waiting import poll_until


class _SlowOpen(MapFunction):
    """Opens slowly once ``marker`` exists (after the injected failure, in the restored
    attempt), then applies ``inner``."""

    def __init__(self, marker, inner, seconds=1.0):
        self.marker = os.fspath(marker)
        self.inner = inner
        self.seconds = seconds

    def open(self, runtime_context):
        if os.path.exists(self.marker):
            time.sleep(self.seconds)  # the slow start the tests race a finished source with

    def map(self, value):
        return self.inner(value)


def _pass(value):
    return value


def _job(tmp_path, gate, marker, n, **options):
    """A small collection unioned with numbers that hold after their first 1000 until
    ``gate`` opens (the first job runs until the test has taken its savepoint)."""
    env = local_environment(tmp_path, 1, options=options)
    env.enable_checkpointing(50, CheckpointingMode.EXACTLY_ONCE)
    small = env.from_collection([-1, -2, -3])
    numbers = gated_numbers(env, gate, n, before_gate=1000)
    small.union(numbers).map(_SlowOpen(marker, _pass)).filter(lambda v: False).print()
    return env


def _collection_finished(client):
    return any("Collection Source" in t.vertex_name and t.state == "FINISHED"
               for t in client.jm.describe().tasks)


def test_a_source_restored_as_finished_does_not_keep_checkpoints_from_starting(
        executor, tmp_path):
    """The first job's small collection source finishes (after its final checkpoint) and a
    savepoint records it as finished. The job restored from that savepoint deploys the
    source as finished: it reports FINISHED at once, while the map still opens. Checkpoints
    must start anyway, or the number source, at its end, waits for a final checkpoint for
    ever and the job never finishes."""
    n = 1_000_000
    marker = tmp_path / "restored"
    gate = FileGate(tmp_path / "gate")
    first = _job(tmp_path, gate, marker, n).execute_async("first")
    try:
        assert poll_until(lambda: _collection_finished(first), 30), first.jm.describe().tasks
        path = first.trigger_savepoint(str(tmp_path / "sp")).result(60)
    finally:
        first.cancel()
    assert first.jm.wait_for_status({JobStatus.CANCELED}, 60), "the first job outran the test"
    marker.touch()
    gate.open()
    second = _job(tmp_path, gate, marker, n, **{"execution.state-recovery.path": path}
                  ).execute_async("restored")
    try:
        second.wait(60)
    finally:
        second.cancel()
    assert second.jm._restore.finished, "no subtask was restored as finished"
    completed = [c for c in second.jm.describe().checkpoints.history
                 if c.status.name == "COMPLETED"]
    assert completed, "the restored job completed no checkpoint"


def test_a_job_whose_source_finished_before_its_consumers_opened_counts_as_running(
        executor, tmp_path):
    env = local_environment(tmp_path, 1)
    marker = tmp_path / "slow"
    marker.touch()
    env.from_collection([1, 2, 3]).rebalance().map(_SlowOpen(marker, lambda v: v, 0.5)).print()
    client = env.execute_async("source ends first")
    try:
        assert client.jm.wait_until_running(30)
        client.wait(30)
    finally:
        client.cancel()
