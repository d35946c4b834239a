"""KEYED_BUNDLE_PROCESS: a keyed process function that sees its input one bundle at a time.

PyFlink runs a Python aggregate function (a ``udaf`` in ``group_by(...).aggregate`` or a SQL
GROUP BY, a ``udtaf`` in ``flat_aggregate``) in its Python worker, which buffers the records of
a *bundle* per key and aggregates each key's rows when the bundle ends: a key touched by ten
rows of one bundle emits one result (or one -U/+U pair), not ten. This operator gives a
function the same unit of work, so the Table planner reproduces those changelogs exactly.

A bundle ends, as PyFlink's, when it holds ``python.fn-execution.bundle.size`` records, when
``python.fn-execution.bundle.time`` has passed since its first record (a function's own
``bundle_size`` / ``bundle_time_ms`` attributes take their place: a mini-batch's), before a
watermark is forwarded, before a checkpoint's snapshot (so nothing buffered is ever part of
the state: what was emitted and what is in the state always agree), and at the end of input.
At its end,
``function.process_bundle(rows, ctx)`` is called once per key, keys in the order they first
appeared in the bundle, with that key set as the backend's current key; its outputs go
downstream in that order. Timestamps do not travel through a bundle (a table aggregation's
rows carry none).

A function may say in which order its keys are handed over: ``function.bundle_order(keys)``
(the keys in first-seen order) returns them reordered — Flink's mini-batch operators walk a
Java ``HashMap`` (``datastream/changelog/binary_rows.py``).

Everything else is KEYED_PROCESS (``ProcessOperator``): keyed state, timers, side outputs.

BUNDLE_PROCESS (``BundleProcessOperator``) is the non-keyed form, for work done before a
shuffle (Flink's local aggregation): the bundle is a dict ``key -> value`` that the function
folds each record into (``function.add_input(value or None, record) -> value``, the key from
``function.key_selector()``), and at the bundle's end ``function.finish_bundle(bundle)``
returns the outputs. It ends its bundles where the keyed form does. A function may fold a
whole batch at once (``function.add_batch(bundle, records)``; the bundle may then pass its
size by less than a batch) and say which watermarks end a bundle
(``function.ends_bundle_at(watermark) -> bool``; without it, every one does): the two-phase
window aggregation's local phase (``datastream.changelog.window_local``).

Task thread only: the bundle timer's action comes through the task's mailbox.
"""

from __future__ import annotations

from typing import Any

from flintlock.runtime.tasks.operators import ProcessOperator, _extend, _route_side_outputs


class _Bundles(ProcessOperator):
    """Where a bundle ends (size, time, watermark, snapshot, end of input); the subclasses say
    what a bundle holds and what its end does."""

    def open(self) -> None:
        super().open()
        self._bundle: dict[Any, Any] = {}
        self._bundle_records = 0
        self._bundle_number = 0  # a scheduled end of an ended bundle does nothing
        environment = self.context.environment
        self._bundle_size = getattr(self.function, "bundle_size", None) or (
            environment.bundle_size)
        self._bundle_time_ms = getattr(self.function, "bundle_time_ms", None) or (
            environment.bundle_time_ms)

    def _start_bundle_timer(self) -> None:
        number = self._bundle_number
        timers = self.context.timers
        timers.schedule(timers.now_ms() + self._bundle_time_ms,
                        lambda _now: self._end_bundle_if(number))

    def _end_bundle_if(self, number: int) -> None:
        if number == self._bundle_number:
            self.finish_bundle()

    def _take_bundle(self) -> dict[Any, Any]:
        bundle, self._bundle = self._bundle, {}
        self._bundle_records = 0
        self._bundle_number += 1
        return bundle

    def _send(self, out: list[Any]) -> None:
        ctx = self._ctx
        out = _route_side_outputs(out, ctx)
        if out:
            self.output.collect_batch(out)
        ctx.flush_side_outputs(self.context.side_outputs)

    def finish_bundle(self) -> None:
        raise NotImplementedError

    def process_watermark(self, timestamp: int) -> None:
        ends_at = getattr(self.function, "ends_bundle_at", None)
        if ends_at is None or ends_at(timestamp):
            self.finish_bundle()
        super().process_watermark(timestamp)

    def end_input(self, input_index: int = 0) -> None:
        self.finish_bundle()
        super().end_input(input_index)

    def snapshot_state(self, checkpoint_id: int) -> Any:
        self.finish_bundle()
        return super().snapshot_state(checkpoint_id)


class KeyedBundleProcessOperator(_Bundles):
    """KEYED_BUNDLE_PROCESS (see the module docstring)."""

    def open(self) -> None:
        super().open()
        self._get_key = self._key_selector()
        self._order = getattr(self.function, "bundle_order", None)

    def process_batch(self, records: list[Any]) -> None:
        bundle, get_key = self._bundle, self._get_key
        if not bundle and records:
            self._start_bundle_timer()
        for record in records:
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

    def finish_bundle(self) -> None:
        """Hands every key's buffered rows to the function and sends what it returns."""
        if not self._bundle:
            return
        bundle = self._take_bundle()
        process, ctx = self.function.process_bundle, self._ctx
        set_key = self.context.keyed_backend.set_current_key
        keys = list(bundle) if self._order is None else self._order(list(bundle))
        out: list[Any] = []
        for key in keys:
            set_key(key)
            _extend(out, process(bundle[key], ctx))
        self._send(out)


class BundleProcessOperator(_Bundles):
    """BUNDLE_PROCESS (see the module docstring): non-keyed, a bundle of folded values."""

    def open(self) -> None:
        super().open()
        self._get_key = self.function.key_selector()
        self._add_batch = getattr(self.function, "add_batch", None)

    def process_batch(self, records: list[Any]) -> None:
        bundle, get_key, add = self._bundle, self._get_key, self.function.add_input
        if not bundle and records:
            self._start_bundle_timer()
        if self._add_batch is not None:  # the function folds a whole batch in one call
            self._add_batch(bundle, records)
            self._bundle_records += len(records)
            if self._bundle_records >= self._bundle_size:
                self.finish_bundle()
            return
        for record in records:
            key = get_key(record)
            bundle[key] = add(bundle.get(key), record)
            self._bundle_records += 1
            if self._bundle_records >= self._bundle_size:
                self.finish_bundle()
                bundle = self._bundle

    def finish_bundle(self) -> None:
        """Hands the bundle to the function and sends what it returns."""
        if not self._bundle:
            return
        self._send(list(self.function.finish_bundle(self._take_bundle())))
