"""A driver program for the JobManager-failover tests:
``python driver.py <work dir> <n> [threads|spark]``.

Runs a keyed running count over 0..n-1 into an exactly-once FileSink under
``<work dir>/out`` with ``high-availability.type: filesystem`` (storage ``<work dir>/ha``,
cluster id ``failover``) and TaskManagers as threads of this process (or, with ``spark``, on
embedded Spark). Its source holds at n // 2 until the test opens the gate ``<work dir>/gate``,
so the job cannot end before the test killed the driver; until then a map takes 2 ms a record,
so that the kill meets records in flight. Started again after it was killed, it takes the job
over from the HA storage. When the job ends it writes ``<work dir>/result-<pid>.json``: the job
id, final status, the restored checkpoint and the kinds of its exception history.
"""

from __future__ import annotations

import json
import os
import sys
import time

import flintlock.datastream.stream_execution_environment as environment
from flintlock.common import Types, WatermarkStrategy
from flintlock.common.serialization import Encoder
from flintlock.datastream import CheckpointingMode
from flintlock.datastream.connectors.file_system import FileSink, OutputFileConfig
from flintlock.datastream.functions import MapFunction
from flintlock.datastream.state import ValueStateDescriptor
from flintlock.testing.environments import local_environment
from flintlock.testing.executor import ThreadExecutor
from flintlock.testing.gates import FileGate, GatedNumberSequenceSource


class Paced(MapFunction):
    def __init__(self, gate: FileGate) -> None:
        self.gate = gate

    def map(self, value):
        if not self.gate.is_open():
            time.sleep(0.002)  # pacing only, for records in flight at the fault: the gate,
            # not this, keeps the job running until the test acts
        return value


class Count(MapFunction):
    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))

    def map(self, value):
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        return f"{value % 7} {count}"


def main(work: str, n: int, launcher: str) -> None:
    if launcher == "threads":
        executor = ThreadExecutor()
        environment.load_executor = lambda: executor
    env = local_environment(work, 2, restart_attempts=3, restart_delay="10 ms", options={
        "high-availability.type": "filesystem",
        "high-availability.storageDir": os.path.join(work, "ha"),
        "high-availability.cluster-id": "failover",
        # renewed every third of it: 3 s outlasts a renewal thread starved for a second on a
        # loaded machine (with 1 s the restarted driver lost its fresh lease at load 14)
        "high-availability.filesystem.lease-duration": "3 s",
        "rest.port": 0,
    })
    env.enable_checkpointing(100, CheckpointingMode.EXACTLY_ONCE)
    sink = (FileSink.for_row_format(os.path.join(work, "out"), Encoder.simple_string_encoder())
            .with_output_file_config(OutputFileConfig.builder().with_part_suffix(".txt").build())
            .build())
    gate = FileGate(os.path.join(work, "gate"))
    (env.from_source(GatedNumberSequenceSource(0, n - 1, gate, n // 2),
                     WatermarkStrategy.no_watermarks(), "numbers")
     .map(Paced(gate)).key_by(lambda v: v % 7).map(Count()).sink_to(sink))
    client = env.execute_async("failover")
    try:
        client.wait()
    finally:
        description = client.jm.describe()
        with open(os.path.join(work, f"result-{os.getpid()}.json"), "w") as out:
            json.dump({"job_id": description.job_id, "status": description.status,
                       "restored": description.checkpoints.restored_checkpoint_id,
                       "events": [e.kind.value for e in description.events]}, out)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "threads")
