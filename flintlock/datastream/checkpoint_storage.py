"""Checkpoint storage classes under PyFlink's names; they only name a directory.

``FileSystemCheckpointStorage(path)`` is what ``CheckpointConfig.set_checkpoint_storage`` and
``execution.checkpointing.dir`` express: checkpoints go to files under ``path`` (a local path
or an fsspec URL). The storage itself is implemented by the runtime (issue #3).
"""

from __future__ import annotations

from typing import Any


class CheckpointStorage:
    """Base of the storage descriptions."""


class FileSystemCheckpointStorage(CheckpointStorage):
    def __init__(self, checkpoint_path: str, file_state_size_threshold: int | None = None,
                 write_buffer_size: int | None = None) -> None:
        if not isinstance(checkpoint_path, str) or not checkpoint_path.strip():
            raise ValueError(f"checkpoint_path must be a non-empty path, got {checkpoint_path!r}")
        self._path = checkpoint_path

    def get_checkpoint_path(self) -> str:
        return self._path

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileSystemCheckpointStorage) and other._path == self._path

    def __hash__(self) -> int:
        return hash(self._path)

    def __repr__(self) -> str:
        return f"FileSystemCheckpointStorage({self._path!r})"


class JobManagerCheckpointStorage(CheckpointStorage):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            "JobManagerCheckpointStorage (checkpoints in the JobManager's memory) is not "
            "supported yet (issue #3); use FileSystemCheckpointStorage")
