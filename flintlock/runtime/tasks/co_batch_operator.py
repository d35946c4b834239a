"""KEYED_CO_PROCESS for a function that takes a whole batch, and a watermark's timers at once.

Through ``CoOperator`` every record of a keyed co-process function costs the operator's calls
(a closure per record, the key selector, ``set_current_key``, the function call with its
context, the output list) and every event-time timer a ``Triggerable`` call, a context set-up,
an output batch and its timestamps: for the Table planner's interval join, whose every row
registers a clean-up timer that fires once, that is as much as the join's own work. A function
that offers the two methods below runs here instead (``operator_factory`` picks this class
for such a function; same state, timers and key groups as ``CoOperator``):

* ``function.process_batch(index, records, timestamps, get_key, set_key, ctx)`` — input
  ``index`` (0 or 1) gives a batch; the function sets each record's key with
  ``set_key(get_key(record))`` before it handles it (as ``process_element1/2`` would be
  called) and returns ``(outputs, output_timestamps)``: the outputs in order and, when
  ``timestamps`` (the records') is not None, the timestamp of each output (its record's).
* ``function.on_event_timers(timers, ctx)`` — ``timers`` yields the watermark's due event-time
  timers as ``(timestamp, key, namespace)`` in firing order, each key already the current key
  (``InternalTimerService.due_event_timers``: a timer registered meanwhile comes up in order,
  exactly as with ``on_timer`` per timer); the function must exhaust it and returns
  ``(outputs, output_timestamps)``, each output with its timer's timestamp.

What the function may not do on these paths: emit side outputs or read ``ctx.timestamp()``.
Processing-time timers still fire through ``on_timer`` one at a time (``CoOperator``).

Task thread only.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from flintlock.common.time_domain import TimeDomain
from flintlock.runtime.network.event_time import TimestampedBatch
from flintlock.runtime.state.backend import KeyedStateBackend
from flintlock.runtime.tasks.operators import CoOperator


def takes_batches(function: Any) -> bool:
    """Whether a keyed co-process function offers this operator's two methods."""
    return all(callable(getattr(function, name, None))
               for name in ("process_batch", "on_event_timers"))


class KeyedCoBatchOperator(CoOperator):
    """KEYED_CO_PROCESS a batch at a time (see the module docstring)."""

    def open(self) -> None:
        super().open()
        self._set_key = key_setter(self.context.keyed_backend)
        self._get_keys = (self._key_selector(0), self._key_selector(1))

    def process_batch(self, records: list[Any]) -> None:
        self._process_rows(records, 0)

    def process_batch2(self, records: list[Any]) -> None:
        self._process_rows(records, 1)

    def _process_rows(self, records: list[Any], index: int) -> None:
        if not records:
            return
        get_key = self._get_keys[index]
        if not self._key_checked:
            self._first_key(get_key(list.__getitem__(records, 0)))
        timestamps = records.timestamps if type(records) is TimestampedBatch else None
        out, stamps = self.function.process_batch(index, records, timestamps, get_key,
                                                  self._set_key, self._ctx)
        self._emit(out, stamps)

    def process_watermark(self, timestamp: int) -> None:
        if not fire_event_timers(self, timestamp):
            super().process_watermark(timestamp)

    def _emit(self, out: list[Any], stamps: list[int] | None) -> None:
        if out:
            self.output.collect_batch(out if stamps is None else TimestampedBatch(out, stamps))


def key_setter(backend: Any) -> Any:
    """``backend.set_current_key``, or for a backend whose ``set_current_key`` only stores the
    key, the same by a C call (``setattr``): no Python frame per record."""
    if type(backend).set_current_key is KeyedStateBackend.set_current_key:
        return partial(setattr, backend, "current_key")
    return backend.set_current_key


def fire_event_timers(operator: Any, timestamp: int) -> bool:
    """``process_watermark`` of a ``TimerOperator`` whose function offers ``on_event_timers``:
    the watermark's due event-time timers handed over at once, their outputs sent as one
    timestamped batch, then the (held) watermark. False, having done nothing, without keyed
    timers (no keyed backend): the caller then advances the watermark as usual."""
    timers = operator._timers
    if timers is None:
        return False
    ctx = operator._ctx
    ctx.time_domain_value = TimeDomain.EVENT_TIME
    try:
        out, stamps = operator.function.on_event_timers(
            timers.internal.due_event_timers(timestamp), ctx)
    finally:
        ctx.time_domain_value = None
    if out:
        operator.output.collect_batch(TimestampedBatch(out, stamps))
    operator._emit_held_watermark(timestamp)
    return True
