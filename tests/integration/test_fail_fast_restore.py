"""Restores that no restart can fix, and fallbacks, as a user sees them (issue 16), on
TaskManager threads; with ``test_fail_fast``:

* a savepoint whose state the job now declares as another kind (the state's schema changed:
  ``ValueState`` "count" became a ``ListState``): FAILED after one attempt with
  ``StateKindMismatchError``, although the restart strategy allows five more;
* a damaged newest checkpoint that the JobManager falls back from: the ``checkpoint-fallback``
  entry is in the REST exception history (``GET /jobs/:jobid/exceptions``) and in the
  JobManager's log, both naming the damaged file.
"""

from __future__ import annotations

import glob
import json
import logging
import urllib.request
from pathlib import Path

import pytest

from flintlock.common import Types
from flintlock.common.job_status import JobStatus
from flintlock.datastream.functions import MapFunction
from flintlock.datastream.state import ListStateDescriptor, ValueStateDescriptor
from flintlock.runtime.executor import JobHandle
from flintlock.runtime.jobmanager import JobFailedError, JobManager
from flintlock.runtime.rest.server import RestEndpoint
from flintlock.runtime.state.errors import StateKindMismatchError
from flintlock.testing.environments import local_configuration, local_environment
from flintlock.testing.gates import FileGate, gated_numbers
from flintlock.testing.launchers import ThreadLauncher
from flintlock.testing.waiting import wait_until

WAIT_S = 30.0


class _CountInValue(MapFunction):
    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))

    def map(self, value):
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        return count


class _CountInList(MapFunction):
    """The same operator (uid "count") after its state's schema changed."""

    def open(self, runtime_context):
        self.seen = runtime_context.get_list_state(ListStateDescriptor("count", Types.INT()))

    def map(self, value):
        self.seen.add(value)
        return value


def _build(env, gate, counter):
    (gated_numbers(env, gate, 100_000).key_by(lambda v: v % 5).map(counter).uid("count")
     .filter(lambda _: False).print())


def _options(**extra):
    return {"state.storage.fs.memory-threshold": "0 b", **extra}


def _savepoint(tmp_path: Path) -> str:
    gate = FileGate(tmp_path / "gate")
    env = local_environment(tmp_path / "first", 1, options=_options())
    env.enable_checkpointing(60_000)
    _build(env, gate, _CountInValue())
    client = env.execute_async("first")
    gate.wait_arrived(WAIT_S)
    assert client.jm.wait_until_running(WAIT_S)
    path = client.trigger_savepoint(str(tmp_path / "sp")).result(WAIT_S)
    client.cancel()
    assert client.jm.wait_for_status({JobStatus.CANCELED}, WAIT_S)
    assert client.join(WAIT_S)
    return path


def test_state_restored_as_another_kind_fails_the_job_in_one_attempt(executor, tmp_path):
    savepoint = _savepoint(tmp_path)
    env = local_environment(tmp_path / "second", 1, restart_attempts=5, restart_delay="10 ms",
                            options=_options(**{"execution.state-recovery.path": savepoint}))
    env.enable_checkpointing(60_000)
    opened = FileGate(tmp_path / "opened")
    opened.open()
    _build(env, opened, _CountInList())
    with pytest.raises(JobFailedError) as failed:
        env.execute("second")
    cause = failed.value.__cause__
    assert isinstance(cause, StateKindMismatchError), repr(cause)
    assert cause.name == "count" and "count" in str(failed.value)
    assert len(executor.launchers[-1].attempts) == 1


def _two_retained_checkpoints(tmp_path: Path):
    """A job cancelled after two completed checkpoints, which it retains."""
    env = local_environment(tmp_path, 1, options=_options(**{
        "execution.checkpointing.num-retained": 2,
        "execution.checkpointing.externalized-checkpoint-retention": "retain-on-cancellation"}))
    env.enable_checkpointing(20)
    _build(env, FileGate(tmp_path / "gate"), _CountInValue())
    client = env.execute_async("checkpointed")
    job_dir = tmp_path / "chk" / client.get_job_id()
    markers = str(job_dir / "chk-*" / "_metadata.committed")
    wait_until(lambda: len(glob.glob(markers)) >= 2, WAIT_S, "no two checkpoints completed")
    client.cancel()
    assert client.jm.wait_for_status({JobStatus.CANCELED}, WAIT_S)
    assert client.join(WAIT_S)
    ids = sorted(int(Path(p).parent.name[4:]) for p in glob.glob(markers))
    return client.jm.job_graph, job_dir, ids


def test_a_fallback_is_in_the_rest_exception_history_and_the_log(executor, tmp_path, caplog):
    job_graph, job_dir, ids = _two_retained_checkpoints(tmp_path)
    newest = job_dir / f"chk-{ids[-1]}" / "_metadata"
    newest.write_bytes(newest.read_bytes()[:-7])
    config = local_configuration(tmp_path, options=_options(**{"rest.port": 0}))
    with caplog.at_level(logging.WARNING):
        jm = JobManager(job_graph, config, ThreadLauncher())
    assert str(newest) in caplog.text
    handle = JobHandle(jm)
    endpoint = RestEndpoint.bind(config).serve(jm)
    try:
        assert jm.wait_until_running(WAIT_S)
        request = urllib.request.Request(
            f"{endpoint.url}/jobs/{jm.job_id}/exceptions",
            headers={"Authorization": f"Bearer {endpoint.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            history = json.loads(response.read())
    finally:
        endpoint.close()
        jm.cancel()
        assert handle.join(WAIT_S)
    text = json.dumps(history)
    assert "checkpoint-fallback" in text and str(newest) in text, text
    assert f"checkpoint {ids[-2]}" in text
