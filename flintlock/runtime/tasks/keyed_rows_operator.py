"""KEYED_PROCESS for a function that can take a whole batch of rows and emits nothing while
taking it: the Table planner's event-time window aggregation (issue 32).

Through ``ProcessOperator`` every record of a keyed process function costs the operator's
per-record calls (the key selector, setting the backend's current key and the context's
timestamp, the function call, its output checked) — for the window aggregation, whose rows
only update a window's accumulators, about as much as the aggregation itself. A function that
offers ``process_keyed_batch`` runs here instead (``operator_factory`` picks this class for
it; same state, timers and key groups as ``ProcessOperator``, which this class is):

* ``function.process_keyed_batch(records, get_key, set_key, ctx) -> bool`` — takes the whole
  batch (timestamped or not) or declines it (False: the batch then goes through
  ``ProcessOperator`` record by record, e.g. a processing-time window aggregation). The
  function sets a key with ``set_key(get_key(record))`` before it touches that key's state or
  timers, and emits nothing: no output, no side output, no ``ctx.timestamp()`` (the record
  timestamps are not set). Nothing else happens between the records of one batch (no timer
  fires, the watermark does not move), which is what lets the function group a batch's rows
  by key before it applies them, in their order.

Processing-time timers fire through ``on_timer`` as with ``ProcessOperator``; event-time
timers too, unless the function offers ``on_event_timers(timers, ctx)`` (as
``co_batch_operator``'s functions do): then a watermark's due timers go to it at once and their
outputs leave as one batch (issue 33: a window aggregation's firing, a row per key and window,
cost a batch through the chain and the exchange per row). Task thread only.
"""

from __future__ import annotations

from typing import Any

from flintlock.runtime.tasks.co_batch_operator import fire_event_timers, key_setter
from flintlock.runtime.tasks.operators import ProcessOperator


def takes_keyed_batches(function: Any) -> bool:
    """Whether a keyed process function offers ``process_keyed_batch``."""
    return callable(getattr(function, "process_keyed_batch", None))


class KeyedRowsOperator(ProcessOperator):
    """KEYED_PROCESS a batch at a time for a function that emits nothing on its rows."""

    def open(self) -> None:
        super().open()
        self._set_key = key_setter(self.context.keyed_backend)
        self._fires_batches = callable(getattr(self.function, "on_event_timers", None))

    def process_watermark(self, timestamp: int) -> None:
        if not (self._fires_batches and fire_event_timers(self, timestamp)):
            super().process_watermark(timestamp)

    def process_batch(self, records: list[Any]) -> None:
        if records:
            get_key = self._key_selector()
            if not self._key_checked:
                self._first_key(get_key(list.__getitem__(records, 0)))
            if self.function.process_keyed_batch(records, get_key, self._set_key, self._ctx):
                return
        super().process_batch(records)
