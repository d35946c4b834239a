"""The jobs users write, end to end (issue #20): four ported PyFlink-style jobs on embedded
Spark against a bare loop and Bytewax doing the same work, in the same run.

Jobs (``benchmarks/ported/flintlock_jobs.py``): (a) ``keyed_count``, the keyed running count
of DESIGN.md §4 through ``execute_and_collect``; (b) ``word_count``, a generated text file
(two halves) through ``FileSource`` into a ``FileSink``; (c) ``window_count``, tumbling
event-time windows with bounded-out-of-orderness watermarks; (d) ``timer_count``, a
``KeyedProcessFunction`` with a ``ValueState`` and an event-time timer per key. Each runs
with declared types and without, at parallelism 2 and 1; beside them the bare loop on one
core and Bytewax with 1 worker, 2 worker threads and 2 worker processes.

Every measurement is a fresh interpreter (``benchmarks/ported/child.py``), so no JVM, session,
Python worker or in-memory cache is reused; one untimed job first lets flintlock write its
on-disk class-data archive, which every user's later job finds. Per round and job: small start-up
runs of every configuration, then N records for each configuration in an interleaved order
(flintlock, bare, Bytewax, flintlock, ...), then 5N the same way; each round starts with the
Spark-only baseline (a bare ``local[2]`` session plus one two-task barrier stage). Every result
is checked against what the job must give and against the bare loop's result for the same N; a
difference stops the benchmark with exit status 1. Figures: the median over rounds of the
marginal rate (5N - N) / (t(5N) - t(N)) and of its ratios; start-up is the median time from
``execute()`` to the first record reaching the caller in the start-up runs.

    .venv/bin/python -m benchmarks.ported_jobs [--records N] [--only JOB ...] [--repeat R]
        [--startup-records N] [--json FILE] [--plot FILE] [--configs NAME ...]
    .venv/bin/python -m benchmarks.ported_jobs --from-json FILE   # table and plot again

``--configs`` keeps only the named configurations (the two bare loops always run: every result
is checked against the module-level loop's, and both are the references of the ratios); the
default is all of them, as ``make bench`` runs it.

A failed run writes no figures; what it measured goes to a JSON file in the temporary
directory, named in its last line.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from typing import Any

from benchmarks.ported import report, results
from benchmarks.ported.measure import ROOT, ChildFailedError, Config, measure, spark_baseline

# Large enough that 4N records take flintlock several seconds: a fresh interpreter's start-up
# swings by a second or more, and the marginal rate is only as good as 4N / that swing.
DEFAULT_RECORDS = {"keyed_count": 4_000_000, "word_count": 4_000_000,
                   "window_count": 2_000_000, "timer_count": 4_000_000}
DEFAULT_JSON = os.path.join(ROOT, "docs", "benchmarks-ported-jobs.json")
DEFAULT_PLOT = os.path.join(ROOT, "docs", "benchmarks-ported-jobs.png")
CONFIGS = (  # in the order of the table
    Config("flintlock declared p2", "flintlock", ("--parallelism", "2")),
    Config("flintlock undeclared p2", "flintlock", ("--parallelism", "2", "--undeclared")),
    Config("flintlock declared p1", "flintlock", ("--parallelism", "1")),
    Config("flintlock undeclared p1", "flintlock", ("--parallelism", "1", "--undeclared")),
    Config("bare", "bare"),
    Config("bare in a function", "bare", ("--scope", "function")),
    Config("bytewax 1 worker", "bytewax"),
    Config("bytewax 2 threads", "bytewax", ("--workers", "2")),
    Config("bytewax 2 processes", "bytewax", (), processes=2),
)
RUN_ORDER = tuple(CONFIGS[i] for i in (0, 4, 6, 1, 5, 7, 2, 8, 3))  # flintlock, bare, Bytewax...
REFERENCES = ("bare", "bare in a function")


def selected(names: list[str] | None) -> tuple[Config, ...]:
    """The configurations of ``names`` (all when None) plus the two bare loops, in
    ``CONFIGS``' order."""
    if not names:
        return CONFIGS
    known = {config.name for config in CONFIGS}
    unknown = sorted(set(names) - known)
    if unknown:
        raise SystemExit(f"unknown configuration(s) {unknown}; known: {sorted(known)}")
    return tuple(c for c in CONFIGS if c.name in names or c.name in REFERENCES)


