"""A full disk under the checkpoint storage of TaskManagers on embedded Spark (issue 16).

The checkpoint directory is ``fulldir://<tmp>/chk`` (``flintlock.testing.full_disk``): a real
local directory that Spark's Python workers and this driver share, whose writes fail with
``ENOSPC`` while the test has it full. The TaskManagers' state files are refused mid-job: the
checkpoint is declined (``CHECKPOINT_ASYNC_EXCEPTION``), and with
``execution.checkpointing.tolerable-failed-checkpoints`` the attempt goes on; once space is back
checkpoints complete again, the rest of the input is processed in the same attempt, and the
collected output is exactly once.

The job is held mid-stream by a gated source (``flintlock.testing.gates``): it emits the first
half, then stays idle (still checkpointing) until the test opens the gate.
"""

from __future__ import annotations

import sys
import threading

import cloudpickle
import pytest

from flintlock.common import Types, WatermarkStrategy
from flintlock.common.config import Configuration
from flintlock.datastream import CheckpointingMode, StreamExecutionEnvironment
from flintlock.datastream.functions import MapFunction
from flintlock.datastream.state import ValueStateDescriptor
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason
from flintlock.runtime.jobmanager.history import JobEventKind
from flintlock.testing.full_disk import FullDisk
from flintlock.testing.gates import FileGate, GatedNumberSequenceSource
from flintlock.testing.waiting import wait_until
from tests.integration.throttled_count import expected

pytestmark = [pytest.mark.spark, pytest.mark.slow]
cloudpickle.register_pickle_by_value(sys.modules[__name__])

N = 4000
KEYS = 7
WAIT_S = 120.0


class _Count(MapFunction):
    """A running count per key. It holds the disk so that every TaskManager imports
    ``flintlock.testing.full_disk`` (which registers ``fulldir://``) when it unpickles the job,
    before it writes any state."""

    def __init__(self, disk: FullDisk) -> None:
        self.disk = disk

    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))

    def map(self, value):
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        return value % KEYS, count


def _wait(condition, what):
    wait_until(condition, WAIT_S, f"waited in vain for {what}")


def test_a_full_disk_on_spark_declines_checkpoints_and_the_attempt_goes_on(tmp_path):
    disk = FullDisk(f"fulldir://{tmp_path / 'chk'}")
    gate = FileGate(tmp_path / "gate")
    config = Configuration()
    for key, value in {"execution.checkpointing.dir": disk.uri,
                       "execution.checkpointing.tolerable-failed-checkpoints": "1000",
                       "state.storage.fs.memory-threshold": "0 b",
                       "restart-strategy.type": "none"}.items():
        config.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(100, CheckpointingMode.EXACTLY_ONCE)
    records = (env.from_source(GatedNumberSequenceSource(0, N - 1, gate, N // 2),
                               WatermarkStrategy.no_watermarks(), "numbers").set_parallelism(1)
               .key_by(lambda v: v % KEYS).map(_Count(disk))).execute_and_collect()
    jm = records.handle.jm
    out: list = []
    collector = threading.Thread(target=lambda: out.extend(records), daemon=True)
    collector.start()

    _wait(lambda: disk.committed_checkpoints(jm.job_id), "a first checkpoint")
    gate.wait_arrived(WAIT_S)
    before = max(disk.committed_checkpoints(jm.job_id))
    failed = jm.describe().checkpoints.num_failed
    disk.fill("state")
    _wait(lambda: disk.refused_writes() >= 2
          and jm.describe().checkpoints.num_failed >= failed + 2, "declined checkpoints")
    history = [c for c in jm.describe().checkpoints.history if c.checkpoint_id > before]
    assert CheckpointFailureReason.CHECKPOINT_ASYNC_EXCEPTION in {
        c.failure_reason for c in history}, [c.failure_reason for c in history]
    assert any("No space left on device" in (c.failure_message or "") for c in history)
    disk.free()
    _wait(lambda: max(disk.committed_checkpoints(jm.job_id)) > before,
          "a checkpoint once space returned")
    gate.open()
    collector.join(WAIT_S)
    assert not collector.is_alive(), "the job did not finish"
    assert sorted(out) == expected(N, KEYS)
    failovers = [e for e in jm.describe().events if e.kind is JobEventKind.ATTEMPT_FAILED]
    assert not failovers, "the full disk failed the job over"
