"""JobManager high availability on a filesystem (``high-availability.type: filesystem``).

What a successor driver needs lives under ``<high-availability.storageDir>/<cluster-id>/``::

    leases/lease-<token>   leadership and fencing (``leadership``)
    jobgraph.pickle        the job graph (cloudpickle), written once when the job starts
    job.json               the job record: job id, name, status, the job's checkpoint
                           directory, the completed checkpoints the JobManager notified, and
                           the SHA-256 of jobgraph.pickle

A driver that starts with HA configured first becomes the leader of the cluster id (waiting
for a crashed predecessor's lease to expire), then reads ``job.json``. A record whose job has
not ended globally (RUNNING, or any status but FINISHED, FAILED, CANCELED) is recovered: the
job graph is loaded from ``jobgraph.pickle`` — the job keeps its id, so its checkpoint
directory is the same and ``CompletedCheckpointStore.recover`` finds its completed checkpoints
there (the store's own commit markers decide what completed; ``job.json`` records pointers
for people and tools). Otherwise the submitted job is registered under a fresh record.

Pending two-phase commits need no record of their own: they are part of the checkpoints.
Restoring the latest completed checkpoint makes every two-phase-commit sink commit what that
checkpoint holds (idempotently) and drop what was written after it, exactly as after a
TaskManager failure; what a checkpoint that never completed held is thus aborted.

The storage must be one where the lease's fencing holds (``lease_storage``): others are
refused by ``from_config`` (``LeaseStorageUnsupportedError``, a ``ConfigurationError``), and an
S3-compatible server that ignores create-only preconditions is refused by ``start``.

Every write here first confirms the leadership (``FileLease.confirm``), and so does
``checkpoint_completed``, which the JobManager calls before it lets any sink commit a
checkpoint: a driver that lost the leadership stops before it commits anything.

Thread ownership: ``start`` on the thread building the JobManager, the rest on the JobManager
thread; the lease keeper's thread only renews.
"""

from __future__ import annotations

import hashlib
import json
import logging
import pickle
from collections.abc import Callable
from dataclasses import dataclass

import cloudpickle

from flintlock.common.clock import Clock
from flintlock.common.config import Configuration
from flintlock.common.errors import ConfigurationError, FlintlockError
from flintlock.common.ids import CheckpointId
from flintlock.common.job_status import JobStatus
from flintlock.common.options import cluster as options
from flintlock.graph.job_graph import JobGraph
from flintlock.runtime.checkpoint.storage import join, read_verified, resolve, write_file
from flintlock.runtime.jobmanager.leadership import FileLease, LeadershipLostError, LeaseKeeper
from flintlock.runtime.jobmanager.lease_storage import check_scheme, verify_exclusive_create

log = logging.getLogger(__name__)
_RECORD = "job.json"
_GRAPH = "jobgraph.pickle"
_VERSION = 1


class HighAvailabilityDataError(FlintlockError):
    """The recovery data of a cluster id is damaged or unreadable. Names the file."""

    def __init__(self, uri: str, detail: str) -> None:
        super().__init__(uri, detail)
        self.uri = uri
        self.detail = detail

    def __str__(self) -> str:
        return f"high-availability data {self.uri}: {self.detail}"


