"""Two TaskManagers on two executors of a standalone cluster find each other through the JM."""

from __future__ import annotations

import collections
import os
import sys
from collections.abc import Iterator

import cloudpickle
import pytest

from flintlock.common.config import Configuration
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.runtime.auth import new_job_secret
from flintlock.spark.errors import InsufficientSlotsError
from flintlock.spark.launcher import launch_task_managers, make_spec
from flintlock.spark.session import (
    active_context,
    available_slots,
    check_capacity,
    context_for_job,
    wait_for_slots,
)
from flintlock.testing.spark_cluster import StandaloneCluster
from tests.spark import tm_mains
from tests.spark.tm_mains import WAIT_S, FakeJobManager

pytestmark = pytest.mark.spark
cloudpickle.register_pickle_by_value(tm_mains)
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def cluster_context() -> Iterator[object]:
    previous = active_context()
    if previous is not None:
        previous.stop()
    with StandaloneCluster(workers=2, cores_per_worker=1) as cluster:
        config = Configuration({
            "flintlock.spark.master": cluster.master_url,
            "spark.executor.cores": "1",
            "spark.executor.memory": "512m",
            "spark.cores.max": "2",
        })
        sc = context_for_job(config, slots_needed=2)
        try:
            wait_for_slots(sc, 2, timeout_s=WAIT_S)
            yield sc
        finally:
            sc.stop()


def test_task_managers_on_two_executors_exchange_a_message(cluster_context):
    secret = new_job_secret()
    jm = FakeJobManager(secret)
    try:
        spec = make_spec("cluster", 0, 2, jm.server.address, secret, tm_mains.exchange_over_tcp)
        results = launch_task_managers(cluster_context, spec, jm.reports).wait(WAIT_S * 2)
    finally:
        jm.close()
    assert cluster_context.master.startswith("spark://127.0.0.1:")
    assert [r["index"] for r in results] == [0, 1]
    assert results[1]["received"] == "hello from TM 0"
    assert results[0]["cwd"] != results[1]["cwd"], "both TaskManagers ran in one executor"


def test_slots_are_the_executor_cores_of_the_cluster(cluster_context):
    assert available_slots(cluster_context) == 2
    with pytest.raises(InsufficientSlotsError, match=r"needs 3 task slots .* offers 2"):
        check_capacity(cluster_context, 3)


def _word_pairs(line):
    return [(word, os.getpid()) for word in line.split()]


def test_a_keyed_job_runs_across_two_executors(cluster_context, tmp_path):
    """A flintlock job submitted with master spark://...: its two TaskManagers run in two
    executors and the keyed exchange between them crosses TCP."""
    lines = ["a b c d", "b c d e", "c d e f"] * 50
    config = Configuration().set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(300)
    counts = (env.from_collection(lines)
              .flat_map(_word_pairs)
              .key_by(lambda pair: pair[0])
              .map(lambda pair: (pair[0], 1, pair[1], os.getpid()))
              .key_by(lambda t: t[0])
              .reduce(lambda a, b: (a[0], a[1] + b[1], a[2], a[3])))
    final, consumers = {}, set()
    for word, count, _, consumer_pid in counts.execute_and_collect("across executors"):
        final[word] = max(count, final.get(word, 0))
        consumers.add(consumer_pid)
    assert final == dict(collections.Counter(w for line in lines for w in line.split()))
    assert len(consumers) == 2, "the keyed operators did not run in two processes"


def test_the_jobs_files_reach_executors_of_the_cluster(cluster_context, tmp_path):
    """``add_python_file`` on a standalone cluster: Spark's file server brings the directory
    to each executor, where a function imports it lazily and reads a data file beside it."""
    library = tmp_path / "cluster_lib"
    library.mkdir()
    (library / "cluster_helper.py").write_text(
        "import os\n"
        "def greeting():\n"
        "    here = os.path.dirname(__file__)\n"
        "    with open(os.path.join(here, 'greeting.txt')) as handle:\n"
        "        return handle.read().strip()\n")
    (library / "greeting.txt").write_text("hello from the job's files\n")
    config = Configuration().set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.add_python_file(str(library))

    def greet(x):
        import cluster_helper
        return cluster_helper.greeting(), os.getcwd()

    rows = list(env.from_collection(list(range(10))).rebalance().map(greet)
                .execute_and_collect("job files on a cluster"))
    assert {greeting for greeting, _ in rows} == {"hello from the job's files"}
    assert len({cwd for _, cwd in rows}) == 2  # two executors, each with its own copy
