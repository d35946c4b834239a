"""Launching one job attempt's TaskManagers as a Spark barrier stage, and translating how it ends.

One Spark job per job attempt: ``sc.parallelize(range(n), n).barrier().mapPartitions(entry)``
collected on a driver thread inside a Spark job group (``flintlock-<job>-attempt-<n>``), so
``LaunchHandle.cancel`` can ``cancelJobGroup`` it (with interrupt-on-cancel: the TMs' Python
workers are killed). Spark's barrier mode schedules all n tasks together or none; a task that
fails aborts the whole stage and so the Spark job, which is what the JobManager's restart
strategy wants (it resubmits a fresh attempt).

Failure translation (docs/internals/spark.md): Spark reports a failed barrier stage as a
``Py4JJavaError`` whose text is a JVM stack trace. ``LaunchHandle.wait`` never shows that:

1. TaskManagers report their own exception (``TaskManagerFailed``) to the JM before dying;
   ``AttemptReports`` collects these per attempt, and they become ``TaskManagerFailure``s
   (type, message, Python traceback) inside ``JobAttemptFailed``, earliest first;
2. without a report (the worker crashed, or could not reach the JM), the Python traceback and
   the failed task's index are parsed out of Spark's error text (``parse_spark_failure``);
3. a cancelled job group raises ``JobAttemptCancelled``.

Thread ownership: ``LaunchHandle`` fields are written by its driver thread and published by
the ``_finished`` event; ``AttemptReports`` is called from RPC dispatcher threads and read by
``wait``, guarded by its lock.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

import cloudpickle
from pyspark import SparkContext

from flintlock.common.config import Configuration
from flintlock.runtime.rpc import MessageDispatcher, RpcConnection
from flintlock.spark.bootstrap import (
    StdoutForwarded,
    TaskManagerContext,
    TaskManagerEntry,
    TaskManagerFailed,
    TaskManagerFinished,
    TaskManagerPayload,
    TaskManagerStarted,
    WorkerRetired,
)
from flintlock.spark.errors import JobAttemptCancelled, JobAttemptFailed, TaskManagerFailure
from flintlock.spark.session import check_capacity

LOG = logging.getLogger(__name__)


class AttemptReports:
    """Collects what TaskManagers report to the JM: start-up times, failures and completions
    (per attempt) and stdout.

    ``install`` adds its functions to the JM's ``MessageDispatcher``; forwarded stdout is
    written to ``stdout`` (the driver's ``sys.stdout`` at write time by default)."""

    def __init__(self, stdout: TextIO | None = None) -> None:
        self._stdout = stdout
        self._lock = threading.Lock()
        self._failures: dict[int, list[TaskManagerFailure]] = {}  # guarded by _lock
        self._finished: dict[int, set[int]] = {}  # guarded by _lock
        self._started: dict[int, list[TaskManagerStarted]] = {}  # guarded by _lock
        self._retired: dict[int, list[WorkerRetired]] = {}  # guarded by _lock

    def install(self, dispatcher: MessageDispatcher) -> MessageDispatcher:
        dispatcher.register(TaskManagerStarted, self.on_started)
        dispatcher.register(TaskManagerFailed, self.on_failure)
        dispatcher.register(TaskManagerFinished, self.on_finished)
        dispatcher.register(StdoutForwarded, self.on_stdout)
        dispatcher.register(WorkerRetired, self.on_retired)
        return dispatcher

    def on_retired(self, connection: RpcConnection, report: WorkerRetired) -> None:
        LOG.warning("job %s attempt %d: thread(s) %s of the job outlived TaskManager %d; its "
                    "code is retired and its Python worker (process %d on %s) ends instead "
                    "of being reused (classloader.check-leaked-classloader)", report.job_id,
                    report.attempt, list(report.threads), report.tm_index, report.pid,
                    report.host)
        with self._lock:
            self._retired.setdefault(report.attempt, []).append(report)

    def retired(self, attempt: int) -> tuple[WorkerRetired, ...]:
        """The workers of ``attempt`` that retired because job threads outlived them."""
        with self._lock:
            return tuple(self._retired.get(attempt, ()))

    def on_started(self, connection: RpcConnection, report: TaskManagerStarted) -> None:
        LOG.debug("attempt %d: TaskManager %d started (process %s, entered %.3f, main loaded "
                  "%.3f, connected %.3f)", report.attempt, report.tm_index,
                  report.process_started_s, report.entered_s, report.main_loaded_s,
                  report.connected_s)
        with self._lock:
            self._started.setdefault(report.attempt, []).append(report)

    def started(self, attempt: int) -> tuple[TaskManagerStarted, ...]:
        """The start-up times the TMs of ``attempt`` reported so far."""
        with self._lock:
            return tuple(self._started.get(attempt, ()))

    def on_finished(self, connection: RpcConnection, report: TaskManagerFinished) -> None:
        with self._lock:
            self._finished.setdefault(report.attempt, set()).add(report.tm_index)

    def finished(self, attempt: int) -> frozenset[int]:
        """The TMs of ``attempt`` whose main returned normally."""
        with self._lock:
            return frozenset(self._finished.get(attempt, ()))

    def on_failure(self, connection: RpcConnection, report: TaskManagerFailed) -> None:
        failure = TaskManagerFailure(report.tm_index, report.attempt, report.failure.type_name,
                                     report.failure.message, report.failure.traceback)
        with self._lock:
            self._failures.setdefault(report.attempt, []).append(failure)

    def on_stdout(self, connection: RpcConnection, message: StdoutForwarded) -> None:
        stream = self._stdout or sys.stdout
        with self._lock:
            stream.write(message.text)
            stream.flush()

    def failures(self, attempt: int) -> tuple[TaskManagerFailure, ...]:
        with self._lock:
            return tuple(self._failures.get(attempt, ()))


@dataclass(frozen=True, slots=True)
class LaunchSpec:
    """One attempt's TaskManagers: where the JM listens and what each TM runs."""

    job_id: str
    attempt: int
    num_task_managers: int
    jm_host: str
    jm_port: int
    secret: bytes
    main: Callable[[TaskManagerContext], object]
    config: Configuration

    @property
    def job_group(self) -> str:
        return f"flintlock-{self.job_id}-attempt-{self.attempt}"

    def payload(self) -> TaskManagerPayload:
        return TaskManagerPayload(self.jm_host, self.jm_port, self.secret, self.attempt,
                                  self.num_task_managers, self.config.raw_items(),
                                  cloudpickle.dumps(self.main))


class LaunchHandle:
    """A running attempt: ``wait`` for its results, ``cancel`` it, ask if it is ``done``."""

    def __init__(self, sc: SparkContext, spec: LaunchSpec, reports: AttemptReports) -> None:
        self._sc = sc
        self._spec = spec
        self._reports = reports
        self._finished = threading.Event()
        self._cancel_requested = threading.Event()
        self._results: list[object] = []  # written by the driver thread before _finished
        self._error: BaseException | None = None  # likewise
        self._thread = threading.Thread(
            target=self._run, name=f"flintlock-launch-{spec.job_group}", daemon=True
        )

    def start(self) -> LaunchHandle:
        self._thread.start()
        return self

    def _run(self) -> None:
        sc = self._sc
        spec = self._spec
        try:
            sc.setJobGroup(spec.job_group, f"flintlock job {spec.job_id} attempt {spec.attempt}",
                           interruptOnCancel=True)
            rdd = sc.parallelize(range(spec.num_task_managers), spec.num_task_managers)
            LOG.debug("attempt %d: submitting the barrier stage of %d TaskManagers",
                      spec.attempt, spec.num_task_managers)
            pairs = rdd.barrier().mapPartitions(TaskManagerEntry(spec.payload())).collect()
            self._results = [result for _, result in sorted(pairs, key=lambda p: p[0])]
        except BaseException as exc:
            self._error = self._translate(exc)
        finally:
            self._finished.set()

    def _translate(self, exc: BaseException) -> BaseException:
        if self._cancel_requested.is_set():
            return JobAttemptCancelled(self._spec.attempt)
        reported = self._reports.failures(self._spec.attempt)
        if reported:
            return JobAttemptFailed(self._spec.attempt, reported)
        parsed = parse_spark_failure(str(exc), self._spec.attempt)
        if parsed is not None:
            return JobAttemptFailed(self._spec.attempt, (parsed,))
        return JobAttemptFailed(self._spec.attempt, (), _first_line(str(exc)))

    def wait(self, timeout_s: float | None = None) -> list[object]:
        """Block until the attempt ends; the TMs' return values by TM index, or raise the
        translated failure (``JobAttemptFailed``, ``JobAttemptCancelled``) or TimeoutError."""
        if not self._finished.wait(timeout_s):
            raise TimeoutError(f"{self._spec.job_group} still running after {timeout_s} s")
        self._thread.join()
        if self._error is not None:
            raise self._error
        return list(self._results)

    def done(self) -> bool:
        return self._finished.is_set()

    def cancel(self) -> None:
        """Cancel the attempt's Spark job (its TM processes are interrupted)."""
        self._cancel_requested.set()
        if not self._finished.is_set():
            self._sc.cancelJobGroup(self._spec.job_group)


def launch_task_managers(
    sc: SparkContext, spec: LaunchSpec, reports: AttemptReports
) -> LaunchHandle:
    """Check capacity (``InsufficientSlotsError``), then start the attempt's Spark job."""
    check_capacity(sc, spec.num_task_managers)
    return LaunchHandle(sc, spec, reports).start()


# -- parsing Spark's error text -----------------------------------------------------------

_TRACEBACK_START = "Traceback (most recent call last):"
_FAILED_TASK = re.compile(r"barrier task ResultTask\(\d+, (\d+)\)")
_CRASHED = "Python worker exited unexpectedly (crashed)"
_SPARK_FRAME = re.compile(r'^  File ".*pyspark[^"]*", line \d+, in ')
_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*)(?:: ?(.*))?$")


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip() and not line.startswith(("An error occurred while calling", "\tat ")):
            return line.lstrip(": ").strip()
    return text.strip()


