"""One seeded schedule that mixes every kind of fault, on embedded Spark (issue 16): process
faults (a TaskManager process killed with SIGKILL from outside, one stopped with SIGSTOP until
the JobManager failed the attempt over, then SIGCONT; the driver killed with SIGKILL and started
again with the same HA cluster id), network faults (the newest data or RPC connection of the
TaskManager processes reset, or silenced so that only the heartbeat timeout finds it) and a
full disk under the checkpoint storage during the state writes, until refused writes were seen.
One at a time, a completed checkpoint between two faults, against a keyed sequence job with an
exactly-once FileSink (tests/integration/ha/soak_driver.py, which says how each is injected).
At the end the per-key sequence check of ``test_fault_schedule``: every value once and in
order, each count its position (at-least-once: none missing).

A schedule of three or more faults holds at least one of each kind (process, network, disk);
the rest are drawn from all of them. The seed and the schedule are printed; ``FLINTLOCK_SOAK_SEED``
replays one and ``FLINTLOCK_SOAK_FAULTS`` lengthens it (three by default, ``make soak`` runs
more).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from flintlock.testing.full_disk import FullDisk
from flintlock.testing.gates import FileGate
from flintlock.testing.proxy import RemoteLinks
from flintlock.testing.waiting import wait_for
from tests.integration.key_sequences import check_sequences, lines_in_order

pytestmark = [pytest.mark.spark, pytest.mark.slow]

DRIVER = Path(__file__).parents[1] / "integration" / "ha" / "soak_driver.py"
ROOT = Path(__file__).parents[2]
KINDS = {
    "process": ("tm-kill", "tm-freeze", "driver-kill"),
    "network": ("data-cut", "data-silence", "rpc-cut", "rpc-silence"),
    "disk": ("disk-full",),
}
FAULT_COUNT = int(os.environ.get("FLINTLOCK_SOAK_FAULTS", 3))
BEFORE_GATE = 1500  # numbers each attempt's reader emits before it waits at the gate
N = BEFORE_GATE * (2 * FAULT_COUNT + 3)  # more than every attempt can emit before the gate
KEYS = 7
WAIT_S = 180.0


def schedule_of(rng: random.Random, count: int) -> list[str]:
    """``count`` faults; from three on, at least one of each kind, in a seeded order."""
    every = [fault for faults in KINDS.values() for fault in faults]
    picked = [rng.choice(faults) for faults in KINDS.values()] if count >= len(KINDS) else []
    picked += [rng.choice(every) for _ in range(count - len(picked))]
    rng.shuffle(picked)
    return picked


def _wait(read, what):
    return wait_for(read, timeout_s=WAIT_S, message=f"waited in vain for {what}")


class _Drivers:
    def __init__(self, work: Path, mode: str) -> None:
        self.work = work
        self.mode = mode
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        with open(self.work / "driver.log", "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, str(DRIVER), str(self.work), str(N), self.mode,
                 str(BEFORE_GATE)], env=env, stdout=subprocess.DEVNULL, stderr=log)
        _wait(lambda: (s := self.status()) and s["running"] and s["tms"], "a running attempt")

    def status(self) -> dict | None:
        """The current driver's status, once it wrote one."""
        try:
            status = json.loads((self.work / "status.json").read_text())
        except (FileNotFoundError, ValueError):
            return None
        assert self.process is not None and self.process.poll() is None, (
            "the driver ended: " + (self.work / "driver.log").read_text()[-3000:])
        return status if status["driver"] == self.process.pid else None

    def latest_checkpoint(self) -> int:
        record = self.work / "ha" / "soak" / "job.json"
        try:
            ids = json.loads(record.read_text())["completed_checkpoints"]
        except (FileNotFoundError, ValueError):
            ids = []
        return max(ids, default=0)

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(WAIT_S)


def _next_attempt(drivers: _Drivers, before: int) -> None:
    _wait(lambda: (s := drivers.status()) and s["attempt"] > before and s["running"],
          "a failover")


def _inject(fault: str, drivers: _Drivers, rng: random.Random, disk: FullDisk) -> None:
    status = _wait(drivers.status, "the driver's status")
    if fault == "driver-kill":
        drivers.kill()
        drivers.start()
    elif fault == "disk-full":
        refused = disk.refused_writes()
        disk.fill("all")
        _wait(lambda: disk.refused_writes() >= refused + 2, "refused writes")
        disk.free()
    elif fault.startswith(("data-", "rpc-")):
        plane, how = fault.split("-")
        print(RemoteLinks(drivers.work / "links").break_link(plane, how, WAIT_S))
        _next_attempt(drivers, status["attempt"])
    else:
        _kill_or_freeze(fault, drivers, rng.choice(status["tms"]), status["attempt"])


def _kill_or_freeze(fault: str, drivers: _Drivers, victim: int, attempt: int) -> None:
    if fault == "tm-kill":
        os.kill(victim, signal.SIGKILL)
        _next_attempt(drivers, attempt)
        return
    os.kill(victim, signal.SIGSTOP)
    try:
        _next_attempt(drivers, attempt)
    finally:
        try:
            os.kill(victim, signal.SIGCONT)
        except ProcessLookupError:
            pass  # Spark killed the stopped worker when the attempt was cancelled


def test_schedules_hold_one_fault_of_each_kind():
    for seed in range(50):
        schedule = schedule_of(random.Random(seed), 3)
        assert {kind for kind, faults in KINDS.items() for f in schedule if f in faults} == set(
            KINDS), schedule
    assert schedule_of(random.Random(1), 5) == schedule_of(random.Random(1), 5)


@pytest.mark.parametrize("mode", ["aligned", "unaligned", "at-least-once"])
def test_a_seeded_schedule_of_mixed_faults_keeps_every_key_sequence(tmp_path, mode):
    seed = int(os.environ.get("FLINTLOCK_SOAK_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    schedule = schedule_of(rng, FAULT_COUNT)
    print(f"mixed fault schedule seed={seed} mode={mode}: {schedule}")
    disk = FullDisk(f"fulldir://{tmp_path / 'chk'}")
    drivers = _Drivers(tmp_path, mode)
    try:
        drivers.start()
        for fault in schedule:
            done = drivers.latest_checkpoint()
            _wait(lambda done=done: drivers.latest_checkpoint() > done, "a new checkpoint")
            _inject(fault, drivers, rng, disk)
        done = drivers.latest_checkpoint()
        _wait(lambda: drivers.latest_checkpoint() > done, "a checkpoint after the last fault")
        FileGate(tmp_path / "gate").open()
        assert drivers.process is not None
        assert drivers.process.wait(WAIT_S) == 0, (tmp_path / "driver.log").read_text()[-3000:]
    finally:
        if drivers.process is not None and drivers.process.poll() is None:
            drivers.kill()
    result = json.loads((tmp_path / f"result-{drivers.process.pid}.json").read_text())
    assert result["status"] == "FINISHED"
    check_sequences(lines_in_order(tmp_path / "out"), mode != "at-least-once", N, KEYS)
