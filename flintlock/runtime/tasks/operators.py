"""The function operators: map, flat map, filter, keyed reduce, process and co-process.

``operator_factory.create_operator(spec)`` picks the class for a stream node's ``OperatorKind``;
this module only defines them (the window and broadcast operators build on ``FunctionOperator``
and ``TimerOperator``). Operators work on batches (see ``operator``): the common case of a stateless
function is one list comprehension over the batch with the user's bound method, and the keyed
ones set the current key of their state backend before each call into user code.

Declared output types (``spec.output_type``) are checked at the chain's edges, not here (see
``typed_edges``). Keys are checked for hashability on the first record of a subtask
(``check_key``).

Event time: each operator takes a plain list or a ``TimestampedBatch`` and gives every output
the timestamp of the record it came from (``ctx.timestamp()`` returns it inside process
functions); outputs of an event-time timer carry the timer's timestamp, those of a
processing-time timer none. Keyed process functions fire their event-time timers when a
watermark reaches them, before passing the watermark on.

Sources and sinks live in ``sources`` and ``sinks``. All operators belong to the task thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from flintlock.common.operator_spec import OperatorKind, OperatorSpec, check_key
from flintlock.common.output_tag import OutputTag
from flintlock.common.state import ValueStateDescriptor
from flintlock.common.time_domain import TimeDomain
from flintlock.runtime.network.event_time import MAX_WATERMARK, NO_TIMESTAMP, TimestampedBatch
from flintlock.runtime.network.key_getters import plain_key_getter
from flintlock.runtime.state.backend import KeyedStateBackend
from flintlock.runtime.state.heap_states import own_value
from flintlock.runtime.tasks.contexts import (
    KeyedTimerService,
    NonKeyedTimerService,
    ProcessContext,
    RuntimeContextImpl,
)
from flintlock.runtime.tasks.keyed_reduce import reduce_direct
from flintlock.runtime.tasks.operator import StreamOperator

REDUCE_STATE = ValueStateDescriptor("_flintlock_reduce", None)


class FunctionOperator(StreamOperator):
    """An operator around one user function: opens and closes it."""

    def __init__(self, spec: OperatorSpec) -> None:
        self.spec = spec
        self.function = spec.function
        self._key_checked = False
        self._key_getters: dict[int, Callable[[Any], Any]] = {}

    def open(self) -> None:
        opener = getattr(self.function, "open", None)
        if opener is not None:
            opener(RuntimeContextImpl(self.context))

    def close(self) -> None:
        closer = getattr(self.function, "close", None)
        if closer is not None:
            closer()

    def _key_selector(self, index: int = 0) -> Callable[[Any], Any]:
        """The key selector of input ``index``, as a C field getter where it is one
        (``plain_key_getter``; recognised once per operator)."""
        getter = self._key_getters.get(index)
        if getter is None:
            selectors = self.context.key_selectors
            selector = selectors[index] if index < len(selectors) else None
            if selector is None:
                raise TypeError(
                    f"operator {self.context.operator_name!r} is keyed but has no key")
            getter = plain_key_getter(getattr(selector, "get_key", selector))
            self._key_getters[index] = getter
        return getter

    def _first_key(self, key: Any) -> None:
        check_key(key, self.context.operator_name)
        self._key_checked = True


class MapOperator(FunctionOperator):
    def process_batch(self, records: list[Any]) -> None:
        f = self.function.map
        out = [f(r) for r in records]
        if type(records) is TimestampedBatch:
            out = TimestampedBatch(out, records.timestamps)
        self.output.collect_batch(out)


class FilterOperator(FunctionOperator):
    def process_batch(self, records: list[Any]) -> None:
        f = self.function.filter
        if type(records) is TimestampedBatch:
            kept: list[Any] = _filter_stamped(records, f)
        else:
            kept = [r for r in records if f(r)]
        if kept:
            self.output.collect_batch(kept)


def _filter_stamped(records: TimestampedBatch, keep: Callable[[Any], Any]) -> TimestampedBatch:
    kept = TimestampedBatch()
    for value, timestamp in records.pairs():
        if keep(value):
            kept.append(value)
            kept.timestamps.append(timestamp)
    return kept


def _extend(out: list[Any], produced: Iterable[Any] | None) -> None:
    if produced is not None:
        out.extend(produced)


def _expand_stamped(records: TimestampedBatch, call: Callable[[Any, int], Iterable[Any] | None]
                    ) -> TimestampedBatch:
    """``call(value, timestamp)`` for each record; its outputs get the record's timestamp."""
    out = TimestampedBatch()
    stamps = out.timestamps
    for value, timestamp in records.pairs():
        produced = call(value, timestamp)
        if produced is not None:
            before = len(out)
            out.extend(produced)
            stamps.extend([timestamp] * (len(out) - before))
    return out


