"""KEYED_BUNDLE_PROCESS: a keyed process function that sees its input one bundle at a time.

PyFlink runs a Python aggregate function (a ``udaf`` in ``group_by(...).aggregate`` or a SQL
GROUP BY, a ``udtaf`` in ``flat_aggregate``) in its Python worker, which buffers the records of
a *bundle* per key and aggregates each key's rows when the bundle ends: a key touched by ten
rows of one bundle emits one result (or one -U/+U pair), not ten. This operator gives a
function the same unit of work, so the Table planner reproduces those changelogs exactly.

A bundle ends, as PyFlink's, when it holds ``python.fn-execution.bundle.size`` records, when
``python.fn-execution.bundle.time`` has passed since its first record, before a watermark is
forwarded, before a checkpoint's snapshot (so nothing buffered is ever part of the state:
what was emitted and what is in the state always agree), and at the end of input. At its end,
``function.process_bundle(rows, ctx)`` is called once per key, keys in the order they first
appeared in the bundle, with that key set as the backend's current key; its outputs go
downstream in that order. Timestamps do not travel through a bundle (a table aggregation's
rows carry none).

Everything else is KEYED_PROCESS (``ProcessOperator``): keyed state, timers, side outputs.
Task thread only: the bundle timer's action comes through the task's mailbox.
"""

from __future__ import annotations

from typing import Any

from flintlock.runtime.tasks.operators import ProcessOperator, _extend, _route_side_outputs


class KeyedBundleProcessOperator(ProcessOperator):
    """KEYED_BUNDLE_PROCESS (see the module docstring)."""

    def open(self) -> None:
        super().open()
        self._bundle: dict[Any, list[Any]] = {}
        self._bundle_records = 0
        self._bundle_number = 0  # a scheduled end of an ended bundle does nothing
        environment = self.context.environment
        self._bundle_size = environment.bundle_size
        self._bundle_time_ms = environment.bundle_time_ms
        self._get_key = self._key_selector()

    def process_batch(self, records: list[Any]) -> None:
        bundle, get_key = self._bundle, self._get_key
        if not bundle and records:
            number = self._bundle_number
            timers = self.context.timers
            timers.schedule(timers.now_ms() + self._bundle_time_ms,
                            lambda _now: self._end_bundle_if(number))
        for record in list(records):
            key = get_key(record)
            if not self._key_checked:
                self._first_key(key)
            rows = bundle.get(key)
            if rows is None:
                bundle[key] = [record]
            else:
                rows.append(record)
            self._bundle_records += 1
            if self._bundle_records >= self._bundle_size:
                self.finish_bundle()
                bundle = self._bundle

    def _end_bundle_if(self, number: int) -> None:
        if number == self._bundle_number:
            self.finish_bundle()

    def finish_bundle(self) -> None:
        """Hands every key's buffered rows to the function and sends what it returns."""
        if not self._bundle:
            return
        bundle, self._bundle = self._bundle, {}
        self._bundle_records = 0
        self._bundle_number += 1
        process, ctx = self.function.process_bundle, self._ctx
        set_key = self.context.keyed_backend.set_current_key
        out: list[Any] = []
        for key, rows in bundle.items():
            set_key(key)
            _extend(out, process(rows, ctx))
        out = _route_side_outputs(out, ctx)
        if out:
            self.output.collect_batch(out)
        ctx.flush_side_outputs(self.context.side_outputs)

    def process_watermark(self, timestamp: int) -> None:
        self.finish_bundle()
        super().process_watermark(timestamp)

    def end_input(self, input_index: int = 0) -> None:
        self.finish_bundle()
        super().end_input(input_index)

    def snapshot_state(self, checkpoint_id: int) -> Any:
        self.finish_bundle()
        return super().snapshot_state(checkpoint_id)
