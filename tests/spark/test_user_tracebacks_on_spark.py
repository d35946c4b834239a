"""A failing job script's traceback names the script's file and line, run as ``python job.py``
or through ``flintlock run`` (issue 30): the user function was shipped by value to a Spark
TaskManager and kept its file name there."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.spark

JOB = '''\
from flintlock.datastream import StreamExecutionEnvironment


def parse(value):
    return 10 // (value - 3)  # line 5, the user's bug


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_collection([1, 2, 3, 4]).map(parse).name("parse-numbers").uid("parse-uid") \
        .print()
    env.execute("boom")


if __name__ == "__main__":
    main()
'''


def _run(tmp_path, *command, relative=False):
    script = tmp_path / "boom_job.py"
    script.write_text(JOB, encoding="utf-8")
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", FLINTLOCK_HOME=str(tmp_path / "home"))
    given = script.name if relative else str(script)
    result = subprocess.run([sys.executable, *command, given], capture_output=True,
                            text=True, cwd=tmp_path, env=env, timeout=600)
    assert result.returncode != 0
    return script, result.stderr


def _assert_points_at_the_script(script, stderr):
    assert f'File "{script}", line 5, in parse' in stderr, stderr[-4000:]
    assert "return 10 // (value - 3)  # line 5, the user's bug" in stderr
    assert "<dynamic-code>" not in stderr
    assert "ZeroDivisionError" in stderr
    assert "'parse-numbers' (uid 'parse-uid')" in stderr  # the operator, by name and uid


def test_python_job_py_prints_the_scripts_file_and_line(tmp_path):
    script, stderr = _run(tmp_path)
    _assert_points_at_the_script(script, stderr)
    # JobFailedError's own message leads with the user's frame (runtime frames folded)
    summary = stderr[stderr.index("JobFailedError: job 'boom' failed"):]
    lines = summary.splitlines()
    assert "in task " in lines[1] and "'parse-numbers' (uid 'parse-uid')" in lines[1]
    header = lines.index("TaskManager traceback (most recent call last, user frames first):")
    assert f'File "{script}", line 5, in parse' in lines[header + 1]
    assert "runtime frames folded" in summary


def test_flintlock_run_prints_the_scripts_file_and_line(tmp_path):
    # given by a relative path, named by its absolute one, as python job.py names it
    script, stderr = _run(tmp_path, "-m", "flintlock.cli.main", "run", relative=True)
    error = stderr[stderr.index("error: the job script"):]
    _assert_points_at_the_script(script, error)
