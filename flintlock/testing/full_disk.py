"""A checkpoint storage whose disk can fill up on cue: writes fail with ``ENOSPC``.

Two fsspec filesystems refuse writes with ``OSError(errno.ENOSPC)`` while their disk is full,
the way a full local disk or an exhausted quota does, at the file layer the checkpoint storage
writes through:

* ``fulldisk://<name>``: in memory, this process only (jobs on TaskManager threads);
* ``fulldir:///<absolute directory>``: a real local directory, shared by every process on the
  machine (TaskManagers in Spark's Python workers, a driver started as a subprocess). A
  process resolves ``fulldir://`` once it imported this module: a job's function that holds a
  ``FullDisk`` (or anything else of this module) makes every TaskManager import it when it
  unpickles the job, before it writes any state.

Point ``execution.checkpointing.dir`` at such a URL and::

    disk = FullDisk("fulldir:///tmp/job-a/checkpoints")
    disk.fill("state")      # TaskManagers' state files are refused
    disk.fill("metadata")   # the JobManager's _metadata and commit marker are refused
    disk.fill("all")
    disk.free()

A disk is the directory tree under its URL: ``FullDisk`` marks it with a file ``.fulldisk``,
and its fullness is a file ``.full-<scope>`` beside that marker, so the JobManager and every
TaskManager, threads or processes, see the same disk. A write is refused when the nearest
marked directory above it is full for the file's scope; each refusal appends one byte to
``.refused``, for the test to wait on. Reads, listings, deletes and files whose names start
with a dot always work (freeing space is what a full disk allows).

Threads and processes: the state is only in the files; any thread of any process may write
through the filesystem or flip the switch.
"""

from __future__ import annotations

import errno
import os
from typing import Any

import fsspec
from fsspec import AbstractFileSystem
from fsspec.implementations.local import LocalFileSystem
from fsspec.implementations.memory import MemoryFileSystem

PROTOCOL = "fulldisk"
LOCAL_PROTOCOL = "fulldir"
SCOPES = ("state", "metadata", "all")
MARKER = ".fulldisk"
REFUSED = ".refused"
_METADATA_NAMES = ("_metadata", "_metadata.committed")


def _scope_of(name: str) -> str | None:
    """What a file of this name is on the disk: metadata, state, or bookkeeping (None)."""
    if name.startswith("."):
        return None
    return "metadata" if name in _METADATA_NAMES else "state"


class _Refusing:
    """The refusal rule, shared by both filesystems; ``_present``/``_append`` are theirs."""

    def _present(self, path: str) -> bool:
        raise NotImplementedError

    def _append(self, path: str, data: bytes) -> None:
        raise NotImplementedError

    def _disk_of(self, path: str) -> str | None:
        directory = path.rstrip("/").rsplit("/", 1)[0]
        while directory:
            if self._present(f"{directory}/{MARKER}"):
                return directory
            directory = directory.rsplit("/", 1)[0]
        return None

    def _refuse_if_full(self, path: str) -> None:
        scope = _scope_of(path.rstrip("/").rsplit("/", 1)[-1])
        disk = self._disk_of(path) if scope else None
        if disk is None or not any(self._present(f"{disk}/.full-{s}") for s in (scope, "all")):
            return
        self._append(f"{disk}/{REFUSED}", b".")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)


class FullDiskFileSystem(_Refusing, MemoryFileSystem):  # type: ignore[misc]
    """``fulldisk://``: in memory, one process."""

    protocol = PROTOCOL
    store: dict[str, Any] = {}
    pseudo_dirs = [""]

    @classmethod
    def _strip_protocol(cls, path: str) -> str:
        if path.startswith(f"{PROTOCOL}://"):
            path = "memory://" + path[len(PROTOCOL) + 3:]
        return str(super()._strip_protocol(path))

    def _present(self, path: str) -> bool:
        return path in self.store

    def _append(self, path: str, data: bytes) -> None:
        before = self.store[path].getvalue() if path in self.store else b""
        super().pipe_file(path, before + data)

    def pipe_file(self, path: str, value: bytes, mode: str = "overwrite", **kwargs: Any) -> None:
        self._refuse_if_full(self._strip_protocol(path))
        super().pipe_file(path, value, mode=mode, **kwargs)

    def _open(self, path: str, mode: str = "rb", *args: Any, **kwargs: Any) -> Any:
        if "r" not in mode:
            self._refuse_if_full(self._strip_protocol(path))
        return super()._open(path, mode, *args, **kwargs)


