"""Checkpoint ids continue after a restore, as in Flink (issue 30): a job restored from a
savepoint with id K takes checkpoint K+1 first, not 1; a wrong
``execution.state-recovery.path`` is refused as such, not read as a corrupt ``_metadata``.
TaskManagers run as threads; waits are bounded polls for a value."""

import pytest

from flintlock.common.job_status import JobStatus
from flintlock.runtime.checkpoint.metadata import resolve_savepoint
from flintlock.runtime.jobmanager.coordinator_setup import SavepointPathError
from flintlock.testing.environments import local_environment
from flintlock.testing.gates import FileGate, gated_numbers
from flintlock.testing.waiting import wait_for

N = 400
WAIT_S = 60.0


def _job(tmp_path, gate, **options):
    env = local_environment(tmp_path, 1, options=options)
    env.enable_checkpointing(100)
    gated_numbers(env, gate, N, before_gate=N // 4).map(lambda x: x + 1).print()
    return env


def _latest_id(client):
    stats = client.jm.describe().checkpoints
    latest = stats.latest_completed if stats is not None else None
    return None if latest is None else int(latest.checkpoint_id)


def test_checkpoint_ids_continue_after_the_restored_savepoint(executor, tmp_path):
    gate = FileGate(tmp_path / "gate")
    client = _job(tmp_path / "first", gate).execute_async("first")
    gate.wait_arrived(WAIT_S)
    assert client.jm.wait_until_running(WAIT_S)
    wait_for(lambda: _latest_id(client), lambda i: i is not None and i >= 2, WAIT_S,
             "two checkpoints of the first job")
    path = client.stop_with_savepoint(savepoint_directory=str(tmp_path / "sp")).result(WAIT_S)
    assert client.jm.wait_for_status({JobStatus.FINISHED}, WAIT_S)
    restored_id = int(resolve_savepoint(path).checkpoint_id)
    assert restored_id >= 3

    second_gate = FileGate(tmp_path / "gate2")
    second = _job(tmp_path / "second", second_gate,
                  **{"execution.state-recovery.path": path}).execute_async("second")
    try:
        first_new = wait_for(lambda: _latest_id(second), lambda i: i is not None, WAIT_S,
                             "a checkpoint of the restored job")
        assert first_new > restored_id
    finally:
        second_gate.open()
        gate.open()
        assert second.join(WAIT_S)


@pytest.mark.parametrize("make", ["missing", "empty directory"])
def test_a_wrong_recovery_path_is_refused_as_such(executor, tmp_path, make):
    path = tmp_path / "no-savepoint"
    if make == "empty directory":
        path.mkdir()
    gate = FileGate(tmp_path / "gate")
    gate.open()
    env = _job(tmp_path / "job", gate, **{"execution.state-recovery.path": str(path)})
    with pytest.raises(SavepointPathError) as caught:
        env.execute("wrong path")
    assert "execution.state-recovery.path" in str(caught.value)
    assert "_metadata" not in str(caught.value) or make == "empty directory"
    assert "corrupt" not in str(caught.value).lower()
