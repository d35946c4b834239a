"""State backend classes under PyFlink's names; each selects a ``state.backend.type``.

``HashMapStateBackend`` keeps keyed state on the Python heap; ``EmbeddedRocksDBStateBackend``
selects the embedded on-disk backend (``rocksdb``), optionally with incremental checkpoints.
``env.set_state_backend(backend)`` writes ``backend.configure_into(configuration)``. The
backends themselves are the runtime's (issue #3). The pre-1.13 classes (MemoryStateBackend,
FsStateBackend, RocksDBStateBackend) raise ``NotImplementedError`` naming their replacement.
"""

from __future__ import annotations

from typing import Any

from flintlock.common.config import Configuration
from flintlock.common.options import state as state_options
from flintlock.common.options.checkpointing import INCREMENTAL


class StateBackend:
    """Base of the backend descriptions."""

    backend_type = ""

    def configure_into(self, configuration: Configuration) -> None:
        configuration.set(state_options.BACKEND, self.backend_type)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self) -> int:
        return hash(type(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class HashMapStateBackend(StateBackend):
    backend_type = "hashmap"


class EmbeddedRocksDBStateBackend(StateBackend):
    backend_type = "rocksdb"

    def __init__(self, enable_incremental_checkpointing: bool | None = None) -> None:
        self._incremental = enable_incremental_checkpointing

    def is_incremental_checkpoints_enabled(self) -> bool:
        return bool(self._incremental)

    def configure_into(self, configuration: Configuration) -> None:
        super().configure_into(configuration)
        if self._incremental is not None:
            configuration.set(INCREMENTAL, bool(self._incremental))


def backend_from_configuration(configuration: Configuration) -> StateBackend:
    """The backend description the configuration selects."""
    backend_type = configuration.get(state_options.BACKEND)
    if backend_type == "hashmap":
        return HashMapStateBackend()
    if backend_type == "rocksdb":
        return EmbeddedRocksDBStateBackend(configuration.get(INCREMENTAL))
    generic = StateBackend()
    generic.backend_type = backend_type
    return generic


class _Legacy(StateBackend):
    replacement = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} is Flink's pre-1.13 API and is not "
                                  f"supported; use {self.replacement}")


class MemoryStateBackend(_Legacy):
    replacement = "HashMapStateBackend"


class FsStateBackend(_Legacy):
    replacement = "HashMapStateBackend with FileSystemCheckpointStorage"


class RocksDBStateBackend(_Legacy):
    replacement = "EmbeddedRocksDBStateBackend with FileSystemCheckpointStorage"