def parse_spark_failure(text: str, attempt: int) -> TaskManagerFailure | None:
    """The failed TM's Python exception recovered from a Spark job failure's text, or None."""
    match = _FAILED_TASK.search(text)
    tm_index = int(match.group(1)) if match else -1
    if _TRACEBACK_START in text:
        tb_lines = _python_traceback(text[text.index(_TRACEBACK_START):])
        type_name, message = _exception_of(tb_lines)
        return TaskManagerFailure(tm_index, attempt, type_name, message, "\n".join(tb_lines))
    if _CRASHED in text:
        message = ("the TaskManager's Python worker exited unexpectedly (os._exit, a signal "
                   "or a crash in native code); no Python traceback exists")
        return TaskManagerFailure(tm_index, attempt, "PythonWorkerCrashed", message, "")
    return None


def _python_traceback(text: str) -> list[str]:
    """From 'Traceback (...)' to the exception line, without JVM frames or pyspark's own."""
    lines: list[str] = []
    skip_source = False
    for line in text.splitlines():
        if line.startswith("\tat ") or line.startswith(" SQLSTATE") or line.startswith("\n"):
            break
        if _SPARK_FRAME.match(line):
            skip_source = True
            continue
        if skip_source and line.startswith("    "):
            continue
        skip_source = False
        lines.append(line)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _exception_of(tb_lines: list[str]) -> tuple[str, str]:
    for index in range(len(tb_lines) - 1, 0, -1):
        line = tb_lines[index]
        if line.startswith(" ") or line.startswith(_TRACEBACK_START):
            continue
        found = _EXCEPTION_LINE.match(line)
        if found:
            rest = "\n".join(tb_lines[index + 1:])
            message = (found.group(2) or "") + (f"\n{rest}" if rest else "")
            return found.group(1), message
    return "Exception", tb_lines[-1] if tb_lines else ""


def make_spec(
    job_id: str, attempt: int, num_task_managers: int, jm_address: tuple[str, int],
    secret: bytes, main: Callable[[TaskManagerContext], object],
    config: Configuration | dict[str, Any] | None = None,
) -> LaunchSpec:
    """A ``LaunchSpec`` from the pieces the JobManager has at hand."""
    conf = config if isinstance(config, Configuration) else Configuration(config or {})
    return LaunchSpec(job_id, attempt, num_task_managers, jm_address[0], jm_address[1], secret,
                      main, conf)
