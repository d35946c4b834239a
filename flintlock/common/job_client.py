"""``JobClient`` (a handle on a submitted job) and ``CloseableIterator`` (the results of
``DataStream.execute_and_collect``), as PyFlink names them, and ``JobExecutor``: what
``env.execute()`` calls.

All three are interfaces here: the Spark executor (issue #4) implements them. Asynchronous answers
are ``concurrent.futures.Future`` objects, which offer the methods of PyFlink's
``CompletableFuture`` (``result()``, ``done()``, ``cancel()``, ``exception()``,
``add_done_callback()``); ``CompletableFuture`` is exported as an alias.

Thread ownership: a client is used from the user's thread; the executor completes its futures
from its own threads.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any, Protocol

from flintlock.common.job_execution_result import JobExecutionResult
from flintlock.common.job_status import JobStatus

CompletableFuture = Future


class JobClient(abc.ABC):
    """A submitted job: its id, status, result, and cancel / savepoint commands."""

    @abc.abstractmethod
    def get_job_id(self) -> str: ...

    @abc.abstractmethod
    def get_job_status(self) -> Future[JobStatus]: ...

    @abc.abstractmethod
    def cancel(self) -> Future[None]: ...

    @abc.abstractmethod
    def stop_with_savepoint(self, advance_to_end_of_event_time: bool = False,
                            savepoint_directory: str | None = None) -> Future[str]:
        """Stop the job with a synchronous savepoint: the sources stop, the savepoint's
        barrier is the last element of every stream, and the tasks finish once it completed,
        so nothing is emitted after it. With ``advance_to_end_of_event_time`` the sources first
        emit ``MAX_WATERMARK`` (every event-time window and timer fires into the savepoint).
        The future yields the savepoint's path."""

    @abc.abstractmethod
    def trigger_savepoint(self, savepoint_directory: str | None = None) -> Future[str]:
        """Take a savepoint and keep running; the future yields the savepoint's path."""

    @abc.abstractmethod
    def get_accumulators(self) -> Future[dict[str, Any]]: ...

    @abc.abstractmethod
    def get_job_execution_result(self) -> Future[JobExecutionResult]: ...


class CloseableIterator(Iterator[Any], abc.ABC):
    """Records a running job sends back to the client; ``close()`` stops the job if it is
    still running. Usable as a context manager."""

    @abc.abstractmethod
    def __next__(self) -> Any: ...

    @abc.abstractmethod
    def close(self) -> None: ...

    def __iter__(self) -> CloseableIterator:
        return self

    def __enter__(self) -> CloseableIterator:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class JobExecutor(Protocol):
    """What the environment calls to run a job: ``flintlock.spark.executor.SparkExecutor``.

    ``stream_graph`` is a validated ``flintlock.graph.stream_graph.StreamGraph`` whose nodes
    carry ``flintlock.common.operator_spec.OperatorSpec`` objects; ``configuration`` is a copy of
    the environment's configuration (the executor may keep it); ``job_name`` is final.
    """

    def execute(self, stream_graph: Any, configuration: Any, job_name: str
                ) -> JobExecutionResult:
        """Run the job to its end (or failure, raised) and return its result."""

    def execute_async(self, stream_graph: Any, configuration: Any, job_name: str) -> JobClient:
        """Submit the job and return at once."""

    def execute_and_collect(self, stream_graph: Any, configuration: Any, job_name: str,
                            collect_id: str) -> CloseableIterator:
        """Submit the job and iterate over the records of the sink whose ``CollectSink`` has
        ``collect_id``; closing the iterator cancels the job if it still runs."""
