"""Process faults from a seeded schedule on embedded Spark (issue 16): a TaskManager process
killed with SIGKILL from outside, one stopped with SIGSTOP until the JobManager has failed the
attempt over (then SIGCONT), the driver killed with SIGKILL and started again with the same
HA cluster id — one at a time, a completed checkpoint between two faults, against a keyed
sequence job with an exactly-once FileSink (tests/integration/ha/soak_driver.py). At the end
the per-key sequence check of ``test_fault_schedule``: every value once and in order, each
count its position (at-least-once: none missing).

The seed and the schedule are printed; ``FLINTLOCK_SOAK_SEED`` replays one and
``FLINTLOCK_SOAK_FAULTS`` lengthens it (two by default, ``make soak`` runs more).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.test_fault_schedule import check_sequences, lines_in_order

pytestmark = [pytest.mark.spark, pytest.mark.slow]

DRIVER = Path(__file__).parents[1] / "integration" / "ha" / "soak_driver.py"
ROOT = Path(__file__).parents[2]
FAULTS = ("tm-kill", "tm-freeze", "driver-kill")
FAULT_COUNT = int(os.environ.get("FLINTLOCK_SOAK_FAULTS", 2))
N = 8_000 * (3 + FAULT_COUNT)
KEYS = 7
WAIT_S = 180.0


def _wait(condition, what):
    deadline = time.monotonic() + WAIT_S
    while not (value := condition()):
        assert time.monotonic() < deadline, f"waited in vain for {what}"
        time.sleep(0.05)
    return value


class _Drivers:
    def __init__(self, work: Path, mode: str) -> None:
        self.work = work
        self.mode = mode
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        with open(self.work / "driver.log", "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, str(DRIVER), str(self.work), str(N), self.mode], env=env,
                stdout=subprocess.DEVNULL, stderr=log)
        _wait(lambda: (s := self.status()) and s["running"] and s["tms"], "a running attempt")

    def status(self) -> dict | None:
        """The current driver's status, once it wrote one."""
        try:
            status = json.loads((self.work / "status.json").read_text())
        except (FileNotFoundError, ValueError):
            return None
        assert self.process is not None and self.process.poll() is None, "the driver ended"
        return status if status["driver"] == self.process.pid else None

    def latest_checkpoint(self) -> int:
        record = self.work / "ha" / "soak" / "job.json"
        ids = json.loads(record.read_text())["completed_checkpoints"] if record.exists() else []
        return max(ids, default=0)

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(WAIT_S)


def _next_attempt(drivers: _Drivers, before: int) -> None:
    _wait(lambda: (s := drivers.status()) and s["attempt"] > before and s["running"],
          "a failover")


def _inject(fault: str, drivers: _Drivers, rng: random.Random) -> None:
    status = _wait(drivers.status, "the driver's status")
    if fault == "driver-kill":
        drivers.kill()
        drivers.start()
        return
    victim = rng.choice(status["tms"])
    if fault == "tm-kill":
        os.kill(victim, signal.SIGKILL)
        _next_attempt(drivers, status["attempt"])
        return
    os.kill(victim, signal.SIGSTOP)
    try:
        _next_attempt(drivers, status["attempt"])
    finally:
        try:
            os.kill(victim, signal.SIGCONT)
        except ProcessLookupError:
            pass  # Spark killed the stopped worker when the attempt was cancelled


@pytest.mark.parametrize("mode", ["aligned", "unaligned", "at-least-once"])
def test_a_seeded_schedule_of_process_faults_keeps_every_key_sequence(tmp_path, mode):
    seed = int(os.environ.get("FLINTLOCK_SOAK_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    schedule = [rng.choice(FAULTS) for _ in range(FAULT_COUNT)]
    print(f"process fault schedule seed={seed} mode={mode}: {schedule}")
    drivers = _Drivers(tmp_path, mode)
    try:
        drivers.start()
        for fault in schedule:
            done = drivers.latest_checkpoint()
            _wait(lambda done=done: drivers.latest_checkpoint() > done, "a new checkpoint")
            _inject(fault, drivers, rng)
        done = drivers.latest_checkpoint()
        _wait(lambda: drivers.latest_checkpoint() > done, "a checkpoint after the last fault")
        (tmp_path / "release").touch()
        assert drivers.process is not None
        assert drivers.process.wait(WAIT_S) == 0, (tmp_path / "driver.log").read_text()[-3000:]
    finally:
        if drivers.process is not None and drivers.process.poll() is None:
            drivers.kill()
    result = json.loads((tmp_path / f"result-{drivers.process.pid}.json").read_text())
    assert result["status"] == "FINISHED"
    check_sequences(lines_in_order(tmp_path / "out"), mode != "at-least-once", N, KEYS)
