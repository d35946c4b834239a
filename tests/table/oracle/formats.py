# ruff: noqa: E501 - the oracle programs hold long SQL text
"""Oracle: what PyFlink's filesystem table connector writes and reads in each format.

Prints each case after a ``=== CASE name`` marker; the output is tests/table/fixtures/table_formats.txt.
Files a filesystem sink wrote are printed as ``--- <name pattern>`` then their content, sorted
by name; part-file names have their random UUID replaced by ``<uuid>``.
"""

import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import case, end
from pyflink.table import EnvironmentSettings, TableEnvironment

ROOT = tempfile.mkdtemp(prefix="oracle-formats-")
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


def q(value):
    return value.replace("'", "''")


def fs_write(name, fmt_options, values, schema, streaming=True, parallelism=1):
    path = os.path.join(ROOT, name)
    options = ", ".join(f"'{k}' = '{q(v)}'" for k, v in fmt_options.items())
    run(f"fs_write {name}", [
        f"CREATE TABLE out_t ({schema}) WITH ('connector' = 'filesystem', 'path' = '{path}', {options})",
        f"INSERT INTO out_t {values}",
    ], dump_dir=path, streaming=streaming, parallelism=parallelism)
    return path


def fs_read(name, content, fmt_options, schema):
    path = os.path.join(ROOT, "in-" + name)
    os.makedirs(path)
    with open(os.path.join(path, "data"), "w", encoding="utf-8") as handle:
        handle.write(content)
    options = ", ".join(f"'{k}' = '{v}'" for k, v in fmt_options.items())
    run(f"fs_read {name}", [
        f"CREATE TABLE in_t ({schema}) WITH ('connector' = 'filesystem', 'path' = '{path}', {options})",
        "SELECT * FROM in_t",
    ], streaming=False)


# -- filesystem: writing every type ----------------------------------------------------------
SCALARS = {
    "numbers": ("b BOOLEAN, ti TINYINT, si SMALLINT, i INT, bi BIGINT, f FLOAT, d DOUBLE, big DOUBLE, dm DECIMAL(10, 2), dm0 DECIMAL(10, 2)",
                "SELECT TRUE, CAST(1 AS TINYINT), CAST(-2 AS SMALLINT), 3, CAST(4000000000 AS BIGINT), CAST(0.1 AS FLOAT), 2.25E0, 1.0E10, CAST(12.30 AS DECIMAL(10, 2)), CAST(100 AS DECIMAL(10, 2))"),
    "number nulls": ("b BOOLEAN, i INT, d DOUBLE, dm DECIMAL(10, 2)",
                     "SELECT CAST(NULL AS BOOLEAN), CAST(NULL AS INT), CAST(NULL AS DOUBLE), CAST(NULL AS DECIMAL(10, 2))"),
    "strings": ("s STRING, vc VARCHAR(5), c CHAR(3), e STRING, n STRING, l STRING",
                "SELECT 'he said \"hi\", ok', 'ab,c', 'x', '', CAST(NULL AS STRING), 'a-long-string-without-specials'"),
    "temporal": ("dt DATE, tm TIME, ts TIMESTAMP(3), ts6 TIMESTAMP(6), ts0 TIMESTAMP(3)",
                 "SELECT DATE '2023-01-02', TIME '10:11:12', TIMESTAMP '2023-01-01 10:00:00.123', TIMESTAMP '2023-01-01 10:00:00.123456', TIMESTAMP '2023-01-01 10:00:00'"),
}
EXTRAS = {
    "bytes": ("bs BYTES", "SELECT X'01ff'"),
    "ltz": ("ltz TIMESTAMP_LTZ(3)", "SELECT TO_TIMESTAMP_LTZ(1672567200123, 3)"),
    "array": ("arr ARRAY<INT>, sarr ARRAY<STRING>", "SELECT ARRAY[1, 2], ARRAY['a', 'b c']"),
    "row": ("r ROW<x INT, y STRING>", "SELECT ROW(7, 'q')"),
    "map": ("m MAP<STRING, INT>", "SELECT MAP['a', 1, 'b', 2]"),
    "spaces": ("s STRING, t STRING", "SELECT ' lead', 'multi\nline'"),
}
for fmt in ("csv", "json"):
    for group, (schema, values) in SCALARS.items():
        fs_write(f"{fmt} {group}", {"format": fmt}, values=values, schema=schema)
    for extra, (schema, values) in EXTRAS.items():
        fs_write(f"{fmt} {extra}", {"format": fmt}, values=values, schema=schema)
