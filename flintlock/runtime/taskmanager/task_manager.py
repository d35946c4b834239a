"""The TaskManager: one worker process (on Spark, one task of the barrier stage) that runs
subtasks in slots (DESIGN.md §3).

``TaskManager(payload).run()`` connects to the JobManager (authenticated RPC), starts its data
server (TCP transport), registers, waits for its deployment, runs one thread per subtask and
reports their state changes, checkpoint acks and declines. It returns when every subtask has
ended (or the JobManager cancelled the attempt) and leaves nothing behind — no thread, socket
or file — because Spark may run the next attempt in the same Python worker.

It stops on its own when the JobManager falls silent for ``heartbeat.timeout``: a TaskManager
must never outlive its job (``jobmanager_heartbeats``: the heartbeat module's liveness, as on
the JobManager's side).

Threads: the caller's thread runs ``run()`` (deployment and the wait); one thread per subtask;
a heartbeat thread (sends heartbeats, notices a silent JobManager); the RPC connection's
reader/dispatcher threads deliver JobManager messages (they only put mail into tasks or set
events); a small pool runs the asynchronous parts of snapshots. Shared fields are guarded
by ``_lock``.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import cloudpickle

from flintlock.common.clock import SYSTEM_CLOCK
from flintlock.common.config import Configuration
from flintlock.common.errors import FlintlockError
from flintlock.common.ids import CheckpointId, JobId, SubtaskIndex
from flintlock.common.options import cluster as cluster_options
from flintlock.common.options import network as network_options
from flintlock.graph.execution_graph import build_execution_graph
from flintlock.graph.job_graph import JobGraph
from flintlock.graph.scheduling import AllocationPlan
from flintlock.runtime import messages as msg
from flintlock.runtime.cancellation import await_task_threads, exit_process
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.checkpoint.storage import CheckpointStorage, CheckpointStorageLocation
from flintlock.runtime.checkpoint.storage import read_state as read_checkpoint_state
from flintlock.runtime.execution_state import ExecutionState
from flintlock.runtime.messages import TaskManagerPayload
from flintlock.runtime.metrics import output_tail
from flintlock.runtime.network.buffer import NetworkBufferPool
from flintlock.runtime.network.partition import ResultPartitionManager
from flintlock.runtime.network.transport import (
    TcpTransport,
)
from flintlock.runtime.rpc import MessageDispatcher, RpcClient, RpcConnection
from flintlock.runtime.task_metrics import TaskMetrics
from flintlock.runtime.taskmanager.deployment import (
    checkpointing_settings,
    deployed_task_ids,
    lower_switch_interval_for,
    task_spec,
)
from flintlock.runtime.taskmanager.jobmanager_heartbeats import (
    JobManagerHeartbeats,
    JobManagerLostError,
)
from flintlock.runtime.taskmanager.reports import TaskReports
from flintlock.runtime.taskmanager.snapshot_writing import SnapshotWriting
from flintlock.runtime.tasks.operator_factory import create_operator
from flintlock.runtime.tasks.stream_task import (
    StreamTask,
)
from flintlock.runtime.tasks.task_io import NetworkContext, build_task_io
from flintlock.usercode.python_env import PreparedEnvironment, prepare_environment

log = logging.getLogger(__name__)

SAVEPOINT_LOCATION_WAIT_S = 60.0
_REPORTING = frozenset({ExecutionState.RUNNING, ExecutionState.FINISHED})
"""Subtasks whose metrics heartbeats carry: a finished one's final counts stay visible."""


class TaskManagerError(FlintlockError):
    """The TaskManager could not register, deploy or keep in touch with the JobManager."""


