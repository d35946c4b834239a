"""A seeded schedule of faults, one at a time, against one keyed job with an exactly-once
FileSink, on TaskManager threads (issue 16): a user function raising, a data connection reset
or silenced, a TaskManager's RPC connection reset or silenced, the checkpoint storage's disk
full for a while. Between two faults the job completes a new checkpoint. At the end a per-key
sequence check: every key's values arrive exactly once and in order (at-least-once: none
missing), and each record's keyed count matches its position (the state restored exactly
once too).

The seed and the schedule are printed (``-s`` shows them), so a failure replays with
``FLINTLOCK_SOAK_SEED=<seed>``; ``FLINTLOCK_SOAK_FAULTS=<n>`` makes the schedule longer (the
default run injects three). Faults that need processes (SIGKILL or SIGSTOP of a TaskManager,
SIGKILL of the driver) are in the Spark schedule (``tests/spark/test_fault_schedule_on_spark.py``,
which mixes them with network and disk faults) and ``test_jobmanager_failover.py``.

The source is metered by position (``MeteredNumberSequenceSource``): it emits only the numbers
below a ``FileLimit``, which the test raises by a share before each fault (so records are in
flight when it strikes; the "raise" fault needs one to reach the failing map) and to the end
after the last. Until then the job cannot end, however slow the machine; the 2 ms a record
before the release (a ``FileGate``) only paces it.
"""

from __future__ import annotations

import os
import random
import time

import pytest

from flintlock.common import Types, WatermarkStrategy
from flintlock.common.serialization import Encoder
from flintlock.datastream import CheckpointingMode
from flintlock.datastream.connectors.file_system import FileSink, OutputFileConfig
from flintlock.datastream.functions import MapFunction
from flintlock.datastream.state import ValueStateDescriptor
from flintlock.runtime.network import transport
from flintlock.runtime.rpc import server as rpc_server
from flintlock.testing.environments import local_environment
from flintlock.testing.full_disk import FullDisk
from flintlock.testing.gates import FileGate, FileLimit, MeteredNumberSequenceSource
from flintlock.testing.proxy import interpose
from flintlock.testing.waiting import wait_until
from tests.integration.key_sequences import check_sequences, lines_in_order

FAULT_COUNT = int(os.environ.get("FLINTLOCK_SOAK_FAULTS", 3))
SHARE = 1000  # numbers the test lets through before each fault
N = SHARE * (FAULT_COUNT + 3)
KEYS = 7
WAIT_S = 120.0
FAULTS = ("raise", "data-cut", "data-silence", "rpc-cut", "rpc-silence", "disk-full")


class _Throttle(MapFunction):
    """2 ms a record until ``released`` opens (pacing only); raises once each time the schedule
    asks (the file ``ask`` exists: the first record to take it away raises)."""

    def __init__(self, released, ask):
        self.released = released
        self.ask = os.fspath(ask)

    def map(self, value):
        if not self.released.is_open():
            time.sleep(0.002)  # pacing only: the schedule's limit, not this, holds the job
        try:
            os.remove(self.ask)
        except FileNotFoundError:
            return value
        raise RuntimeError("scheduled failure")


class _Sequence(MapFunction):
    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))

    def map(self, value):
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        return f"{value % KEYS} {value // KEYS} {count}"


def _wait(condition, what):
    wait_until(condition, WAIT_S, f"waited in vain for {what}")


def _release(limit, released):
    """Lets the job run to its end: every number, no pacing."""
    released.open()
    limit.set(N)


class _Job:
    """The keyed sequence job, its numbers below ``limit``, paced until ``released`` opens;
    a record fails once whenever ``ask`` exists."""

    def __init__(self, tmp_path, mode, disk, limit, released):
        self.limit = limit
        self.ask = tmp_path / "raise"
        env = local_environment(tmp_path, 2, restart_attempts=2 * FAULT_COUNT + 5,
                                restart_delay="10 ms",
                                options={
                                    "heartbeat.interval": "200 ms", "heartbeat.timeout": "2 s",
                                    "execution.checkpointing.dir": disk.uri,
                                    "execution.checkpointing.tolerable-failed-checkpoints": 1000,
                                    "execution.checkpointing.unaligned.enabled":
                                        mode == "unaligned"})
        env.enable_checkpointing(50, CheckpointingMode.AT_LEAST_ONCE if mode == "at-least-once"
                                 else CheckpointingMode.EXACTLY_ONCE)
        sink = (FileSink.for_row_format(str(tmp_path / "out"), Encoder.simple_string_encoder())
                .with_output_file_config(OutputFileConfig.builder().with_part_suffix(".txt")
                                         .build()).build())
        (env.from_source(MeteredNumberSequenceSource(0, N - 1, limit),
                         WatermarkStrategy.no_watermarks(), "numbers").set_parallelism(1)
         .map(_Throttle(released, self.ask)).set_parallelism(1)
         .key_by(lambda v: v % KEYS).map(_Sequence()).sink_to(sink))
        self.client = env.execute_async("scheduled faults")
        self.jm = self.client.jm

    def completed(self):
        return self.jm.describe().checkpoints.num_completed

    def wait_for_a_new_checkpoint(self, what):
        done = self.completed()
        _wait(lambda: self.completed() > done, what)


def _inject(fault, job, executor, links, disk):
    attempts = len(executor.launchers[-1].attempts)
    job.limit.set(min(N, job.limit.value() + SHARE))
    if fault == "raise":
        job.ask.touch()
    elif fault == "disk-full":
        refused = disk.refused_writes()
        disk.fill("all")
        _wait(lambda: disk.refused_writes() >= refused + 2, "refused writes")
        disk.free()
        return
    else:
        plane, how = fault.split("-")
        _wait(links[plane].open_links, f"an open {plane} connection")
        victim = links[plane].open_links()[-1]
        print(f"{fault}: {victim.address} of {len(links[plane].open_links())} open")
        getattr(victim, "cut" if how == "cut" else "silence")()
    _wait(lambda: len(executor.launchers[-1].attempts) > attempts, f"a failover after {fault}")


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["aligned", "unaligned", "at-least-once"])
def test_a_seeded_schedule_of_faults_keeps_every_key_sequence(
        executor, monkeypatch, tmp_path, mode):
    seed = int(os.environ.get("FLINTLOCK_SOAK_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    schedule = [rng.choice(FAULTS) for _ in range(FAULT_COUNT)]
    print(f"fault schedule seed={seed} mode={mode}: {schedule}")
    limit, released = FileLimit(tmp_path / "limit", SHARE), FileGate(tmp_path / "released")
    links = {"data": interpose(monkeypatch, transport), "rpc": interpose(monkeypatch, rpc_server)}
    disk = FullDisk(f"fulldisk://schedule-{mode}-{seed}-{tmp_path.name}")
    try:
        job = _Job(tmp_path, mode, disk, limit, released)
        for fault in schedule:
            job.wait_for_a_new_checkpoint("a new completed checkpoint")
            assert not job.jm.get_status().is_globally_terminal_state(), "ended too early"
            _inject(fault, job, executor, links, disk)
        job.wait_for_a_new_checkpoint("a checkpoint after the last fault")
        _release(limit, released)
        job.client.wait(WAIT_S)
    finally:
        _release(limit, released)
        for interposer in links.values():
            interposer.close()
    check_sequences(lines_in_order(tmp_path / "out"), mode != "at-least-once", N, KEYS)
