"""``env.execute()`` on Spark: the JobManager on the driver, TaskManagers as barrier tasks.

``SparkExecutor`` is what the DataStream API loads (``flintlock.datastream`` imports it by name,
so the API never imports pyspark). ``SparkLauncher`` adapts the barrier-stage launcher to the
JobManager's ``Launcher`` protocol: one Spark job per job attempt, sized and checked against the
cluster's free slots; each barrier task runs ``bootstrap.SparkTaskManagerMain``.

Threads: the thread that builds the JobManager ships the job's files and the JobManager thread
launches; the files go to Spark on a thread of their own (``_FileShipment``) that the first
launch waits for; each attempt's Spark job is collected on a driver thread of the launch
handle.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from pyspark import SparkContext

from flintlock.common.config import Configuration
from flintlock.runtime.executor import PipelineExecutor
from flintlock.runtime.jobmanager import AttemptHandle
from flintlock.runtime.messages import TaskManagerPayload
from flintlock.runtime.rpc import MessageDispatcher
from flintlock.spark.bootstrap import SparkTaskManagerMain
from flintlock.spark.launcher import (
    AttemptReports,
    LaunchHandle,
    LaunchSpec,
    launch_task_managers,
)
from flintlock.spark.session import (
    available_slots,
    context_for_job,
    embedded_default_parallelism,
)
from flintlock.usercode.job_files import JobFile


class SparkAttempt:
    """``AttemptHandle`` over the launch handle of one attempt's Spark job."""

    def __init__(self, handle: LaunchHandle) -> None:
        self._handle = handle

    def failure(self) -> BaseException | None:
        if not self._handle.done():
            return None
        try:
            self._handle.wait(0)
        except BaseException as exc:  # the translated Spark failure
            return exc
        return None

    def done(self) -> bool:
        return self._handle.done()

    def cancel(self) -> None:
        self._handle.cancel()

    def wait(self, timeout_s: float) -> bool:
        try:
            self._handle.wait(timeout_s)
        except TimeoutError:
            return False
        except BaseException:  # ended with a failure: still ended
            return True
        return True


class _FileShipment:
    """The job's files handed to Spark (``SparkContext.addFile``: a Py4J round trip and a
    copy per file, 50-70 ms) on a thread of its own, while the JobManager finishes setting
    up; ``wait`` re-raises what ``addFile`` raised."""

    def __init__(self, context: SparkContext, paths: list[str]) -> None:
        self._context = context
        self._paths = paths
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._ship, name="flintlock-ship-files",
                                        daemon=True)
        self._thread.start()

    def _ship(self) -> None:
        try:
            for path in self._paths:
                self._context.addFile(path)
        except BaseException as exc:  # raised to the launch that needs the files
            self._error = exc

    def wait(self) -> None:
        self._thread.join()
        if self._error is not None:
            raise self._error


class SparkLauncher:
    def __init__(self, configuration: Configuration, slots_needed: int) -> None:
        self._config = configuration
        self.context = context_for_job(configuration, slots_needed)
        self.reports = AttemptReports()
        self._shipment: _FileShipment | None = None

    def available_slots(self) -> int | None:
        return available_slots(self.context)

    def install(self, dispatcher: MessageDispatcher) -> None:
        self.reports.install(dispatcher)

    def ship_job_files(self, files: Sequence[JobFile]) -> None:
        """Spark serves each file to every executor (``SparkFiles`` finds it there); handed
        over meanwhile, the first launch waits for them (see ``_FileShipment``)."""
        self._shipment = _FileShipment(self.context, [f.staged_path for f in files])

    def launch(self, payloads: list[TaskManagerPayload], description: str) -> AttemptHandle:
        if self._shipment is not None:
            self._shipment.wait()
        first = payloads[0]
        spec = LaunchSpec(
            job_id=first.job_id, attempt=first.attempt, num_task_managers=len(payloads),
            jm_host=first.jm_host, jm_port=first.jm_port, secret=first.secret,
            main=SparkTaskManagerMain(first.job_id, first.jm_host, first.jm_port),
            config=Configuration(first.configuration),
        )
        return SparkAttempt(launch_task_managers(self.context, spec, self.reports))


class SparkExecutor(PipelineExecutor):
    def create_launcher(self, configuration: Configuration, slots_needed: int) -> SparkLauncher:
        return SparkLauncher(configuration, slots_needed)

    def default_parallelism(self, configuration: Configuration) -> int | None:
        return embedded_default_parallelism(configuration)