class TaskManager:
    """``connection`` and ``dispatcher``: an authenticated RPC connection to the JobManager
    that the caller owns (the Spark bootstrap opens one per TaskManager process); without
    them the TaskManager connects on its own."""

    def __init__(self, payload: TaskManagerPayload, connection: RpcConnection | None = None,
                 dispatcher: MessageDispatcher | None = None, owns_process: bool = False,
                 locate_file: Callable[[str], str] | None = None) -> None:
        self.payload = payload
        self._owns_process = owns_process  # alone in its process: may change its cwd
        self._locate_file = locate_file  # finds a shipped job file on this host
        self._python_env: PreparedEnvironment | None = None
        self.leftover_threads: list[threading.Thread] = []
        """Threads the job started that outlived it (a process of its own only)."""
        self._given = (connection, dispatcher) if connection is not None else None
        self.config = Configuration(payload.configuration)
        self._lock = threading.Lock()
        self._deployed = threading.Event()
        self._released = threading.Event()
        self._done = threading.Event()
        self._deployments: list[msg.DeployTasks] = []  # guarded by _lock; not yet deployed
        self._wake = threading.Event()  # a deployment arrived or the TaskManager is released
        self._cancel_on_create: set[TaskId] = set()  # guarded by _lock; see _on_cancel
        self._job_graph: JobGraph | None = None  # the main thread's, from the first deployment
        self._tasks: dict[TaskId, StreamTask] = {}  # guarded by _lock
        self._metrics: dict[TaskId, TaskMetrics] = {}  # set before its task is in _tasks
        self._threads: list[threading.Thread] = []
        self._savepoint_locations: dict[CheckpointId, str] = {}  # guarded by _lock
        self._location_arrived = threading.Condition(self._lock)
        self._heartbeats = JobManagerHeartbeats(payload.tm_index, self.config, SYSTEM_CLOCK,
                                                self._send_heartbeat, self._jobmanager_lost)
        self._connection: RpcConnection | None = None
        self._transport: TcpTransport | None = None
        self._snapshot_pool: ThreadPoolExecutor | None = None
        self._partitions = ResultPartitionManager()
        self.failure: BaseException | None = None
        self._output: output_tail.TailReader | None = None  # from run(): its log and stdout

    # -- main ------------------------------------------------------------------------------

    def run(self) -> None:
        """Registers, runs the deployed subtasks to their end, cleans up. Raises only when
        the TaskManager itself failed (not when a subtask failed: that is reported)."""
        heartbeat: threading.Thread | None = None
        self._output = output_tail.attach()
        try:
            self._start_network()
            self._connect_and_register()
            self._touch()  # the JobManager's answer: silence counts from here
            heartbeat = threading.Thread(target=self._heartbeats.run, args=(self._done,),
                                         daemon=True,
                                         name=f"flintlock-tm{self.payload.tm_index}-heartbeat")
            heartbeat.start()
            self._await_deployment()
            self._deploy()
            self._await_tasks()
        except BaseException as exc:
            self.annotate(exc)
            raise
        finally:
            self._done.set()
            if heartbeat is not None:
                heartbeat.join()
            self._shutdown()
            output_tail.detach(self._output)
        if self.failure is not None:
            raise self.failure

    def _start_network(self) -> None:
        config = self.config
        segment = config.get(network_options.SEGMENT_SIZE)
        self._pool = NetworkBufferPool.from_memory(
            config.get(network_options.NETWORK_MEMORY), segment)
        self._transport = TcpTransport(
            config, self.payload.secret, self._partitions, self._pool,
            name=f"tm{self.payload.tm_index}").start()
        self._snapshot_pool = ThreadPoolExecutor(
            max_workers=2, thread_name_prefix=f"flintlock-tm{self.payload.tm_index}-snapshot")

    def _connect_and_register(self) -> None:
        p = self.payload
        dispatcher = (
            (self._given[1] if self._given and self._given[1] else MessageDispatcher())
            .register(msg.DeployTasks, self._on_deploy)
            .register(msg.TriggerCheckpoint, self._on_trigger)
            .register(msg.AssignSplits, self._on_splits)
            .register(msg.CheckpointLocation, self._on_location)
            .register(msg.NotifyCheckpointComplete, self._on_complete)
            .register(msg.NotifyCheckpointAborted, self._on_aborted)
            .register(msg.CancelTasks, self._on_cancel)
            .register(msg.ReleasePartitions, self._on_release_partitions)
            .register(msg.ReleaseTaskManager, self._on_release)
            .register(msg.Heartbeat, self._on_heartbeat)
            .on_disconnect(self._on_disconnected)
        )
        if self._given is not None:
            self._connection = self._given[0]
        else:
            self._connection = RpcClient.connect(
                p.jm_host, p.jm_port, p.secret, dispatcher,
                idle_timeout_s=self.config.get(cluster_options.HEARTBEAT_TIMEOUT) / 1000.0)
        assert self._transport is not None
        host, port = self._transport.address
        reply = self._connection.call(
            msg.RegisterTaskManager(p.attempt, p.tm_index, host, port, os.getpid()), 30.0)
        if not isinstance(reply, msg.Registered) or not reply.accepted:
            reason = getattr(reply, "reason", repr(reply))
            raise TaskManagerError(f"JobManager refused TaskManager {p.tm_index}: {reason}")

    def _await_deployment(self) -> None:
        timeout_s = self.config.get(cluster_options.REGISTRATION_TIMEOUT) / 1000.0
        deadline = time.monotonic() + timeout_s
        while not self._deployed.wait(0.2):
            if self._done.is_set() or self.failure is not None:
                return
            if time.monotonic() > deadline:
                raise TaskManagerError(
                    f"TaskManager {self.payload.tm_index} got no deployment within "
                    f"{timeout_s:.0f} s (taskmanager.registration.timeout)")

    # -- deployment ----------------------------------------------------------------------

    def _on_deploy(self, connection: RpcConnection, message: msg.DeployTasks) -> None:
        """One deployment of the attempt: all its subtasks, or (BATCH, region by region) those
        of the regions the JobManager schedules now; more may follow."""
        self._touch()
        with self._lock:
            self._deployments.append(message)
        self._deployed.set()
        self._wake.set()

    def _deploy(self) -> None:
        """Creates and starts the subtasks of every deployment that arrived. A deployment
        stays listed until its subtasks exist, so a cancellation of one of them arriving
        meanwhile is not lost (``_on_cancel``)."""
        while True:
            with self._lock:
                if not self._deployments:
                    return
                deployment = self._deployments[0]
            if not self._released.is_set():
                self._deploy_one(deployment)
            with self._lock:
                self._deployments.pop(0)
                self._cancel_on_create -= deployed_task_ids(deployment, self.payload.tm_index)

    def _deploy_one(self, deployment: msg.DeployTasks) -> None:
        if self._python_env is None:  # the job's packages first: unpickling may import them
            self._python_env = prepare_environment(
                deployment.python_dependencies, self.config, self._owns_process,
                self.payload.job_id, self._locate_file)
        job_graph = self._job_graph
        if job_graph is None:
            job_graph = self._job_graph = cloudpickle.loads(deployment.job_graph)
            lower_switch_interval_for(job_graph)
            self._storage = CheckpointStorage(
                deployment.checkpoint_dir or CheckpointStorage.from_config(
                    self.config, JobId(self.payload.job_id)).checkpoint_dir,
                JobId(self.payload.job_id))
        for task in self._create_tasks(job_graph, deployment):
            thread = threading.Thread(target=task.run, daemon=True,
                                      name=f"flintlock-task-{task.name}")
            self._threads.append(thread)
            thread.start()

    def _create_tasks(self, job_graph: JobGraph, deployment: msg.DeployTasks
                      ) -> list[StreamTask]:
        created = []
        graph = build_execution_graph(job_graph, deployment.attempt)
        plan: AllocationPlan = deployment.plan
        transport = self._transport
        assert transport is not None
        net = NetworkContext(
            configuration=self.config, network_pool=self._pool,
            partition_manager=self._partitions, flusher=None,
            create_remote_channel=transport.create_remote_channel, rng=random.Random(),
            scheduler=transport.io.call_later,
        )
        settings = checkpointing_settings(self.config)
        for subtask in plan.task_managers[self.payload.tm_index].subtasks:
            task_id = TaskId(subtask.job_vertex_id, SubtaskIndex(subtask.subtask_index))
            for produced in graph.produced_partitions(subtask):  # a restarted region's
                self._partitions.release(produced.id)  # finished BLOCKING results, if any
            io = build_task_io(subtask, graph, plan, deployment.addresses,
                               self.payload.tm_index, net)
            metrics = self._metrics[task_id] = TaskMetrics(
                job_id=self.payload.job_id, job_name=job_graph.name,
                tm_index=self.payload.tm_index, vertex_id=str(subtask.job_vertex_id),
                task_name=job_graph.vertex(subtask.job_vertex_id).name,
                subtask_index=subtask.subtask_index, attempt=deployment.attempt)
            spec = task_spec(job_graph, subtask, deployment, self.config, settings,
                             self._send_collect, metrics)
            task = StreamTask(spec, io, TaskReports(self, task_id), SnapshotWriting(self),
                              read_checkpoint_state, create_operator)
            with self._lock:
                self._tasks[task_id] = task  # a restarted region's task replaces its old one
                cancelled = task_id in self._cancel_on_create
                self._cancel_on_create.discard(task_id)
            if cancelled:
                task.cancel()  # it runs only to report CANCELED
            created.append(task)
        return created

    def _await_tasks(self) -> None:
        """Until the subtasks ended and the JobManager released this TaskManager (its
        partitions may still be read after its own subtasks finished), deploying what
        further deployments bring meanwhile."""
        while not self._released.is_set():
            self._wake.wait(0.2)
            self._wake.clear()
            self._deploy()
            if self.failure is not None and not any(t.is_alive() for t in self._threads):
                return

    # -- JobManager messages (RPC dispatcher thread) --------------------------------------

    def _touch(self) -> None:
        self._heartbeats.heard_from_jobmanager()

    def _task(self, task_id: TaskId) -> StreamTask | None:
        with self._lock:
            return self._tasks.get(task_id)

    def _on_trigger(self, connection: RpcConnection, message: msg.TriggerCheckpoint) -> None:
        self._touch()
        task = self._task(message.task)
        if task is not None:
            task.trigger_checkpoint(message.checkpoint_id, message.timestamp, message.options)

    def _on_splits(self, connection: RpcConnection, message: msg.AssignSplits) -> None:
        self._touch()
        task = self._task(message.task)
        if task is not None:
            task.assign_splits(message.operator_id, list(message.splits), message.no_more_splits)

    def _on_location(self, connection: RpcConnection, message: msg.CheckpointLocation) -> None:
        self._touch()
        with self._lock:
            self._savepoint_locations[message.checkpoint_id] = message.location
            self._location_arrived.notify_all()

    def _on_complete(self, connection: RpcConnection,
                     message: msg.NotifyCheckpointComplete) -> None:
        self._touch()
        for task in self._all_tasks():
            task.notify_checkpoint_complete(message.checkpoint_id, message.in_flight_data)

    def _on_aborted(self, connection: RpcConnection, message: msg.NotifyCheckpointAborted) -> None:
        self._touch()
        for task in self._all_tasks():
            task.notify_checkpoint_aborted(message.checkpoint_id)

    def _on_cancel(self, connection: RpcConnection, message: msg.CancelTasks) -> None:
        self._touch()
        if message.tasks is not None:  # a region restarts: only its subtasks
            with self._lock:  # one still waiting in a deployment is cancelled as it is made
                for deployment in self._deployments:
                    self._cancel_on_create |= message.tasks & deployed_task_ids(
                        deployment, self.payload.tm_index)
            for task_id in message.tasks:
                task = self._task(task_id)
                if task is not None:
                    task.cancel()
            return
        self._cancel_all()
        self._deployed.set()

    def _on_release_partitions(self, connection: RpcConnection,
                               message: msg.ReleasePartitions) -> None:
        self._touch()
        for partition_id in message.partitions:
            self._partitions.release(partition_id)

    def _on_release(self, connection: RpcConnection, message: msg.ReleaseTaskManager) -> None:
        self._touch()
        self._cancel_all()
        self._released.set()
        self._deployed.set()
        self._wake.set()

    def _on_heartbeat(self, connection: RpcConnection, message: msg.Heartbeat) -> None:
        self._touch()

    def _on_disconnected(self, connection: RpcConnection, cause: BaseException | None) -> None:
        if not self._done.is_set() and not self._released.is_set():
            self._cancel_all()
            self.failure = TaskManagerError(
                f"TaskManager {self.payload.tm_index} lost its connection to the JobManager"
                + (f": {cause}" if cause else ""))
            self._deployed.set()
            self._released.set()
            self._wake.set()

    def _all_tasks(self) -> list[StreamTask]:
        with self._lock:
            return list(self._tasks.values())

    def _cancel_all(self) -> None:
        for task in self._all_tasks():
            task.cancel()

    # -- to the JobManager (any thread) ---------------------------------------------------

    def tell(self, message: object) -> None:
        connection = self._connection
        if connection is None:
            return
        try:
            connection.tell(message)
        except FlintlockError as exc:
            log.warning("TaskManager %d could not send %s: %s",
                        self.payload.tm_index, type(message).__name__, exc)

    def _send_collect(self, collect_id: str, token: tuple[int, int] | None,
                      records: list[Any]) -> None:
        self.tell(msg.CollectBatch(self.payload.attempt, collect_id, token, records))

    # -- heartbeats (heartbeat thread) ----------------------------------------------------

    def _send_heartbeat(self) -> None:
        """This TaskManager's heartbeat, with its running subtasks' metrics."""
        with self._lock:
            tasks = dict(self._tasks)
        samples = {task_id: self._metrics[task_id].sample(task.io, task.time_statistics())
                   for task_id, task in tasks.items()
                   if task.state in _REPORTING and task_id in self._metrics}
        self.tell(self._heartbeat(samples))

    def _heartbeat(self, tasks: dict[TaskId, Any]) -> msg.Heartbeat:
        """A heartbeat with ``tasks``' metrics and the process's new log and stdout lines."""
        logs, stdout = self._output.take() if self._output is not None else ((), ())
        return msg.Heartbeat(self.payload.attempt, self.payload.tm_index, tasks, logs, stdout)

    def _jobmanager_lost(self, error: JobManagerLostError) -> None:
        """The JobManager fell silent: cancel the subtasks and end (as when its connection
        is lost)."""
        if not self._done.is_set() and not self._released.is_set():
            self._cancel_all()
            self.failure = error
            self._deployed.set()
            self._released.set()
            self._wake.set()

    def report_final_metrics(self, task_id: TaskId, task: StreamTask) -> None:
        """A finished subtask's last metrics (task thread; no time split: it has ended)."""
        metrics = self._metrics.get(task_id)
        if metrics is not None:
            report = metrics.sample(task.io, None)
            self.tell(self._heartbeat({task_id: report}))

    @property
    def attempt(self) -> int:
        return self.payload.attempt

    def checkpoint_location(self, checkpoint_id: CheckpointId) -> CheckpointStorageLocation:
        return self._storage.checkpoint_location(checkpoint_id)

    def submit_snapshot(self, work: Callable[[], None]) -> None:
        """The asynchronous part of a snapshot, on this TaskManager's snapshot executor."""
        pool = self._snapshot_pool
        assert pool is not None
        pool.submit(work)

    def savepoint_location(self, checkpoint_id: CheckpointId) -> str:
        with self._lock:
            ok = self._location_arrived.wait_for(
                lambda: checkpoint_id in self._savepoint_locations, SAVEPOINT_LOCATION_WAIT_S)
            if not ok:
                raise TaskManagerError(f"no location arrived for savepoint {checkpoint_id}")
            return self._savepoint_locations[checkpoint_id]

    # -- shutdown ------------------------------------------------------------------------

    def _shutdown(self) -> None:
        self._cancel_all()
        self._await_task_threads()
        if self._snapshot_pool is not None:
            self._snapshot_pool.shutdown(wait=True, cancel_futures=True)
        self._partitions.release_all()
        if self._transport is not None:
            self._transport.close()
        if self._connection is not None and self._given is None:
            self._connection.close()
        if self._python_env is not None:
            self.leftover_threads = self._python_env.close()
        if self.leftover_threads:
            log.error("TaskManager %d (process %d): %d thread(s) of job %s outlived it: %s; "
                      "the job's code is retired and this process is not reused",
                      self.payload.tm_index, os.getpid(), len(self.leftover_threads),
                      self.payload.job_id, [t.name for t in self.leftover_threads])

    def annotate(self, error: BaseException) -> None:
        """Says where a failed import of the job's code was searched (``usercode.loader``)."""
        if self._python_env is not None:
            self._python_env.annotate(error)

    def _await_task_threads(self) -> None:
        """Until every task thread ended; one stuck in user code past
        ``task.cancellation.timeout`` ends this process if it is ours (see cancellation)."""
        timeout_s = self.config.get(cluster_options.TASK_CANCELLATION_TIMEOUT) / 1000.0

        def on_timeout(alive: list[threading.Thread]) -> None:
            if self._owns_process:
                exit_process(alive, timeout_s)
            log.error("TaskManager %d leaves %d task thread(s) running past "
                      "task.cancellation.timeout (%.0f s): %s", self.payload.tm_index,
                      len(alive), timeout_s, [t.name for t in alive])

        await_task_threads(
            self._threads,
            interval_s=self.config.get(cluster_options.TASK_CANCELLATION_INTERVAL) / 1000.0,
            timeout_s=timeout_s, cancel_again=self._cancel_all, on_timeout=on_timeout)
