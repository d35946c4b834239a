"""A job's requirements and archives on embedded Spark: each TaskManager is its own Python
worker process, installs the requirements (once per host), unpacks the archives and works in
their directory, so the job opens archived files by relative path as on PyFlink."""

from __future__ import annotations

import importlib
import os
import sys

import cloudpickle
import pytest

from flintlock.common.config import Configuration
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.testing.packages import build_tar, build_wheel

pytestmark = [pytest.mark.spark, pytest.mark.slow]
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def test_requirements_and_an_archive_reach_every_task_manager(tmp_path):
    package = f"fl_spark_dep_{os.getpid()}"
    cache = tmp_path / "wheels"
    cache.mkdir()
    build_wheel(str(cache), package, "1.0", "OFFSET = 1000\n")
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(f"{package}==1.0\n")
    archive = build_tar(str(tmp_path / "lookup.tar.gz"),
                        {"tables/names.txt": b"zero\none\ntwo\nthree\n"})

    config = Configuration().set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
    config.set_string("flintlock.python.dependencies-dir", str(tmp_path / "deps"))
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.set_python_requirements(str(requirements), str(cache))
    env.add_python_archive(archive, "lookup")

    def describe(x):
        with open("lookup/tables/names.txt") as handle:  # relative: the archives' directory
            names = handle.read().split()
        return names[x % 4], importlib.import_module(package).OFFSET + x, os.getpid()

    rows = list(env.from_collection(list(range(40))).rebalance().map(describe)
                .execute_and_collect("python dependencies on spark"))
    assert sorted((name, value) for name, value, _ in rows) == sorted(
        (["zero", "one", "two", "three"][x % 4], 1000 + x) for x in range(40))
    assert os.getpid() not in {pid for _, _, pid in rows}  # really other processes
    assert len([entry for entry in os.listdir(tmp_path / "deps")
                if entry.startswith("requirements-") and not entry.endswith(".lock")]) == 1