@dataclass(frozen=True)
class JobRecord:
    job_id: str
    name: str
    status: str
    graph_sha256: str
    completed_checkpoints: tuple[int, ...] = ()

    @property
    def ended(self) -> bool:
        return self.status in (JobStatus.FINISHED.name, JobStatus.FAILED.name,
                               JobStatus.CANCELED.name)

    def to_json(self) -> bytes:
        return json.dumps({"version": _VERSION, "job_id": self.job_id, "name": self.name,
                           "status": self.status, "graph_sha256": self.graph_sha256,
                           "completed_checkpoints": list(self.completed_checkpoints)},
                          sort_keys=True).encode()

    @classmethod
    def from_json(cls, data: bytes, uri: str) -> JobRecord:
        try:
            value = json.loads(data)
            if value["version"] != _VERSION:
                raise ValueError(f"version {value['version']} is not {_VERSION}")
            return cls(str(value["job_id"]), str(value["name"]), str(value["status"]),
                       str(value["graph_sha256"]),
                       tuple(int(n) for n in value["completed_checkpoints"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise HighAvailabilityDataError(uri, f"not a job record: {exc}") from exc


class JobHighAvailability:
    """The HA services of one JobManager: leadership, the job record, the job graph."""

    def __init__(self, root: str, cluster_id: str, lease: FileLease, wait_ms: int) -> None:
        self.root = root
        self.cluster_id = cluster_id
        self.lease = lease
        self._wait_ms = wait_ms
        self._keeper: LeaseKeeper | None = None
        self.record: JobRecord | None = None
        self.recovered = False

    @classmethod
    def from_config(cls, config: Configuration, clock: Clock) -> JobHighAvailability | None:
        """None unless ``high-availability.type`` is filesystem."""
        if config.get(options.HA_TYPE) != "filesystem":
            return None
        storage = config.get(options.HA_STORAGE_DIR)
        if not storage:
            raise ConfigurationError(
                f"{options.HA_STORAGE_DIR.key} is required with {options.HA_TYPE.key}: filesystem")
        cluster_id = config.get(options.HA_CLUSTER_ID).strip("/")
        if not cluster_id or "/" in cluster_id or cluster_id in (".", ".."):
            raise ConfigurationError(f"{options.HA_CLUSTER_ID.key} must be one non-empty path "
                                     f"segment, not {cluster_id!r}")
        root = join(storage, cluster_id)
        check_scheme(storage, resolve(root)[0])
        lease = FileLease(root, cluster_id, config.get(options.HA_LEASE_DURATION), clock)
        return cls(root, cluster_id, lease, config.get(options.HA_LEASE_WAIT))

    # -- start -----------------------------------------------------------------------------

    def start(self, submitted: JobGraph,
              on_lost: Callable[[LeadershipLostError], None]) -> JobGraph:
        """Lead the cluster id, then recover its unfinished job, or register ``submitted``.
        Returns the job graph to run."""
        fs, leases = resolve(self.lease.directory)
        verify_exclusive_create(self.root, fs, leases)
        self.lease.acquire(self._wait_ms)
        try:
            graph = self._recover_or_register(submitted)
        except BaseException:
            self.lease.release()
            raise
        self._keeper = LeaseKeeper(self.lease, on_lost).start()
        return graph

    def _recover_or_register(self, submitted: JobGraph) -> JobGraph:
        record = self._read_record()
        if record is not None and not record.ended:
            graph = self._load_graph(record)
            self.record = record
            self.recovered = True
            log.warning("cluster id %r: recovering job %s (%s), last status %s, completed "
                        "checkpoints %s", self.cluster_id, record.job_id, record.name,
                        record.status, list(record.completed_checkpoints))
            return graph
        data = bytes(cloudpickle.dumps(submitted))
        self._write(_GRAPH, data)
        self.record = JobRecord(str(submitted.job_id), submitted.name, JobStatus.RUNNING.name,
                                hashlib.sha256(data).hexdigest())
        self._write(_RECORD, self.record.to_json())
        return submitted

    def _read_record(self) -> JobRecord | None:
        uri = join(self.root, _RECORD)
        fs, path = resolve(uri)
        if not fs.exists(path):
            return None
        return JobRecord.from_json(fs.cat_file(path), uri)

    def _load_graph(self, record: JobRecord) -> JobGraph:
        uri = join(self.root, _GRAPH)
        try:
            data = read_verified(uri, None, record.graph_sha256)
        except FlintlockError as exc:
            raise HighAvailabilityDataError(uri, str(exc)) from exc
        try:
            graph = pickle.loads(data)
        except Exception as exc:
            raise HighAvailabilityDataError(
                uri, f"the job graph does not unpickle here ({type(exc).__name__}: {exc}); "
                "the job's modules must be importable by the recovering driver") from exc
        if not isinstance(graph, JobGraph) or str(graph.job_id) != record.job_id:
            raise HighAvailabilityDataError(uri, f"does not hold the job graph of {record.job_id}")
        return graph

    def _write(self, name: str, data: bytes) -> None:
        self.lease.confirm()
        fs, path = resolve(self.root)
        fs.makedirs(path, exist_ok=True)
        write_file(join(self.root, name), data)

    # -- while the job runs ------------------------------------------------------------------

    def checkpoint_completed(self, checkpoint_id: CheckpointId, retained: int) -> None:
        """Before sinks may commit ``checkpoint_id``: confirm the leadership (raises
        ``LeadershipLostError``) and record the pointer. A record that cannot be written
        (the HA storage full or unwritable) is logged, not raised: the leadership was
        confirmed, the checkpoint's own commit marker is what a successor restores from, and
        the next pointer written carries this one too."""
        record = self.record
        assert record is not None
        ids = (*record.completed_checkpoints, checkpoint_id)[-retained:]
        self.record = JobRecord(record.job_id, record.name, JobStatus.RUNNING.name,
                                record.graph_sha256, ids)
        self.lease.confirm()
        try:
            self._write(_RECORD, self.record.to_json())
        except OSError as exc:
            log.warning("cluster id %r: could not record completed checkpoint %d in %s: %s",
                        self.cluster_id, checkpoint_id, join(self.root, _RECORD), exc)

    def job_ended(self, status: JobStatus) -> None:
        """The job ended here: a globally terminal status is recorded (the next driver for
        the cluster id starts a new job); SUSPENDED leaves the record for a successor."""
        if self._keeper is not None:
            self._keeper.stop()
        record = self.record
        try:
            if record is not None and status.is_globally_terminal_state():
                self.record = JobRecord(record.job_id, record.name, status.name,
                                        record.graph_sha256, record.completed_checkpoints)
                self._write(_RECORD, self.record.to_json())
        except (LeadershipLostError, OSError) as exc:
            log.warning("could not record that job %s ended %s: %s",
                        record.job_id if record else "?", status.name, exc)
        finally:
            self.lease.release()
