"""The embedded session's Python workers import PySpark from its installed files, with their
bytecode, not from the zip Spark puts first on their path (``flintlock.spark.worker_path``).
In a fresh interpreter, so that the job's session and its daemon are new."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCRIPT = """
import json
from flintlock.datastream import StreamExecutionEnvironment

def pyspark_file(value):
    import pyspark
    return pyspark.__file__

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(2)
numbers = env.from_collection(list(range(400))).rebalance()
print(json.dumps(sorted(set(numbers.map(pyspark_file).set_parallelism(2)
                            .execute_and_collect()))))
"""


def test_the_workers_import_the_installed_pyspark_not_sparks_zip(tmp_path):
    import pyspark

    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, str(script)], cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-6000:]
    files = json.loads(done.stdout.strip().splitlines()[-1])
    assert files == [pyspark.__file__]  # the driver's, with its bytecode
