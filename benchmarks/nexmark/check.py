"""The runner's result check (issue 33): every engine's final rows against PyFlink's, fast.

flintlock and PyFlink run every query in one process each through ``flink_program.py``'s
``print`` mode (a statement set per group of queries reading the same tables, each query into
a ``print`` table named after it; ``printed.final_printed`` applies the printed changelogs).
That replaced one collected job per query: PyFlink's ``collect()`` client delivers about 75
rows a second to Python, so q0 alone (4,600 rows at 5,000 events) took a minute to collect and
the check 14 minutes. Spark SS still collects each query into its memory sink (fast), and its
rows are written in the print connector's text by the query's sink types
(``spark_printed``), so all three engines are compared in one form: the digest (row count,
SHA-256 of the sorted row texts) of PyFlink's printed rows; ``keys`` queries (ties) by row
count.
"""

from __future__ import annotations

import datetime
import decimal
import json
import time
from pathlib import Path
from typing import Any

from benchmarks.nexmark import printed
from benchmarks.nexmark.queries import Query, spark_sql
from flintlock.table import types as t
from flintlock.table.formatting.java_values import print_row
from flintlock.table.type_parser import parse_data_type


def sink_type(query: Query) -> t.RowType:
    """The row type of ``query``'s sink columns."""
    row_type = parse_data_type(f"ROW<{query.sink}>")
    assert isinstance(row_type, t.RowType)
    return row_type


def _value(value: Any, data_type: t.DataType) -> Any:
    """A value of Spark's normalised JSON rows back as the Python value of ``data_type``."""
    if value is None:
        return None
    if isinstance(data_type, t.DecimalType):
        return decimal.Decimal(value)
    if isinstance(data_type, t.TimestampType):
        return datetime.datetime.fromisoformat(value)
    return value


def spark_printed(query: Query, rows: list[str]) -> list[str]:
    """Spark's rows (``spark_program.py``'s normalised JSON texts) as the print connector
    writes them between the brackets of ``+I[...]``, sorted."""
    row_type = sink_type(query)
    types = row_type.field_types()
    texts = []
    for row in rows:
        values = tuple(_value(v, f) for v, f in zip(json.loads(row), types, strict=True))
        texts.append(print_row(values, row_type)[len("+I["):-1])
    return sorted(texts)


def verdict(query: Query, got: dict[str, Any] | None, reference: dict[str, Any] | None,
            error: str | None) -> str:
    """``equal (N rows)``, ``same row count (N)``, ``differs: ...``, ``error: ...``."""
    if error is not None:
        return "error: " + error.splitlines()[0][:300]
    if got is None:
        return "no result"
    if reference is None:
        return f"{got['rows']} rows (no PyFlink reference)"
    if printed.matches(query, got, reference):
        return (f"same row count ({got['rows']})" if query.result == "keys"
                else f"equal ({got['rows']} rows)")
    return f"differs: {got['rows']} rows vs {reference['rows']} (digest differs)"


def check(engines: Any, names: list[str], queries: list[Query], data: Path, events: int,
          collected: bool = False) -> dict[str, Any]:
    """Runs the check on ``names`` and returns the verdicts and every engine's digests.
    ``collected``: every engine collects each query's rows (the JSON-normalised rows of
    ``flink_program.py``'s ``check`` mode, the form of tests/table/fixtures'
    ``nexmark_pyflink_1000.json``), one job per query: slow on PyFlink (module docstring)."""
    digests: dict[str, dict[str, dict[str, Any]]] = {}
    errors: dict[str, dict[str, str]] = {}
    wall: dict[str, float] = {}
    for engine in names:
        began = time.monotonic()
        if collected:
            digests[engine], errors[engine] = _collected(engines, engine, queries, data, events)
        elif engine == "spark":
            digests[engine], errors[engine] = _spark(engines, queries, data, events)
        else:
            spec = printed.print_spec(data, events, tuple(queries))
            results, stdout = engines.run_printing(engine, spec)
            errors[engine] = {r["query"]: r["error"] for r in results if "error" in r}
            rows = printed.final_printed(stdout, tuple(queries))
            digests[engine] = {q: d for q, d in printed.digests(rows).items()
                               if q not in errors[engine]}
        wall[engine] = round(time.monotonic() - began, 1)
    reference = digests.get("pyflink", {})
    verdicts: dict[str, dict[str, str]] = {}
    for query in queries:
        verdicts[query.name] = {}
        for engine in names:
            if engine == "spark" and spark_sql(query) is None:
                verdicts[query.name][engine] = "not run: " + query.spark_gap
                continue
            verdicts[query.name][engine] = verdict(
                query, digests[engine].get(query.name), reference.get(query.name),
                errors[engine].get(query.name))
        print(f"check {query.name}: " + "; ".join(
            f"{e} {v}" for e, v in verdicts[query.name].items()), flush=True)
    return {"verdicts": verdicts, "digests": digests, "events": events, "wall_s": wall}


def _spark(engines: Any, queries: list[Query], data: Path, events: int
           ) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    from benchmarks.nexmark.run import runs_for

    by_name = {q.name: q for q in queries}
    spec = {"mode": "check", "parallelism": 2, "runs": runs_for("spark", queries, {events: data})}
    digests, errors = {}, {}
    for result in engines.run("spark", spec):
        name = result["query"]
        if "error" in result:
            errors[name] = result["error"]
        else:
            digests[name] = printed.digests({name: spark_printed(by_name[name],
                                                                 result["rows"])})[name]
    return digests, errors


def _collected(engines: Any, engine: str, queries: list[Query], data: Path, events: int
               ) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    from benchmarks.nexmark.run import digest, runs_for

    spec = {"mode": "check", "parallelism": 2, "runs": runs_for(engine, queries, {events: data})}
    results = engines.run(engine, spec)
    errors = {r["query"]: r["error"] for r in results if "error" in r}
    return {r["query"]: digest(r["rows"]) for r in results if "rows" in r}, errors
