"""Every Nexmark query in one process, its results read from ``print`` tables (issue 33).

``flink_program.py``'s ``print`` mode runs all queries as statement sets (one job per group of
queries reading the same tables), each query into a print table named after it; this module
builds that spec (``print_spec``), reads the printed changelogs back into each query's final
rows (``final_printed``: lines ``q5:1> +I[1000, 783]``; applied by the query's unique key
when it has one, since an engine may send an update as ``+U`` alone, else as a multiset) and
writes the reference digests from PyFlink 2.3.0:

    .venv/bin/python -m benchmarks.nexmark.printed --events 2000 \\
        --pyflink-python /tmp/pyflink-venv/bin/python \\
        --out tests/table/nexmark_expected/pyflink_2000.json

Rows are compared as the print connector writes them (Java's value formatting, which
flintlock's print connector reproduces), so the digests also check the printed text. Queries
whose ties let an engine pick another of equal rows (``result = "keys"``) compare their row
count only (``matches``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.nexmark import generate
from benchmarks.nexmark.queries import QUERIES, Query, table_columns, write_side_input
from flintlock.datastream.connectors.nexmark.config import from_options

HERE = Path(__file__).resolve().parent
LINE = re.compile(r"^(\w+)(?::\d+)?> ([+-][IUD])\[(.*)\]$")


def write_events(directory: Path, events: int) -> Path:
    """The generated events (and q13's side table) under ``directory``."""
    generate.write(from_options({"events.num": str(events)}), directory)
    write_side_input(directory)
    return directory


def print_spec(data: Path, events: int, queries: tuple[Query, ...] = QUERIES,
               parallelism: int = 2) -> dict[str, Any]:
    return {"mode": "print", "parallelism": parallelism,
            "runs": [{"query": q.name, "sql": q.sql, "sink": q.sink, "key": q.key,
                      "tables": table_columns(q), "data": str(data), "events": events}
                     for q in queries]}


def final_printed(text: str, queries: tuple[Query, ...] = QUERIES) -> dict[str, list[str]]:
    """Per query, the rows its printed changelog leaves, sorted (each row's text between the
    brackets)."""
    by_name = {q.name: q for q in queries}
    keyed: dict[str, dict[tuple[str, ...], str]] = {q.name: {} for q in queries if q.key}
    counted: dict[str, Counter[str]] = {q.name: Counter() for q in queries if not q.key}
    for line in text.splitlines():
        match = LINE.match(line.strip())
        if match is None or match.group(1) not in by_name:
            continue
        name, kind, row = match.groups()
        query = by_name[name]
        if query.key:
            values = row.split(", ")
            key = tuple(values[i] for i in query.key)
            if kind in ("+I", "+U"):
                keyed[name][key] = row
            else:
                keyed[name].pop(key, None)
        elif kind in ("+I", "+U"):
            counted[name][row] += 1
        else:
            counted[name][row] -= 1
    rows = {name: sorted(found.values()) for name, found in keyed.items()}
    rows.update({name: sorted((+found).elements()) for name, found in counted.items()})
    return rows


def digests(rows: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    from benchmarks.nexmark.run import digest

    return {name: digest(found) for name, found in sorted(rows.items())}


def matches(query: Query, got: dict[str, Any], expected: dict[str, Any]) -> bool:
    """Whether ``got`` (a digest) gives the reference's result for ``query``."""
    if query.result == "keys":
        return bool(got["rows"] == expected["rows"])
    return got == expected


def run_program(python: str, spec: dict[str, Any], workdir: Path) -> tuple[str, list[Any]]:
    """Runs ``flink_program.py`` (as it is: the PyFlink program) on ``python``; returns its
    stdout and its per-run results."""
    (workdir / "spec.json").write_text(json.dumps(spec))
    program = workdir / "program.py"
    program.write_text((HERE / "flink_program.py").read_text())
    env = dict(os.environ, TZ="UTC")
    done = subprocess.run([python, str(program), str(workdir / "spec.json"),
                           str(workdir / "result.json")], capture_output=True, text=True,
                          env=env, cwd=workdir, timeout=3600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the program failed (exit {done.returncode}):\n{done.stderr[-4000:]}")
    return done.stdout, json.loads((workdir / "result.json").read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--pyflink-python", required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="nexmark-printed-") as work:
        data = write_events(Path(work) / "events", args.events)
        stdout, results = run_program(args.pyflink_python, print_spec(data, args.events),
                                      Path(work))
    errors = {r["query"]: r["error"] for r in results if "error" in r}
    rows = final_printed(stdout)
    output = {"events": args.events, "engine": "PyFlink 2.3.0", "errors": errors,
              "digests": {name: d for name, d in digests(rows).items() if name not in errors}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(output, indent=2, sort_keys=True) + "\n")
    for name, digest in output["digests"].items():
        print(f"{name}: {digest['rows']} rows")
    for name, error in errors.items():
        print(f"{name}: ERROR {error.splitlines()[0][:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
