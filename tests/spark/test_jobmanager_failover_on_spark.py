"""JobManager failover with the TaskManagers on embedded Spark (issue 16): the driver process
(and with it its Spark session) is killed with SIGKILL after the job's second completed
checkpoint and started again with the same high-availability cluster id; the job finishes
under the same id and the exactly-once FileSink's output equals the failure-free output. The
same driver program as the threads-mode test (tests/integration/ha/driver.py), with
``spark``."""

from __future__ import annotations

import pytest

from tests.integration.ha.failover import kill_and_restart_the_driver

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def test_a_killed_spark_driver_restarted_resumes_the_job_exactly_once(tmp_path):
    kill_and_restart_the_driver(tmp_path, "spark", 6000)