class Suite:
    """The rounds of one invocation: inputs, raw runs, progress lines."""

    def __init__(self, args: argparse.Namespace, root: str) -> None:
        self.args, self.root = args, root
        self.raw: list[dict[str, Any]] = []
        self.texts: dict[int, str] = {}
        chosen = {config.name for config in selected(args.configs)}
        self.order = tuple(config for config in RUN_ORDER if config.name in chosen)

    def text_for(self, job: str, n: int) -> str:
        if job != "word_count":
            return ""
        if n not in self.texts:
            self.texts[n] = os.path.join(self.root, f"text-{n}")
            results.generate_text(self.texts[n], n)
        return self.texts[n]

    def batch(self, rnd: int, job: str, n: int) -> None:
        """Every configuration once on ``n`` records, in ``RUN_ORDER``; then every result
        must equal the bare loop's."""
        runs = []
        for config in self.order:
            run = {"round": rnd, **measure(config, job, n, self.text_for(job, n), self.root)}
            first = "" if run["first_s"] is None else f", first record {run['first_s']:.2f} s"
            print(f"  [round {rnd + 1}] {job} n={n:,} {config.name}: {run['wall_s']:.2f} s"
                  f"{first}", flush=True)
            runs.append(run)
            self.raw.append(run)
        bare = next(run for run in runs if run["config"] == "bare")
        for run in runs:
            results.check_same(job, run["config"], n, run["digest"], bare["digest"])

    def warm_up(self) -> None:
        """One untimed flintlock job first: flintlock's embedded session keeps a class-data
        archive of the JVM across processes (``flintlock.spark.cache-dir``), written by the
        first process that finds none; every later job, as a user's would, finds it there."""
        run = measure(CONFIGS[0], "keyed_count", self.args.startup_records, "", self.root)
        print(f"  warm-up (untimed): keyed_count {CONFIGS[0].name}: {run['wall_s']:.2f} s",
              flush=True)

    def round(self, rnd: int, jobs: list[str]) -> None:
        self.raw.append({"round": rnd, **spark_baseline(self.root)})
        print(f"  [round {rnd + 1}] spark baseline: {self.raw[-1]['wall_s']:.2f} s", flush=True)
        for job in jobs:
            n = self.args.records or DEFAULT_RECORDS[job]
            for size in (self.args.startup_records, n, 5 * n):
                self.batch(rnd, job, size)


def _meta(args: argparse.Namespace, records: dict[str, int]) -> dict[str, Any]:
    def version(package: str) -> str:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as of

        try:
            return of(package)
        except PackageNotFoundError:
            return "not installed"

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    return {"date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
            "command": " ".join(["python -m benchmarks.ported_jobs", *sys.argv[1:]]),
            "commit": commit, "cpus": os.cpu_count(), "load_average": os.getloadavg(),
            "python": platform.python_version(), "pyspark": version("pyspark"),
            "bytewax": version("bytewax"), "records": records, "repeat": args.repeat,
            "startup_records": args.startup_records,
            "configs": [config.name for config in selected(args.configs)]}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=0,
                        help=f"N for every job (default: {DEFAULT_RECORDS})")
    parser.add_argument("--only", nargs="+", choices=results.JOBS, default=list(results.JOBS))
    parser.add_argument("--repeat", type=int, default=3, help="rounds; figures are medians")
    parser.add_argument("--startup-records", type=int, default=1_000)
    parser.add_argument("--json", default=DEFAULT_JSON)
    parser.add_argument("--plot", default=DEFAULT_PLOT)
    parser.add_argument("--from-json", metavar="FILE",
                        help="no runs: the table and plot again from a JSON this wrote")
    parser.add_argument("--configs", nargs="+", metavar="NAME",
                        help="only these configurations (and the bare loops); default: all")
    return parser


