"""End-to-end throughput of a keyed running count, against a bare Python loop (DESIGN.md §4).

The job: a generating source → ``map`` → ``key_by`` → ``reduce`` (running count per key) →
``filter`` → a discarding sink, at parallelism P, run through the public API on embedded Spark
(TaskManagers in Spark's Python workers, data over TCP between them) or with TaskManagers as
threads of this process (``--mode threads``; one GIL, so no parallel speed-up).

The reference is the same four function calls and the same dict update in a plain loop on
one core, measured in the same run, twice: at module level (globals, DESIGN.md §4's loop) and
as a function's body (fast locals, the stricter reference of issue 31). Reported: records/s
of the job (from its first record to its end, excluding Spark start-up) and the ratios to
both references.

    .venv/bin/python -m benchmarks.keyed_count --records 2000000 --parallelism 2 --warmup
        [--keys K] [--checkpoint-ms MS] [--state-backend hashmap|rocksdb] [--incremental]
        [--mode spark|threads]

With ``--checkpoint-ms`` the checkpoint directory is sampled while the job runs: the
checkpoints seen and the bytes each added (``CheckpointWatcher``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from typing import Any

import cloudpickle

from flintlock.common import WatermarkStrategy
from flintlock.common.config import Configuration
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.connectors import Sink, Source

KEYS = 1_000  # --keys changes it (before the job is built, so the functions see it)


class GeneratorSource(Source):
    """Subtask i of p emits the integers i, i+p, i+2p, ... below ``n`` (checkpointed)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def is_bounded(self) -> bool:
        return True

    def create_reader(self, subtask_index: int, parallelism: int) -> _GeneratorReader:
        return _GeneratorReader(subtask_index, parallelism, self.n)


class _GeneratorReader:
    def __init__(self, start: int, step: int, n: int) -> None:
        self.next, self.step, self.n = start, step, n
        self.first_record_s: float | None = None

    def restore(self, state: list[int]) -> None:
        if state:
            self.next = state[0]

    def poll(self, max_records: int) -> tuple[list[int], bool]:
        stop = min(self.n, self.next + max_records * self.step)
        records = list(range(self.next, stop, self.step))
        self.next = stop if stop == self.n else self.next + len(records) * self.step
        return records, self.next >= self.n

    def snapshot_state(self, checkpoint_id: int) -> list[int]:
        return [self.next]


class TimingSink(Sink):
    """Counts records; writes (first, last, count) per subtask to a file at the end."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def create_writer(self, subtask_index: int, parallelism: int) -> _TimingWriter:
        return _TimingWriter(os.path.join(self.directory, f"sink-{subtask_index}.json"))


class _TimingWriter:
    def __init__(self, path: str) -> None:
        self.path = path
        self.first: float | None = None
        self.last: float | None = None
        self.cpu_first = self.cpu_last = 0.0
        self.count = 0

    def restore(self, state: list[object]) -> None:
        pass

    def write(self, records: list[object]) -> None:
        if self.first is None:
            self.first = time.time()
            self.cpu_first = time.process_time()
        self.count += len(records)
        self.last = time.time()  # the last record, not the end of input: with checkpoints on,
        self.cpu_last = time.process_time()  # the job then waits for its final checkpoint

    def snapshot_state(self, checkpoint_id: int) -> list[object]:
        return []

    def commit(self, checkpoint_id: int) -> None:
        pass

    def end_input(self) -> None:
        with open(self.path, "w") as handle:
            json.dump({"first": self.first, "last": self.last, "count": self.count,
                       "pid": os.getpid(), "cpu_s": self.cpu_last - self.cpu_first}, handle)

    def close(self) -> None:
        pass


def _key(pair: tuple[int, int]) -> int:
    return pair[0]


def _pair(x: int) -> tuple[int, int]:
    return (x % KEYS, 1)  # KEYS is read at call time: pickled by value with the function


def _add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    return (a[0], a[1] + b[1])


def _keep(p: tuple[int, int]) -> bool:
    return p[1] % 2 == 0


_REFERENCE_LOOP = """
counts = {}
kept = 0
for x in range(n):
    pair = _pair(x)
    key = _key(pair)
    old = counts.get(key)
    new = pair if old is None else _add(old, pair)
    counts[key] = new
    if _keep(new):
        kept += 1
