"""The embedded session starts its Python workers while the JobManager is set up, and the first
job's TaskManagers run in those workers (``flintlock.spark.prestart``); the workers import
PySpark from its installed files, not from the zip Spark puts on their path
(``flintlock.spark.worker_path``). Each case in a fresh interpreter: a context is built once
per process, so only a new one shows its first job."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCRIPT = """
import json, os, sys
from flintlock.common.config import Configuration
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.spark.session import active_context, prestarted

def worker_pid(value):
    return os.getpid()

def pyspark_file(value):
    import pyspark
    return pyspark.__file__

config = Configuration()
if sys.argv[1] == "off":
    config.set_string("flintlock.spark.prestart-workers", "false")
env = StreamExecutionEnvironment.get_execution_environment(config)
env.set_parallelism(2)
numbers = env.from_collection(list(range(400))).rebalance()
pids = sorted(set(numbers.map(worker_pid).set_parallelism(2).execute_and_collect()))
files = sorted(set(numbers.map(pyspark_file).set_parallelism(2).execute_and_collect()))
prestart = prestarted(active_context())
print(json.dumps({"job": pids, "pyspark": files, "prestarted": None if prestart is None else
                  sorted(prestart.pids) if prestart.wait(60) else "still running"}))
"""


def _first_job(tmp_path, prestart: str) -> dict:
    script = tmp_path / "first_job.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, str(script), prestart], cwd=str(tmp_path),
                          env=dict(os.environ), capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr[-6000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def prestarted_job(tmp_path_factory) -> dict:
    return _first_job(tmp_path_factory.mktemp("prestart"), "on")


def test_the_first_jobs_task_managers_run_in_the_workers_started_beforehand(prestarted_job):
    out = prestarted_job
    assert len(out["job"]) == 2  # two TaskManagers, two worker processes
    assert out["prestarted"] == out["job"]


def test_the_workers_import_the_installed_pyspark_not_sparks_zip(prestarted_job):
    import pyspark

    out = prestarted_job
    assert out["pyspark"] == [pyspark.__file__]  # the driver's, with its bytecode


def test_without_prestart_no_empty_job_runs(tmp_path):
    out = _first_job(tmp_path, "off")
    assert len(out["job"]) == 2
    assert out["prestarted"] is None
