"""The entry point of a TaskManager inside a Spark barrier task, and what it cleans up.

``TaskManagerEntry`` is what ``mapPartitions`` runs on an executor. It is a module-level class
holding a ``TaskManagerPayload`` (JM address, job secret, attempt, TM count, configuration,
and the TaskManager main function cloudpickled), so it pickles by reference and the executor's
Python worker imports this module. It finds its TM index (the barrier partition id), and
``run_task_manager`` then:

1. connects to the JobManager's RPC endpoint, proves the job secret, and tells the JM when
   this worker process started and how long loading the main and connecting took
   (``TaskManagerStarted``: the start-up timeline, ``benchmarks/startup.py``);
2. runs ``main(TaskManagerContext)`` with ``forward_stdout`` active, so what the TM prints
   (``ds.print()``) travels to the driver as ``StdoutForwarded`` messages and is written to
   the driver's console, in order, line by line;
3. when ``main`` returns, calls ``TaskManagerFinished`` (its reply means the JM has written
   every line this TM forwarded); if ``main`` raises, reports ``TaskManagerFailed`` (the
   exception pickled plus its formatted traceback) with a ``call``, so the JM has it before
   Spark aborts the stage, and re-raises so Spark fails the barrier stage;
4. always cleans up, because Spark reuses Python workers (``spark.python.worker.reuse``):
   restores ``sys.stdout`` and ``sys.path``, closes the RPC connection (joining its threads),
   unloads modules first imported during the run that are not installed packages or the
   standard library, and joins threads the run started. A job's own code is unloaded and
   retired by the TaskManager (``usercode.loader``); when threads of the job outlive it (or
   the run's threads outlive a bounded wait), ``retire_worker`` ends this worker as soon as
   PySpark's daemon takes it back, and the JM hears of it (``WorkerRetired``).

A TaskManager main registers the functions for the messages the JM pushes on
``context.dispatcher`` *before* it announces itself to the JM. A job's main is
``SparkTaskManagerMain``: the runtime's ``TaskManager`` on the connection opened here. It lives
in this module, which every barrier task imports anyway, so that unpickling it imports nothing
of the JobManager's (0.1-0.2 s less per worker); it imports the TaskManager's modules when it
runs, so that the driver, which imports this module for the payload types, does not (0.06-0.09
s less before the JVM starts; ``flintlock.spark.daemon`` imports them ahead of the workers).

Thread ownership: everything here runs on the Python worker's main thread, except
``_ForwardingStream.write``, which any TM thread may call (guarded by its lock).
"""

from __future__ import annotations

import gc
import io
import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import cloudpickle

from flintlock.common.config import Configuration
from flintlock.runtime import messages
from flintlock.runtime.rpc import (
    MessageDispatcher,
    RemoteFailure,
    RpcClient,
    RpcConnection,
    RpcError,
)
from flintlock.spark.collector import tuned_collector
from flintlock.usercode.leaks import leftover_threads
from flintlock.usercode.shipping import is_job_module

LOG = logging.getLogger(__name__)
THREAD_JOIN_BUDGET_S = 5.0
_RUNTIME_PATTERNS = ("pyspark.", "py4j.", "cloudpickle.")
REPORT_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class TaskManagerFailed:
    """TM → JM: the TaskManager's main function raised ``failure``."""

    attempt: int
    tm_index: int
    failure: RemoteFailure


@dataclass(frozen=True, slots=True)
class TaskManagerFinished:
    """TM → JM (a call, after its last ``StdoutForwarded``): main returned normally. When the
    reply arrives, the JM has processed everything this TM sent before."""

    attempt: int
    tm_index: int


@dataclass(frozen=True, slots=True)
class TaskManagerStarted:
    """TM → JM, once connected: wall-clock times (``time.time()``, this worker's clock) of
    the start-up steps that only the worker sees. ``process_started_s`` is when the Python
    worker process was forked (None where /proc is unavailable); with Spark's worker reuse it
    may be long before this attempt."""

    attempt: int
    tm_index: int
    process_started_s: float | None
    entered_s: float
    main_loaded_s: float
    connected_s: float


