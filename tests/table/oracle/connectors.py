# ruff: noqa: E501 - the oracle programs hold long SQL text
"""Oracle: what PyFlink's datagen and print table connectors produce and refuse.

Prints each case after a ``=== CASE name`` marker; the output is tests/table/fixtures/connectors.txt.
The filesystem formats' cases are in formats.py (one program would run for an hour here).
"""

import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import case, end
from pyflink.table import EnvironmentSettings, TableEnvironment

ROOT = tempfile.mkdtemp(prefix="oracle-connectors-")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def env(streaming=True, parallelism=1):
    settings = (EnvironmentSettings.in_streaming_mode() if streaming
                else EnvironmentSettings.in_batch_mode())
    t_env = TableEnvironment.create(settings)
    t_env.get_config().set("parallelism.default", str(parallelism))
    t_env.get_config().set("table.local-time-zone", "UTC")
    return t_env


def dump(path):
    found = []
    for directory, _, names in os.walk(path):
        for name in names:
            full = os.path.join(directory, name)
            found.append((UUID.sub("<uuid>", os.path.relpath(full, path)), full))
    for shown, full in sorted(found):
        print(f"--- {shown}")
        with open(full, encoding="utf-8", errors="replace") as handle:
            sys.stdout.write(handle.read())
    sys.stdout.flush()


def run(name, statements, dump_dir=None, streaming=True, parallelism=1):
    case(name)
    t_env = env(streaming, parallelism)
    try:
        for statement in statements[:-1]:
            t_env.execute_sql(statement)
        last = statements[-1]
        if last.lstrip().upper().startswith("INSERT"):
            t_env.execute_sql(last).wait()
        else:
            with t_env.execute_sql(last).collect() as results:
                for row in results:
                    print(repr(row))
    except Exception as error:  # the oracle records failures as text
        lines = str(error).splitlines()
        starts = [i for i, line in enumerate(lines)
                  if re.match(r"^(Caused by: |: )?[a-z.]+\.[A-Za-z]*(Exception|Error): ", line.strip())]
        print("ERROR", type(error).__name__)
        for line in lines[starts[-1]:starts[-1] + 12] if starts else lines[:1]:
            if line.startswith("\tat "):
                break
            print("  ", line[:400])
    sys.stdout.flush()
    if dump_dir is not None:
        dump(dump_dir)


# -- datagen ---------------------------------------------------------------------------------
run("datagen sequence p2 print", [
    "CREATE TABLE g (id BIGINT, s STRING) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '7', 'fields.s.kind' = 'sequence', 'fields.s.start' = '11', 'fields.s.end' = '17')",
    "CREATE TABLE p (id BIGINT, s STRING) WITH ('connector' = 'print')",
    "INSERT INTO p SELECT * FROM g",
], parallelism=2)
run("datagen sequence number-of-rows smaller", [
    "CREATE TABLE g (id INT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '100', 'number-of-rows' = '3')",
    "SELECT * FROM g",
])
for name, column, options, select in [
    ("int", "a INT", "'fields.a.min' = '5', 'fields.a.max' = '5'", "a"),
    ("string length", "a STRING", "'fields.a.length' = '4'", "CHAR_LENGTH(a)"),
    ("string default", "a STRING", "", "CHAR_LENGTH(a)"),
    ("varchar default", "a VARCHAR(10)", "", "CHAR_LENGTH(a)"),
    ("varchar too long", "a VARCHAR(10)", "'fields.a.length' = '20'", "a"),
    ("char", "a CHAR(3)", "", "CHAR_LENGTH(a)"),
    ("decimal", "a DECIMAL(5, 2)", "'fields.a.min' = '1', 'fields.a.max' = '1'", "a"),
    ("boolean", "a BOOLEAN", "", "a IS NOT NULL"),
    ("array", "a ARRAY<INT>", "'fields.a.length' = '2'", "CARDINALITY(a)"),
    ("array default", "a ARRAY<INT>", "", "CARDINALITY(a)"),
    ("map", "a MAP<STRING, INT>", "'fields.a.length' = '1'", "CARDINALITY(a)"),
    ("row nested option", "a ROW<x INT, y STRING>", "'fields.a.x.min' = '4', 'fields.a.x.max' = '4'", "a.x"),
    ("date", "a DATE", "", "a = CURRENT_DATE"),
    ("timestamp past", "a TIMESTAMP(3)", "'fields.a.max-past' = '1 h'", "a IS NOT NULL"),
]:
    run(f"datagen random {name}", [
        f"CREATE TABLE g ({column}) WITH ('connector' = 'datagen', 'number-of-rows' = '2'{', ' + options if options else ''})",
        f"SELECT {select} FROM g",
    ])
run("datagen null-rate 1", [
    "CREATE TABLE g (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '2', 'fields.a.null-rate' = '1.0')",
    "SELECT * FROM g",
])
run("datagen unknown option", [
    "CREATE TABLE g (a INT) WITH ('connector' = 'datagen', 'fields.a.kind' = 'random', 'fields.a.bogus' = '1')",
    "SELECT * FROM g",
])
run("datagen sequence without end", [
    "CREATE TABLE g (a INT) WITH ('connector' = 'datagen', 'fields.a.kind' = 'sequence', 'fields.a.start' = '1')",
    "SELECT * FROM g",
])
run("datagen sequence on date", [
    "CREATE TABLE g (a DATE) WITH ('connector' = 'datagen', 'fields.a.kind' = 'sequence', 'fields.a.start' = '1', 'fields.a.end' = '3')",
    "SELECT * FROM g",
])
run("datagen bad kind", [
    "CREATE TABLE g (a INT) WITH ('connector' = 'datagen', 'fields.a.kind' = 'other')",
    "SELECT * FROM g",
])
run("datagen sequence string", [
    "CREATE TABLE g (a STRING, b DOUBLE, c DECIMAL(6, 2)) WITH ('connector' = 'datagen', 'fields.a.kind' = 'sequence', 'fields.a.start' = '8', 'fields.a.end' = '11', 'fields.b.kind' = 'sequence', 'fields.b.start' = '1', 'fields.b.end' = '4', 'fields.c.kind' = 'sequence', 'fields.c.start' = '1', 'fields.c.end' = '4')",
    "SELECT * FROM g",
])

# -- print -----------------------------------------------------------------------------------
run("print identifier p1", [
    "CREATE TABLE p (a INT, b STRING) WITH ('connector' = 'print', 'print-identifier' = 'out')",
    "INSERT INTO p VALUES (1, 'x'), (2, CAST(NULL AS STRING))",
])
run("print updates", [
    "CREATE TABLE p (k STRING, c BIGINT) WITH ('connector' = 'print')",
    "INSERT INTO p SELECT k, COUNT(*) FROM (VALUES ('a'), ('a'), ('b')) AS t(k) GROUP BY k",
])

end()
shutil.rmtree(ROOT, ignore_errors=True)