def figures(raw: list[dict[str, Any]], meta: dict[str, Any]) -> dict[str, Any]:
    """Everything the JSON holds, computed from the raw runs and the run's description."""
    records, startup = meta["records"], meta["startup_records"]
    jobs = list(records)
    names = meta.get("configs") or [config.name for config in CONFIGS]
    configs = [(config.name, config.engine) for config in CONFIGS if config.name in names]
    smoke = any(records[job] < DEFAULT_RECORDS[job] for job in jobs)
    title = (f"flintlock ported jobs vs bare loop and Bytewax, N = "
             f"{', '.join(f'{job} {n:,}' for job, n in records.items())}, {meta['repeat']} "
             f"round(s), {meta['date_utc']} UTC, commit {meta['commit']}"
             + (" (SMOKE RUN: N below the defaults, not for comparison)" if smoke else ""))
    rows = report.summarize(raw, configs, jobs, records, startup)
    return {"meta": {**meta, "smoke": smoke, "title": title},
            "baseline": report.baseline_summary(raw),
            "own_startup_s": {job: report.own_startup(raw, job, CONFIGS[0].name, startup)
                              for job in jobs},
            "rows": [asdict(row) for row in rows], "runs": raw}


def publish(doc: dict[str, Any], json_path: str, plot_path: str) -> None:
    """Prints the table, writes the JSON and the plot."""
    rows = [report.Row(**row) for row in doc["rows"]]
    baseline, fmt = doc["baseline"], report.fmt
    print(f"\n{doc['meta']['title']}\n\n{report.table(rows)}\n")
    print(f"Spark only (local[2] session + one two-task barrier stage): "
          f"{fmt(baseline['wall_s'], '.2f')} s (session {fmt(baseline['session_s'], '.2f')} s, "
          f"stage {fmt(baseline['stage_s'], '.2f')} s); flintlock's own part of the start-up "
          f"({CONFIGS[0].name}): " + ", ".join(f"{job} {fmt(s, '.2f')} s"
                                                for job, s in doc["own_startup_s"].items()))
    with open(json_path, "w") as out:
        json.dump(doc, out, indent=1)
    report.plot(rows, baseline["wall_s"], plot_path, doc["meta"]["title"], doc["meta"]["smoke"])
    print(f"wrote {os.path.relpath(json_path)} and {os.path.relpath(plot_path)}")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.from_json:
        with open(args.from_json) as saved:
            doc = json.load(saved)
        publish(figures(doc["runs"], doc["meta"]), args.json, args.plot)
        return 0
    records = {job: args.records or DEFAULT_RECORDS[job] for job in args.only}
    for n in [args.startup_records, *records.values(), *(5 * n for n in records.values())]:
        results.check_records(n)
    meta = _meta(args, records)
    with tempfile.TemporaryDirectory(prefix="ported-jobs-") as root:
        suite = Suite(args, root)
        try:
            suite.warm_up()
            for rnd in range(args.repeat):
                suite.round(rnd, args.only)
        except (results.ResultMismatchError, ChildFailedError) as error:
            kept = os.path.join(tempfile.gettempdir(), f"ported-jobs-failed-{os.getpid()}.json")
            with open(kept, "w") as out:
                json.dump({"meta": meta, "failed": str(error), "runs": suite.raw}, out, indent=1)
            print(f"FAILED: {error}\n(the runs measured so far: {kept})", file=sys.stderr)
            return 1
    publish(figures(suite.raw, meta), args.json, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
