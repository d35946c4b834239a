"""The print connector's lines on embedded Spark: a SQL job run as ``python job.py`` (as the
parity suite runs programs) prints, per subtask, what PyFlink 2.3.0 prints for it
(tests/table/fixtures/connectors.txt, case "datagen sequence p2 print")."""

import os
import subprocess
import sys
import textwrap

import pytest

from tests.table.oracle.cases import load_cases

pytestmark = [pytest.mark.spark, pytest.mark.slow]

PROGRAM = textwrap.dedent("""
    from flintlock.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "2")
    t_env.execute_sql(
        "CREATE TABLE g (id BIGINT, s STRING) WITH ('connector' = 'datagen', "
        "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '7', "
        "'fields.s.kind' = 'sequence', 'fields.s.start' = '11', 'fields.s.end' = '17')")
    t_env.execute_sql("CREATE TABLE p (id BIGINT, s STRING) WITH ('connector' = 'print')")
    t_env.execute_sql("INSERT INTO p SELECT * FROM g").wait()
""")


def test_datagen_into_print_on_spark_prints_pyflinks_lines(tmp_path):
    job = tmp_path / "job.py"
    job.write_text(PROGRAM, encoding="utf-8")
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    result = subprocess.run([sys.executable, str(job)], capture_output=True, text=True,
                            cwd=tmp_path, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [line for line in result.stdout.splitlines() if "> +I[" in line]
    flink = load_cases("connectors.txt")["datagen sequence p2 print"].splitlines()
    for subtask in ("1>", "2>"):
        assert [x for x in lines if x.startswith(subtask)] == [
            x for x in flink if x.startswith(subtask)]
