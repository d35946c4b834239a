"""KEYED_BATCH_PROCESS: a keyed process function handed a whole batch at a time.

The Table planner's group aggregation is a ``KeyedProcessFunction`` whose per-record work is a
get and a put of one value per key. Through ``ProcessOperator`` every record costs the
operator's calls (key selector, ``set_current_key``, the function call with its context) as
much as the aggregation itself; the keyed reduce operator avoids that by working on the heap
backend's dict directly (``ReduceOperator``). This operator gives the same access to a
function:

* ``function.batch_state()`` — the ``ValueStateDescriptor`` of the one value the function
  keeps per key (it registers that state itself in ``open``, through its runtime context, so
  the state's name and key groups are those of the per-record path: checkpoints, restores
  and rescaling see no difference).
* ``function.process_batch(records, access)`` — handles a plain batch and returns its output
  list in order (``records`` a ``ColumnBatch`` when the function says
  ``takes_column_batches``: the input side then decodes columns); ``access`` is a
  ``DirectValueAccess``: ``table`` (key → value, the state's
  own dict), ``copied`` and ``own`` (the heap backend's copy-on-write protocol while a snapshot
  is in flight: a key not in ``copied`` is added to it and its value replaced by
  ``own(value)`` before it is read or changed; ``copied`` None: no snapshot in flight). The
  function computes each record's key itself, equal to the stream's key selector's.

Anything else runs exactly as KEYED_PROCESS (``ProcessOperator``): a backend without a direct
table (RocksDB, or a value state with TTL), a timestamped batch (each output must carry its
record's timestamp), and timers. The backend's current key is not set on the batch path, so a
function may not use other state or timers from ``process_batch``.

Task thread only.
"""

from __future__ import annotations

from typing import Any

from flintlock.common.column_batches import ColumnBatch
from flintlock.runtime.network.event_time import TimestampedBatch
from flintlock.runtime.state.heap_states import own_value
from flintlock.runtime.tasks.operators import ProcessOperator


class DirectValueAccess:
    """The per-key value state a batch function reads and writes (see the module)."""

    __slots__ = ("copied", "own", "table")

    def __init__(self, table: dict[Any, Any]) -> None:
        self.table = table
        self.copied: set[Any] | None = None
        self.own = own_value


class KeyedBatchProcessOperator(ProcessOperator):
    """KEYED_BATCH_PROCESS (see the module docstring)."""

    _access: DirectValueAccess | None = None

    def open(self) -> None:
        super().open()
        self._access = None
        backend = self.context.keyed_backend
        direct = getattr(backend, "direct_table", None)
        if direct is None:
            return
        descriptor = self.function.batch_state()
        table = direct(descriptor)
        if table is not None:
            self._descriptor = descriptor
            self._access = DirectValueAccess(table)

    @property
    def takes_column_batches(self) -> bool:
        """Whether the input side may hand ``process_batch`` a ``ColumnBatch`` (the function
        reads one: the group aggregation, issue 28); every other path gets its rows."""
        return bool(getattr(self.function, "takes_column_batches", False))

    def process_batch(self, records: Any) -> None:
        access = self._access
        if type(records) is ColumnBatch and access is None:
            records = records.rows()
        if access is None or type(records) is TimestampedBatch:
            super().process_batch(records)
            return
        if not records:
            return
        if not self._key_checked:
            self._first_key(self._key_selector()(records[0]))
        access.copied = self.context.keyed_backend.copied_keys(self._descriptor)
        out = self.function.process_batch(records, access)
        if out:
            self.output.collect_batch(out)
