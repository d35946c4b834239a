"""The Nexmark queries as a PyFlink user runs them: filesystem tables over the generated files,
the query's SELECT collected (``check``) or inserted into a blackhole sink and timed (``time``).

Written against PyFlink 2.3.0's API (``pyflink`` imports); ``run.py`` runs it on PyFlink in its
own virtualenv and on flintlock with the imports changed to ``flintlock`` and nothing else.

    python flink_program.py SPEC.json RESULT.json

SPEC: ``{"mode": "check"|"time"|"print", "parallelism": 2, "runs": [{"query", "sql", "sink",
"tables": {name: columns}, "data", "events", "key", "time_limit"}]}``. RESULT: per run the
elapsed seconds of the INSERT job (``time``; with a ``time_limit`` in seconds, a job still
running then is cancelled and reported as ``{"timed_out": limit}``), or the final rows of the
query's changelog (``check``; applied by ``key`` when the query has one), each row normalised
to JSON text (decimals normalised, timestamps with milliseconds); or the error a run raised.

``print`` runs every query in few jobs: one statement set per group of runs whose tables agree
(event-time queries read the tables with a watermark, the others without), each query
inserted into a ``print`` table whose identifier is the query's name, so its changelog comes
out on stdout as ``q5:1> +I[...]`` lines (``printed.py`` reads them back); RESULT says per run
whether it was planned and its job ended.
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
    result = t_env.execute_sql(f"INSERT INTO sink {run['sql']}")
    limit = run.get("time_limit")
    if not limit:
        result.wait()
        return {"elapsed": time.perf_counter() - start}
    try:
        result.wait(int(limit * 1000))
    except Exception as error:  # the limit passed (else the job's own error is raised)
        if not timed_out(error):
            raise
        cancel(result)
        return {"timed_out": limit}
    return {"elapsed": time.perf_counter() - start}


def timed_out(error):
    """Whether ``wait(timeout)`` raised because the time ran out: Python's ``TimeoutError``
    (flintlock) or Java's ``TimeoutException`` through py4j (PyFlink)."""
    return isinstance(error, TimeoutError) or "java.util.concurrent.TimeoutException" in str(error)


def cancel(result):
    """Cancels a timed-out job and waits (at most a minute) for it to end, so that the next
    run does not share the machine with it."""
    try:
        result.get_job_client().cancel().result()
        result.wait(60_000)
    except Exception:  # a cancelled job's wait raises: ended either way
        pass


def _groups(runs):
    """Runs in groups whose tables agree (a table name means the same columns in a group)."""
    groups = []
    for run in runs:
        for tables, members in groups:
            if all(tables.get(name, columns) == columns for name, columns in run["tables"].items()):
                tables.update(run["tables"])
                members.append(run)
                break
        else:
            groups.append((dict(run["tables"]), [run]))
    return groups


def print_jobs(runs, parallelism):
    """Mode ``print``: per group one job, every query of it into its own print table."""
    from pyflink.table import EnvironmentSettings, TableEnvironment

    results = []
    for tables, members in _groups(runs):
        t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        t_env.get_config().set("parallelism.default", str(parallelism))
        for table, columns in tables.items():
            t_env.execute_sql(
                f"CREATE TABLE {table} ({columns}) WITH ('connector' = 'filesystem', "
                f"'path' = '{members[0]['data']}/{table}', 'format' = 'csv')")
        statements = t_env.create_statement_set()
        planned = []
        for run in members:
            name = run["query"]
            try:
                t_env.execute_sql(f"CREATE TABLE sink_{name} ({run['sink']}) WITH ("
                                  f"'connector' = 'print', 'print-identifier' = '{name}')")
                statements.add_insert_sql(f"INSERT INTO sink_{name} {run['sql']}")
                planned.append(run)
            except Exception as error:  # reported per run, the others go on
                results.append({"query": name, "events": run["events"],
                                "error": f"{type(error).__name__}: {str(error)[:2000]}"})
        outcome = {"printed": True}
        try:
            if planned:
                statements.execute().wait()
        except Exception as error:
            outcome = {"error": f"{type(error).__name__}: {str(error)[:2000]}"}
        results += [{"query": run["query"], "events": run["events"], **outcome}
                    for run in planned]
    return results


def main():
    spec = json.loads(open(sys.argv[1]).read())
    if spec["mode"] == "print":
        results = print_jobs(spec["runs"], spec.get("parallelism", 2))
        with open(sys.argv[2], "w") as out:
            json.dump(results, out)
        return
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