def _is_tagged(item: Any) -> bool:
    return type(item) is tuple and len(item) == 2 and type(item[0]) is OutputTag


def _route_side_outputs(out: list[Any], ctx: ProcessContext) -> list[Any]:
    """PyFlink's process functions emit ``(OutputTag, value)`` to a side output: those go to
    ``ctx`` (sent with the batch, with the timestamp of the record that produced them), the
    rest is the main output."""
    if not any(_is_tagged(item) for item in out):
        return out
    if type(out) is TimestampedBatch:
        main: list[Any] = TimestampedBatch()
        for item, timestamp in out.pairs():
            ctx._timestamp = timestamp
            if _is_tagged(item):
                ctx.output(item[0], item[1])
            else:
                main.append(item)
                main.timestamps.append(timestamp)  # type: ignore[attr-defined]
        ctx._timestamp = NO_TIMESTAMP
        return main
    main = []
    for item in out:
        if _is_tagged(item):
            ctx.output(item[0], item[1])
        else:
            main.append(item)
    return main


class FlatMapOperator(FunctionOperator):
    def process_batch(self, records: list[Any]) -> None:
        f = self.function.flat_map
        if type(records) is TimestampedBatch:
            out: list[Any] = _expand_stamped(records, lambda value, _: f(value))
        else:
            out = []
            for r in records:
                _extend(out, f(r))
        if out:
            self.output.collect_batch(out)


class KeyedFunctionOperator(FunctionOperator):
    """MAP / FLAT_MAP / FILTER on a keyed stream: the key is set before each call, so the
    function may use keyed state."""

    def process_batch(self, records: list[Any]) -> None:
        get_key = self._key_selector()
        backend = self.context.keyed_backend
        kind = self.spec.kind
        if type(records) is TimestampedBatch:
            out: list[Any] = _expand_stamped(records, lambda value, _: self._call(value))
        else:
            out = []
            for r in records:
                key = get_key(r)
                if not self._key_checked:
                    self._first_key(key)
                backend.set_current_key(key)
                if kind is OperatorKind.MAP:
                    out.append(self.function.map(r))
                elif kind is OperatorKind.FILTER:
                    if self.function.filter(r):
                        out.append(r)
                else:
                    _extend(out, self.function.flat_map(r))
        if out:
            self.output.collect_batch(out)

    def _call(self, value: Any) -> Iterable[Any] | None:
        """One record of a timestamped batch: its outputs, with its key set."""
        key = self._key_selector()(value)
        if not self._key_checked:
            self._first_key(key)
        self.context.keyed_backend.set_current_key(key)
        kind = self.spec.kind
        if kind is OperatorKind.MAP:
            return (self.function.map(value),)
        if kind is OperatorKind.FILTER:
            return (value,) if self.function.filter(value) else None
        return self.function.flat_map(value)  # type: ignore[no-any-return]