"""


def reference(n: int, scope: str = "function") -> tuple[float, float]:
    """The same work in a bare loop on one core: records per second, per CPU second.

    ``scope``: ``module`` runs the loop as a script's top level (every name a global, the loop
    DESIGN.md §4 measures); ``function`` runs the same lines as a function's body, so
    ``counts``, ``pair``, ``key``, ``old`` and ``new`` are fast locals (the stricter reference
    of issue 31)."""
    source = _REFERENCE_LOOP
    if scope == "function":
        body = "".join(f"    {line}\n" for line in source.strip("\n").split("\n"))
        source = f"def loop():\n{body}    return kept\nkept = loop()\n"
    code = compile(source, f"<keyed count reference, {scope} scope>", "exec")
    namespace = {"n": n, "_pair": _pair, "_key": _key, "_add": _add, "_keep": _keep}
    started = time.perf_counter()
    cpu_started = time.process_time()
    exec(code, namespace)
    return n / (time.perf_counter() - started), n / (time.process_time() - cpu_started)


class CheckpointWatcher:
    """Samples the checkpoint directory while a job runs: when each checkpoint's
    ``_metadata`` appears (written last), the bytes of the files that appeared since the
    previous checkpoint's — its own files and, with incremental checkpoints, the new shared
    files it is the first to use: the size each checkpoint adds. A sampler's view: a
    checkpoint is seen up to ``interval_s`` late, and one retired before a sample is missed."""

    def __init__(self, directory: str, interval_s: float = 0.05) -> None:
        self.directory, self.interval_s = directory, interval_s
        self.checkpoints: list[dict[str, float]] = []
        self._attributed: set[str] = set()
        self._pending: dict[str, int] = {}  # path -> size, not yet part of a checkpoint
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> CheckpointWatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def sample(self) -> None:
        completed = 0
        for root, _, names in os.walk(self.directory):
            for name in names:
                path = os.path.join(root, name)
                if path in self._attributed:
                    continue
                try:
                    self._pending[path] = os.path.getsize(path)
                except OSError:
                    continue
                if name == "_metadata":
                    completed += 1
        if completed:
            self.checkpoints.append({"at_s": time.time(), "count": completed,
                                     "bytes": sum(self._pending.values())})
            self._attributed.update(self._pending)
            self._pending.clear()


def run_job(n: int, parallelism: int, mode: str, checkpoint_ms: int,
            measure: bool = True, backend: str = "hashmap", incremental: bool = False
            ) -> dict[str, Any]:
    out = tempfile.mkdtemp(prefix="flintlock-bench-")
    config = Configuration().set_string("execution.checkpointing.dir", os.path.join(out, "chk"))
    config.set_string("state.backend.type", backend)
    config.set_boolean("execution.checkpointing.incremental", incremental)
    if mode == "threads":
        import flintlock.datastream.stream_execution_environment as environment
        from flintlock.testing.executor import ThreadExecutor

        executor = ThreadExecutor()
        environment.load_executor = lambda: executor  # type: ignore[assignment]
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(parallelism)
    if checkpoint_ms > 0:
        env.enable_checkpointing(checkpoint_ms)
    (env.from_source(GeneratorSource(n), WatermarkStrategy.no_watermarks(), "numbers")
        .map(_pair).key_by(_key).reduce(_add).filter(_keep)
        .sink_to(TimingSink(out)))
    started = time.time()
    with CheckpointWatcher(os.path.join(out, "chk")) as watcher:
        env.execute("keyed count benchmark")
    total_s = time.time() - started
    if not measure:
        return {"job_seconds": total_s}
    sinks = [json.load(open(os.path.join(out, name))) for name in os.listdir(out)
             if name.startswith("sink-")]
    first = min(s["first"] for s in sinks if s["first"] is not None)
    last = max(s["last"] for s in sinks if s["last"] is not None)
    kept = sum(s["count"] for s in sinks)
    # CPU of every TaskManager process between its first and last sink write: the whole
    # process's work (all its subtasks), far less sensitive to machine load than wall time.
    cpu_s = sum({s["pid"]: s["cpu_s"] for s in sinks}.values())
    sizes = [c["bytes"] / c["count"] for c in watcher.checkpoints]
    return {"records": n, "kept": kept, "seconds": last - first, "job_seconds": total_s,
            "records_per_s": n / (last - first), "task_manager_cpu_s": cpu_s,
            "records_per_cpu_s": n / cpu_s if cpu_s else 0.0, "state_backend": backend,
            "incremental": incremental,
            "checkpoints_seen": sum(int(c["count"]) for c in watcher.checkpoints),
            "bytes_per_checkpoint_median": statistics.median(sizes) if sizes else None,
            "bytes_per_checkpoint_first": sizes[0] if sizes else None}


def main(argv: list[str] | None = None) -> int:
    global KEYS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--mode", choices=("spark", "threads"), default="spark")
    parser.add_argument("--checkpoint-ms", type=int, default=0)
    parser.add_argument("--keys", type=int, default=KEYS)
    parser.add_argument("--state-backend", choices=("hashmap", "rocksdb"), default="hashmap")
    parser.add_argument("--incremental", action="store_true",
                        help="incremental checkpoints (RocksDB)")
    parser.add_argument("--warmup", action="store_true",
                        help="run a small job first so Spark's start-up is not measured")
    args = parser.parse_args(argv)
    KEYS = args.keys
    # Ship this module's functions by value, so the workers see KEYS as set here.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    bare, bare_cpu = reference(min(args.records, 2_000_000), "module")
    local, local_cpu = reference(min(args.records, 2_000_000), "function")
    if args.warmup:  # starts Spark and its Python workers; the figures are not used
        run_job(100_000, args.parallelism, args.mode, 0, measure=False)
    result = run_job(args.records, args.parallelism, args.mode, args.checkpoint_ms,
                     backend=args.state_backend, incremental=args.incremental)
    result["bare_loop_records_per_s"] = bare
    result["bare_loop_records_per_cpu_s"] = bare_cpu
    result["ratio_to_bare"] = result["records_per_s"] / bare
    result["cpu_ratio_to_bare"] = result["records_per_cpu_s"] / bare_cpu
    result["bare_function_records_per_s"] = local
    result["bare_function_records_per_cpu_s"] = local_cpu
    result["ratio_to_bare_function"] = result["records_per_s"] / local
    result["cpu_ratio_to_bare_function"] = result["records_per_cpu_s"] / local_cpu
    json.dump(result, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
