"""A source coordinator's part of a checkpoint: its split enumerator's state, pickled and kept
inline in the checkpoint's metadata (``enumerators.SourceCoordinator`` takes and restores it;
the metadata formats write and read it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flintlock.runtime.state import pickles as state_pickles


@dataclass(frozen=True)
class EnumeratorState:
    """A source coordinator's checkpointed state (kept inline in the checkpoint metadata)."""

    operator_id: str
    data: bytes

    @property
    def state_size(self) -> int:
        return len(self.data)

    def discard(self) -> None:
        """Inline state: nothing to delete."""

    def load(self) -> Any:
        return state_pickles.loads(self.data)
