"""The TaskManager bootstrap and the failure translation, without a Spark session.

``run_task_manager`` is called in this process against a real RpcServer, which is exactly
what a Spark task does minus Spark; Spark's error text is a canned sample of the shape
PySpark 4 produces.
"""

from __future__ import annotations

import gc
import io
import pickle
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import cloudpickle
import pytest

from flintlock.runtime.auth import new_job_secret
from flintlock.spark.bootstrap import TaskManagerContext, TaskManagerPayload, run_task_manager
from flintlock.spark.errors import (
    InsufficientSlotsError,
    JobAttemptFailed,
    TaskManagerFailure,
)
from flintlock.spark.launcher import parse_spark_failure
from tests.spark.tm_mains import WAIT_S, FakeJobManager, register

SPARK_FAILURE = """An error occurred while calling z:org.apache.spark.api.python.PythonRDD.\
collectAndServe.
: org.apache.spark.SparkException: Job aborted due to stage failure: Could not recover from a \
failed barrier ResultStage. Most recent failure reason: Stage failed because barrier task \
ResultTask(7, 1) finished unsuccessfully.
org.apache.spark.api.python.PythonException: [PYTHON_EXCEPTION] An exception was thrown from \
the Python worker: Traceback (most recent call last):
  File "/venv/pyspark/python/lib/pyspark.zip/pyspark/worker.py", line 4327, in invoke_udf
    run_process()
  File "/venv/pyspark/python/lib/pyspark.zip/pyspark/serializers.py", line 260, in dump_stream
    vs = list(itertools.islice(iterator, batch))
         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/job.py", line 26, in parse
    raise KeyError("user_id")
KeyError: 'user_id'
 SQLSTATE: 38000
\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(PR.scala:1)
\tat org.apache.spark.api.python.PythonRunner$$anon$5.read(PythonRunner.scala:1642)
"""

CRASH_FAILURE = """An error occurred while calling z:org.apache.spark.api.python.PythonRDD.\
collectAndServe.
: org.apache.spark.SparkException: Job aborted due to stage failure: Could not recover from a \
failed barrier ResultStage. Most recent failure reason: Stage failed because barrier task \
ResultTask(4, 0) finished unsuccessfully.
org.apache.spark.SparkException: Python worker exited unexpectedly (crashed). Consider setting ...
Caused by: java.io.EOFException
\tat java.base/java.io.DataInputStream.readInt(DataInputStream.java:398)
"""


def test_a_python_traceback_is_recovered_from_sparks_error_text():
    failure = parse_spark_failure(SPARK_FAILURE, attempt=3)
    assert failure is not None
    assert (failure.tm_index, failure.attempt) == (1, 3)
    assert (failure.type_name, failure.message) == ("KeyError", "'user_id'")
    assert failure.traceback.splitlines() == [
        "Traceback (most recent call last):",
        '  File "/work/job.py", line 26, in parse',
        '    raise KeyError("user_id")',
        "KeyError: 'user_id'",
    ]


def test_a_crashed_worker_is_recognised():
    failure = parse_spark_failure(CRASH_FAILURE, attempt=0)
    assert failure is not None and failure.tm_index == 0
    assert failure.type_name == "PythonWorkerCrashed" and failure.traceback == ""


def test_unrecognised_text_is_not_parsed():
    assert parse_spark_failure("SparkContext was shut down", attempt=0) is None


def test_errors_read_well_and_survive_pickling():
    failure = TaskManagerFailure(1, 2, "ValueError", "bad", "Traceback ...\nValueError: bad")
    failed = JobAttemptFailed(2, (failure, failure))
    slots = InsufficientSlotsError(4, 2, "local[2]")
    assert str(failed).startswith("job attempt 2 failed (and 1 other TaskManager failure(s)): "
                                  "TaskManager 1 (attempt 2) failed: ValueError: bad")
    assert "needs 4 task slots but Spark master local[2] offers 2" in str(slots)
    for error in (failure, failed, slots, JobAttemptFailed(0, (), "stopped")):
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error) and str(copy) == str(error)


# -- run_task_manager in this process --------------------------------------------------------