class ReduceOperator(FunctionOperator):
    """REDUCE and AGGREGATION: per key ``acc = f(acc, value)``, emitting ``acc`` each time —
    or, in BATCH execution (as Flink), only each key's final value when the input ends.
    Heap backend: the state's dict directly, with the copy-on-write of a snapshot in flight
    inlined (an accumulator the function mutates cannot change what the snapshot writes).
    RocksDB: a batch at a time (``RocksValueState.reduce_batch``)."""

    def open(self) -> None:
        super().open()
        backend = self.context.keyed_backend
        self._batch = self.context.environment.batch
        self._state = backend.get_partitioned_state(REDUCE_STATE)
        direct = getattr(backend, "direct_table", None)
        self._table = direct(REDUCE_STATE) if direct is not None else None
        self._batched = backend.batch_value_state(REDUCE_STATE)

    def process_batch(self, records: list[Any]) -> None:
        get_key = self._key_selector()
        backend = self.context.keyed_backend
        reduce = (self.spec.aggregation or self.function).reduce
        if not self._key_checked and records:
            self._first_key(get_key(records[0]))
        table = self._table
        if table is None:
            out = self._reduce_through_state(records, get_key, reduce, backend)
        else:
            copied = backend.copied_keys(REDUCE_STATE)
            if copied is None:
                out = reduce_direct(records, get_key, reduce, table)
            else:
                out = self._reduce_copy_on_write(records, get_key, reduce, table, copied)
        if not self._batch:
            if type(records) is TimestampedBatch:
                out = TimestampedBatch(out, records.timestamps)
            self.output.collect_batch(out)

    def end_input(self, input_index: int = 0) -> None:
        """In BATCH execution a keyed reduction emits only its final value per key."""
        if not self._batch:
            return
        backend = self.context.keyed_backend
        finals = []
        for key in backend.keys(REDUCE_STATE.name):
            backend.set_current_key(key)
            finals.append(self._state.value())
        if finals:
            self.output.collect_batch(finals)

    @staticmethod
    def _reduce_copy_on_write(records: list[Any], get_key: Callable[[Any], Any],
                              reduce: Callable[[Any, Any], Any], table: dict[Any, Any],
                              copied: set[Any]) -> list[Any]:
        """``keyed_reduce.reduce_direct`` while a snapshot shares the table's values (see the
        class)."""
        out: list[Any] = []
        append, get = out.append, table.get
        for r in records:
            key = get_key(r)
            acc = get(key)
            if key not in copied:
                copied.add(key)
                if acc is not None:
                    acc = own_value(acc)
            acc = r if acc is None else reduce(acc, r)
            if acc is None:
                table.pop(key, None)
            else:
                table[key] = acc
            append(acc)
        return out

    def _reduce_through_state(self, records: list[Any], get_key: Callable[[Any], Any],
                              reduce: Callable[[Any, Any], Any], backend: Any) -> list[Any]:
        if self._batched is not None:
            return self._batched.reduce_batch(list(map(get_key, records)), records, reduce)  # type: ignore[no-any-return]
        set_key = backend.set_current_key
        value, update = self._state.value, self._state.update
        out: list[Any] = []
        append = out.append
        for r in records:
            set_key(get_key(r))
            acc = value()
            acc = r if acc is None else reduce(acc, r)
            update(acc)
            append(acc)
        return out


class TimerOperator(FunctionOperator):
    """An operator whose function has ``on_timer`` (process functions): a timer service
    (keyed: timers per key; otherwise time only) and the ``ctx`` handed to the function."""

    _ctx: ProcessContext
    _timers: KeyedTimerService | None

    def _open_timers(self, keyed_timers: bool) -> None:
        backend = self.context.keyed_backend if self.spec.keyed else None
        self._timers = None
        self._time_only: NonKeyedTimerService | None = None
        if backend is not None and keyed_timers:
            self._timers = KeyedTimerService(self.context, self._on_timer, self._on_event_timer)
            service: Any = self._timers
        else:
            service = self._time_only = NonKeyedTimerService(self.context)
        self._ctx = ProcessContext(backend, service)

    def _restore_timers(self) -> None:
        if self._timers is not None:
            self._timers.restore_timers()

    def process_watermark(self, timestamp: int) -> None:
        if self._timers is not None:
            self._timers.advance_watermark(timestamp)
        elif self._time_only is not None:
            self._time_only.advance_watermark(timestamp)
        self._emit_held_watermark(timestamp)

    def _emit_held_watermark(self, timestamp: int) -> None:
        """Emit the watermark once its timers fired. A function whose output rows may lag its
        input's watermark holds the output's back by that much (Flink's
        KeyedCoProcessOperatorWithWatermarkDelay: interval joins)."""
        delay = getattr(self.function, "output_watermark_delay", 0)
        if delay and timestamp < MAX_WATERMARK:
            timestamp -= delay
        self.emit_watermark(timestamp)

    def _on_timer(self, timestamp: int, key: Any) -> None:

        self._fire(timestamp, TimeDomain.PROCESSING_TIME, stamped=False)

    def _on_event_timer(self, timestamp: int, key: Any) -> None:

        self._fire(timestamp, TimeDomain.EVENT_TIME, stamped=True)

    def _fire(self, timestamp: int, domain: Any, stamped: bool) -> None:
        """``on_timer``; outputs of an event-time timer carry its timestamp."""
        ctx = self._ctx
        ctx.time_domain_value = domain
        ctx._timestamp = timestamp
        try:
            out: list[Any] = []
            _extend(out, self.function.on_timer(timestamp, ctx))
            if stamped:
                out = TimestampedBatch.uniform(out, timestamp)
            out = _route_side_outputs(out, ctx)
        finally:
            ctx._timestamp = NO_TIMESTAMP
            ctx.time_domain_value = None
        if out:
            self.output.collect_batch(out)
        ctx.flush_side_outputs(self.context.side_outputs)

    def _apply(self, records: list[Any], call: Callable[[Any], Iterable[Any] | None],
               get_key: Callable[[Any], Any] | None) -> None:
        """``call(value)`` per record (with its key set when ``get_key``; with
        ``ctx.timestamp()`` set for timestamped records); outputs and side outputs sent."""
        ctx = self._ctx
        set_key = self.context.keyed_backend.set_current_key if get_key is not None else None

        def one(value: Any) -> Iterable[Any] | None:
            if get_key is not None and set_key is not None:
                key = get_key(value)
                if not self._key_checked:
                    self._first_key(key)
                set_key(key)
            return call(value)

        if type(records) is TimestampedBatch:
            def stamped(value: Any, timestamp: int) -> Iterable[Any] | None:
                ctx._timestamp = timestamp
                return one(value)

            try:
                out: list[Any] = _expand_stamped(records, stamped)
            finally:
                ctx._timestamp = NO_TIMESTAMP
        elif set_key is None:
            out = []
            for r in records:
                _extend(out, call(r))
        else:
            out = []
            for r in records:
                key = get_key(r)  # type: ignore[misc]
                if not self._key_checked:
                    self._first_key(key)
                set_key(key)
                _extend(out, call(r))
        out = _route_side_outputs(out, ctx)
        if out:
            self.output.collect_batch(out)
        ctx.flush_side_outputs(self.context.side_outputs)


