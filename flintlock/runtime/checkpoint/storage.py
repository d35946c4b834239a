"""Checkpoint storage: where checkpoints and savepoints are written, on any fsspec filesystem.

Layout (``execution.checkpointing.dir`` = ``<dir>``, ``savepoint-dir`` = ``<sp>``)::

    <dir>/<job-id>/chk-<n>/<state files>           one directory per checkpoint
    <dir>/<job-id>/chk-<n>/_metadata               written after every state file
    <dir>/<job-id>/chk-<n>/_metadata.committed     the commit marker, written last
    <dir>/<job-id>/shared/<file>                   files shared by incremental checkpoints
    <sp>/savepoint-<jobid6>-<random>/...           a savepoint: self-contained, owned by the user

``<dir>`` is a local path or any fsspec URL (``file://``, ``memory://``, ``s3://``, ...);
fsspec resolves it, a plain path is the local filesystem. A checkpoint's directory follows
from the job id and the checkpoint id alone, so a TaskManager can build the same
``CheckpointStorageLocation`` the coordinator created without being told.

Writing a file (``write_file``). On the local filesystem: a temporary name in the same
directory, flush and fsync, ``os.replace`` (atomic), fsync the directory, so a reader never
sees half a file under its final name. On any other filesystem the file is written in place:
object stores have no atomic rename (fsspec's ``mv`` there is copy-then-delete), and an
object appears whole once its upload completes. Nothing depends on a rename being atomic:
each state file's SHA-256 and size go into its ``StreamStateHandle`` and ``read_state``
verifies both (``CorruptStateError`` naming the file for a missing, truncated or altered one),
and ``_metadata`` carries its own checksum.

Committing a checkpoint (``CheckpointStorageLocation.commit_metadata``): ``_metadata`` first,
then the commit marker ``_metadata.committed``, a small JSON object naming the metadata file's
size and SHA-256, on every filesystem. A checkpoint or savepoint exists only once its marker
names the ``_metadata`` beside it (``read_committed``): a crash between the two writes
leaves a directory that every reader treats as never completed. (``_metadata`` files of
format 1, written before markers existed, were committed by their rename and are accepted
without one; see ``metadata``.)

Who may write here: only the job's own processes (driver and TaskManagers). The checksums
detect damage, not malice; anyone who can write the checkpoint directory can run code in the
job (state holds the job's pickled values), exactly like the job's own code directory.

Thread ownership: a location is used by one snapshot writer at a time; distinct names may be
written from several threads (no shared mutable state besides the filesystem).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import tempfile
from typing import TYPE_CHECKING, Any

from flintlock.common.config import Configuration
from flintlock.common.errors import FlintlockError
from flintlock.common.ids import CheckpointId, JobId
from flintlock.common.options import checkpointing as opts
from flintlock.runtime.state.handles import (
    ByteStateHandle,
    CorruptStateError,
    StateHandle,
    StreamStateHandle,
)

if TYPE_CHECKING:  # fsspec itself is imported on first use (see ``resolve``)
    from fsspec import AbstractFileSystem

METADATA_FILE = "_metadata"
COMMIT_MARKER = "_metadata.committed"
CHECKPOINT_PREFIX = "chk-"
SHARED_DIR = "shared"
_INPROGRESS = ".inprogress-"
_VALID_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._=+-]{0,200}$")
_RESERVED = frozenset({METADATA_FILE, COMMIT_MARKER})
_MARKER_KIND = "flintlock-checkpoint-commit"
_MARKER_VERSION = 1


class InvalidStateNameError(FlintlockError):
    """A state file name is empty, has a path separator or is reserved."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name

    def __str__(self) -> str:
        return (
            f"invalid state file name {self.name!r}: use letters, digits and ._=+- "
            f"(not starting with one of ._=+-), no path separators, not {METADATA_FILE!r} "
            f"or {COMMIT_MARKER!r}"
        )


class StateFileExistsError(FlintlockError):
    """Two writers used the same name in one checkpoint location."""

    def __init__(self, uri: str) -> None:
        super().__init__(uri)
        self.uri = uri

    def __str__(self) -> str:
        return f"state file {self.uri} already exists in this checkpoint"


class NoSavepointDirectoryError(FlintlockError):
    """A savepoint was requested without a target and no default savepoint dir is set."""

    def __str__(self) -> str:
        return (
            f"no savepoint target directory given and {opts.SAVEPOINT_DIR.key!r} is not set"
        )


def _is_local(fs: AbstractFileSystem) -> bool:
    from fsspec.implementations.local import LocalFileSystem  # on first use (see ``resolve``)

    return isinstance(fs, LocalFileSystem)


def to_uri(fs: AbstractFileSystem, path: str) -> str:
    """A plain path for the local filesystem, a protocol URL for any other."""
    if _is_local(fs):
        return path
    return str(fs.unstrip_protocol(path))


def canonical_uri(uri: str) -> str:
    """``uri`` as the handles of files written under it spell it (absolute local path,
    ``memory:///...``), so that prefixes compare textually."""
    fs, path = resolve(uri)
    return to_uri(fs, path)


