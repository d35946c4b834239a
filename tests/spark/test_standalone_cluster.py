"""Two TaskManagers on two executors of a standalone cluster find each other through the JM."""

from __future__ import annotations

from collections.abc import Iterator

import cloudpickle
import pytest

from flintlock.common.config import Configuration
from flintlock.runtime.auth import new_job_secret
from flintlock.spark.errors import InsufficientSlotsError
from flintlock.spark.launcher import launch_task_managers, make_spec
from flintlock.spark.session import (
    active_session,
    available_slots,
    check_capacity,
    session_for_job,
    wait_for_slots,
)
from flintlock.testing.spark_cluster import StandaloneCluster
from tests.spark import tm_mains
from tests.spark.tm_mains import WAIT_S, FakeJobManager

pytestmark = pytest.mark.spark
cloudpickle.register_pickle_by_value(tm_mains)


@pytest.fixture(scope="module")
def cluster_session() -> Iterator[object]:
    previous = active_session()
    if previous is not None:
        previous.stop()
    with StandaloneCluster(workers=2, cores_per_worker=1) as cluster:
        config = Configuration({
            "flintlock.spark.master": cluster.master_url,
            "spark.executor.cores": "1",
            "spark.executor.memory": "512m",
            "spark.cores.max": "2",
        })
        spark = session_for_job(config, slots_needed=2)
        try:
            wait_for_slots(spark.sparkContext, 2, timeout_s=WAIT_S)
            yield spark
        finally:
            spark.stop()


def test_task_managers_on_two_executors_exchange_a_message(cluster_session):
    secret = new_job_secret()
    jm = FakeJobManager(secret)
    try:
        spec = make_spec("cluster", 0, 2, jm.server.address, secret, tm_mains.exchange_over_tcp)
        results = launch_task_managers(cluster_session, spec, jm.reports).wait(WAIT_S * 2)
    finally:
        jm.close()
    assert cluster_session.sparkContext.master.startswith("spark://127.0.0.1:")
    assert [r["index"] for r in results] == [0, 1]
    assert results[1]["received"] == "hello from TM 0"
    assert results[0]["cwd"] != results[1]["cwd"], "both TaskManagers ran in one executor"


def test_slots_are_the_executor_cores_of_the_cluster(cluster_session):
    assert available_slots(cluster_session.sparkContext) == 2
    with pytest.raises(InsufficientSlotsError, match=r"needs 3 task slots .* offers 2"):
        check_capacity(cluster_session.sparkContext, 3)
