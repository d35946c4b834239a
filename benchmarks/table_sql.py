"""The same PyFlink Table/SQL program on flintlock and on PyFlink 2.3.0, in one run (issue 28).

The program, written as a PyFlink user writes it (``pyflink`` imports; flintlock runs it with
the imports changed and nothing else)::

    datagen sequence (rows-per-second high) -> SELECT MOD(id, 100) AS k, id
        -> GROUP BY k: COUNT(*), SUM(id) -> blackhole            parallelism 2

and three variants: ``udf``, the key computed by a Python scalar UDF; ``filter``, a
projection and filter only (``SELECT id, id * 2 + 1 AS d FROM src WHERE MOD(id, 10) <> 0``,
append-only into the blackhole); ``agg2``, a two-level aggregation (how many keys have each
count: ``SELECT c, COUNT(*) FROM (SELECT MOD(id, 100) AS k, COUNT(*) AS c ... GROUP BY
MOD(id, 100)) GROUP BY c``, the inner level's updates retracted by the outer). Each engine runs
each size (N and 5N rows) in a fresh interpreter, interleaved round by round; the program
times ``execute_sql(INSERT ...).wait()`` itself, and the marginal rate is ``4N / (t(5N) -
t(N))``, which cancels start-up. Correctness is checked in the same run: each engine also
runs the query with a ``collect()`` of its final result on a small input and the two results
must be equal (the counts and sums per key are known in closed form too).

PyFlink runs in its own virtualenv: ``--pyflink-python`` names its ``python``, else the
benchmark creates ``.bench/pyflink-venv`` with ``pip install apache-flink==2.3.0`` (Java 17 on
the PATH; several minutes the first time).

    .venv/bin/python -m benchmarks.table_sql [--rows N] [--rounds R]
        [--only sql udf filter agg2]
        [--pyflink-python PATH] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYFLINK_VENV = ROOT / ".bench" / "pyflink-venv"
PYFLINK_VERSION = "2.3.0"
VARIANTS = ("sql", "udf", "filter", "agg2")

PROGRAM = textwrap.dedent('''
    import sys, time
    from collections import Counter
    from pyflink.table import EnvironmentSettings, TableEnvironment, DataTypes
    from pyflink.table.udf import udf

    rows, variant, check = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "check"
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "2")

    @udf(result_type=DataTypes.BIGINT())
    def bucket(x):
        return x % 100

    t_env.create_temporary_function("bucket", bucket)
    t_env.execute_sql(
        "CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', "
        "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', "
        f"'fields.id.end' = '{rows}', 'rows-per-second' = '1000000000')")
    if variant in ("sql", "udf"):
        key = "bucket(id)" if variant == "udf" else "MOD(id, 100)"
        query = ("SELECT k, COUNT(*) AS c, SUM(id) AS s "
                 f"FROM (SELECT {key} AS k, id FROM src) GROUP BY k")
        sink = "k BIGINT, c BIGINT, s BIGINT"
    elif variant == "filter":
        query = "SELECT id, id * 2 + 1 AS d FROM src WHERE MOD(id, 10) <> 0"
        sink = "id BIGINT, d BIGINT"
    else:  # agg2: how many keys have each count
        query = ("SELECT c, COUNT(*) AS n FROM (SELECT MOD(id, 100) AS k, COUNT(*) AS c "
                 "FROM src GROUP BY MOD(id, 100)) GROUP BY c")
        sink = "c BIGINT, n BIGINT"
    if check:
        final = Counter()
        for row in t_env.execute_sql(query).collect():
            values = tuple(row[i] for i in range(len(row)))
            final[values] += 1 if str(row.get_row_kind()) in ("+I", "+U") else -1
        print("RESULT", sorted(v for v, n in final.items() for _ in range(n)))
    else:
        t_env.execute_sql(f"CREATE TABLE sink ({sink}) WITH ('connector' = 'blackhole')")
        start = time.perf_counter()
        t_env.execute_sql("INSERT INTO sink " + query).wait()
        print("ELAPSED", time.perf_counter() - start)
''')


def ported(source: str) -> str:
    """The program with its imports changed from pyflink to flintlock, nothing else."""
    return re.sub(r"^(\s*)from pyflink\.", r"\1from flintlock.", source, flags=re.MULTILINE)


def pyflink_python(given: str | None) -> Path:
    if given:
        return Path(given)
    python = PYFLINK_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(PYFLINK_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet",
                        f"apache-flink=={PYFLINK_VERSION}"], check=True)
    return python


def run(python: Path, program: Path, rows: int, variant: str, mode: str) -> str:
    env = dict(os.environ)
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    with tempfile.TemporaryDirectory(prefix="table-bench-") as workdir:
        result = subprocess.run([str(python), str(program), str(rows), variant, mode],
                                capture_output=True, text=True, cwd=workdir, env=env,
                                timeout=3600)
    if result.returncode != 0:
        raise RuntimeError(f"{program.name} {rows} {variant} failed:\n{result.stderr[-3000:]}")
    return result.stdout


def elapsed(output: str) -> float:
    return float(re.search(r"^ELAPSED (\S+)$", output, re.MULTILINE).group(1))  # type: ignore[union-attr]


def expected_result(rows: int, variant: str) -> list[tuple[int, ...]]:
    """The final table of ``variant`` on ``rows`` rows, computed here."""
    if variant == "filter":
        return [(i, 2 * i + 1) for i in range(1, rows + 1) if i % 10 != 0]
    counts: dict[int, list[int]] = {}
    for i in range(1, rows + 1):
        entry = counts.setdefault(i % 100, [0, 0])
        entry[0] += 1
        entry[1] += i
    if variant == "agg2":
        per_count: dict[int, int] = {}
        for c, _ in counts.values():
            per_count[c] = per_count.get(c, 0) + 1
        return sorted(per_count.items())
    return sorted((k, c, s) for k, (c, s) in counts.items())


def time_variant(engines: dict[str, Path], programs: dict[str, Path], variant: str, n: int,
                 rounds: int, sizes: dict[str, int] | None = None) -> dict[str, object]:
    """Times ``variant`` on each engine at N and 5N rows (N: ``sizes[engine]``, else ``n``: an
    engine much faster than the other needs a larger N for its marginal time to stand out of
    its start-up), interleaved round by round; prints and returns the times, the marginal
    rates ``4N / (t(5N) - t(N))`` and their ratio."""
    base = {e: (sizes or {}).get(e, n) for e in engines}
    times: dict[str, dict[int, list[float]]] = {e: {base[e]: [], 5 * base[e]: []}
                                                for e in engines}
    for _ in range(rounds):
        for factor in (1, 5):
            for engine in engines:
                rows = factor * base[engine]
                times[engine][rows].append(elapsed(run(
                    engines[engine], programs[engine], rows, variant, "time")))
    rates = {}
    for engine in engines:
        small = statistics.median(times[engine][base[engine]])
        large = statistics.median(times[engine][5 * base[engine]])
        rates[engine] = 4 * base[engine] / (large - small) if large > small else float("nan")
        print(f"{variant:8} {engine:9} N={base[engine]}: {small:7.2f} s  5N: {large:7.2f} s"
              f"  marginal {rates[engine] / 1e6:6.3f} M rows/s", flush=True)
    ratio = rates["flintlock"] / rates["pyflink"]
    print(f"{variant:8} flintlock / pyflink = {ratio:.2f}", flush=True)
    return {"times": {e: {str(k): v for k, v in t.items()} for e, t in times.items()},
            "rates": rates, "ratio": ratio}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", nargs="*", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--pyflink-python")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    pyflink = pyflink_python(args.pyflink_python)
    engines = {"flintlock": Path(sys.executable), "pyflink": pyflink}
    with tempfile.TemporaryDirectory(prefix="table-bench-programs-") as directory:
        programs = {"pyflink": Path(directory) / "program_pyflink.py",
                    "flintlock": Path(directory) / "program_flintlock.py"}
        programs["pyflink"].write_text(PROGRAM)
        programs["flintlock"].write_text(ported(PROGRAM))
        report: dict[str, dict[str, object]] = {}
        for variant in args.only:
            check_rows = 2000
            expected = repr(expected_result(check_rows, variant))
            for engine in engines:
                got = run(engines[engine], programs[engine], check_rows, variant, "check")
                line = re.search(r"^RESULT (.*)$", got, re.MULTILINE)
                if line is None or line.group(1) != expected:
                    raise SystemExit(f"{engine} {variant}: wrong result on {check_rows} rows")
            report[variant] = time_variant(engines, programs, variant, args.rows, args.rounds)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
