"""Start-up of a second job in the same Python process (issue 31): the session, its JVM and
Spark's Python workers are warm; how long from ``execute_and_collect()`` to the first record?

Each round is a fresh interpreter that runs ``--jobs`` jobs one after the other, each a
1,000-record ``NumberSequenceSource`` → ``map`` → ``execute_and_collect`` at parallelism 2 (the
job of ``startup.py``), and reports every job's time to its first record and to its end; the
first job pays the session's start, the later ones only flintlock's per-job work (job graph,
JobManager, barrier stage, TaskManager start in a warm worker). Every job's result is checked.
Figures: medians over rounds, per position.

    .venv/bin/python -m benchmarks.warm_start [--rounds 5] [--jobs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

RESULT = "WARM-START "
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child(jobs: int, records: int) -> int:
    from flintlock.common import Types, WatermarkStrategy
    from flintlock.datastream import StreamExecutionEnvironment
    from flintlock.datastream.connectors.number_seq import NumberSequenceSource

    figures = []
    for index in range(jobs):
        env = StreamExecutionEnvironment.get_execution_environment()
        env.set_parallelism(2)
        stream = (env.from_source(NumberSequenceSource(0, records - 1),
                                  WatermarkStrategy.no_watermarks(), "numbers")
                  .map(lambda i: i * 2, output_type=Types.LONG()))
        first = None
        items = []
        started = time.perf_counter()
        with stream.execute_and_collect(f"warm start {index}") as results:
            for item in results:
                if first is None:
                    first = time.perf_counter() - started
                items.append(item)
        ended = time.perf_counter() - started
        if sorted(items) != [2 * i for i in range(records)]:
            print(f"WRONG RESULT in job {index}: {len(items)} records", file=sys.stderr)
            return 1
        figures.append({"job": index, "first_s": first, "end_s": ended})
    print(RESULT + json.dumps(figures), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=3)
    parser.add_argument("--records", type=int, default=1_000)
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--json", default="")
    args = parser.parse_args(argv)
    if args.child:
        return child(args.jobs, args.records)
    env = dict(os.environ)
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    rounds = []
    for rnd in range(args.rounds):
        done = subprocess.run([sys.executable, "-m", "benchmarks.warm_start", "--child",
                               "--jobs", str(args.jobs), "--records", str(args.records)],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        lines = [line for line in done.stdout.splitlines() if line.startswith(RESULT)]
        if done.returncode or not lines:
            print(f"round {rnd + 1} failed:\n{done.stderr[-3000:]}", file=sys.stderr)
            return 1
        figures = json.loads(lines[-1][len(RESULT):])
        rounds.append(figures)
        print(f"  [round {rnd + 1}] " + ", ".join(
            f"job {f['job'] + 1}: first {f['first_s']:.2f} s, end {f['end_s']:.2f} s"
            for f in figures), flush=True)
    print("\n| job in the process | first record s (median) | end s (median) | rounds |\n"
          "|---|---:|---:|---|")
    for index in range(args.jobs):
        firsts = [r[index]["first_s"] for r in rounds]
        ends = [r[index]["end_s"] for r in rounds]
        print(f"| {index + 1} | {statistics.median(firsts):.2f} | "
              f"{statistics.median(ends):.2f} | "
              f"{', '.join(f'{x:.2f}' for x in firsts)} |")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
                       "load_average": os.getloadavg(), "rounds": rounds}, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
