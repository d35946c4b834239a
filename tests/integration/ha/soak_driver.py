"""The driver of the process-fault schedule on Spark: ``python soak_driver.py <work> <n> <mode>``.

A keyed sequence job (0..n-1, key = value % 7, each record ``key seq count``) into an
exactly-once FileSink under ``<work>/out``, TaskManagers on embedded Spark, HA on
(``<work>/ha``, cluster id ``soak``). The source side takes 2 ms a record until the file
``<work>/release`` exists. A monitor thread keeps ``<work>/status.json`` current: this
driver's pid, the attempt, the TaskManagers' pids, the completed checkpoints, the status — what
the test needs to choose its victims and to wait on. ``mode``: aligned, unaligned or
at-least-once.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

from flintlock.common import Types, WatermarkStrategy
from flintlock.common.serialization import Encoder
from flintlock.datastream import CheckpointingMode
from flintlock.datastream.connectors.file_system import FileSink, OutputFileConfig
from flintlock.datastream.connectors.number_seq import NumberSequenceSource
from flintlock.datastream.functions import MapFunction
from flintlock.datastream.state import ValueStateDescriptor
from flintlock.testing.environments import local_environment

KEYS = 7


class Throttle(MapFunction):
    def __init__(self, release: str) -> None:
        self.release = release

    def map(self, value):
        if not os.path.exists(self.release):
            time.sleep(0.002)
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


def main(work: str, n: int, mode: str) -> None:
    env = local_environment(work, 2, restart_attempts=50, restart_delay="100 ms", options={
        "high-availability.type": "filesystem",
        "high-availability.storageDir": os.path.join(work, "ha"),
        "high-availability.cluster-id": "soak",
        "high-availability.filesystem.lease-duration": "1 s",
        "heartbeat.interval": "200 ms", "heartbeat.timeout": "3 s",
        "execution.checkpointing.unaligned.enabled": mode == "unaligned",
        "rest.port": 0,
    })
    env.enable_checkpointing(100, CheckpointingMode.AT_LEAST_ONCE if mode == "at-least-once"
                             else CheckpointingMode.EXACTLY_ONCE)
    sink = (FileSink.for_row_format(os.path.join(work, "out"), Encoder.simple_string_encoder())
            .with_output_file_config(OutputFileConfig.builder().with_part_suffix(".txt").build())
            .build())
    (env.from_source(NumberSequenceSource(0, n - 1), WatermarkStrategy.no_watermarks(),
                     "numbers").set_parallelism(1)
     .map(Throttle(os.path.join(work, "release"))).set_parallelism(1)
     .key_by(lambda v: v % KEYS).map(Sequence()).sink_to(sink))
    client = env.execute_async("process faults")
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
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
