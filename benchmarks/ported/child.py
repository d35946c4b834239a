"""One measurement in a fresh interpreter; ``ported_jobs`` starts one of these per run.

    python -m benchmarks.ported.child flintlock JOB --records N --workdir DIR
        [--parallelism P] [--undeclared] [--text DIR]
    python -m benchmarks.ported.child bare JOB --records N --workdir DIR [--text DIR]
        [--scope module|function]
    python -m benchmarks.ported.child bytewax JOB --records N --workdir DIR
        [--workers W] [--process-id I --addresses HOST:PORT;HOST:PORT] [--text DIR]
    python -m benchmarks.ported.child spark-baseline

The job is built first; the clock runs from the ``execute()`` call (``run_main`` /
``cluster_main`` for Bytewax, the loop's start for the bare loop) to its end. The child prints
one line ``PORTED-RESULT {json}`` with ``started`` and ``ended`` (``time.time()``, so that the
processes of a Bytewax cluster can be put on one axis) and ``first_s`` (seconds to the first
record that reached the caller, or null), and pickles the records it got to
``DIR/items-<process id>.pickle``; a word count's output stays in ``DIR/out``.
``spark-baseline`` times ``SparkSession.builder.master("local[2]").getOrCreate()`` (Spark's
defaults; the environment's ``SPARK_LOCAL_IP``) and one two-task barrier stage.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
from typing import Any

RESULT = "PORTED-RESULT "


def _flintlock(args: argparse.Namespace, out_dir: str) -> tuple[float, float | None, list[Any]]:
    from benchmarks.ported import flintlock_jobs

    return flintlock_jobs.run(args.job, args.records, args.parallelism, not args.undeclared,
                              args.text, out_dir)


def _bare(args: argparse.Namespace, out_dir: str) -> tuple[float, float | None, list[Any]]:
    from benchmarks.ported import bare

    wall, items = bare.run(args.job, args.scope, args.records, args.text, out_dir)
    return wall, None, items


def _bytewax(args: argparse.Namespace, out_dir: str) -> tuple[float, float | None, list[Any]]:
    from benchmarks.ported import bytewax_flows as bw

    addresses = args.addresses.split(";") if args.addresses else []
    workers = args.workers * max(1, len(addresses))
    sink = bw.CollectSink()
    if args.job == "word_count":
        flow = bw.word_count(args.text, out_dir)
    else:
        flow = getattr(bw, args.job)(args.records, workers, sink)
    started = time.perf_counter()
    bw.run(flow, args.workers, args.process_id, addresses)
    wall = time.perf_counter() - started
    if args.job == "word_count":
        return wall, wall, []
    return wall, None if sink.first is None else sink.first - started, sink.items


def spark_baseline() -> dict[str, float]:
    started = time.time()
    from pyspark.sql import SparkSession

    session = SparkSession.builder.master("local[2]").getOrCreate()
    with_session = time.time()
    session.sparkContext.parallelize(range(2), 2).barrier().mapPartitions(_one).collect()
    ended = time.time()
    return {"started": started, "ended": ended, "session_s": with_session - started,
            "stage_s": ended - with_session, "wall_s": ended - started}


def _one(partition: Any) -> Any:
    yield 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("engine", choices=["flintlock", "bare", "bytewax", "spark-baseline"])
    parser.add_argument("job", nargs="?")
    parser.add_argument("--records", type=int, default=0)
    parser.add_argument("--workdir", default="")
    parser.add_argument("--text", default="")
    parser.add_argument("--parallelism", type=int, default=1)
    parser.add_argument("--undeclared", action="store_true")
    parser.add_argument("--scope", choices=["module", "function"], default="module")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--process-id", type=int, default=0)
    parser.add_argument("--addresses", default="")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.engine == "spark-baseline":
        print(RESULT + json.dumps(spark_baseline()), flush=True)
        return 0
    out_dir = os.path.join(args.workdir, "out")
    os.makedirs(out_dir, exist_ok=True)
    run = {"flintlock": _flintlock, "bare": _bare, "bytewax": _bytewax}[args.engine]
    wall, first, items = run(args, out_dir)
    ended = time.time()
    with open(os.path.join(args.workdir, f"items-{args.process_id}.pickle"), "wb") as handle:
        pickle.dump(items, handle)
    report = {"started": ended - wall, "ended": ended, "wall_s": wall, "first_s": first}
    print(RESULT + json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
