"""JobManager failover (issue 16): a driver killed with SIGKILL mid-job and started again with
the same high-availability cluster id resumes the job under the same id from its latest
completed checkpoint, and the exactly-once FileSink's output equals the failure-free output.

The driver is a subprocess whose TaskManagers are threads (``tests/integration/ha/driver.py``):
a SIGKILL takes the whole job down at once, JobManager and TaskManagers, the hardest case for
the sink (pending files of a completed checkpoint not yet committed, in-progress files of one
that never completed). tests/spark/test_jobmanager_failover_on_spark.py runs the same driver
with its TaskManagers on embedded Spark.

In-process tests on TaskManager threads: a second JobManager for a cluster id whose lease is
held cannot start, and a leader fenced by a newer token suspends its job instead of letting
anything commit.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from flintlock.common.job_status import JobStatus
from flintlock.graph.job_graph import build_job_graph
from flintlock.runtime.executor import JobHandle
from flintlock.runtime.jobmanager import JobManager
from flintlock.runtime.jobmanager.leadership import LeadershipUnavailableError
from flintlock.testing.environments import local_configuration, local_environment
from flintlock.testing.faults import RaiseOnce
from flintlock.testing.gates import FileGate, gated_numbers
from flintlock.testing.launchers import ThreadLauncher
from flintlock.testing.waiting import wait_until
from tests.integration.ha.failover import WAIT_S, N, kill_and_restart_the_driver


def test_a_killed_driver_restarted_resumes_the_job_exactly_once(tmp_path):
    kill_and_restart_the_driver(tmp_path, "threads", N)


# long enough that a pause of the test process (a full collection of a large heap, two cores
# shared with the job's threads) does not let the lease lapse between renewals (every third of
# it): the fenced tests fence the leader by a newer token, which a renewal sees at once
LEASE = "3 s"


def _ha_options(tmp_path, **extra):
    return {"high-availability.type": "filesystem",
            "high-availability.storageDir": str(tmp_path / "ha"),
            "high-availability.cluster-id": "one", **extra}


def test_a_second_driver_for_a_held_cluster_id_cannot_start(executor, tmp_path):
    env = local_environment(tmp_path, 1)
    env.from_collection([1, 2, 3]).print()
    graph = env.get_stream_graph()
    job_graph = build_job_graph(graph)
    config = local_configuration(tmp_path, options=_ha_options(tmp_path))
    first = JobManager(job_graph, config, ThreadLauncher())
    try:
        waiting = local_configuration(tmp_path, options=_ha_options(
            tmp_path, **{"high-availability.filesystem.lease-wait-timeout": "0 ms"}))
        with pytest.raises(LeadershipUnavailableError):
            JobManager(build_job_graph(graph), waiting, ThreadLauncher())
    finally:
        handle = JobHandle(first)
        assert handle.wait(WAIT_S) is not None
    assert first.get_status() is JobStatus.FINISHED


def test_a_fenced_leader_suspends_its_job_and_leaves_it_to_the_successor(executor, tmp_path):
    env = local_environment(tmp_path, 1, options=_ha_options(
        tmp_path, **{"high-availability.filesystem.lease-duration": LEASE}))
    env.enable_checkpointing(20)
    # never opened: the job stays mid-stream, taking checkpoints, until it is suspended
    gated_numbers(env, FileGate(tmp_path / "gate"), 1000, before_gate=500).print()
    client = env.execute_async("fenced")
    jm = client.jm
    assert jm.wait_until_running(WAIT_S)
    record = tmp_path / "ha" / "one" / "job.json"
    wait_until(lambda: json.loads(record.read_text())["completed_checkpoints"], WAIT_S,
               "no checkpoint completed")
    leases = _leases(tmp_path)
    token = int(leases[-1].name[len("lease-"):])
    successor = leases[-1].with_name(f"lease-{token + 1:010d}")
    successor.write_text(json.dumps({"owner": "successor", "token": token + 1,
                                     "expires_ms": time.time() * 1000 + 60_000}))
    assert jm.wait_for_status({JobStatus.SUSPENDED}, WAIT_S)
    assert client.join(WAIT_S)
    assert json.loads(record.read_text())["status"] == "RUNNING"  # for the successor
    assert json.loads(successor.read_text())["owner"] == "successor"  # not released over


def _leases(tmp_path: Path) -> list[Path]:
    """The lease files, oldest first (not a renewal's temporary file beside them)."""
    return sorted(p for p in (tmp_path / "ha" / "one" / "leases").glob("lease-*")
                  if p.name[len("lease-"):].isdigit())


def test_a_leader_fenced_while_waiting_to_restart_starts_no_attempt(executor, tmp_path):
    """Suspended as soon as the lease is lost: not after the restart delay (10 min, far
    beyond every wait of this test), and without starting another attempt."""
    env = local_environment(tmp_path, 1, restart_attempts=3, restart_delay="10 min", options=(
        _ha_options(tmp_path, **{"high-availability.filesystem.lease-duration": LEASE})))
    env.from_collection(list(range(1000))).map(RaiseOnce(tmp_path / "failed", 50)).print()
    client = env.execute_async("fenced while restarting")
    assert client.jm.wait_for_status({JobStatus.RESTARTING}, WAIT_S)
    leases = _leases(tmp_path)
    token = int(leases[-1].name[len("lease-"):])
    leases[-1].with_name(f"lease-{token + 1:010d}").write_text(json.dumps(
        {"owner": "successor", "token": token + 1, "expires_ms": time.time() * 1000 + 60_000}))
    assert client.jm.wait_for_status({JobStatus.SUSPENDED}, WAIT_S)
    assert client.join(WAIT_S)
    assert len(executor.launchers[-1].attempts) == 1
