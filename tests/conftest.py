"""Test-wide settings: every test talks to loopback only, what collection made is frozen, and
only a test marked ``spark`` runs a job on Spark.

Collecting the whole suite leaves about 330,000 container objects (modules, test modules,
parameters) that live until the process ends; a full collection visits them all, 330-350 ms
after collection and 650 ms by the end of tests/unit, a pause long enough to lapse a test's
300 ms lease. ``pytest_collection_finish`` freezes them (``gc.freeze``): full collections then
visit only what the tests made since. A test of code that freezes or unfreezes takes the
``unfrozen_collector`` fixture.

A test not marked ``spark`` that submits a Spark job (typically one that forgot
``use_thread_executor`` and fell back to embedded Spark) starts a JVM and a Python worker per
TaskManager: 10-25 s instead of a fraction of a second, outside the Spark lock the marked tests
run under, and inside ``make test-fast``, which deselects the marked ones. The autouse fixture
below makes such a test fail at teardown, naming the cause. It imports nothing: it watches
``LaunchHandle.start`` (where every Spark attempt is submitted) when the launcher module is
already imported, and otherwise notices the launcher imported and a Spark context started
during the test.
"""

import gc
import os
import sys

import pytest

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

SPARK_LAUNCHER = "flintlock.spark.launcher"
UNMARKED_SPARK_JOB = (
    "this test is not marked spark but ran a job on Spark: run it on TaskManager threads "
    "(flintlock.testing.executor.use_thread_executor) or mark it @pytest.mark.spark")


def pytest_collection_finish(session):
    gc.collect()
    gc.freeze()  # see the module doc


@pytest.fixture
def unfrozen_collector():
    """The process unfrozen for the test (as outside pytest), frozen again afterwards."""
    gc.unfreeze()
    try:
        yield
    finally:
        gc.freeze()


def _spark_context_active() -> bool:
    pyspark = sys.modules.get("pyspark")
    return pyspark is not None and pyspark.SparkContext._active_spark_context is not None


@pytest.fixture(autouse=True)
def _spark_jobs_only_in_spark_tests(request, monkeypatch):
    if request.node.get_closest_marker("spark") is not None:
        yield
        return
    launcher = sys.modules.get(SPARK_LAUNCHER)
    context_before = _spark_context_active()
    submitted = []
    if launcher is not None:
        start = launcher.LaunchHandle.start

        def recording_start(handle):
            submitted.append(handle)
            return start(handle)

        monkeypatch.setattr(launcher.LaunchHandle, "start", recording_start)
    yield
    started_spark = (launcher is None and SPARK_LAUNCHER in sys.modules
                     and not context_before and _spark_context_active())
    if submitted or started_spark:
        pytest.fail(UNMARKED_SPARK_JOB, pytrace=False)
