"""Nexmark on flintlock, PyFlink 2.3.0 and Spark Structured Streaming, in one run (issue 33).

    flock /tmp/flintlock-spark.lock .venv/bin/python -m benchmarks.nexmark.run
        [--sizes 100000 500000] [--check-events 20000] [--rounds 3] [--queries q0 q1 ...]
        [--engines flintlock pyflink spark] [--pyflink-python PATH] [--data DIR] [--json FILE]
        [--plot FILE.png]

``make bench-nexmark`` runs every query flintlock runs on all three engines and writes
docs/benchmarks-nexmark.json and its plot (``plot.py``); the JSON records the commit and the
load average at the start and the end of the run.

1. **Events.** ``generate.py`` writes each size's events once (CSV, one directory per event
   type, two files each) under ``--data`` (default ``.bench/nexmark``); every engine reads the
   same files: flintlock and PyFlink through the ``filesystem`` connector, Spark as CSV file
   streams.
2. **Results.** Each engine runs every query on ``--check-events`` events and returns the
   final rows (``flink_program.py`` / ``spark_program.py``); for each query, every engine's
   rows must equal PyFlink's (``rows``), or have as many rows where ties make the chosen row
   engine-dependent (``keys``).
3. **Throughput.** In each round, each engine runs every query at both sizes in one process
   (the engines in turn, their order rotating by round), after one untimed warm-up job (the
   first job of a process pays the engine's start-up); a run is timed from the job's
   submission to its end. The marginal rate ``(N2 - N1) / (t(N2) - t(N1))`` over the medians
   cancels start-up; events/s counts every event of the stream (people, auctions and bids),
   as Nexmark reports it, although a query reads only the files of the types it names.

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
from pathlib import Path
from typing import Any

from benchmarks.nexmark import generate
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
            for line in process.stdout:  # the program's progress, one line per run
                print(f"  {engine}: {line.rstrip()}", flush=True)
            code = process.wait(timeout=7200)
        if code != 0 or not result_file.exists():
            raise RuntimeError(f"{engine} failed (exit {code}):\n{log.read_text()[-4000:]}")
        return json.loads(result_file.read_text())  # type: ignore[no-any-return]


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


def compare(query: Query, results: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Per engine: ``equal``, ``differs (...)``, ``error: ...`` or ``not run``."""
    verdicts: dict[str, str] = {}
    reference = results.get("pyflink", {}).get(query.name)
    for engine, by_query in results.items():
        got = by_query.get(query.name)
        if got is None:
            verdicts[engine] = "not run: " + (query.spark_gap or "engine not selected")
        elif "error" in got:
            verdicts[engine] = "error: " + got["error"].splitlines()[0][:300]
        elif reference is None or "rows" not in reference:
            verdicts[engine] = f"{len(got['rows'])} rows (no PyFlink reference)"
        elif query.result == "keys":
            same = len(got["rows"]) == len(reference["rows"])
            verdicts[engine] = (f"same row count ({len(got['rows'])})" if same else
                                f"differs: {len(got['rows'])} rows vs {len(reference['rows'])}")
        elif got["rows"] == reference["rows"]:
            verdicts[engine] = f"equal ({len(got['rows'])} rows)"
        else:
            missing = len(set(reference["rows"]) - set(got["rows"]))
            extra = len(set(got["rows"]) - set(reference["rows"]))
            verdicts[engine] = (f"differs: {len(got['rows'])} rows vs {len(reference['rows'])}, "
                                f"{missing} missing, {extra} extra")
    return verdicts


def check(engines: Engines, names: list[str], queries: list[Query], data: Path, events: int
          ) -> dict[str, Any]:
    results: dict[str, dict[str, Any]] = {}
    for engine in names:
        spec = {"mode": "check", "parallelism": 2,
                "runs": runs_for(engine, queries, {events: data})}
        results[engine] = {r["query"]: r for r in engines.run(engine, spec)}
    verdicts = {query.name: compare(query, results) for query in queries}
    for name, by_engine in verdicts.items():
        print(f"check {name}: " + "; ".join(f"{e} {v}" for e, v in by_engine.items()),
              flush=True)
    digests = {engine: {q: digest(r["rows"]) for q, r in by_query.items() if "rows" in r}
               for engine, by_query in results.items()}
    return {"verdicts": verdicts, "digests": digests}


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


