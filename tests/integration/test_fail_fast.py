"""Failures no restart can fix end the job at once (issue 16), on TaskManager threads.

* a truncated state file in the savepoint a job starts from: FAILED after one attempt with
  the ``CorruptStateError`` naming the file, although the restart strategy allows five more;
* a failover restoring a latest checkpoint whose state files were truncated meanwhile: FAILED
  with that attempt, no further restart;
* a savepoint holding state of an operator the job no longer has (no allowNonRestoredState):
  FAILED with ``NonRestoredStateError`` before any TaskManager starts;
* a damaged newest checkpoint found by a JobManager recovering the job's checkpoints: with the
  fallback on it restores the older one and says so in its exception history; with it off the
  JobManager refuses to start with the ``CorruptStateError`` naming ``_metadata``.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

import pytest

from flintlock.common import Types
from flintlock.common.job_status import JobStatus
from flintlock.datastream.functions import MapFunction
from flintlock.datastream.state import ValueStateDescriptor
from flintlock.runtime.executor import JobHandle
from flintlock.runtime.jobmanager import JobFailedError, JobManager
from flintlock.runtime.jobmanager.history import JobEventKind
from flintlock.runtime.state.errors import NonRestoredStateError
from flintlock.runtime.state.handles import CorruptStateError
from flintlock.testing.environments import local_configuration, local_environment
from flintlock.testing.gates import FileGate, gated_numbers, open_when
from flintlock.testing.launchers import ThreadLauncher
from flintlock.testing.waiting import wait_until

WAIT_S = 30.0


class _Count(MapFunction):
    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))

    def map(self, value):
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        return value % 5, count


def _pass(value):
    return value


def _build(env, gate, keyed=True):
    """The job of these tests; its source holds after its first number until ``gate`` opens,
    so the job is still running when the test acts."""
    stream = gated_numbers(env, gate, 100_000).map(_pass).uid("slow")
    if keyed:
        stream = stream.key_by(lambda v: v % 5).map(_Count()).uid("count")
    stream.filter(lambda _: False).print()


def _options(**extra):
    return {"state.storage.fs.memory-threshold": "0 b", **extra}


def _open_gate(tmp_path: Path) -> FileGate:
    gate = FileGate(tmp_path / "open-gate")
    gate.open()
    return gate


def _savepoint(tmp_path: Path) -> str:
    gate = FileGate(tmp_path / "gate")
    env = local_environment(tmp_path / "first", 1, options=_options())
    env.enable_checkpointing(60_000)
    _build(env, gate)
    client = env.execute_async("first")
    gate.wait_arrived(WAIT_S)
    assert client.jm.wait_until_running(WAIT_S)
    path = client.trigger_savepoint(str(tmp_path / "sp")).result(WAIT_S)
    client.cancel()
    assert client.jm.wait_for_status({JobStatus.CANCELED}, WAIT_S)
    assert client.join(WAIT_S)
    return path


def _state_files(directory: str) -> list[str]:
    return [p for p in glob.glob(os.path.join(directory, "*"))
            if not os.path.basename(p).startswith("_metadata")]


def test_a_truncated_state_file_fails_the_job_in_one_attempt_naming_it(executor, tmp_path):
    savepoint = _savepoint(tmp_path)
    files = _state_files(savepoint)
    assert files, "the savepoint wrote no state file"
    for path in files:
        data = Path(path).read_bytes()
        Path(path).write_bytes(data[: len(data) // 2])
    env = local_environment(tmp_path / "second", 1, restart_attempts=5, restart_delay="10 ms",
                            options=_options(**{"execution.state-recovery.path": savepoint}))
    env.enable_checkpointing(60_000)
    _build(env, _open_gate(tmp_path))
    with pytest.raises(JobFailedError) as failed:
        env.execute("second")
    cause = failed.value.__cause__
    assert isinstance(cause, CorruptStateError)
    assert cause.uri in {Path(p).as_uri() for p in files} | set(files)
    assert cause.uri in str(failed.value)
    assert len(executor.launchers[-1].attempts) == 1


def test_state_of_a_removed_operator_fails_before_any_task_manager_starts(executor, tmp_path):
    savepoint = _savepoint(tmp_path)
    env = local_environment(tmp_path / "second", 1, restart_attempts=5, restart_delay="10 ms",
                            options=_options(**{"execution.state-recovery.path": savepoint}))
    env.enable_checkpointing(60_000)
    _build(env, _open_gate(tmp_path), keyed=False)
    with pytest.raises(JobFailedError) as failed:
        env.execute("second")
    assert isinstance(failed.value.__cause__, NonRestoredStateError)
    assert executor.launchers[-1].attempts == []


def _checkpointed_job(tmp_path: Path):
    """A job cancelled after two completed checkpoints, which it retains."""
    env = local_environment(tmp_path, 1, options=_options(**{
        "execution.checkpointing.num-retained": 2,
        "execution.checkpointing.externalized-checkpoint-retention": "retain-on-cancellation"}))
    env.enable_checkpointing(20)
    _build(env, FileGate(tmp_path / "gate"))
    client = env.execute_async("checkpointed")
    job_dir = tmp_path / "chk" / client.get_job_id()
    wait_until(lambda: len(glob.glob(str(job_dir / "chk-*" / "_metadata.committed"))) >= 2,
               WAIT_S, "no two checkpoints completed")
    client.cancel()
    assert client.jm.wait_for_status({JobStatus.CANCELED}, WAIT_S)
    assert client.join(WAIT_S)
    ids = sorted(int(Path(p).parent.name[4:])
                 for p in glob.glob(str(job_dir / "chk-*" / "_metadata.committed")))
    return client.jm.job_graph, job_dir, ids


def test_a_damaged_newest_checkpoint_falls_back_and_is_reported(executor, tmp_path):
    job_graph, job_dir, ids = _checkpointed_job(tmp_path)
    newest = job_dir / f"chk-{ids[-1]}" / "_metadata"
    newest.write_bytes(newest.read_bytes()[:-7])
    config = local_configuration(tmp_path, options=_options())
    jm = JobManager(job_graph, config, ThreadLauncher())
    events = jm.describe().events
    assert [e.kind for e in events] == [JobEventKind.CHECKPOINT_FALLBACK]
    assert str(newest) in events[0].message and f"checkpoint {ids[-2]}" in events[0].message
    handle = JobHandle(jm)
    try:
        assert jm.wait_until_running(WAIT_S)
        assert jm.describe().checkpoints.restored_checkpoint_id == ids[-2]
    finally:
        jm.cancel()
        assert handle.join(WAIT_S)


def test_with_the_fallback_off_a_damaged_newest_checkpoint_is_an_error(executor, tmp_path):
    job_graph, job_dir, ids = _checkpointed_job(tmp_path)
    newest = job_dir / f"chk-{ids[-1]}" / "_metadata"
    newest.write_bytes(newest.read_bytes()[:-7])
    config = local_configuration(tmp_path, options=_options(**{
        "execution.checkpointing.recovery.fallback-to-older-checkpoint": False}))
    with pytest.raises(CorruptStateError) as damaged:
        JobManager(job_graph, config, ThreadLauncher())
    assert str(newest) in str(damaged.value)


class _DamageLatestThenRaise(MapFunction):
    """At ``trigger``, which comes only once the first checkpoint has completed (the source
    holds until then): truncates that checkpoint's state files, then raises, so the failover
    restores a damaged checkpoint. With a min pause far longer than the test, no other
    checkpoint can start after the first, so the damaged one is surely the latest."""

    def __init__(self, pattern, marker, trigger):
        self.pattern = pattern
        self.marker = marker
        self.trigger = trigger

    def map(self, value):
        if value == self.trigger and not os.path.exists(self.marker):
            committed = glob.glob(self.pattern)
            Path(self.marker).touch()
            for path in _state_files(os.path.dirname(committed[0])):
                Path(path).write_bytes(Path(path).read_bytes()[:3])
            raise RuntimeError("injected after damaging the latest checkpoint")
        return value


def test_a_damaged_latest_checkpoint_fails_the_restarted_job_at_once(executor, tmp_path):
    env = local_environment(tmp_path, 1, restart_attempts=5, restart_delay="10 ms",
                            options=_options(**{"execution.checkpointing.min-pause": "10 min"}))
    env.enable_checkpointing(20)
    pattern = str(tmp_path / "chk" / "*" / "chk-*" / "_metadata.committed")
    damage = _DamageLatestThenRaise(pattern, str(tmp_path / "damaged"), trigger=1000)
    gate = FileGate(tmp_path / "gate")  # numbers from 1000 on wait for the first checkpoint
    opener = open_when(gate, lambda: glob.glob(pattern))
    (gated_numbers(env, gate, 100_000, before_gate=1000).map(damage)
     .key_by(lambda v: v % 5).map(_Count()).filter(lambda _: False).print())
    with pytest.raises(JobFailedError) as failed:
        env.execute("damaged")
    opener.join(WAIT_S)
    cause = failed.value.__cause__
    assert isinstance(cause, CorruptStateError) and os.path.basename(
        os.path.dirname(cause.uri)).startswith("chk-")
    assert len(executor.launchers[-1].attempts) == 2  # the failed one and one restore
