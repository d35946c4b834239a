"""Python workers started while the JobManager is set up, for the first job of an embedded
session.

Spark starts an executor's Python daemon, and forks Python workers from it, only when the
first Python task runs there. In a fresh embedded session that task is the first job's
TaskManager: the daemon importing flintlock's TaskManager modules (``flintlock.spark.daemon``,
0.2-0.3 s), the fork and each worker importing ``pyspark.worker`` all come after the
JobManager has been built, its files shipped and its barrier stage submitted, one after the
other on the path to the first record. ``prestart_workers(sc, n)`` runs a Spark job of ``n``
empty tasks on a thread as soon as the embedded context exists, so all that happens while the
driver builds the JobManager. Spark keeps the workers for the next Python task
(``spark.python.worker.reuse``, on by default), and the barrier stage's tasks run in them
(the stage waits in Spark's scheduler for as long as the empty tasks hold its slots).

Only for a session flintlock built itself (``flintlock.spark.prestart-workers``, default on):
a user's own session or a cluster's executors are not flintlock's to run jobs on. A failure of
the empty job is logged, never raised: the TaskManagers then start their workers as before.

Thread ownership: ``prestart_workers`` returns a ``Prestart`` whose thread only runs the Spark
job; ``wait`` is for the thread that decides whether the session is idle
(``session.context_for_job``), so an embedded session is not replaced under its own empty job.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterable, Iterator

from pyspark import SparkContext

LOG = logging.getLogger(__name__)
JOB_GROUP = "flintlock-prestart"


def _worker_pid(_: Iterable[int]) -> Iterator[int]:
    """The empty task: the worker it runs in is what is wanted; it tells its process id."""
    yield os.getpid()


class Prestart:
    """The empty Spark job of ``prestart_workers``, running on its own thread."""

    def __init__(self, sc: SparkContext, workers: int) -> None:
        self._sc = sc
        self._workers = workers
        self._thread = threading.Thread(target=self._run, name="flintlock-prestart",
                                        daemon=True)
        self.pids: tuple[int, ...] = ()  # the workers' process ids, once the job ended

    def start(self) -> Prestart:
        self._thread.start()
        return self

    def _run(self) -> None:
        started = time.monotonic()
        try:
            self._sc.setJobGroup(JOB_GROUP, "flintlock: starting Python workers")
            rdd = self._sc.parallelize(range(self._workers), self._workers)
            pids = tuple(rdd.mapPartitions(_worker_pid).collect())
        except Exception as exc:  # the TaskManagers start their own workers then
            LOG.debug("prestarting %d Python workers failed: %s", self._workers, exc)
            return
        self.pids = pids
        LOG.debug("Python workers %s started in %.2f s", list(pids), time.monotonic() - started)

    def wait(self, timeout_s: float) -> bool:
        """Waits (at most ``timeout_s``) until the empty job ended; True if it did."""
        self._thread.join(timeout_s)
        return not self._thread.is_alive()


def prestart_workers(sc: SparkContext, workers: int) -> Prestart:
    """Starts Spark's Python daemon and ``workers`` workers of ``sc`` now (see module doc)."""
    return Prestart(sc, max(1, workers)).start()
