"""Where a subtask's snapshot goes and who writes it: a state writer that finds its checkpoint's
directory on first write (a savepoint's directory may arrive after the barrier), and the
TaskManager's snapshot executor that runs the asynchronous part.

``CheckpointLocations`` is all this needs of the TaskManager: the location of a checkpoint
(from the job's checkpoint storage), of a savepoint (sent by the JobManager), and the executor.
Writers are used on the snapshot executor's threads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from flintlock.common.ids import CheckpointId
from flintlock.runtime.checkpoint.storage import CheckpointStorageLocation
from flintlock.runtime.state.snapshots import StateWriter


class CheckpointLocations(Protocol):
    def checkpoint_location(self, checkpoint_id: CheckpointId) -> CheckpointStorageLocation: ...

    def savepoint_location(self, checkpoint_id: CheckpointId) -> str:
        """Waits for the savepoint's directory from the JobManager."""
        ...

    def submit_snapshot(self, work: Callable[[], None]) -> None: ...


class LazyStateWriter:
    """A ``StateWriter`` resolving its location on first write."""

    def __init__(self, locations: CheckpointLocations, checkpoint_id: CheckpointId,
                 is_savepoint: bool) -> None:
        self._locations = locations
        self._checkpoint_id = checkpoint_id
        self._is_savepoint = is_savepoint
        self._location: CheckpointStorageLocation | None = None

    def _resolved(self) -> CheckpointStorageLocation:
        if self._location is None:
            cid = self._checkpoint_id
            if self._is_savepoint:
                uri = self._locations.savepoint_location(cid)
                self._location = CheckpointStorageLocation(uri, cid, is_savepoint=True)
            else:
                self._location = self._locations.checkpoint_location(cid)
        return self._location

    def write_state(self, name: str, data: bytes) -> Any:
        return self._resolved().write_state(name, data)

    @property
    def shared_uri(self) -> str | None:
        """Where incremental checkpoints share files; None for a savepoint (self-contained)."""
        return None if self._is_savepoint else self._resolved().shared_uri

    def write_shared_state(self, name: str, data: bytes) -> Any:
        return self._resolved().write_shared_state(name, data)


class SnapshotWriting:
    """The stream task's ``SnapshotWriting``: writers and the executor of one TaskManager."""

    def __init__(self, locations: CheckpointLocations) -> None:
        self._locations = locations

    def state_writer(self, checkpoint_id: CheckpointId, is_savepoint: bool = False
                     ) -> StateWriter:
        return LazyStateWriter(self._locations, checkpoint_id, is_savepoint)

    def submit(self, work: Callable[[], None]) -> None:
        self._locations.submit_snapshot(work)
