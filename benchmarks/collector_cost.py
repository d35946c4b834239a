"""The cycle collector's share of a ported job: the word count of ``benchmarks.ported``
(``FileSource`` → ``flat_map`` → ``map`` → ``key_by`` → ``reduce`` → ``map`` → ``FileSink``),
with and without declared types, under CPython's collector defaults and under the settings a
TaskManager process runs a job with (``spark/collector.py``).

TaskManagers run as threads of this process (``ThreadExecutor``, no Spark), so one process's
CPU time (``time.process_time``) covers the whole job, and a ``gc.callbacks`` probe adds up the
time spent in collections. Each measurement runs in a fresh interpreter (a child of this
script), the four configurations interleaved per round.

    .venv/bin/python -m benchmarks.collector_cost [--words 2000000] [--rounds 2] [--parallelism 1]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

RESULT = "COLLECTOR-RESULT "


def _child(words: int, typed: bool, collector: str, parallelism: int, text: str) -> None:
    import gc

    import flintlock.datastream.stream_execution_environment as environment
    from benchmarks.ported import flintlock_jobs
    from benchmarks.stage_costs import COLLECTOR, CollectorClock
    from flintlock.datastream import StreamExecutionEnvironment
    from flintlock.testing.executor import ThreadExecutor

    executor = ThreadExecutor()
    environment.load_executor = lambda: executor
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    with tempfile.TemporaryDirectory() as out:
        flintlock_jobs.word_count(env, text, out, typed)
        with COLLECTOR[collector](), CollectorClock().installed() as clock:
            started = time.process_time()
            env.execute("collector cost")
            cpu = time.process_time() - started
    print(RESULT + json.dumps({"cpu_ns_per_word": cpu / words * 1e9,
                               "gc_ns_per_word": clock.seconds / words * 1e9,
                               "collections": sum(s["collections"] for s in gc.get_stats())}))


def _measure(words: int, typed: bool, collector: str, parallelism: int, text: str
             ) -> dict[str, float]:
    argv = [sys.executable, "-m", "benchmarks.collector_cost", "--child", "--words", str(words),
            "--collector", collector, "--parallelism", str(parallelism), "--text", text]
    if typed:
        argv.append("--typed")
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    line = next(x for x in done.stdout.splitlines() if x.startswith(RESULT))
    return json.loads(line[len(RESULT):])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--parallelism", type=int, default=1)
    parser.add_argument("--collector", default="tuned")
    parser.add_argument("--typed", action="store_true")
    parser.add_argument("--text", default="")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.words, args.typed, args.collector, args.parallelism, args.text)
        return
    from benchmarks.ported import results

    with tempfile.TemporaryDirectory() as text:
        results.generate_text(text, args.words)
        print(f"word count, {args.words:,} words, threads, P={args.parallelism}: CPU ns per "
              "word (of it in the cycle collector)")
        print("| round | collector | declared | undeclared | declared / undeclared |")
        print("|---|---|---:|---:|---:|")
        for round_ in range(1, args.rounds + 1):
            for collector in ("default", "tuned"):
                got = {typed: _measure(args.words, typed, collector, args.parallelism, text)
                       for typed in (True, False)}
                d, u = got[True], got[False]
                print(f"| {round_} | {collector} | {d['cpu_ns_per_word']:,.0f} "
                      f"({d['gc_ns_per_word']:,.0f}) | {u['cpu_ns_per_word']:,.0f} "
                      f"({u['gc_ns_per_word']:,.0f}) | "
                      f"{u['cpu_ns_per_word'] / d['cpu_ns_per_word']:.2f} |", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    main()