def join(uri: str, *names: str) -> str:
    return "/".join([uri.rstrip("/"), *names])


def resolve(uri: str) -> tuple[AbstractFileSystem, str]:
    """The filesystem and path of ``uri``. fsspec is imported here, on first use, not with
    this module: a process that writes and reads no checkpoint (a TaskManager of a job
    without checkpoints, Spark's Python daemon) never pays its 20-30 ms import."""
    from fsspec.core import url_to_fs

    fs, path = url_to_fs(uri)
    return fs, str(path)


def write_file(uri: str, data: bytes | memoryview) -> None:
    """Write ``data`` under ``uri``. Local: temp file, fsync, ``os.replace``, fsync the
    directory. Elsewhere: in place (see the module docstring)."""
    fs, path = resolve(uri)
    if not _is_local(fs):
        fs.pipe_file(path, bytes(data))
        return
    tmp = f"{path}{_INPROGRESS}{os.urandom(6).hex()}"
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        _remove_quietly(fs, tmp)
        raise
    _fsync_directory(os.path.dirname(path))


def _fsync_directory(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove_quietly(fs: AbstractFileSystem, path: str) -> None:
    try:
        fs.rm(path)
    except (FileNotFoundError, OSError):
        pass


def read_verified(uri: str, size: int | None, sha256: str | None) -> bytes:
    """The bytes under ``uri``; ``CorruptStateError`` if missing or not the recorded ones."""
    fs, path = resolve(uri)
    try:
        with fs.open(path, "rb") as handle:
            data: bytes = handle.read()
    except FileNotFoundError as exc:
        raise CorruptStateError(uri, "the file is missing") from exc
    if size is not None and len(data) != size:
        raise CorruptStateError(uri, f"expected {size} bytes, found {len(data)} (truncated?)")
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise CorruptStateError(uri, "SHA-256 mismatch: the file was altered")
    return data


def commit_marker(metadata: bytes) -> bytes:
    """The commit marker's bytes for the ``_metadata`` bytes ``metadata``."""
    return json.dumps({
        "kind": _MARKER_KIND, "version": _MARKER_VERSION, "metadata": METADATA_FILE,
        "size": len(metadata), "sha256": hashlib.sha256(metadata).hexdigest(),
    }, sort_keys=True).encode("ascii")


class UncommittedCheckpointError(CorruptStateError):
    """A ``_metadata`` without a commit marker naming it: the writer stopped (crashed) between
    the two writes, so the checkpoint never completed."""


def verify_committed(metadata_uri: str, data: bytes) -> None:
    """Raise ``UncommittedCheckpointError`` unless the commit marker beside ``metadata_uri``
    names exactly ``data`` (its size and SHA-256)."""
    marker_uri = join(metadata_uri.rsplit("/", 1)[0], COMMIT_MARKER)
    fs, path = resolve(marker_uri)
    try:
        marker = json.loads(fs.cat_file(path))
    except FileNotFoundError as exc:
        raise UncommittedCheckpointError(
            metadata_uri, f"never committed: no {COMMIT_MARKER} beside it") from exc
    except ValueError as exc:
        raise UncommittedCheckpointError(
            metadata_uri, f"never committed: {COMMIT_MARKER} is not a commit marker") from exc
    expected = json.loads(commit_marker(data))
    if not isinstance(marker, dict) or any(
            marker.get(field) != expected[field] for field in ("kind", "size", "sha256")):
        raise UncommittedCheckpointError(
            metadata_uri, f"never committed: {COMMIT_MARKER} names another file (the "
            "metadata was replaced after the commit, or the marker is damaged)")


def read_state(handle: StateHandle) -> bytes:
    """The bytes a state handle names, verified against its size and SHA-256."""
    if isinstance(handle, ByteStateHandle):
        return handle.data
    return read_verified(handle.uri, handle.size, handle.sha256)


def discard_state(handle: StateHandle) -> None:
    """Delete the file a handle names; an already missing file is fine."""
    if isinstance(handle, StreamStateHandle):
        fs, path = resolve(handle.uri)
        _remove_quietly(fs, path)


def delete_directory(uri: str) -> None:
    """Delete a checkpoint directory and everything in it; a missing one is fine."""
    fs, path = resolve(uri)
    try:
        fs.rm(path, recursive=True)
    except FileNotFoundError:
        pass


class CheckpointStorageLocation:
    """The directory of one checkpoint or savepoint, where state writers put their files.

    Picklable by its URI (the filesystem object is resolved again on the other side).
    """

    def __init__(self, uri: str, checkpoint_id: CheckpointId, is_savepoint: bool = False) -> None:
        self.uri = uri.rstrip("/")
        self.checkpoint_id = checkpoint_id
        self.is_savepoint = is_savepoint
        self._fs: AbstractFileSystem | None = None
        self._path = ""

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.uri, self.checkpoint_id, self.is_savepoint))

    def __repr__(self) -> str:
        return f"CheckpointStorageLocation({self.uri!r}, {self.checkpoint_id})"

    @property
    def metadata_uri(self) -> str:
        return join(self.uri, METADATA_FILE)

    def _resolved(self) -> tuple[AbstractFileSystem, str]:
        if self._fs is None:
            self._fs, self._path = resolve(self.uri)
        return self._fs, self._path

    def create(self) -> CheckpointStorageLocation:
        fs, path = self._resolved()
        fs.makedirs(path, exist_ok=True)
        return self

    def write_state(self, name: str, data: bytes | memoryview) -> StreamStateHandle:
        """Write one state file (``write_file``); its handle records size and SHA-256."""
        if not _VALID_NAME.match(name) or name in _RESERVED or _INPROGRESS in name:
            raise InvalidStateNameError(name)
        fs, path = self._resolved()
        file_path = f"{path}/{name}"
        uri = to_uri(fs, file_path)
        if fs.exists(file_path):
            raise StateFileExistsError(uri)
        fs.makedirs(path, exist_ok=True)
        write_file(uri, data)
        view = memoryview(data)
        return StreamStateHandle(uri, view.nbytes, hashlib.sha256(view).hexdigest())

    @property
    def shared_uri(self) -> str | None:
        """``<dir>/<job-id>/shared``: where incremental checkpoints put files they share; None
        for a savepoint, which must be self-contained."""
        if self.is_savepoint:
            return None
        return canonical_uri(join(self.uri.rsplit("/", 1)[0], SHARED_DIR))

    def write_shared_state(self, name: str, data: bytes | memoryview) -> StreamStateHandle:
        """Write one shared file (an immutable SST file of an incremental checkpoint) under
        ``shared_uri``; ``name`` must be unique (the caller adds a random part)."""
        shared = self.shared_uri
        if shared is None:
            raise InvalidStateNameError(f"{name} (a savepoint shares no files)")
        if not _VALID_NAME.match(name) or _INPROGRESS in name:
            raise InvalidStateNameError(name)
        fs, path = resolve(join(shared, name))
        if fs.exists(path):
            raise StateFileExistsError(to_uri(fs, path))
        fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
        uri = to_uri(fs, path)
        write_file(uri, data)
        view = memoryview(data)
        return StreamStateHandle(uri, view.nbytes, hashlib.sha256(view).hexdigest())

    @property
    def commit_marker_uri(self) -> str:
        return join(self.uri, COMMIT_MARKER)

    def commit_metadata(self, data: bytes) -> None:
        """Write ``_metadata``, then the commit marker naming its size and SHA-256: until the
        marker is written, readers see no checkpoint here (``read_committed``)."""
        self.create()
        write_file(self.metadata_uri, data)
        write_file(self.commit_marker_uri, commit_marker(data))

    def dispose(self) -> None:
        """Delete the directory with everything in it (an aborted checkpoint)."""
        delete_directory(self.uri)


