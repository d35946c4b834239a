"""The driver of the mixed fault schedule on Spark:
``python soak_driver.py <work> <n> <mode> <before_gate>``.

A keyed sequence job (0..n-1, key = value % 7, each record ``key seq count``) into an
exactly-once FileSink under ``<work>/out``, TaskManagers on embedded Spark, HA on
(``<work>/ha``, cluster id ``soak``). ``mode``: aligned, unaligned or at-least-once.

What the test breaks, from its own process:

* processes: the TaskManagers' pids and this driver's are in ``<work>/status.json``, which a
  monitor thread keeps current (attempt, completed checkpoints, status), for the test to
  choose its victims and to wait on;
* connections: every connection of the TaskManagers passes through proxies of this process
  (``_route_through_proxies``): the JobManager's RPC address in their payloads and the data
  addresses it collects at their registration are ``flintlock.testing.proxy.Forwarder``s,
  and the test cuts or silences the newest link of a plane through
  ``RemoteLinks(<work>/links)``;
* the checkpoint storage: ``fulldir://<work>/chk`` (``flintlock.testing.full_disk``), which
  the test fills; failed checkpoints are tolerated.

The source holds at a gate (``<work>/gate``): each attempt's reader emits ``before_gate``
numbers and then idles, still checkpointing, until the test opens it, so the job cannot end
before the schedule did, however slow the machine. Until then a map takes 2 ms a record, so
that faults meet records in flight (pacing only: nothing depends on it).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import threading
import time

from flintlock.common import Types, WatermarkStrategy
from flintlock.common.serialization import Encoder
from flintlock.datastream import CheckpointingMode
from flintlock.datastream.connectors.file_system import FileSink, OutputFileConfig
from flintlock.datastream.functions import MapFunction
from flintlock.datastream.state import ValueStateDescriptor
from flintlock.runtime.jobmanager import job_manager, rpc_handlers
from flintlock.testing.environments import local_environment
from flintlock.testing.full_disk import FullDisk
from flintlock.testing.gates import FileGate, GatedNumberSequenceSource
from flintlock.testing.proxy import Forwarder, Links, RemoteLinks

KEYS = 7


class Throttle(MapFunction):
    """2 ms a record until the gate opens. It holds the disk, so that every TaskManager
    imports ``flintlock.testing.full_disk`` (registering ``fulldir://``) when it unpickles
    the job."""

    def __init__(self, gate: FileGate, disk: FullDisk) -> None:
        self.gate = gate
        self.disk = disk

    def map(self, value):
        if not self.gate.is_open():
            time.sleep(0.002)  # pacing only, for records in flight at the fault: the gate,
            # not this, keeps the job running until the test acts
        return value


class Sequence(MapFunction):
    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))

    def map(self, value):
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        return f"{value % KEYS} {value // KEYS} {count}"


def _monitor(work: str, jm, stop: threading.Event) -> None:
    path = os.path.join(work, "status.json")
    while not stop.wait(0.1):
        try:
            d = jm.describe(2.0)
        except Exception:  # busy (between attempts): try again
            continue
        status = {"driver": os.getpid(), "attempt": d.attempt, "status": d.status,
                  "tms": [tm.pid for tm in d.task_managers],
                  "completed": d.checkpoints.num_completed,
                  "running": all(t.state in ("RUNNING", "FINISHED") for t in d.tasks)
                  and bool(d.tasks)}
        with open(path + ".tmp", "w") as out:
            json.dump(status, out)
        os.replace(path + ".tmp", path)


def _route_through_proxies(links: RemoteLinks) -> None:
    """Hand out forwarders instead of the JobManager's RPC address and the TaskManagers' data
    addresses; serve the test's requests to break their links."""
    planes = {"rpc": Links(), "data": Links()}
    forwarders: dict[tuple[str, tuple[str, int]], Forwarder] = {}
    lock = threading.Lock()

    def forwarded(plane: str, target: tuple[str, int]) -> tuple[str, int]:
        with lock:
            if (plane, target) not in forwarders:
                forwarders[plane, target] = Forwarder(target, planes[plane])
            return forwarders[plane, target].address

    rpc_address = job_manager.JobManager.address
    job_manager.JobManager.address = property(  # type: ignore[method-assign, assignment]
        lambda jm: forwarded("rpc", tuple(rpc_address.fget(jm))))
    register = rpc_handlers.register_task_manager

    def register_forwarded(attempt, connection, message, now_ms):
        host, port = forwarded("data", (message.host, message.data_port))
        return register(attempt, connection,
                        dataclasses.replace(message, host=host, data_port=port), now_ms)

    rpc_handlers.register_task_manager = register_forwarded
    links.serve(planes)


def main(work: str, n: int, mode: str, before_gate: int) -> None:
    _route_through_proxies(RemoteLinks(os.path.join(work, "links")))
    disk = FullDisk(f"fulldir://{os.path.join(work, 'chk')}")
    gate = FileGate(os.path.join(work, "gate"))
    env = local_environment(work, 2, restart_attempts=50, restart_delay="100 ms", options={
        "execution.checkpointing.dir": disk.uri,
        "execution.checkpointing.tolerable-failed-checkpoints": 1000,
        "high-availability.type": "filesystem",
        "high-availability.storageDir": os.path.join(work, "ha"),
        "high-availability.cluster-id": "soak",
        # renewed every third of it: 4 s outlasts a renewal thread starved for 2 s on a loaded
        # machine (1 s lost the leadership there, failing the run before any fault); a killed
        # driver's successor waits at most this long to take over
        "high-availability.filesystem.lease-duration": "4 s",
        "heartbeat.interval": "200 ms", "heartbeat.timeout": "3 s",
        "execution.checkpointing.unaligned.enabled": mode == "unaligned",
        "rest.port": 0,
    })
    env.enable_checkpointing(100, CheckpointingMode.AT_LEAST_ONCE if mode == "at-least-once"
                             else CheckpointingMode.EXACTLY_ONCE)
    sink = (FileSink.for_row_format(os.path.join(work, "out"), Encoder.simple_string_encoder())
            .with_output_file_config(OutputFileConfig.builder().with_part_suffix(".txt").build())
            .build())
    (env.from_source(GatedNumberSequenceSource(0, n - 1, gate, before_gate),
                     WatermarkStrategy.no_watermarks(), "numbers").set_parallelism(1)
     .map(Throttle(gate, disk)).set_parallelism(1)
     .key_by(lambda v: v % KEYS).map(Sequence()).sink_to(sink))
    client = env.execute_async("scheduled faults")
    stop = threading.Event()
    threading.Thread(target=_monitor, args=(work, client.jm, stop), daemon=True).start()
    try:
        client.wait()
    finally:
        stop.set()
        d = client.jm.describe()
        with open(os.path.join(work, f"result-{os.getpid()}.json"), "w") as out:
            json.dump({"job_id": d.job_id, "status": d.status,
                       "events": [e.kind.value for e in d.events]}, out)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
