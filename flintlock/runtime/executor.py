"""Runs a stream graph with a ``JobManager`` and a ``Launcher``: what ``env.execute()``,
``execute_async()`` and ``execute_and_collect()`` come down to.

``PipelineExecutor`` turns the stream graph into a job graph, starts a JobManager on a thread
of its own, and gives the caller a ``JobClient`` (status, cancel, savepoints, the result) or a
closeable iterator over the records of a collect sink. Which launcher starts the TaskManagers
is the subclass's business (``flintlock.spark.executor`` uses a Spark barrier stage;
``flintlock.testing`` threads).

Each job gets a REST endpoint (``flintlock.runtime.rest``), started with its JobManager and
closed by the JobManager thread when the job has ended, before the result is handed out.

``execute()`` in a terminal shows a one-line progress status while it waits
(``progress.ProgressLine``), in a Jupyter notebook one updating output line
(``notebook_progress``); ``flintlock.progress-line: false`` turns both off.

Threads: the JobManager thread per job; the collect iterator is read by the caller's thread
and fed by the JobManager thread through a queue; the progress line's thread while
``execute()`` waits.
"""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from flintlock.common.config import Configuration
from flintlock.common.job_client import CloseableIterator, JobClient
from flintlock.common.job_execution_result import JobExecutionResult
from flintlock.common.job_status import JobStatus
from flintlock.common.options import execution as execution_options
from flintlock.common.options import metrics as metrics_options
from flintlock.graph.job_graph import build_job_graph
from flintlock.graph.stream_graph import StreamGraph
from flintlock.runtime.jobmanager import JobManager, JobResult, Launcher
from flintlock.runtime.notebook_progress import NotebookProgress, in_notebook
from flintlock.runtime.progress import ProgressLine
from flintlock.runtime.rest.server import RestEndpoint

_END = object()


class JobHandle(JobClient):
    """``JobClient`` of a job whose JobManager runs on a thread of this process."""

    def __init__(self, jm: JobManager, on_done: Callable[[JobResult], None] | None = None,
                 rest_endpoint: RestEndpoint | None = None) -> None:
        self.jm = jm
        self.rest_endpoint = rest_endpoint
        self._result: Future[JobExecutionResult] = Future()
        self._on_done = on_done
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"flintlock-jobmanager-{jm.job_id[:8]}")
        self._thread.start()

    def _run(self) -> None:
        try:
            result = self.jm.run()
        except BaseException as exc:  # surfaces through the result future
            self._close_rest_endpoint()
            self._result.set_exception(exc)
            if self._on_done is not None:
                self._on_done(JobResult(self.jm.job_id, JobStatus.FAILED, 0, 0, exc))
            return
        self._close_rest_endpoint()
        if self._on_done is not None:
            self._on_done(result)
        if result.status is JobStatus.FINISHED:
            self._result.set_result(JobExecutionResult(result.job_id, result.net_runtime_ms))
        else:
            self._result.set_exception(result.error or RuntimeError(result.status.name))

    def _close_rest_endpoint(self) -> None:
        if self.rest_endpoint is not None:
            self.rest_endpoint.close()

    def get_job_id(self) -> str:
        return self.jm.job_id

    def get_job_status(self) -> Future[JobStatus]:
        return _done(self.jm.get_status())

    def cancel(self) -> Future[None]:
        self.jm.cancel()
        return _done(None)

    def stop_with_savepoint(self, advance_to_end_of_event_time: bool = False,
                            savepoint_directory: str | None = None) -> Future[str]:
        return self.jm.stop_with_savepoint(savepoint_directory,
                                           drain=advance_to_end_of_event_time)

    def trigger_savepoint(self, savepoint_directory: str | None = None) -> Future[str]:
        return self.jm.trigger_savepoint(savepoint_directory)

    def get_accumulators(self) -> Future[dict[str, Any]]:
        return _done({})

    def get_job_execution_result(self) -> Future[JobExecutionResult]:
        return self._result

    def wait(self, timeout_s: float | None = None) -> JobExecutionResult:
        return self._result.result(timeout_s)

    def join(self, timeout_s: float | None = None) -> bool:
        """Waits until the JobManager thread has ended (its RPC endpoint closed)."""
        self._thread.join(timeout_s)
        return not self._thread.is_alive()


