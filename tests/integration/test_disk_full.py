"""A full disk under checkpoint storage (issue 16), on TaskManager threads.

The checkpoint directory is a ``fulldisk://`` storage (``flintlock.testing.full_disk``) whose
writes fail with ``ENOSPC`` on cue: the TaskManagers' state files, or the JobManager's
``_metadata``. Such a checkpoint is declined (or cannot be stored) and fails; with
``execution.checkpointing.tolerable-failed-checkpoints`` the job keeps running in the same
attempt and checkpoints again once space returns; without it the job fails over, as Flink
does. Either way the output is exactly once.

The job's source holds at half its input until the test lets the rest through
(``throttled_count.BackgroundRun``), so it is surely running while the disk is full; the test
waits on what happened (refused writes, failed and completed checkpoints), never on time.
"""

from __future__ import annotations

import pytest

from flintlock.datastream import CheckpointingMode
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason
from flintlock.runtime.checkpoint.failure_manager import TooManyCheckpointFailuresError
from flintlock.runtime.jobmanager.history import JobEventKind
from flintlock.testing.environments import local_environment
from flintlock.testing.full_disk import FullDisk
from flintlock.testing.waiting import wait_until
from tests.integration.throttled_count import WAIT_S, BackgroundRun, expected


def _wait_for(condition, what):
    wait_until(condition, WAIT_S, f"waited in vain for {what}")


def _env(tmp_path, disk_uri, tolerable, restarts):
    env = local_environment(tmp_path, 2, restart_attempts=restarts, restart_delay="10 ms",
                            options={"execution.checkpointing.dir": disk_uri,
                                     "execution.checkpointing.tolerable-failed-checkpoints":
                                         tolerable,
                                     "state.storage.fs.memory-threshold": "0 b"})
    env.enable_checkpointing(20, CheckpointingMode.EXACTLY_ONCE)
    return env


REASON = {"state": CheckpointFailureReason.CHECKPOINT_ASYNC_EXCEPTION,
          "metadata": CheckpointFailureReason.FINALIZE_CHECKPOINT_FAILURE}


@pytest.mark.parametrize("scope", ["state", "metadata"])
def test_tolerated_full_disk_keeps_the_attempt_and_checkpoints_again(
        executor, tmp_path, scope):
    disk = FullDisk(f"fulldisk://tolerated-{scope}-{tmp_path.name}")
    run = BackgroundRun(_env(tmp_path, disk.uri, tolerable=1000, restarts=0), tmp_path)
    _wait_for(lambda: disk.committed_checkpoints(run.jm.job_id), "a first checkpoint")
    disk.fill(scope)
    before = max(disk.committed_checkpoints(run.jm.job_id))
    failed = run.jm.describe().checkpoints.num_failed
    _wait_for(lambda: disk.refused_writes() >= 3
          and run.jm.describe().checkpoints.num_failed >= failed + 2, "failed checkpoints")
    stats = run.jm.describe().checkpoints
    reasons = {c.failure_reason for c in stats.history if c.checkpoint_id > before}
    assert REASON[scope] in reasons, reasons
    assert any("No space left on device" in c.failure_message for c in stats.history
               if c.checkpoint_id > before), [c.failure_message for c in stats.history]
    disk.free()
    _wait_for(lambda: max(disk.committed_checkpoints(run.jm.job_id), default=0) > before,
          "a checkpoint once space returned")
    assert run.finish() == expected()
    assert len(executor.launchers[-1].attempts) == 1


def test_without_tolerance_a_full_disk_fails_the_job_over(executor, tmp_path):
    disk = FullDisk(f"fulldisk://intolerant-{tmp_path.name}")
    run = BackgroundRun(_env(tmp_path, disk.uri, tolerable=0, restarts=3), tmp_path)
    _wait_for(lambda: disk.committed_checkpoints(run.jm.job_id), "a first checkpoint")
    disk.fill("state")
    _wait_for(lambda: len(executor.launchers[-1].attempts) >= 2, "a failover")
    disk.free()
    assert run.finish() == expected()
    failures = [e for e in run.jm.describe().events if e.kind is JobEventKind.ATTEMPT_FAILED]
    assert failures and failures[0].name == TooManyCheckpointFailuresError.__name__
