"""TaskManagers launched as a barrier stage on an embedded local[2] session (one per module)."""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterator
from pathlib import Path

import cloudpickle
import pytest

from flintlock.common.config import Configuration
from flintlock.runtime.auth import new_job_secret
from flintlock.spark.errors import InsufficientSlotsError, JobAttemptCancelled, JobAttemptFailed
from flintlock.spark.launcher import LaunchHandle, launch_task_managers, make_spec
from flintlock.spark.session import available_slots, context_for_job
from tests.spark import tm_mains
from tests.spark.tm_mains import WAIT_S, FakeJobManager

pytestmark = pytest.mark.spark
cloudpickle.register_pickle_by_value(tm_mains)
_attempts = itertools.count()


@pytest.fixture(scope="module")
def context() -> Iterator[object]:
    # not stopped at the end: the next module reuses it instead of starting another JVM
    yield context_for_job(Configuration(), slots_needed=2)


@pytest.fixture
def jm() -> Iterator[FakeJobManager]:
    stdout = io.StringIO()
    job_manager = FakeJobManager(new_job_secret(), stdout)
    yield job_manager
    job_manager.close()


def launch(context: object, jm: FakeJobManager, main: object, count: int = 2,
           secret: bytes | None = None) -> LaunchHandle:
    spec = make_spec("test", next(_attempts), count, jm.server.address,
                     secret or jm.secret, main)  # type: ignore[arg-type]
    return launch_task_managers(context, spec, jm.reports)  # type: ignore[arg-type]


def test_the_embedded_session_is_loopback_local_and_quiet(context):
    conf = context.getConf()
    assert context.master == "local[2]"
    assert conf.get("spark.driver.host") == "127.0.0.1"
    assert conf.get("spark.ui.enabled") == "false"
    assert available_slots(context) == 2
    assert context_for_job(Configuration(), slots_needed=1) is context


def test_the_embedded_session_is_set_up_to_start_fast(context):
    conf = context.getConf()
    assert conf.get("spark.python.daemon.module") == "flintlock.spark.daemon"
    assert "-XX:TieredStopAtLevel=1" in conf.get("spark.driver.extraJavaOptions")


def test_task_managers_register_print_to_the_driver_and_return(context, jm):
    results = launch(context, jm, tm_mains.register_print_and_report).wait(WAIT_S)
    assert [r["index"] for r in results] == [0, 1]
    registered = {jm.registered.get(timeout=WAIT_S).tm_index for _ in range(2)}
    assert registered == {0, 1}
    output = jm.stdout.getvalue()
    assert "hello from TM 0\n" in output and "hello from TM 1\n" in output
    assert output.count("no newline at the end\n") == 2


def test_a_reused_worker_keeps_nothing_of_the_previous_attempt(context, jm, tmp_path: Path):
    (tmp_path / "flintlock_test_job_module.py").write_text("VALUE = 42\n")
    first = launch(context, jm, tm_mains.import_job_module_and_start_a_thread(str(tmp_path)))
    assert [r["value"] for r in first.wait(WAIT_S)] == [42, 42]
    second = launch(context, jm, tm_mains.report_interpreter_state(str(tmp_path))).wait(WAIT_S)
    assert {r["pid"] for r in second} & {r["pid"] for r in first.wait(0)}, "no worker reused"
    for state in second:
        assert state["foreign_threads"] == []
        assert not state["job_module_loaded"] and not state["job_path_present"]


def test_a_failing_task_manager_surfaces_its_own_exception(context, jm):
    with pytest.raises(JobAttemptFailed) as info:
        launch(context, jm, tm_mains.fail_in_tm_1).wait(WAIT_S)
    (failure,) = info.value.failures
    assert (failure.tm_index, failure.type_name) == (1, "ValueError")
    assert failure.message == "bad record in TM 1"
    assert "in fail_in_tm_1" in failure.traceback
    text = str(info.value)
    assert "ValueError: bad record in TM 1" in text
    assert "Py4J" not in text and "\tat org.apache" not in text


def test_a_crashed_worker_is_named_without_the_jvm_trace(context, jm):
    with pytest.raises(JobAttemptFailed) as info:
        launch(context, jm, tm_mains.exit_hard_in_tm_1).wait(WAIT_S)
    (failure,) = info.value.failures
    assert failure.tm_index == 1 and failure.type_name == "PythonWorkerCrashed"
    assert "org.apache" not in str(info.value)


def test_a_task_manager_that_cannot_authenticate_is_parsed_from_sparks_error(context, jm):
    with pytest.raises(JobAttemptFailed) as info:
        launch(context, jm, tm_mains.register_print_and_report, secret=b"x" * 32).wait(WAIT_S)
    failure = info.value.failures[0]
    assert failure.type_name.endswith("AuthenticationError")
    assert "wrong secret" in failure.message
    assert "Traceback (most recent call last):" in failure.traceback
    assert "pyspark.zip" not in failure.traceback and "\tat " not in failure.traceback


def test_a_hanging_attempt_is_cancelled_and_the_session_stays_usable(context, jm):
    handle = launch(context, jm, tm_mains.register_and_hang)
    for _ in range(2):
        jm.registered.get(timeout=WAIT_S)
    assert not handle.done()
    handle.cancel()
    with pytest.raises(JobAttemptCancelled):
        handle.wait(WAIT_S)
    assert handle.done()
    assert len(launch(context, jm, tm_mains.register_print_and_report).wait(WAIT_S)) == 2


def test_too_many_task_managers_fail_fast_naming_needed_and_available(context, jm):
    with pytest.raises(InsufficientSlotsError, match=r"needs 3 task slots .* offers 2"):
        launch(context, jm, tm_mains.register_print_and_report, count=3)
