"""Event-time SQL on flintlock and on PyFlink 2.3.0, in one run (issue 32): the same PyFlink
program on both engines, as ``benchmarks/table_sql.py`` runs its GROUP BY.

Two variants, parallelism 1, over a datagen sequence whose event time is computed from the
sequence (100 rows per second of event time, so results are deterministic)::

    window:   src(id, k AS MOD(id, 10), ts AS <id / 100 s>, WATERMARK ts - 1 s)
              -> TUMBLE(ts, 10 s) GROUP BY k, window: COUNT(*), SUM(id) -> blackhole
    interval: a JOIN b ON a.k = b.k AND a.ts BETWEEN b.ts - INTERVAL '1' SECOND AND b.ts
              (k = MOD(id, 1000): each row joins the row of the same id) -> blackhole

Each engine runs each size (N and 5N rows) in a fresh interpreter, interleaved round by
round; the program times ``execute_sql(INSERT ...).wait()``, and the marginal rate is
``4N / (t(5N) - t(N))``. Correctness in the same run: each engine also collects the query's
result on a small input, which must equal the closed-form result (so the two engines agree
row for row).

    .venv/bin/python -m benchmarks.table_sql_windows [--rows N] [--rounds R]
        [--pyflink-rows M] [--only window interval] [--pyflink-python PATH] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import textwrap
from pathlib import Path

from benchmarks.table_sql import ported, pyflink_python, run, time_variant

VARIANTS = ("window", "interval")

PROGRAM = textwrap.dedent('''
    import sys, time
    from pyflink.table import EnvironmentSettings, TableEnvironment

    rows, variant, check = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "check"
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    modulus = 10 if variant == "window" else 1000
    for name in ("a", "b") if variant == "interval" else ("src",):
        t_env.execute_sql(
            f"CREATE TABLE {name} (id BIGINT, k AS MOD(id, {modulus}), "
            "ts AS TIMESTAMPADD(SECOND, CAST(FLOOR(id / 100) AS INT), "
            "TIMESTAMP '2024-01-01 00:00:00'), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
            "WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', "
            f"'fields.id.start' = '1', 'fields.id.end' = '{rows}', "
            "'rows-per-second' = '1000000000')")
    if variant == "window":
        query = ("SELECT k, window_start, COUNT(*) AS c, SUM(id) AS s FROM TABLE(TUMBLE("
                 "TABLE src, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
                 "GROUP BY k, window_start, window_end")
        sink = "k BIGINT, ws TIMESTAMP(3), c BIGINT, s BIGINT"
    else:
        query = ("SELECT a.id, b.id FROM a JOIN b ON a.k = b.k AND "
                 "a.ts BETWEEN b.ts - INTERVAL '1' SECOND AND b.ts")
        sink = "x BIGINT, y BIGINT"
    if check:
        results = []
        with t_env.execute_sql(query).collect() as rows_out:
            for row in rows_out:
                results.append(tuple(str(row[i]) for i in range(len(row))))
        print("RESULT", sorted(results))
    else:
        t_env.execute_sql(f"CREATE TABLE sink ({sink}) WITH ('connector' = 'blackhole')")
        start = time.perf_counter()
        t_env.execute_sql("INSERT INTO sink " + query).wait()
        print("ELAPSED", time.perf_counter() - start)
''')


def expected_result(rows: int, variant: str) -> list[tuple[str, ...]]:
    """The result of ``variant`` on ``rows`` rows, computed here (values as ``str``)."""
    import datetime

    if variant == "interval":
        return sorted((str(i), str(i)) for i in range(1, rows + 1))
    epoch = datetime.datetime(2024, 1, 1)
    windows: dict[tuple[int, int], list[int]] = {}
    for i in range(1, rows + 1):
        entry = windows.setdefault((i % 10, i // 1000), [0, 0])
        entry[0] += 1
        entry[1] += i
    return sorted((str(k), str(epoch + datetime.timedelta(seconds=10 * w)), str(c), str(s))
                  for (k, w), (c, s) in windows.items())


def _check(engines: dict[str, Path], programs: dict[str, Path], variant: str) -> None:
    check_rows = 3000
    expected = repr(expected_result(check_rows, variant))
    for engine in engines:
        got = run(engines[engine], programs[engine], check_rows, variant, "check")
        line = re.search(r"^RESULT (.*)$", got, re.MULTILINE)
        if line is None or line.group(1) != expected:
            found = line.group(1)[:300] if line else got[-300:]
            raise SystemExit(f"{engine} {variant}: wrong result on {check_rows} rows: {found}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--pyflink-rows", type=int,
                        help="PyFlink's N (default --rows): its marginal time must stand out "
                             "of its start-up, so it wants a larger N than flintlock")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", nargs="*", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--pyflink-python")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    engines = {"flintlock": Path(sys.executable), "pyflink": pyflink_python(args.pyflink_python)}
    report: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory(prefix="table-windows-bench-") as directory:
        programs = {"pyflink": Path(directory) / "program_pyflink.py",
                    "flintlock": Path(directory) / "program_flintlock.py"}
        programs["pyflink"].write_text(PROGRAM)
        programs["flintlock"].write_text(ported(PROGRAM))
        for variant in args.only:
            _check(engines, programs, variant)
            report[variant] = time_variant(
                engines, programs, variant, args.rows, args.rounds,
                {"pyflink": args.pyflink_rows or args.rows})
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
