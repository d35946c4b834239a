"""The Nexmark queries as a PyFlink user runs them: filesystem tables over the generated files,
the query's SELECT collected (``check``) or inserted into a blackhole sink and timed (``time``).

Written against PyFlink 2.3.0's API (``pyflink`` imports); ``run.py`` runs it on PyFlink in its
own virtualenv and on flintlock with the imports changed to ``flintlock`` and nothing else.

    python flink_program.py SPEC.json RESULT.json

SPEC: ``{"mode": "check"|"time", "parallelism": 2, "runs": [{"query", "sql", "sink",
"tables": {name: columns}, "data", "events", "key"}]}``. RESULT: per run the elapsed seconds of
the INSERT job (``time``), or the final rows of the query's changelog (``check``; applied by
``key`` when the query has one), each row normalised to JSON text (decimals normalised,
timestamps with milliseconds); or the error a run raised.
"""

import datetime
import decimal
import json
import sys
import time
from collections import Counter


def normalised(value):
    if isinstance(value, decimal.Decimal):
        return str(value.normalize())
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    return value


def final_rows(result, key=None):
    """The rows the changelog leaves: by ``key`` (positions) for an updating query, whose
    updates may come as +U alone; else as a multiset (+I/+U add a row, -U/-D take one)."""
    if key is not None:
        keyed = {}
        for row in result.collect():
            values = [normalised(v) for v in row]
            if str(row.get_row_kind()) in ("+I", "+U"):
                keyed[tuple(values[i] for i in key)] = json.dumps(values)
            else:
                keyed.pop(tuple(values[i] for i in key), None)
        return sorted(keyed.values())
    rows = Counter()
    for row in result.collect():
        text = json.dumps([normalised(v) for v in row])
        if str(row.get_row_kind()) in ("+I", "+U"):
            rows[text] += 1
        else:
            rows[text] -= 1
            if rows[text] == 0:
                del rows[text]
    return sorted(rows.elements())


def one_run(run, mode, parallelism):
    from pyflink.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", str(parallelism))
    for table, columns in run["tables"].items():
        t_env.execute_sql(
            f"CREATE TABLE {table} ({columns}) WITH ('connector' = 'filesystem', "
            f"'path' = '{run['data']}/{table}', 'format' = 'csv')")
    if mode == "check":
        return {"rows": final_rows(t_env.execute_sql(run["sql"]), run.get("key"))}
    t_env.execute_sql(f"CREATE TABLE sink ({run['sink']}) WITH ('connector' = 'blackhole')")
    start = time.perf_counter()
    t_env.execute_sql(f"INSERT INTO sink {run['sql']}").wait()
    return {"elapsed": time.perf_counter() - start}


def main():
    spec = json.loads(open(sys.argv[1]).read())
    results = []
    for run in spec["runs"]:
        try:
            outcome = one_run(run, spec["mode"], spec.get("parallelism", 2))
        except Exception as error:  # reported per run, the next run goes on
            outcome = {"error": f"{type(error).__name__}: {str(error)[:2000]}"}
        results.append({"query": run["query"], "events": run["events"], **outcome})
        print(run["query"], run["events"], {k: v for k, v in outcome.items() if k != "rows"},
              flush=True)
    with open(sys.argv[2], "w") as out:
        json.dump(results, out)


if __name__ == "__main__":
    main()
