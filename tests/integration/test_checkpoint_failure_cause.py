"""A checkpoint failure that fails the job says why (issue 27), on TaskManager threads: a value
in state that no pickler can write (a lock) makes the asynchronous part of every snapshot fail;
with no tolerable failures the job fails at once, and the log line, the REST exception history
(which the dashboard renders as ``exceptionName: stacktrace``) and the job's error all name the
cause — the value's type and the pickling error — not only ``CHECKPOINT_ASYNC_EXCEPTION``."""

from __future__ import annotations

import json
import logging
import threading
import urllib.request

import pytest

from flintlock.common import Types
from flintlock.common.job_status import JobStatus
from flintlock.datastream.functions import MapFunction
from flintlock.datastream.state import ValueStateDescriptor
from flintlock.runtime.checkpoint.failure_manager import TooManyCheckpointFailuresError
from flintlock.runtime.jobmanager import JobFailedError
from flintlock.runtime.rest.server import RestEndpoint
from flintlock.testing.environments import local_environment
from flintlock.testing.gates import FileGate, gated_numbers

WAIT_S = 60.0


class _KeepsALock(MapFunction):
    def open(self, runtime_context):
        self.held = runtime_context.get_state(ValueStateDescriptor(
            "held", Types.PICKLED_BYTE_ARRAY()))

    def map(self, value):
        self.held.update(threading.Lock())
        return value


def test_the_cause_of_a_failed_checkpoint_is_in_the_log_the_history_and_the_error(
        executor, tmp_path, caplog):
    env = local_environment(tmp_path, 1, options={"rest.port": 0})
    env.enable_checkpointing(50)
    (gated_numbers(env, FileGate(tmp_path / "gate"), 100_000).key_by(lambda v: v % 3)
     .map(_KeepsALock()).filter(lambda _: False).print())
    with caplog.at_level(logging.WARNING):
        client = env.execute_async("keeps a lock")
        jm = client.jm
        endpoint = RestEndpoint.bind(jm.config).serve(jm)
        try:
            assert jm.wait_for_status({JobStatus.FAILED}, WAIT_S)
            request = urllib.request.Request(
                f"{endpoint.url}/jobs/{jm.job_id}/exceptions",
                headers={"Authorization": f"Bearer {endpoint.token}"})
            with urllib.request.urlopen(request, timeout=10) as response:
                history = json.loads(response.read())
        finally:
            endpoint.close()
        with pytest.raises(JobFailedError) as failed:
            client.wait(WAIT_S)
    text = json.dumps(history)
    for where in (text, caplog.text, str(failed.value.__cause__)):
        assert "CHECKPOINT_ASYNC_EXCEPTION" in where, where[-3000:]
        assert "lock" in where and "cannot be pickled" in where, where[-3000:]
    assert isinstance(failed.value.__cause__, TooManyCheckpointFailuresError)
