"""Nexmark on flintlock, PyFlink 2.3.0 and Spark Structured Streaming, in one run (issue 33).

    flock /tmp/flintlock-spark.lock .venv/bin/python -m benchmarks.nexmark.run
        [--sizes 100000 500000] [--check-events 20000] [--rounds 3] [--queries q0 q1 ...]
        [--time-limit 180] [--engines flintlock pyflink spark] [--pyflink-python PATH]
        [--data DIR] [--json FILE] [--plot FILE.png]

``make bench-nexmark`` runs every query flintlock runs on all three engines and writes
docs/benchmarks-nexmark.json and its plot (``plot.py``); the JSON records the commit, the time
limit, the wall time of the check and of the whole run, and the load average at the start and
the end of the run.

1. **Events.** ``generate.py`` writes each size's events once (CSV, one directory per event
   type, two files each) under ``--data`` (default ``.bench/nexmark``); every engine reads the
   same files: flintlock and PyFlink through the ``filesystem`` connector, Spark as CSV file
   streams.
2. **Results** (``check.py``). flintlock and PyFlink run every query on ``--check-events``
   events in one process each, into ``print`` tables (``flink_program.py``'s ``print`` mode);
   Spark collects each query into its memory sink and its rows are written as the print
   connector writes them; for each query, every engine's rows must give PyFlink's digest
   (``rows``), or as many rows where ties make the chosen row engine-dependent (``keys``).
3. **Throughput.** In each round, each engine runs every query at both sizes in one process
   (the engines in turn, their order rotating by round), after one untimed warm-up job (the
   first job of a process pays the engine's start-up); a run is timed from the job's
   submission to its end. The marginal rate ``(N2 - N1) / (t(N2) - t(N1))`` over the medians
   cancels start-up; events/s counts every event of the stream (people, auctions and bids),
   as Nexmark reports it, although a query reads only the files of the types it names.
   A run still going after ``--time-limit`` seconds is cancelled and recorded as timed out
   (``timed_out``: size -> limit; ``rate_at_most``: the rate's upper bound
   ``(N2 - N1) / (limit - t(N1))``), not repeated in later rounds, and shown as such in the
   table and the plot; the limit keeps one slow engine-query pair (Spark's q20 at 2,000,000
   events once ran over nine minutes) from taking the run's hour.

PyFlink runs from ``--pyflink-python`` or ``.bench/pyflink-venv`` (created with
``pip install apache-flink==2.3.0`` when missing); Spark is the PySpark of this virtualenv.
Run it under the Spark lock: it takes both cores.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.nexmark import check, generate, printed
from benchmarks.nexmark.queries import (
    BY_NAME,
    QUERIES,
    Query,
    spark_sql,
    table_columns,
    write_side_input,
)
from flintlock.datastream.connectors.nexmark.config import from_options

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PYFLINK_VENV = ROOT / ".bench" / "pyflink-venv"
ENGINES = ("flintlock", "pyflink", "spark")


def pyflink_python(given: str | None) -> Path:
    if given:
        return Path(given)
    python = PYFLINK_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(PYFLINK_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "apache-flink==2.3.0"],
                       check=True)
    return python


def dataset(root: Path, events: int) -> Path:
    """The directory of ``events`` generated events, written the first time."""
    out = root / f"events-{events}"
    if not (out / "manifest.json").exists():
        generate.write(from_options({"events.num": str(events)}), out)
    write_side_input(out)  # q13's side table
    return out


def ported(source: str) -> str:
    return re.sub(r"^(\s*)from pyflink\.", r"\1from flintlock.", source, flags=re.MULTILINE)


class Engines:
    """Runs a spec on an engine in a fresh interpreter and returns its per-run results."""

    def __init__(self, workdir: Path, pyflink: Path) -> None:
        self.workdir = workdir
        source = (HERE / "flink_program.py").read_text()
        (workdir / "pyflink").mkdir()
        (workdir / "flintlock").mkdir()
        (workdir / "pyflink" / "program.py").write_text(source)
        (workdir / "flintlock" / "program.py").write_text(ported(source))
        self.commands = {
            "flintlock": [sys.executable, str(workdir / "flintlock" / "program.py")],
            "pyflink": [str(pyflink), str(workdir / "pyflink" / "program.py")],
            "spark": [sys.executable, str(HERE / "spark_program.py")],
        }
        self.count = 0

    def run(self, engine: str, spec: dict[str, Any]) -> list[dict[str, Any]]:
        return self.run_printing(engine, spec)[0]

    def run_printing(self, engine: str, spec: dict[str, Any]
                     ) -> tuple[list[dict[str, Any]], str]:
        """The per-run results and the print tables' lines the program wrote to stdout
        (other lines are its progress, echoed)."""
        self.count += 1
        spec_file = self.workdir / f"spec-{self.count}.json"
        result_file = self.workdir / f"result-{self.count}.json"
        spec_file.write_text(json.dumps(spec))
        env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", TZ="UTC")
        python_dir = str(Path(self.commands[engine][0]).parent)
        env["PATH"] = f"{python_dir}{os.pathsep}{env.get('PATH', '')}"
        log = self.workdir / f"stderr-{self.count}.txt"
        with open(log, "w") as errors:
            process = subprocess.Popen([*self.commands[engine], str(spec_file),
                                        str(result_file)], stdout=subprocess.PIPE,
                                       stderr=errors, text=True, env=env, cwd=self.workdir)
            assert process.stdout is not None
            printed_lines = []
            for line in process.stdout:  # the program's progress, one line per run
                if printed.LINE.match(line.strip()):
                    printed_lines.append(line)
                else:
                    print(f"  {engine}: {line.rstrip()}", flush=True)
            code = process.wait(timeout=7200)
        if code != 0 or not result_file.exists():
            raise RuntimeError(f"{engine} failed (exit {code}):\n{log.read_text()[-4000:]}")
        return json.loads(result_file.read_text()), "".join(printed_lines)


def runs_for(engine: str, queries: list[Query], data: dict[int, Path]) -> list[dict[str, Any]]:
    runs = []
    for query in queries:
        if engine == "spark" and spark_sql(query) is None:
            continue
        for events, directory in data.items():
            runs.append({"query": query.name, "sql": query.sql, "sink": query.sink,
                         "spark_sql": spark_sql(query), "spark_mode": query.spark_mode,
                         "key": query.key,
                         "tables": table_columns(query),
                         "data": str(directory), "events": events})
    return runs


def digest(rows: list[str]) -> dict[str, Any]:
    """A query's final rows in short: their number and the SHA-256 of the sorted rows."""
    text = "\n".join(sorted(rows)).encode()
    return {"rows": len(rows), "sha256": hashlib.sha256(text).hexdigest()}