def default_checkpoint_dir() -> str:
    return os.path.join(tempfile.gettempdir(), "flintlock-checkpoints")


class CheckpointStorage:
    """Creates the locations of one job's checkpoints and savepoints."""

    def __init__(
        self,
        checkpoint_dir: str,
        job_id: JobId,
        savepoint_dir: str | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.checkpoint_dir = checkpoint_dir.rstrip("/")
        self.job_id = job_id
        self.savepoint_dir = savepoint_dir.rstrip("/") if savepoint_dir else None
        self._rng = rng or random.Random()

    @classmethod
    def from_config(
        cls, config: Configuration, job_id: JobId, rng: random.Random | None = None
    ) -> CheckpointStorage:
        directory = config.get(opts.DIR) or default_checkpoint_dir()
        return cls(directory, job_id, config.get(opts.SAVEPOINT_DIR), rng)

    @property
    def job_dir(self) -> str:
        return join(self.checkpoint_dir, str(self.job_id))

    def checkpoint_location(self, checkpoint_id: CheckpointId) -> CheckpointStorageLocation:
        """``<dir>/<job-id>/chk-<n>`` (not created; any process can compute it)."""
        uri = join(self.job_dir, f"{CHECKPOINT_PREFIX}{checkpoint_id}")
        return CheckpointStorageLocation(uri, checkpoint_id)

    def init_checkpoint(self, checkpoint_id: CheckpointId) -> CheckpointStorageLocation:
        return self.checkpoint_location(checkpoint_id).create()

    def init_savepoint(
        self, checkpoint_id: CheckpointId, target_dir: str | None = None
    ) -> CheckpointStorageLocation:
        """A fresh ``<target>/savepoint-<jobid6>-<random>`` directory."""
        base = (target_dir or self.savepoint_dir or "").rstrip("/")
        if not base:
            raise NoSavepointDirectoryError()
        suffix = f"{self._rng.getrandbits(48):012x}"
        uri = join(base, f"savepoint-{str(self.job_id)[:6]}-{suffix}")
        return CheckpointStorageLocation(uri, checkpoint_id, is_savepoint=True).create()