@dataclass(frozen=True, slots=True)
class StdoutForwarded:
    """TM → JM: complete lines the TaskManager wrote to its stdout."""

    attempt: int
    tm_index: int
    text: str


@dataclass(frozen=True, slots=True)
class TaskManagerPayload:
    """What every TaskManager of one attempt receives (the TM index comes from Spark)."""

    jm_host: str
    jm_port: int
    secret: bytes
    attempt: int
    num_task_managers: int
    config: dict[str, Any]
    main: bytes
    connect_timeout_s: float = 30.0


@dataclass(frozen=True, slots=True)
class TaskManagerContext:
    """What a TaskManager main function is given."""

    tm_index: int
    attempt: int
    num_task_managers: int
    config: Configuration
    jm: RpcConnection
    dispatcher: MessageDispatcher
    secret: bytes


TaskManagerMain = Callable[[TaskManagerContext], object]


class _ForwardingStream(io.TextIOBase):
    """A text stream that sends each complete line to the JM; a partial line waits."""

    def __init__(self, jm: RpcConnection, attempt: int, tm_index: int, fallback: Any) -> None:
        self._jm = jm
        self._attempt = attempt
        self._tm_index = tm_index
        self._fallback = fallback
        self._lock = threading.Lock()
        self._partial = ""  # guarded by _lock

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            pending = self._partial + text
            cut = pending.rfind("\n") + 1
            self._partial = pending[cut:]
            if cut:
                self._send(pending[:cut])
        return len(text)

    def drain(self) -> None:
        """Send a trailing partial line (the run is over)."""
        with self._lock:
            if self._partial:
                self._send(self._partial + "\n")
                self._partial = ""

    def _send(self, lines: str) -> None:
        try:
            self._jm.tell(StdoutForwarded(self._attempt, self._tm_index, lines))
        except RpcError:
            self._fallback.write(lines)


@contextmanager
def forward_stdout(jm: RpcConnection, attempt: int, tm_index: int) -> Iterator[None]:
    """Send what this process prints to the driver for the duration of the block."""
    original = sys.stdout
    stream = _ForwardingStream(jm, attempt, tm_index, original)
    sys.stdout = stream
    try:
        yield
    finally:
        sys.stdout = original
        stream.drain()


class _ProcessSnapshot:
    """Interpreter state before a run, to restore or check afterwards (worker reuse)."""

    def __init__(self) -> None:
        self.threads = set(threading.enumerate())
        self.modules = set(sys.modules)
        self.path = list(sys.path)

    def restore(self) -> None:
        sys.path[:] = self.path
        for name in [n for n in sys.modules if n not in self.modules]:
            module = sys.modules.get(name)
            if module is not None and is_job_module(module, _RUNTIME_PATTERNS):
                del sys.modules[name]
        if _retiring:  # the TaskManager already waited for and reported its threads
            return
        alive = leftover_threads(self.threads, THREAD_JOIN_BUDGET_S)
        if alive:
            retire_worker(tuple(t.name for t in alive))