fs_write("csv strings batch", {"format": "csv"}, values=SCALARS["strings"][1], schema=SCALARS["strings"][0], streaming=False)
fs_write("csv options", {"format": "csv", "csv.field-delimiter": ";", "csv.quote-character": "'", "csv.null-literal": "N/A"}, values=SCALARS["strings"][1], schema=SCALARS["strings"][0])
fs_write("csv escape", {"format": "csv", "csv.escape-character": "\\"}, values=SCALARS["strings"][1], schema=SCALARS["strings"][0])
fs_write("csv no quotes", {"format": "csv", "csv.disable-quote-character": "true"}, values="SELECT 'a', 'b c'", schema="a STRING, b STRING")
fs_write("json iso", {"format": "json", "json.timestamp-format.standard": "ISO-8601"}, values=SCALARS["temporal"][1], schema=SCALARS["temporal"][0])
fs_write("json iso ltz", {"format": "json", "json.timestamp-format.standard": "ISO-8601"}, values=EXTRAS["ltz"][1], schema=EXTRAS["ltz"][0])
fs_write("json plain decimals", {"format": "json", "json.encode.decimal-as-plain-number": "true"}, values="SELECT CAST(100 AS DECIMAL(10, 2)), CAST(12.30 AS DECIMAL(10, 2))", schema="a DECIMAL(10, 2), b DECIMAL(10, 2)")
fs_write("json map", {"format": "json"}, values="SELECT MAP['a', 1, 'b', 2], CAST(1.0 AS DECIMAL(3, 1)), CAST(123456789.125 AS DECIMAL(20, 3))", schema="m MAP<STRING, INT>, d1 DECIMAL(3, 1), d2 DECIMAL(20, 3)")
fs_write("json nulls", {"format": "json", "json.encode.ignore-null-fields": "true"}, values="SELECT 1, CAST(NULL AS STRING)", schema="a INT, b STRING")
fs_write("raw", {"format": "raw"}, values="SELECT 'line one' UNION ALL SELECT 'línea 2'", schema="s STRING")
fs_write("raw two columns", {"format": "raw"}, values="SELECT 'a', 'b'", schema="s STRING, t STRING")
fs_write("canal-json", {"format": "canal-json"},
         values="SELECT k, COUNT(*) FROM (VALUES ('a'), ('a'), ('b')) AS t(k) GROUP BY k",
         schema="k STRING, c BIGINT")
fs_write("csv updates refused", {"format": "csv"},
         values="SELECT k, COUNT(*) FROM (VALUES ('a'), ('a'), ('b')) AS t(k) GROUP BY k",
         schema="k STRING, c BIGINT")
fs_write("partitioned csv", {"format": "csv"}, values="SELECT 1, 'a' UNION ALL SELECT 2, 'b' UNION ALL SELECT 3, 'a'",
         schema="i INT, p STRING) PARTITIONED BY (p", streaming=False)
fs_write("partitioned csv streaming", {"format": "csv"}, values="SELECT 1, 'a' UNION ALL SELECT 2, 'b' UNION ALL SELECT 3, 'a'",
         schema="i INT, p STRING) PARTITIONED BY (p")
fs_write("csv p2 streaming", {"format": "csv"}, values="SELECT * FROM (VALUES (1), (2), (3), (4)) AS t(i)",
         schema="i INT", parallelism=2)

# -- filesystem: reading ---------------------------------------------------------------------
fs_read("csv", 'true,1,-2,3,4000000000,1.5,2.25,12.30,"he said ""hi"", ok",2023-01-02,10:11:12,2023-01-01 10:00:00.123,"1,2"\n',
        {"format": "csv"}, "b BOOLEAN, ti TINYINT, si SMALLINT, i INT, bi BIGINT, f FLOAT, d DOUBLE, dm DECIMAL(10, 2), s STRING, dt DATE, tm TIME, ts TIMESTAMP(3), arr STRING")
fs_read("csv empty columns", ",,,\n", {"format": "csv"}, "s STRING, i INT, d DATE, b BOOLEAN")
fs_read("csv empty string", ",x\n", {"format": "csv"}, "s STRING, t STRING")
fs_read("csv null literal", "N,1\n", {"format": "csv", "csv.null-literal": "N"}, "s STRING, i INT")
fs_read("csv bad line", "1,x\nzz,y\n3,z\n", {"format": "csv"}, "a INT, b STRING")
fs_read("csv bad line ignored", "1,x\nzz,y\n3,z\n", {"format": "csv", "csv.ignore-parse-errors": "true"}, "a INT, b STRING")
fs_read("csv short line", "1\n2,y,extra\n", {"format": "csv"}, "a INT, b STRING")
fs_read("json", '{"a": 1, "b": "x", "ts": "2023-01-01 10:00:00", "d": 1.50, "arr": [1, 2], "r": {"x": 5}, "m": {"k": 1}}\n{"a": null}\n{"b": "only b", "extra": 1}\n',
        {"format": "json"}, "a INT, b STRING, ts TIMESTAMP(3), d DECIMAL(5, 2), arr ARRAY<INT>, r ROW<x INT>, m MAP<STRING, INT>")
fs_read("json bad", '{"a": 1}\n{"a": "zz"}\n', {"format": "json"}, "a INT")
fs_read("json bad ignored", '{"a": 1}\n{"a": "zz"}\nnot json\n{"a": 3}\n', {"format": "json", "json.ignore-parse-errors": "true"}, "a INT")
fs_read("json fail on missing", '{"a": 1}\n{"b": 2}\n', {"format": "json", "json.fail-on-missing-field": "true"}, "a INT, b INT")
fs_read("raw", "one\ntwo\n", {"format": "raw"}, "s STRING")
fs_read("json iso read", '{"ts": "2023-01-01T10:00:00.5"}\n', {"format": "json", "json.timestamp-format.standard": "ISO-8601"}, "ts TIMESTAMP(3)")

end()
shutil.rmtree(ROOT, ignore_errors=True)