def rates(times: dict[int, list[float]]) -> float | None:
    (small, short), (large, long) = sorted(times.items())
    if not short or not long:
        return None
    t_small, t_large = statistics.median(short), statistics.median(long)
    return (large - small) / (t_large - t_small) if t_large > t_small else None


def rate_at_most(times: dict[int, list[float]], timed_out: dict[int, float]) -> float | None:
    """Where the large size timed out after ``limit`` s and the small one ran: the marginal rate
    is below ``(N2 - N1) / (limit - t(N1))`` (the large run would have taken longer)."""
    (small, short), (large, _) = sorted(times.items())
    limit = timed_out.get(large)
    if limit is None or not short or small in timed_out:
        return None
    t_small = statistics.median(short)
    return (large - small) / (limit - t_small) if limit > t_small else None


class _Times:
    """Every timed run's outcome so far: times, errors, and the runs that timed out."""

    def __init__(self, names: list[str], queries: list[Query], data: dict[int, Path]) -> None:
        self.names, self.queries = names, queries
        self.times: dict[str, dict[str, dict[int, list[float]]]] = {
            e: {q.name: {n: [] for n in data} for q in queries} for e in names}
        self.errors: dict[str, dict[str, str]] = {e: {} for e in names}
        self.timeouts: dict[str, dict[str, dict[int, float]]] = {
            e: {q.name: {} for q in queries} for e in names}

    def wanted(self, engine: str, run: dict[str, Any]) -> bool:
        """A run is not repeated at a size at or above one that timed out before."""
        return not any(n <= run["events"] for n in self.timeouts[engine][run["query"]])

    def add(self, engine: str, result: dict[str, Any]) -> None:
        query, events = result["query"], result["events"]
        if "error" in result:
            self.errors[engine][query] = result["error"].splitlines()[0][:300]
        elif "timed_out" in result:
            self.timeouts[engine][query][events] = result["timed_out"]
        else:
            self.times[engine][query][events].append(result["elapsed"])

    def report(self) -> dict[str, dict[str, Any]]:
        report: dict[str, dict[str, Any]] = {}
        for query in self.queries:
            entry: dict[str, Any] = {}
            for engine in self.names:
                times, timeouts = self.times[engine][query.name], self.timeouts[engine][query.name]
                entry[engine] = {"times": {str(n): t for n, t in times.items()},
                                 "rate": rates(times),
                                 "timed_out": {str(n): s for n, s in timeouts.items()},
                                 "rate_at_most": rate_at_most(times, timeouts),
                                 "error": self.errors[engine].get(query.name)}
            report[query.name] = entry
        return report