@pytest.fixture
def jm() -> Iterator[FakeJobManager]:
    job_manager = FakeJobManager(new_job_secret(), io.StringIO())
    yield job_manager
    job_manager.close()


def payload_for(jm: FakeJobManager, main: object, attempt: int = 0) -> TaskManagerPayload:
    host, port = jm.server.address
    return TaskManagerPayload(host, port, jm.secret, attempt, 1, {},
                              cloudpickle.dumps(main))


def test_stdout_reaches_the_driver_in_order_before_the_run_ends(jm: FakeJobManager):
    def main(context: TaskManagerContext) -> str:
        register(context)
        for index in range(100):
            print(f"line {index}")
        sys.stdout.write("partial")
        return "done"

    original = sys.stdout
    assert run_task_manager(payload_for(jm, main), tm_index=0) == "done"
    assert sys.stdout is original
    expected = "".join(f"line {index}\n" for index in range(100)) + "partial\n"
    assert jm.stdout.getvalue() == expected
    assert jm.reports.finished(0) == {0}


def test_a_failure_is_reported_to_the_jm_then_reraised(jm: FakeJobManager):
    def main(context: TaskManagerContext) -> None:
        raise RuntimeError("state backend unreachable")

    with pytest.raises(RuntimeError, match="state backend unreachable"):
        run_task_manager(payload_for(jm, main, attempt=5), tm_index=0)
    (failure,) = jm.reports.failures(5)
    assert (failure.type_name, failure.message) == ("RuntimeError", "state backend unreachable")
    assert "in main" in failure.traceback
    assert jm.reports.finished(5) == frozenset()


def test_the_run_leaves_no_thread_path_or_job_module_behind(jm: FakeJobManager, tmp_path: Path):
    (tmp_path / "flintlock_bootstrap_job_module.py").write_text("VALUE = 7\n")
    module_dir = str(tmp_path)

    def main(context: TaskManagerContext) -> int:
        sys.path.insert(0, module_dir)
        import flintlock_bootstrap_job_module  # type: ignore[import-not-found]

        release = threading.Event()
        threading.Thread(target=release.wait, name="job-helper").start()
        release.set()
        return int(flintlock_bootstrap_job_module.VALUE)

    threads_before = set(threading.enumerate())
    assert run_task_manager(payload_for(jm, main), tm_index=0) == 7
    assert "flintlock_bootstrap_job_module" not in sys.modules
    assert str(tmp_path) not in sys.path
    assert [t.name for t in threading.enumerate() if t not in threads_before] == []
    assert "pytest" in sys.modules and "cloudpickle" in sys.modules


def test_a_wrong_secret_fails_before_main_runs(jm: FakeJobManager, tmp_path: Path):
    marker = tmp_path / "main-ran"
    payload = TaskManagerPayload(*jm.server.address, b"w" * 32, 0, 1, {},
                                 cloudpickle.dumps(lambda context: marker.touch()),
                                 connect_timeout_s=WAIT_S)
    with pytest.raises(ConnectionError, match="wrong secret"):
        run_task_manager(payload, tm_index=0)
    assert not marker.exists()


def _collector_during_run(jm: FakeJobManager, config: dict[str, str]) -> tuple[object, ...]:
    def main(context: TaskManagerContext) -> tuple[object, ...]:
        register(context)
        return gc.get_threshold(), gc.get_freeze_count() > 0

    host, port = jm.server.address
    payload = TaskManagerPayload(host, port, jm.secret, 0, 1, config, cloudpickle.dumps(main))
    return run_task_manager(payload, tm_index=0)  # type: ignore[return-value]


def test_a_job_runs_with_a_tuned_collector_and_leaves_it_as_it_was(jm: FakeJobManager,
                                                                   unfrozen_collector: None):
    before = gc.get_threshold()
    threshold, frozen = _collector_during_run(jm, {})
    assert threshold == (50_000, *before[1:])
    assert frozen
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_the_collector_can_be_left_alone(jm: FakeJobManager, unfrozen_collector: None):
    before = gc.get_threshold()
    assert _collector_during_run(jm, {"flintlock.python.gc.tuned": "false"}) == (before, False)
    during = _collector_during_run(jm, {"flintlock.python.gc.young-threshold": "1234"})
    assert during == ((1234, *before[1:]), True)