def _done(value: Any) -> Future[Any]:
    future: Future[Any] = Future()
    future.set_result(value)
    return future


class CollectIterator(CloseableIterator):
    """The records of one collect sink as the job produces them; ends when the job ends,
    raises the job's failure, and cancels the job when closed early (or after ``limit``)."""

    def __init__(self, limit: int | None = None) -> None:
        self._queue: queue.Queue[Any] = queue.Queue()
        self._buffer: list[Any] = []
        self._limit = limit
        self._returned = 0
        self.handle: JobHandle | None = None
        self._error: BaseException | None = None

    def offer(self, records: list[Any]) -> None:
        self._queue.put(records)

    def job_done(self, result: JobResult) -> None:
        if result.status not in (JobStatus.FINISHED, JobStatus.CANCELED) and result.error:
            self._error = result.error
        self._queue.put(_END)

    def __next__(self) -> Any:
        if self._limit is not None and self._returned >= self._limit:
            self.close()
            raise StopIteration
        while not self._buffer:
            item = self._queue.get()
            if item is _END:
                self._queue.put(_END)
                if self._error is not None:
                    raise self._error
                raise StopIteration
            self._buffer = list(item)
            self._buffer.reverse()
        self._returned += 1
        return self._buffer.pop()

    def close(self) -> None:
        if self.handle is not None and not self.handle.jm.get_status().is_globally_terminal_state():
            self.handle.jm.cancel()


class PipelineExecutor:
    """Executes stream graphs; subclasses say how TaskManagers are launched."""

    def create_launcher(self, configuration: Configuration, slots_needed: int) -> Launcher:
        raise NotImplementedError

    def default_parallelism(self, configuration: Configuration) -> int | None:
        """The parallelism of operators when the job sets none (neither
        ``set_parallelism`` nor ``parallelism.default``); None: Flink's default, 1."""
        return None

    def _start(self, graph: StreamGraph, configuration: Configuration,
               on_collect: Callable[[str, list[Any]], None] | None = None,
               on_done: Callable[[JobResult], None] | None = None) -> JobHandle:
        default = self.default_parallelism(configuration)
        if default is not None and not configuration.contains_key(
                execution_options.PARALLELISM.key):
            graph.default_parallelism = default
        job_graph = build_job_graph(graph)
        from flintlock.graph.execution_graph import build_execution_graph
        from flintlock.graph.scheduling import plan_allocation_for

        plan = plan_allocation_for(build_execution_graph(job_graph), configuration)
        launcher = self.create_launcher(configuration, plan.slots_needed)
        rest_endpoint = RestEndpoint.bind(configuration)
        try:
            jm = JobManager(job_graph, configuration, launcher, on_collect=on_collect)
        except BaseException:
            rest_endpoint.close()
            raise
        return JobHandle(jm, on_done, rest_endpoint.serve(jm))

    def execute(self, graph: StreamGraph, configuration: Configuration,
                job_name: str | None = None) -> JobExecutionResult:
        handle = self._start(graph, configuration)
        progress: ProgressLine | None = None
        if configuration.get(metrics_options.PROGRESS_LINE) and sys.stderr.isatty():
            progress = ProgressLine.for_terminal(handle.jm, sys.stderr).start()
        elif configuration.get(metrics_options.PROGRESS_LINE) and in_notebook():
            progress = NotebookProgress(handle.jm).start()
        try:
            return handle.wait()
        finally:
            if progress is not None:
                progress.stop()

    def execute_async(self, graph: StreamGraph, configuration: Configuration,
                      job_name: str | None = None) -> JobClient:
        return self._start(graph, configuration)

    def execute_and_collect(self, graph: StreamGraph, configuration: Configuration,
                            job_name: str | None, collect_id: str,
                            limit: int | None = None) -> CloseableIterator:
        iterator = CollectIterator(limit)

        def on_collect(sink_id: str, records: list[Any]) -> None:
            if sink_id == collect_id:
                iterator.offer(records)

        iterator.handle = self._start(graph, configuration, on_collect, iterator.job_done)
        return iterator
