"""A job that sets no parallelism runs on the embedded session at the machine's cores, as
PyFlink's local execution does (issue 18); one that sets it keeps its own."""

from __future__ import annotations

import os
import sys

import cloudpickle
import pytest

from flintlock.common import Types
from flintlock.common.config import Configuration
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.functions import MapFunction, RuntimeContext

pytestmark = [pytest.mark.spark]
cloudpickle.register_pickle_by_value(sys.modules[__name__])


class Parallelism(MapFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.parallelism = runtime_context.get_number_of_parallel_subtasks()

    def map(self, value: int) -> int:
        return self.parallelism


def _parallelism_seen(tmp_path, configure) -> set[int]:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration().set_string("execution.checkpointing.dir", str(tmp_path / "chk")))
    configure(env)
    stream = env.from_collection(list(range(8))).rebalance().map(
        Parallelism(), output_type=Types.INT())
    return set(stream.execute_and_collect("default parallelism"))


def test_no_parallelism_means_the_machines_cores(tmp_path):
    assert _parallelism_seen(tmp_path, lambda env: None) == {os.cpu_count() or 1}


def test_a_set_parallelism_is_kept(tmp_path):
    assert _parallelism_seen(tmp_path / "one", lambda env: env.set_parallelism(1)) == {1}