def process_start_time() -> float | None:
    """When this process was started, as a ``time.time()`` value (Linux /proc: 10 ms
    resolution), else None."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            ticks = int(stat.read().rsplit(b")", 1)[1].split()[19])
        with open("/proc/uptime", "rb") as uptime:
            up_s = float(uptime.read().split()[0])
        return time.time() - up_s + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def run_task_manager(payload: TaskManagerPayload, tm_index: int) -> object:
    """Run one TaskManager to completion (see the module doc); returns what main returned."""
    entered = time.time()
    snapshot = _ProcessSnapshot()
    try:
        main: TaskManagerMain = cloudpickle.loads(payload.main)
        loaded = time.time()
        dispatcher = MessageDispatcher()
        jm = RpcClient.connect(payload.jm_host, payload.jm_port, payload.secret, dispatcher,
                               timeout_s=payload.connect_timeout_s)
        try:
            jm.tell(TaskManagerStarted(payload.attempt, tm_index, process_start_time(),
                                       entered, loaded, time.time()))
            context = TaskManagerContext(tm_index, payload.attempt, payload.num_task_managers,
                                         Configuration(payload.config), jm, dispatcher,
                                         payload.secret)
            return _run_main(main, context)
        finally:
            jm.close()
    finally:
        snapshot.restore()


def _run_main(main: TaskManagerMain, context: TaskManagerContext) -> object:
    try:
        with forward_stdout(context.jm, context.attempt, context.tm_index), \
                tuned_collector(context.config):
            result = main(context)
        context.jm.call(TaskManagerFinished(context.attempt, context.tm_index), REPORT_TIMEOUT_S)
        return result
    except BaseException as exc:
        report = TaskManagerFailed(context.attempt, context.tm_index, RemoteFailure.capture(exc))
        try:
            context.jm.call(report, REPORT_TIMEOUT_S)
        except Exception as report_error:
            LOG.warning("could not report the TaskManager failure to the JM: %s", report_error)
        raise


class SparkTaskManagerMain:
    """The TaskManager main of a job's barrier task (see the module doc)."""

    def __init__(self, job_id: str, jm_host: str, jm_port: int) -> None:
        self.job_id = job_id
        self.jm_host = jm_host
        self.jm_port = jm_port

    def __call__(self, context: TaskManagerContext) -> None:
        from flintlock.runtime.taskmanager import TaskManager

        payload = messages.TaskManagerPayload(
            self.job_id, context.attempt, context.tm_index, self.jm_host, self.jm_port,
            context.secret, context.config.raw_items())
        task_manager = TaskManager(payload, connection=context.jm, dispatcher=context.dispatcher,
                                   owns_process=True, locate_file=shipped_file)
        try:
            task_manager.run()
        finally:
            leftover = task_manager.leftover_threads
            if leftover:
                names = tuple(t.name for t in leftover)
                retire_worker(names)
                try:
                    context.jm.tell(WorkerRetired(context.attempt, context.tm_index,
                                                  os.getpid(), socket.gethostname(),
                                                  self.job_id, names))
                except RpcError:
                    LOG.warning("could not tell the JM that this worker retires")


def shipped_file(name: str) -> str:
    """Where Spark put the job file ``name`` on this executor (``SparkContext.addFile``)."""
    from pyspark import SparkFiles

    path = SparkFiles.get(name)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"the job file {name} did not reach this executor (looked in {path}); it is "
            "shipped with SparkContext.addFile when the job is submitted")
    return path


_retiring: tuple[str, ...] = ()
"""Threads that outlived a job in this process; set once, the process ends when idle."""


def retire_worker(threads: tuple[str, ...]) -> None:
    """Ends this Python worker once Spark's daemon has taken back control after the current
    task, instead of letting it be reused: ``threads`` of an ended job still run in it.

    PySpark's daemon runs ``gc.collect()`` in a reused worker between two tasks, after the
    finished task's result and end-of-stream marker were written; a collection callback that
    sees it called from there ends the process. Spark discards a dead worker from its idle
    pool. Without worker reuse the process ends after the task anyway."""
    global _retiring
    if _retiring:
        return
    _retiring = threads
    LOG.error("Python worker %d on %s retires: thread(s) %s outlived their job",
              os.getpid(), socket.gethostname(), list(threads))

    def end_when_idle(phase: str, info: dict[str, int]) -> None:
        if phase != "start" or threading.current_thread() is not threading.main_thread():
            return
        caller = sys._getframe(1)
        if caller.f_code.co_filename.endswith(os.path.join("pyspark", "daemon.py")):
            logging.shutdown()
            sys.stderr.flush()
            os._exit(0)

    gc.callbacks.append(end_when_idle)


@dataclass(frozen=True, slots=True)
class WorkerRetired:
    """TM → JM: threads of the job outlived this TaskManager; its Python worker ends instead
    of being reused (``retire_worker``)."""

    attempt: int
    tm_index: int
    pid: int
    host: str
    job_id: str
    threads: tuple[str, ...]


class TaskManagerEntry:
    """The picklable function a barrier stage's ``mapPartitions`` runs (one TM per task)."""

    def __init__(self, payload: TaskManagerPayload) -> None:
        self.payload = payload

    def __call__(self, partition: Iterable[int]) -> Iterator[tuple[int, object]]:
        from pyspark import BarrierTaskContext

        tm_index = BarrierTaskContext.get().partitionId()
        yield tm_index, run_task_manager(self.payload, tm_index)