class LocalFullDiskFileSystem(_Refusing, AbstractFileSystem):  # type: ignore[misc]
    """``fulldir://``: the local filesystem, every process of the machine. A synchronous
    wrapper (an async one would leave fsspec's event-loop thread behind in every TaskManager);
    the methods below are the ones every other ``AbstractFileSystem`` method builds on."""

    protocol = LOCAL_PROTOCOL
    root_marker = "/"

    def __init__(self, *args: Any, **storage_options: Any) -> None:
        super().__init__(*args, **storage_options)
        self._local = LocalFileSystem(auto_mkdir=True)

    @classmethod
    def _strip_protocol(cls, path: Any) -> Any:
        if isinstance(path, list):
            return [cls._strip_protocol(p) for p in path]
        path = str(path)
        if path.startswith(f"{LOCAL_PROTOCOL}://"):
            path = path[len(LOCAL_PROTOCOL) + 3:]
        return "/" + path.strip("/")

    def _present(self, path: str) -> bool:
        return os.path.exists(path)

    def _append(self, path: str, data: bytes) -> None:
        with open(path, "ab") as handle:  # O_APPEND: concurrent refusals each count
            handle.write(data)

    def ls(self, path: str, detail: bool = True, **kwargs: Any) -> Any:
        return self._local.ls(self._strip_protocol(path), detail=detail, **kwargs)

    def info(self, path: str, **kwargs: Any) -> Any:
        return self._local.info(self._strip_protocol(path), **kwargs)

    def cat_file(self, path: str, start: int | None = None, end: int | None = None,
                 **kwargs: Any) -> Any:
        return self._local.cat_file(self._strip_protocol(path), start, end, **kwargs)

    def pipe_file(self, path: str, value: bytes, mode: str = "overwrite", **kwargs: Any) -> None:
        self._refuse_if_full(self._strip_protocol(path))
        self._local.pipe_file(self._strip_protocol(path), value, mode=mode, **kwargs)

    def _open(self, path: str, mode: str = "rb", *args: Any, **kwargs: Any) -> Any:
        if "r" not in mode:
            self._refuse_if_full(self._strip_protocol(path))
        return self._local._open(self._strip_protocol(path), mode, *args, **kwargs)

    def rm_file(self, path: str) -> None:
        self._local.rm_file(self._strip_protocol(path))

    def rm(self, path: Any, recursive: bool = False, maxdepth: int | None = None) -> None:
        self._local.rm(self._strip_protocol(path), recursive=recursive, maxdepth=maxdepth)

    def mkdir(self, path: str, create_parents: bool = True, **kwargs: Any) -> None:
        self._local.mkdir(self._strip_protocol(path), create_parents=create_parents, **kwargs)

    def makedirs(self, path: str, exist_ok: bool = False) -> None:
        self._local.makedirs(self._strip_protocol(path), exist_ok=exist_ok)

    def rmdir(self, path: str) -> None:
        self._local.rmdir(self._strip_protocol(path))


fsspec.register_implementation(PROTOCOL, FullDiskFileSystem, clobber=True)
fsspec.register_implementation(LOCAL_PROTOCOL, LocalFullDiskFileSystem, clobber=True)


class FullDisk:
    """The switch of one ``fulldisk://<name>`` or ``fulldir:///<directory>`` disk."""

    def __init__(self, uri: str) -> None:
        if uri.startswith(f"{PROTOCOL}://"):
            self._fs: Any = FullDiskFileSystem()
            self._root = "/" + uri[len(PROTOCOL) + 3:].strip("/").split("/", 1)[0]
        elif uri.startswith(f"{LOCAL_PROTOCOL}://"):
            self._fs = LocalFullDiskFileSystem()
            self._root = LocalFullDiskFileSystem._strip_protocol(uri).rstrip("/")
        else:
            raise ValueError(f"not a {PROTOCOL}:// or {LOCAL_PROTOCOL}:// URL: {uri!r}")
        self.uri = uri.rstrip("/")
        self._fs.makedirs(self._root, exist_ok=True)
        self._fs.pipe_file(f"{self._root}/{MARKER}", b"")

    def fill(self, scope: str = "all") -> None:
        """From now on refuse writes of ``scope``: state, metadata or all."""
        if scope not in SCOPES:
            raise ValueError(f"scope must be one of {SCOPES}, not {scope!r}")
        self._fs.pipe_file(f"{self._root}/.full-{scope}", b"")

    def free(self) -> None:
        for scope in SCOPES:
            path = f"{self._root}/.full-{scope}"
            if self._fs.exists(path):
                self._fs.rm(path)

    def refused_writes(self) -> int:
        path = f"{self._root}/{REFUSED}"
        return len(self._fs.cat_file(path)) if self._fs.exists(path) else 0

    def committed_checkpoints(self, job_id: str) -> list[int]:
        """Ids of the job's checkpoints whose commit marker exists."""
        pattern = f"{self._root}/{job_id}/chk-*/_metadata.committed"
        return sorted(int(p.rstrip("/").split("/")[-2][4:]) for p in self._fs.glob(pattern))
