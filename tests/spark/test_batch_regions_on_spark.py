"""A BATCH job wider than the Spark application's slots finishes on embedded Spark (issue 29):
its pipelined regions are deployed one after another into the barrier tasks the application
can run, where before the JobManager refused the job (``InsufficientSlotsError``: e.g. 4 slots
needed, 2 available). The parallelism is two more than the slots of the context the job will
run in (``local[2]`` unless an earlier test left a larger one), so the job never fits."""

from __future__ import annotations

import sys

import cloudpickle
import pytest

from flintlock.common.config import Configuration
from flintlock.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from flintlock.spark.session import active_context, available_slots

pytestmark = [pytest.mark.spark]
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def test_a_batch_job_wider_than_the_slots_finishes(tmp_path):
    config = Configuration().set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
    config.set_string("flintlock.spark.master", "local[2]")
    env = StreamExecutionEnvironment.get_execution_environment(config)
    context = active_context()
    slots = max(2, available_slots(context)) if context is not None else 2
    env.set_parallelism(slots + 2)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    counts = (env.from_collection([n % 7 for n in range(700)])
              .map(lambda n: (n, 1))
              .key_by(lambda pair: pair[0])
              .reduce(lambda a, b: (a[0], a[1] + b[1])))
    assert sorted(counts.execute_and_collect()) == [(k, 100) for k in range(7)]