class ProcessOperator(TimerOperator):
    """PROCESS (non-keyed) and KEYED_PROCESS, with timers when keyed.

    A keyed process function over a timestamped batch (the event-time case) runs one loop
    per batch that sets the record's timestamp and key and calls ``process_element`` — no
    per-record closures; on the heap backend the key is set by assigning the backend's
    ``current_key`` (what its ``set_current_key`` does), others get the call."""

    def open(self) -> None:
        self._open_timers(keyed_timers=True)
        super().open()
        self._restore_timers()
        backend = self.context.keyed_backend
        self._plain_key = (backend is not None and type(backend).set_current_key
                           is KeyedStateBackend.set_current_key)

    def process_batch(self, records: list[Any]) -> None:
        process, ctx = self.function.process_element, self._ctx
        get_key = self._key_selector() if self.spec.keyed else None
        if get_key is not None and type(records) is TimestampedBatch and records:
            self._process_keyed_stamped(records, process, get_key)
            return
        self._apply(records, lambda value: process(value, ctx), get_key)

    def _process_keyed_stamped(self, records: TimestampedBatch,
                               process: Callable[[Any, Any], Iterable[Any] | None],
                               get_key: Callable[[Any], Any]) -> None:
        ctx = self._ctx
        backend = self.context.keyed_backend
        if not self._key_checked:
            self._first_key(get_key(list.__getitem__(records, 0)))
        out = TimestampedBatch()
        stamps = out.timestamps
        try:
            if self._plain_key:
                for value, timestamp in zip(records, records.timestamps, strict=True):
                    ctx._timestamp = timestamp
                    backend.current_key = get_key(value)
                    produced = process(value, ctx)
                    if produced is not None:
                        before = len(out)
                        out.extend(produced)
                        stamps.extend([timestamp] * (len(out) - before))
            else:
                set_key = backend.set_current_key
                for value, timestamp in zip(records, records.timestamps, strict=True):
                    ctx._timestamp = timestamp
                    set_key(get_key(value))
                    produced = process(value, ctx)
                    if produced is not None:
                        before = len(out)
                        out.extend(produced)
                        stamps.extend([timestamp] * (len(out) - before))
        finally:
            ctx._timestamp = NO_TIMESTAMP
        routed = _route_side_outputs(out, ctx)
        if routed:
            self.output.collect_batch(routed)
        ctx.flush_side_outputs(self.context.side_outputs)


class CoOperator(TimerOperator):
    """CO_MAP, CO_FLAT_MAP, CO_PROCESS and KEYED_CO_PROCESS (two inputs)."""

    def open(self) -> None:
        self._open_timers(keyed_timers=self.spec.kind is OperatorKind.KEYED_CO_PROCESS)
        super().open()
        self._restore_timers()

    def _call(self, index: int) -> Callable[[Any], Iterable[Any] | None]:
        f, kind = self.function, self.spec.kind
        if kind is OperatorKind.CO_MAP:
            m = f.map1 if index == 0 else f.map2
            return lambda v: (m(v),)
        if kind is OperatorKind.CO_FLAT_MAP:
            return f.flat_map1 if index == 0 else f.flat_map2  # type: ignore[no-any-return]
        p = f.process_element1 if index == 0 else f.process_element2
        ctx = self._ctx
        return lambda v: p(v, ctx)

    def _process(self, records: list[Any], index: int) -> None:
        get_key = self._key_selector(index) if self.spec.keyed else None
        self._apply(records, self._call(index), get_key)

    def process_batch(self, records: list[Any]) -> None:
        self._process(records, 0)

    def process_batch2(self, records: list[Any]) -> None:
        self._process(records, 1)
