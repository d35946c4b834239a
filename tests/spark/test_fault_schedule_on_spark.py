"""One seeded schedule of every kind of fault, on embedded Spark (issues 16, 27): process
faults (a TaskManager process killed with SIGKILL from outside, one stopped with SIGSTOP until
the JobManager failed the attempt over, then SIGCONT; the driver killed with SIGKILL and started
again with the same HA cluster id), network faults (the newest data or RPC connection of the
TaskManager processes reset, or silenced so that only the heartbeat timeout finds it) and a
full disk under the checkpoint storage during the state writes, until refused writes were seen.
One at a time, a completed checkpoint between two faults, against a keyed sequence job with an
exactly-once FileSink (tests/integration/ha/soak_driver.py, which says how each is injected),
in aligned, unaligned and at-least-once mode. At the end the per-key sequence check of
``test_fault_schedule``: every value once and in order, each count its position
(at-least-once: none missing).

Every run injects every kind: ``make test`` deals the eight kinds, in an order drawn from the
seed, over the three modes (three, three and two faults), so each run has all of them and the
pairing of kinds and modes varies from run to run. ``make soak`` (``FLINTLOCK_SOAK_FAULTS=<n>``
faults per mode) gives each mode every kind, and more drawn at random when ``n`` exceeds eight.
The seed is drawn once per run; ``FLINTLOCK_SOAK_SEED`` replays it. Each injected fault is
written to the test log as it happens (``fault schedule seed=… mode=…: injected …``), and at the
end of the module one line sums up the run (``fault schedule seed=…: injected every kind …``,
or which kinds are missing), through pytest's terminal reporter, so they show however output
is captured.
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
FAULTS = ("tm-kill", "tm-freeze", "driver-kill", "data-cut", "data-silence", "rpc-cut",
          "rpc-silence", "disk-full")
MODES = ("aligned", "unaligned", "at-least-once")
PER_MODE = (int(os.environ["FLINTLOCK_SOAK_FAULTS"]) if os.environ.get("FLINTLOCK_SOAK_FAULTS")
            else None)  # None: make test's deal of every kind over the modes
SEED = int(os.environ.get("FLINTLOCK_SOAK_SEED") or random.SystemRandom().randrange(1 << 30))
BEFORE_GATE = 1500  # numbers each attempt's reader emits before it waits at the gate
KEYS = 7
WAIT_S = 180.0


def schedules_of(seed: int, per_mode: int | None = None) -> dict[str, list[str]]:
    """Each mode's faults. ``per_mode`` None: every kind once, in a seeded order, dealt over
    the modes one by one from a seeded first mode. Else ``per_mode`` faults for each mode:
    every kind (a seeded choice of kinds when fewer), then kinds drawn at random, shuffled."""
    rng = random.Random(seed)
    if per_mode is None:
        order = rng.sample(FAULTS, len(FAULTS))
        first = rng.randrange(len(MODES))
        return {mode: order[(i - first) % len(MODES)::len(MODES)]
                for i, mode in enumerate(MODES)}
    schedules = {}
    for mode in MODES:
        picked = rng.sample(FAULTS, min(per_mode, len(FAULTS)))
        picked += [rng.choice(FAULTS) for _ in range(per_mode - len(picked))]
        rng.shuffle(picked)
        schedules[mode] = picked
    return schedules


SCHEDULES = schedules_of(SEED, PER_MODE)


def numbers_for(faults: int) -> int:
    """More numbers than every attempt of a schedule of ``faults`` can emit before the gate."""
    return BEFORE_GATE * (2 * faults + 3)


def _wait(read, what):
    return wait_for(read, timeout_s=WAIT_S, message=f"waited in vain for {what}")


class _Drivers:
    def __init__(self, work: Path, mode: str, n: int) -> None:
        self.work = work
        self.mode = mode
        self.n = n
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        with open(self.work / "driver.log", "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, str(DRIVER), str(self.work), str(self.n), self.mode,
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


def _inject(fault: str, drivers: _Drivers, rng: random.Random, disk: FullDisk) -> str:
    """Injects ``fault`` and waits until it took effect; returns what was broken."""
    status = _wait(drivers.status, "the driver's status")
    if fault == "driver-kill":
        killed = drivers.process.pid if drivers.process else None
        drivers.kill()
        drivers.start()
        return f"driver {killed} killed, a new one took over"
    if fault == "disk-full":
        refused = disk.refused_writes()
        disk.fill("all")
        _wait(lambda: disk.refused_writes() >= refused + 2, "refused writes")
        disk.free()
        return f"{disk.refused_writes() - refused} writes refused"
    if fault.startswith(("data-", "rpc-")):
        plane, how = fault.split("-")
        broken = RemoteLinks(drivers.work / "links").break_link(plane, how, WAIT_S)
        _next_attempt(drivers, status["attempt"])
        return f"{broken}; failed over"
    return _kill_or_freeze(fault, drivers, rng.choice(status["tms"]), status["attempt"])


def _kill_or_freeze(fault: str, drivers: _Drivers, victim: int, attempt: int) -> str:
    if fault == "tm-kill":
        os.kill(victim, signal.SIGKILL)
        _next_attempt(drivers, attempt)
        return f"TaskManager {victim} killed (SIGKILL); failed over"
    os.kill(victim, signal.SIGSTOP)
    try:
        _next_attempt(drivers, attempt)
    finally:
        try:
            os.kill(victim, signal.SIGCONT)
        except ProcessLookupError:
            pass  # Spark killed the stopped worker when the attempt was cancelled
    return f"TaskManager {victim} stopped (SIGSTOP) until the failover, then SIGCONT"


def test_every_run_deals_every_kind_over_the_modes_in_an_order_drawn_from_the_seed():
    orders = set()
    for seed in range(50):
        schedules = schedules_of(seed)
        dealt = [fault for mode in MODES for fault in schedules[mode]]
        assert sorted(dealt) == sorted(FAULTS), schedules  # every kind, once
        assert sorted(len(s) for s in schedules.values()) == [2, 3, 3]
        orders.add(tuple(tuple(schedules[mode]) for mode in MODES))
    assert len(orders) == 50  # the seed decides the order and which mode meets which kind
    assert schedules_of(7) == schedules_of(7)  # a seed replays its schedule


def test_a_soak_gives_each_mode_every_kind_and_more_at_random():
    for seed in range(20):
        for mode, schedule in schedules_of(seed, 11).items():
            assert len(schedule) == 11 and set(schedule) == set(FAULTS), (mode, schedule)
        for schedule in schedules_of(seed, 3).values():
            assert len(set(schedule)) == 3
    assert schedules_of(5, 11) == schedules_of(5, 11)


@pytest.fixture(scope="module")
def injected(request):
    """Each mode's injected faults, summed up in the test log once the module is done."""
    plugins = request.config.pluginmanager
    reporter = plugins.get_plugin("terminalreporter")
    capture = plugins.get_plugin("capturemanager")
    done: dict[str, list[str]] = {}

    def say(line: str, after_progress: bool = False) -> None:
        print(line)
        if reporter is not None and capture is not None:
            with capture.global_and_fixture_disabled():  # past the capture, into the log
                if after_progress:  # the last test's progress mark ends no line
                    reporter.write("\n")
                reporter.write_line(line)

    yield done, say
    if not done:
        return
    missing = [f for f in FAULTS if not any(f in faults for faults in done.values())]
    ran = "; ".join(f"{mode}: {', '.join(faults)}" for mode, faults in done.items())
    verdict = ("injected every kind" if not missing
               else f"did NOT inject {', '.join(missing)}")
    say(f"fault schedule seed={SEED}: {verdict} ({ran})", after_progress=True)


