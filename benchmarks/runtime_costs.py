"""Costs of running jobs on Spark (issue #4): start-up, recovery, memory per TaskManager.

* **start-up**: wall time from ``env.execute()`` to the first record reaching a user
  function, in a fresh process (*cold*: the JVM and SparkSession start too) and for a second
  job in the same process (*warm*: the session and Spark's Python workers exist);
* **recovery**: a job with checkpoints every 200 ms whose user function raises once; time
  from the failure to the first record processed after the restore;
* **memory**: resident set size of each TaskManager process (``psutil``), sampled by the
  user function at the end of a 1 M-record keyed job.

Each measurement runs in a fresh interpreter (``subprocess``) so that *cold* is honest.

    .venv/bin/python -m benchmarks.runtime_costs [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import cloudpickle

from flintlock.common.config import Configuration
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.functions import MapFunction, RuntimeContext

cloudpickle.register_pickle_by_value(sys.modules[__name__])


class Stamp:
    """Appends ``(label, pid, time)`` to a file the first time each process calls it."""

    def __init__(self, path: str, label: str) -> None:
        self.path, self.label = path, label
        self.seen = False

    def __call__(self, value: object) -> object:
        if not self.seen:
            self.seen = True
            with open(self.path, "a") as handle:
                handle.write(json.dumps([self.label, os.getpid(), time.time()]) + "\n")
        return value


class FailOnce(MapFunction):
    """Raises once at ``trigger`` (after writing the time); in the restored attempt, stamps
    the first record each subtask handles. Records that subtasks of the failing attempt
    still handle after the failure are not recovery, so they are not stamped."""

    def __init__(self, path: str, marker: str, trigger: int) -> None:
        self.path, self.marker, self.trigger = path, marker, trigger
        self.stamped = False
        self.restored = False

    def open(self, runtime_context: RuntimeContext) -> None:
        self.restored = runtime_context.get_attempt_number() > 0

    def map(self, value: int) -> int:
        if self.restored:
            if not self.stamped:
                self.stamped = True
                with open(self.path, "a") as handle:
                    handle.write(json.dumps(["recovered", os.getpid(), time.time()]) + "\n")
        elif value == self.trigger and not os.path.exists(self.marker):
            with open(self.marker, "w") as handle:
                handle.write(str(time.time()))
            raise RuntimeError("injected failure")
        return value


class MemorySample:
    """Records this process's RSS when it has seen ``every`` records (and again each time)."""

    def __init__(self, path: str, every: int) -> None:
        self.path, self.every, self.count = path, every, 0

    def __call__(self, value: object) -> object:
        self.count += 1
        if self.count % self.every == 0:
            import psutil

            rss = psutil.Process().memory_info().rss
            with open(self.path, "a") as handle:
                handle.write(json.dumps(["rss", os.getpid(), rss]) + "\n")
        return value


def _env(directory: str) -> StreamExecutionEnvironment:
    config = Configuration().set_string("execution.checkpointing.dir",
                                        os.path.join(directory, "chk"))
    config.set_string("restart-strategy.type", "fixed-delay")
    config.set_string("restart-strategy.fixed-delay.delay", "0 ms")
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    return env


def _read(path: str) -> list[list[object]]:
    with open(path) as handle:
        return [json.loads(line) for line in handle if line.strip()]


def startup(directory: str) -> dict[str, float]:
    results = {}
    for label in ("cold", "warm"):
        stamps = os.path.join(directory, f"{label}.stamps")
        env = _env(directory)
        env.from_collection(list(range(1000))).map(Stamp(stamps, label)).print()
        started = time.time()
        env.execute(f"startup {label}")
        first = min(float(t) for _, _, t in _read(stamps))  # type: ignore[arg-type]
        results[f"{label}_s"] = first - started
    return results


def recovery(directory: str) -> dict[str, float]:
    stamps = os.path.join(directory, "recovery.stamps")
    marker = os.path.join(directory, "failed")
    env = _env(directory)
    env.enable_checkpointing(200)
    (env.from_collection(list(range(20_000))).map(FailOnce(stamps, marker, 10_000))
        .key_by(lambda x: x % 10).reduce(lambda a, b: a + b)
        .filter(lambda x: False).print())
    env.execute("recovery")
    with open(marker) as handle:
        failed = float(handle.read())
    recovered = min(float(t) for _, _, t in _read(stamps))  # type: ignore[arg-type]
    return {"recovery_s": recovered - failed}


def memory(directory: str) -> dict[str, float]:
    samples = os.path.join(directory, "memory.samples")
    env = _env(directory)
    n = 1_000_000
    (env.from_collection(list(range(n))).map(lambda x: (x % 10_000, 1))
        .key_by(lambda p: p[0]).reduce(lambda a, b: (a[0], a[1] + b[1]))
        .map(MemorySample(samples, 50_000)).filter(lambda p: False).print())
    env.execute("memory")
    last: dict[int, int] = {}
    for _, pid, rss in _read(samples):
        last[int(pid)] = max(int(rss), last.get(int(pid), 0))  # type: ignore[call-overload]
    return {"rss_mib_per_task_manager": max(last.values()) / 2**20, "task_managers": len(last)}


SCENARIOS = {"startup": startup, "recovery": recovery, "memory": memory}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    if args.scenario:  # the child process: one measurement, JSON on the last line
        print(json.dumps(SCENARIOS[args.scenario](tempfile.mkdtemp(prefix="flintlock-"))))
        return 0
    report: dict[str, list[dict[str, float]]] = {}
    for name in SCENARIOS:
        for _ in range(args.repeat):
            out = subprocess.run(
                [sys.executable, "-m", "benchmarks.runtime_costs", "--scenario", name],
                capture_output=True, text=True, check=True)
            report.setdefault(name, []).append(json.loads(out.stdout.strip().splitlines()[-1]))
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