def measure(engines: Engines, names: list[str], queries: list[Query], data: dict[int, Path],
            rounds: int, after_round: Any = None) -> dict[str, dict[str, Any]]:
    """Timed rounds; ``after_round(report)`` gets the report so far after every round."""
    times: dict[str, dict[str, dict[int, list[float]]]] = {
        e: {q.name: {n: [] for n in data} for q in queries} for e in names}
    errors: dict[str, dict[str, str]] = {e: {} for e in names}
    for round_number in range(rounds):
        order = names[round_number % len(names):] + names[:round_number % len(names)]
        for engine in order:
            runs = runs_for(engine, queries, data)
            warm_up = dict(runs[0], query="warm-up")  # the process's first job pays start-up
            spec = {"mode": "time", "parallelism": 2, "runs": [warm_up, *runs]}
            for result in engines.run(engine, spec)[1:]:
                if "error" in result:
                    errors[engine][result["query"]] = result["error"].splitlines()[0][:300]
                else:
                    times[engine][result["query"]][result["events"]].append(result["elapsed"])
            print(f"round {round_number + 1} {engine} done", flush=True)
        if after_round is not None:
            after_round(_report(names, queries, times, errors))
    return _report(names, queries, times, errors)


def _report(names: list[str], queries: list[Query],
            times: dict[str, dict[str, dict[int, list[float]]]],
            errors: dict[str, dict[str, str]]) -> dict[str, dict[str, Any]]:
    report: dict[str, dict[str, Any]] = {}
    for query in queries:
        entry: dict[str, Any] = {}
        for engine in names:
            entry[engine] = {"times": {str(n): t for n, t in times[engine][query.name].items()},
                             "rate": rates(times[engine][query.name]),
                             "error": errors[engine].get(query.name)}
        report[query.name] = entry
    return report


def print_table(report: dict[str, dict[str, Any]], names: list[str]) -> None:
    def fmt(rate: float | None) -> str:
        return "-" if rate is None else f"{rate / 1e3:8.1f}k"

    print("\nquery  " + "  ".join(f"{e:>10}" for e in names) + "   ratios", flush=True)
    for query, entry in report.items():
        by = {e: entry[e]["rate"] for e in names}
        ratios = [f"{e}/{o} {by[e] / by[o]:.2f}" for e in names[:1] for o in names[1:]
                  if by.get(e) and by.get(o)]
        print(f"{query:6} " + "  ".join(f"{fmt(by[e]):>10}" for e in names) + "   "
              + ", ".join(ratios), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[100_000, 500_000])
    parser.add_argument("--check-events", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", nargs="*", choices=sorted(BY_NAME))
    parser.add_argument("--engines", nargs="*", choices=ENGINES, default=list(ENGINES))
    parser.add_argument("--pyflink-python")
    parser.add_argument("--data", type=Path, default=ROOT / ".bench" / "nexmark")
    parser.add_argument("--skip-check", action="store_true")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--plot", type=Path, help="also draw the throughput (plot.py)")
    args = parser.parse_args(argv)
    queries = [BY_NAME[n] for n in args.queries] if args.queries else list(QUERIES)
    names = list(args.engines)
    output: dict[str, Any] = {"sizes": args.sizes, "rounds": args.rounds,
                              "check_events": args.check_events, "commit": commit(),
                              "load_average": {"start": round(os.getloadavg()[0], 1)}}
    with tempfile.TemporaryDirectory(prefix="nexmark-bench-") as workdir:
        engines = Engines(Path(workdir), pyflink_python(args.pyflink_python))
        if not args.skip_check:
            output["check"] = check(engines, names, queries,
                                    dataset(args.data, args.check_events), args.check_events)
        data = {n: dataset(args.data, n) for n in args.sizes}
        if args.rounds > 0:
            def save(report: dict[str, dict[str, Any]]) -> None:
                output["throughput"] = report
                output["load_average"]["end"] = round(os.getloadavg()[0], 1)
                print_table(report, names)
                if args.json:
                    args.json.write_text(json.dumps(output, indent=2, sort_keys=True))

            measure(engines, names, queries, data, args.rounds, save)
    if args.json:
        args.json.write_text(json.dumps(output, indent=2, sort_keys=True))
    if args.plot and "throughput" in output:
        from benchmarks.nexmark.plot import plot

        plot(output, args.plot)
    return 0


def commit() -> str:
    """The checkout's commit (with ``+changes`` when its tracked files differ from it)."""
    def git(*command: str) -> str:
        return subprocess.run(["git", *command], cwd=ROOT, capture_output=True, text=True,
                              check=False).stdout.strip()

    head = git("rev-parse", "HEAD") or "unknown"
    return head + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")


if __name__ == "__main__":
    sys.exit(main())
