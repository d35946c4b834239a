"""Network faults mid-job (issue 16), on TaskManager threads: a data connection between the
TaskManagers or a TaskManager's RPC connection to the JobManager is reset, or silently drops
every byte from some moment on (both ends stay open). Either way the job fails over, restores
its latest completed checkpoint and finishes with exactly the failure-free output.

Every connection the data plane (``network.transport``) or the control plane's client
(``rpc.server.RpcClient``) dials goes through a ``flintlock.testing.proxy`` link the test
breaks once the job is running and has completed a checkpoint. ``heartbeat.timeout`` is 2 s,
so a silent link is found by the connection's (or the heartbeats') liveness, which names the
timeout in the failure the exception history shows. The job's source holds at half its input
until the test lets the rest through (``throttled_count.BackgroundRun``); the test waits on
events (links, checkpoints, attempts), not on time.
"""

from __future__ import annotations

import glob

import pytest

from flintlock.datastream import CheckpointingMode
from flintlock.runtime.jobmanager.history import JobEventKind
from flintlock.runtime.network import transport
from flintlock.runtime.rpc import server as rpc_server
from flintlock.testing.environments import local_environment
from flintlock.testing.proxy import interpose
from flintlock.testing.waiting import wait_until
from tests.integration.throttled_count import WAIT_S, BackgroundRun, expected


def _wait_for(condition, what):
    wait_until(condition, WAIT_S, f"waited in vain for {what}")


def _start(tmp_path):
    """The job running with a completed checkpoint: its JobManager and ``finish``."""
    env = local_environment(tmp_path, 2, restart_attempts=3, restart_delay="10 ms", options={
        "heartbeat.interval": "200 ms", "heartbeat.timeout": "2 s"})
    env.enable_checkpointing(20, CheckpointingMode.EXACTLY_ONCE)
    run = BackgroundRun(env, tmp_path)
    pattern = str(tmp_path / "chk" / run.jm.job_id / "chk-*" / "_metadata.committed")
    _wait_for(lambda: glob.glob(pattern), "a completed checkpoint")
    return run.jm, run.finish


@pytest.mark.parametrize("fault", ["cut", "silence"])
@pytest.mark.parametrize("plane", ["data", "rpc"])
def test_a_broken_connection_fails_the_job_over_and_the_output_is_exactly_once(
        executor, monkeypatch, tmp_path, plane, fault):
    links = interpose(monkeypatch, transport if plane == "data" else rpc_server)
    try:
        jm, finish = _start(tmp_path)
        _wait_for(links.open_links, f"an open {plane} connection")
        victim = links.open_links()[0]
        getattr(victim, fault)()
        _wait_for(lambda: len(executor.launchers[-1].attempts) >= 2, "a failover")
        assert finish() == expected()
        failures = [e for e in jm.describe().events if e.kind is JobEventKind.ATTEMPT_FAILED]
        assert failures, "the job did not fail over"
        if fault == "silence":
            assert "heartbeat" in failures[0].message, failures[0]
    finally:
        links.close()
