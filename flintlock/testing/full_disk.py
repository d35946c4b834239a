"""A checkpoint storage whose disk can fill up on cue: writes fail with ``ENOSPC``.

``fulldisk://`` is an in-memory fsspec filesystem (this process only: for jobs on TaskManager
threads) that refuses writes with ``OSError(errno.ENOSPC)`` while it is full, the way a full
local disk or an exhausted quota does, at the file layer the checkpoint storage writes
through. Point ``execution.checkpointing.dir`` at ``fulldisk://<name>`` and::

    disk = FullDisk("fulldisk://job-a")
    disk.fill("state")      # TaskManagers' state files are refused
    disk.fill("metadata")   # the JobManager's _metadata and commit marker are refused
    disk.fill("all")
    disk.free()

The fullness is kept in the filesystem itself (a file ``/.full-<scope>`` under the name), so
the JobManager and every TaskManager thread see the same disk; refused writes are counted in
``/.refused`` for the test to wait on. Reads, listings and deletes always work (freeing space
is what a full disk allows).
"""

from __future__ import annotations

import errno
import os
from typing import Any

import fsspec
from fsspec.implementations.memory import MemoryFileSystem

PROTOCOL = "fulldisk"
SCOPES = ("state", "metadata", "all")
_METADATA_NAMES = ("_metadata", "_metadata.committed")


class FullDiskFileSystem(MemoryFileSystem):  # type: ignore[misc]
    protocol = PROTOCOL
    store: dict[str, Any] = {}
    pseudo_dirs = [""]

    @classmethod
    def _strip_protocol(cls, path: str) -> str:
        if path.startswith(f"{PROTOCOL}://"):
            path = "memory://" + path[len(PROTOCOL) + 3:]
        return str(super()._strip_protocol(path))

    def pipe_file(self, path: str, value: bytes, mode: str = "overwrite", **kwargs: Any) -> None:
        self._refuse_if_full(path)
        super().pipe_file(path, value, mode=mode, **kwargs)

    def _open(self, path: str, mode: str = "rb", *args: Any, **kwargs: Any) -> Any:
        if "r" not in mode:
            self._refuse_if_full(path)
        return super()._open(path, mode, *args, **kwargs)

    def _refuse_if_full(self, path: str) -> None:
        path = self._strip_protocol(path)
        root = "/" + path.lstrip("/").split("/", 1)[0]
        name = path.rsplit("/", 1)[-1]
        scope = "metadata" if name in _METADATA_NAMES else "state"
        if name.startswith(".") or not any(
                f"{root}/.full-{s}" in self.store for s in (scope, "all")):
            return
        refused = f"{root}/.refused"
        count = int(self.store[refused].getvalue()) if refused in self.store else 0
        super().pipe_file(refused, str(count + 1).encode())
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)


fsspec.register_implementation(PROTOCOL, FullDiskFileSystem, clobber=True)


class FullDisk:
    """The switch of one ``fulldisk://<name>`` directory tree."""

    def __init__(self, uri: str) -> None:
        if not uri.startswith(f"{PROTOCOL}://"):
            raise ValueError(f"not a {PROTOCOL}:// URL: {uri!r}")
        self.uri = uri.rstrip("/")
        self._fs = FullDiskFileSystem()
        self._root = "/" + uri[len(PROTOCOL) + 3:].strip("/").split("/", 1)[0]

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
        path = f"{self._root}/.refused"
        return int(self._fs.cat_file(path)) if self._fs.exists(path) else 0

    def committed_checkpoints(self, job_id: str) -> list[int]:
        """Ids of the job's checkpoints whose commit marker exists."""
        pattern = f"{self._root}/{job_id}/chk-*/_metadata.committed"
        return sorted(int(p.split("/")[-2][4:]) for p in self._fs.glob(pattern))