def measure(engines: Engines, names: list[str], queries: list[Query], data: dict[int, Path],
            rounds: int, after_round: Any = None, time_limit: float | None = None
            ) -> dict[str, dict[str, Any]]:
    """Timed rounds; ``after_round(report)`` gets the report so far after every round. A run
    still going after ``time_limit`` s is cancelled and recorded as timed out."""
    outcome = _Times(names, queries, data)
    for round_number in range(rounds):
        order = names[round_number % len(names):] + names[:round_number % len(names)]
        for engine in order:
            runs = [dict(r, time_limit=time_limit) for r in runs_for(engine, queries, data)
                    if outcome.wanted(engine, r)]
            if not runs:
                continue
            warm_up = dict(runs[0], query="warm-up")  # the process's first job pays start-up
            spec = {"mode": "time", "parallelism": 2, "runs": [warm_up, *runs]}
            for result in engines.run(engine, spec)[1:]:
                outcome.add(engine, result)
            print(f"round {round_number + 1} {engine} done", flush=True)
        if after_round is not None:
            after_round(outcome.report())
    return outcome.report()


def print_table(report: dict[str, dict[str, Any]], names: list[str]) -> None:
    def fmt(entry: dict[str, Any]) -> str:
        if entry.get("rate"):
            return f"{entry['rate'] / 1e3:8.1f}k"
        if entry.get("timed_out"):
            bound = entry.get("rate_at_most")
            return "timed out" + (f" <{bound / 1e3:.0f}k" if bound else "")
        return "-"

    print("\nquery  " + "  ".join(f"{e:>16}" for e in names) + "   ratios", flush=True)
    for query, entry in report.items():
        by = {e: entry[e]["rate"] for e in names}
        ratios = [f"{e}/{o} {by[e] / by[o]:.2f}" for e in names[:1] for o in names[1:]
                  if by.get(e) and by.get(o)]
        print(f"{query:6} " + "  ".join(f"{fmt(entry[e]):>16}" for e in names) + "   "
              + ", ".join(ratios), flush=True)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    queries = [BY_NAME[n] for n in args.queries] if args.queries else list(QUERIES)
    names = list(args.engines)
    output: dict[str, Any] = {"sizes": args.sizes, "rounds": args.rounds,
                              "check_events": args.check_events, "commit": commit(),
                              "time_limit_s": args.time_limit or None, "wall_s": {},
                              "load_average": {"start": round(os.getloadavg()[0], 1)}}

    def save(report: dict[str, dict[str, Any]] | None = None) -> None:
        if report is not None:
            output["throughput"] = report
            print_table(report, names)
        output["load_average"]["end"] = round(os.getloadavg()[0], 1)
        output["wall_s"]["total"] = round(time.monotonic() - began, 1)
        if args.json:
            args.json.write_text(json.dumps(output, indent=2, sort_keys=True))

    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="nexmark-bench-") as workdir:
        engines = Engines(Path(workdir), pyflink_python(args.pyflink_python))
        if not args.skip_check:
            output["check"] = check.check(engines, names, queries,
                                          dataset(args.data, args.check_events),
                                          args.check_events, args.check_by == "collect")
            output["wall_s"]["check"] = round(time.monotonic() - began, 1)
        data = {n: dataset(args.data, n) for n in args.sizes}
        if args.rounds > 0:
            measure(engines, names, queries, data, args.rounds, save, args.time_limit or None)
    save()
    if args.plot and "throughput" in output:
        from benchmarks.nexmark.plot import plot

        plot(output, args.plot)
    return 0


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[100_000, 500_000])
    parser.add_argument("--check-events", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=180.0,
                        help="seconds a timed run may take before it is cancelled and "
                             "recorded as timed out (0: no limit)")
    parser.add_argument("--queries", nargs="*", choices=sorted(BY_NAME))
    parser.add_argument("--engines", nargs="*", choices=ENGINES, default=list(ENGINES))
    parser.add_argument("--pyflink-python")
    parser.add_argument("--data", type=Path, default=ROOT / ".bench" / "nexmark")
    parser.add_argument("--skip-check", action="store_true")
    parser.add_argument("--check-by", choices=["print", "collect"], default="print",
                        help="collect: each query's rows collected, one job each (check.py)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--plot", type=Path, help="also draw the throughput (plot.py)")
    return parser.parse_args(argv)


def commit() -> str:
    """The checkout's commit (with ``+changes`` when its tracked files differ from it)."""
    def git(*command: str) -> str:
        return subprocess.run(["git", *command], cwd=ROOT, capture_output=True, text=True,
                              check=False).stdout.strip()

    head = git("rev-parse", "HEAD") or "unknown"
    return head + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")


if __name__ == "__main__":
    sys.exit(main())