@pytest.mark.parametrize("mode", MODES)
def test_a_seeded_schedule_of_mixed_faults_keeps_every_key_sequence(tmp_path, mode, injected):
    done, say = injected
    schedule = SCHEDULES[mode]
    rng = random.Random(f"{SEED}-{mode}")  # victims; str seeds hash the same in every process
    n = numbers_for(len(schedule))
    say(f"fault schedule seed={SEED} mode={mode}: {schedule} "
        f"(replay: FLINTLOCK_SOAK_SEED={SEED})")
    disk = FullDisk(f"fulldir://{tmp_path / 'chk'}")
    drivers = _Drivers(tmp_path, mode, n)
    done[mode] = []
    try:
        drivers.start()
        for fault in schedule:
            checkpoint = drivers.latest_checkpoint()
            _wait(lambda c=checkpoint: drivers.latest_checkpoint() > c, "a new checkpoint")
            what = _inject(fault, drivers, rng, disk)
            done[mode].append(fault)
            say(f"fault schedule seed={SEED} mode={mode}: injected {fault}: {what}")
        checkpoint = drivers.latest_checkpoint()
        _wait(lambda: drivers.latest_checkpoint() > checkpoint,
              "a checkpoint after the last fault")
        FileGate(tmp_path / "gate").open()
        assert drivers.process is not None
        assert drivers.process.wait(WAIT_S) == 0, (tmp_path / "driver.log").read_text()[-3000:]
    finally:
        if drivers.process is not None and drivers.process.poll() is None:
            drivers.kill()
    result = json.loads((tmp_path / f"result-{drivers.process.pid}.json").read_text())
    assert result["status"] == "FINISHED"
    check_sequences(lines_in_order(tmp_path / "out"), mode != "at-least-once", n, KEYS)
