"""Typed errors of the state layer. All survive pickling (constructor args go to ``args``)."""

from __future__ import annotations

from flintlock.common.errors import FlintlockError


class StateError(FlintlockError):
    """Base class of state-layer errors."""


class NoCurrentKeyError(StateError):
    """Keyed state was used before ``set_current_key`` (e.g. outside a keyed context)."""

    def __init__(self, detail: str = "keyed state accessed before a current key was set") -> None:
        super().__init__(detail)
        self.detail = detail

    def __str__(self) -> str:
        return self.detail


class StateKindMismatchError(StateError):
    """A state name is registered (or was restored) as one kind and requested as another."""

    def __init__(self, name: str, existing: str, requested: str) -> None:
        super().__init__(name, existing, requested)
        self.name = name
        self.existing = existing
        self.requested = requested

    def __str__(self) -> str:
        return (
            f"state {self.name!r} is {self.existing} state and cannot be used as "
            f"{self.requested} state; use another name"
        )


class MaxParallelismMismatchError(StateError):
    """Keyed state was written with another number of key groups than the restoring job uses."""

    def __init__(self, snapshot_max_parallelism: int, job_max_parallelism: int) -> None:
        super().__init__(snapshot_max_parallelism, job_max_parallelism)
        self.snapshot_max_parallelism = snapshot_max_parallelism
        self.job_max_parallelism = job_max_parallelism

    def __str__(self) -> str:
        return (
            f"keyed state was snapshotted with max parallelism {self.snapshot_max_parallelism} "
            f"but the job uses {self.job_max_parallelism}; max parallelism cannot change"
        )


class ChannelStateRescaleError(StateError):
    """Unaligned in-flight (channel) state cannot be redistributed to another parallelism.

    Flink cannot rescale unaligned in-flight state either: in-flight buffers belong to one
    physical channel, and after rescaling those channels no longer exist. Restore from an
    aligned checkpoint or a savepoint to change the parallelism.
    """

    def __init__(self, operator_id: str, old_parallelism: int, new_parallelism: int) -> None:
        super().__init__(operator_id, old_parallelism, new_parallelism)
        self.operator_id = operator_id
        self.old_parallelism = old_parallelism
        self.new_parallelism = new_parallelism

    def __str__(self) -> str:
        return (
            f"operator {self.operator_id} has unaligned in-flight channel state and cannot be "
            f"rescaled from parallelism {self.old_parallelism} to {self.new_parallelism}; "
            "restore from an aligned checkpoint or a savepoint to rescale"
        )


class InvalidParallelismError(StateError):
    """A new parallelism outside 1..max parallelism."""

    def __init__(self, operator_id: str, parallelism: int, max_parallelism: int) -> None:
        super().__init__(operator_id, parallelism, max_parallelism)
        self.operator_id = operator_id
        self.parallelism = parallelism
        self.max_parallelism = max_parallelism

    def __str__(self) -> str:
        return (
            f"operator {self.operator_id}: parallelism {self.parallelism} must be between 1 "
            f"and its max parallelism {self.max_parallelism}"
        )


class NonRestoredStateError(StateError):
    """The checkpoint holds state of operators the new job does not have."""

    def __init__(self, operator_ids: tuple[str, ...]) -> None:
        super().__init__(operator_ids)
        self.operator_ids = operator_ids

    def __str__(self) -> str:
        return (
            f"the checkpoint has state for operators {', '.join(self.operator_ids)} that are "
            "not in the job; allow non-restored state to skip it"
        )


class StateBackendUnavailableError(StateError):
    """The configured state backend cannot be used here."""

    def __init__(self, backend: str, detail: str) -> None:
        super().__init__(backend, detail)
        self.backend = backend
        self.detail = detail

    def __str__(self) -> str:
        return f"state backend {self.backend!r} is not available: {self.detail}"


class StateBackendDisposedError(StateError):
    """A state backend was used after ``dispose()``."""

    def __init__(self, backend: str) -> None:
        super().__init__(backend)
        self.backend = backend

    def __str__(self) -> str:
        return f"the {self.backend} state backend was already disposed"


class SnapshotReleasedError(StateError):
    """A snapshot's asynchronous part ran after the snapshot was released (checkpoint aborted
    or backend disposed)."""

    def __init__(self, backend: str) -> None:
        super().__init__(backend)
        self.backend = backend

    def __str__(self) -> str:
        return f"the {self.backend} snapshot was released before its asynchronous part finished"


class StateValueFormatError(StateError, ValueError):
    """A stored RocksDB value in the compact format (``values``) is malformed or truncated."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail

    def __str__(self) -> str:
        return f"corrupt compact state value: {self.detail}"
