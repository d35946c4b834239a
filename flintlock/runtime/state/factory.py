"""Picks the keyed state backend that configuration names and creates it, empty.

``create_keyed_state_backend`` reads ``state.backend.type`` (``hashmap``: ``heap``, the
default; ``rocksdb``: ``rocksdb``) and the options each backend takes. It sits apart from the
base class in ``backend`` because it imports the backends, which subclass that base class.
Called by the operator chain when it opens a keyed operator, on the task thread.
"""

from __future__ import annotations

import tempfile

from flintlock.common.clock import SYSTEM_CLOCK, Clock
from flintlock.common.config import Configuration
from flintlock.common.options import checkpointing as checkpointing_options
from flintlock.common.options import state as state_options
from flintlock.runtime.state.backend import KeyedStateBackend
from flintlock.runtime.state.errors import StateBackendUnavailableError
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange


def create_keyed_state_backend(
    config: Configuration,
    key_group_range: KeyGroupRange,
    max_parallelism: int,
    clock: Clock = SYSTEM_CLOCK,
) -> KeyedStateBackend:
    """The backend ``state.backend.type`` names, empty (call ``restore`` to load a checkpoint)."""
    kind = config.get(state_options.BACKEND)
    threshold = config.get(state_options.INLINE_THRESHOLD)
    if kind == "hashmap":
        return HeapKeyedStateBackend(key_group_range, max_parallelism, clock, threshold)
    if kind == "rocksdb":
        from flintlock.runtime.state.rocksdb import RocksDBKeyedStateBackend  # loads rocksdict

        directory = config.get(state_options.LOCAL_DIR) or tempfile.gettempdir()
        return RocksDBKeyedStateBackend(
            key_group_range, max_parallelism, clock, threshold, directory,
            incremental=config.get(checkpointing_options.INCREMENTAL),
        )
    raise StateBackendUnavailableError(
        kind, "sqlite was measured and rejected (docs/internals/state.md); use rocksdb"
    )
