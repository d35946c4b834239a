"""The runtime operators: one class per ``OperatorKind`` of ``flintlock.common.operator_spec``.

``create_operator(spec)`` turns the description a stream node carries into the operator that a
subtask runs. Operators work on batches (see ``operator``): the common case of a stateless
function is one list comprehension over the batch with the user's bound method, and the keyed
ones set the current key of their state backend before each call into user code.

Output declared with a type (``spec.output_type``) is validated record by record with the type's
``validate``, so a function returning the wrong shape fails naming the operator. Keys are
checked for hashability on the first record of a subtask (``check_key``).

Sources and sinks live in ``sources`` and ``sinks``. All operators belong to the task thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from flintlock.common.operator_spec import OperatorKind, OperatorSpec, check_key
from flintlock.common.output_tag import OutputTag
from flintlock.common.state import ValueStateDescriptor
from flintlock.runtime.state.heap import own_value
from flintlock.runtime.tasks.contexts import (
    NO_TIMESTAMP,
    KeyedTimerService,
    NonKeyedTimerService,
    ProcessContext,
    RuntimeContextImpl,
)
from flintlock.runtime.tasks.operator import OperatorContext, Output, StreamOperator

REDUCE_STATE = ValueStateDescriptor("_flintlock_reduce", None)


class _ValidatingOutput:
    """Checks every record against the declared output type before passing it on; where
    PyFlink converts implicitly (a tuple or dict returned for a ROW type), converts first."""

    __slots__ = ("_coerce", "_output", "_validate")

    def __init__(self, output: Output, output_type: Any, operator_name: str) -> None:
        self._output = output
        self._validate = output_type.validator(operator_name)
        needs = getattr(output_type, "need_conversion", None)
        self._coerce = output_type.coerce if needs is not None and needs() else None

    def collect_batch(self, records: list[Any]) -> None:
        if self._coerce is not None:
            coerce = self._coerce
            records = [coerce(record) for record in records]
        validate = self._validate
        for record in records:
            validate(record)
        self._output.collect_batch(records)


class FunctionOperator(StreamOperator):
    """An operator around one user function: opens and closes it, validates outputs."""

    def __init__(self, spec: OperatorSpec) -> None:
        self.spec = spec
        self.function = spec.function
        self._key_checked = False

    def setup(self, context: OperatorContext, output: Output) -> None:
        if self.spec.output_type is not None and hasattr(self.spec.output_type, "validator"):
            output = _ValidatingOutput(output, self.spec.output_type, context.operator_name)
        super().setup(context, output)

    def open(self) -> None:
        opener = getattr(self.function, "open", None)
        if opener is not None:
            opener(RuntimeContextImpl(self.context))

    def close(self) -> None:
        closer = getattr(self.function, "close", None)
        if closer is not None:
            closer()

    def _key_selector(self, index: int = 0) -> Callable[[Any], Any]:
        selectors = self.context.extra.get("key_selectors") or ()
        selector = selectors[index] if index < len(selectors) else None
        if selector is None:
            raise TypeError(f"operator {self.context.operator_name!r} is keyed but has no key")
        return getattr(selector, "get_key", selector)  # type: ignore[no-any-return]

    def _first_key(self, key: Any) -> None:
        check_key(key, self.context.operator_name)
        self._key_checked = True


class MapOperator(FunctionOperator):
    def process_batch(self, records: list[Any]) -> None:
        f = self.function.map
        self.output.collect_batch([f(r) for r in records])


class FilterOperator(FunctionOperator):
    def process_batch(self, records: list[Any]) -> None:
        f = self.function.filter
        kept = [r for r in records if f(r)]
        if kept:
            self.output.collect_batch(kept)


def _extend(out: list[Any], produced: Iterable[Any] | None) -> None:
    if produced is not None:
        out.extend(produced)


def _route_side_outputs(out: list[Any], ctx: ProcessContext) -> list[Any]:
    """PyFlink's process functions emit ``(OutputTag, value)`` to a side output: those go to
    ``ctx`` (sent with the batch), the rest is the main output."""
    if not any(type(item) is tuple and len(item) == 2 and type(item[0]) is OutputTag
               for item in out):
        return out
    main = []
    for item in out:
        if type(item) is tuple and len(item) == 2 and type(item[0]) is OutputTag:
            ctx.output(item[0], item[1])
        else:
            main.append(item)
    return main


class FlatMapOperator(FunctionOperator):
    def process_batch(self, records: list[Any]) -> None:
        f = self.function.flat_map
        out: list[Any] = []
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
        out: list[Any] = []
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


class ReduceOperator(FunctionOperator):
    """REDUCE and AGGREGATION: per key ``acc = f(acc, value)``, emitting ``acc`` each time —
    or, in BATCH execution (as Flink), only each key's final value when the input ends.

    On the heap backend the accumulators are read and written in the state's dict directly
    (no per-record state calls). While a snapshot is in flight, the first access to a key in
    that snapshot gives its accumulator a private copy unless it is immutable (the heap
    backend's copy-on-write, inlined), so a reduce function that mutates its accumulator
    cannot change what the snapshot writes."""

    def open(self) -> None:
        super().open()
        backend = self.context.keyed_backend
        self._batch = bool(self.context.extra.get("batch"))
        self._state = backend.get_partitioned_state(REDUCE_STATE)
        direct = getattr(backend, "direct_table", None)
        self._table = direct(REDUCE_STATE) if direct is not None else None

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
                out = self._reduce_direct(records, get_key, reduce, table)
            else:
                out = self._reduce_copy_on_write(records, get_key, reduce, table, copied)
        if not self._batch:
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
    def _reduce_direct(records: list[Any], get_key: Callable[[Any], Any],
                       reduce: Callable[[Any, Any], Any], table: dict[Any, Any]) -> list[Any]:
        out: list[Any] = []
        append, get = out.append, table.get
        for r in records:
            key = get_key(r)
            acc = get(key)
            acc = r if acc is None else reduce(acc, r)
            if acc is None:  # as ValueState.update(None): the entry goes
                table.pop(key, None)
            else:
                table[key] = acc
            append(acc)
        return out

    @staticmethod
    def _reduce_copy_on_write(records: list[Any], get_key: Callable[[Any], Any],
                              reduce: Callable[[Any, Any], Any], table: dict[Any, Any],
                              copied: set[Any]) -> list[Any]:
        """``_reduce_direct`` while a snapshot shares the table's values (see the class)."""
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
    """An operator whose function has ``on_timer`` (keyed process functions)."""

    _ctx: ProcessContext

    def _on_timer(self, timestamp: int, key: Any) -> None:
        from flintlock.datastream.functions import TimeDomain  # the user-facing enum

        ctx = self._ctx
        ctx.time_domain_value = TimeDomain.PROCESSING_TIME
        ctx._timestamp = timestamp
        try:
            out: list[Any] = []
            _extend(out, self.function.on_timer(timestamp, ctx))
        finally:
            ctx._timestamp = NO_TIMESTAMP
            ctx.time_domain_value = None
        out = _route_side_outputs(out, ctx)
        if out:
            self.output.collect_batch(out)
        ctx.flush_side_outputs(self.context.side_outputs)


class ProcessOperator(TimerOperator):
    """PROCESS (non-keyed) and KEYED_PROCESS, with processing-time timers when keyed."""

    def open(self) -> None:
        backend = self.context.keyed_backend if self.spec.keyed else None
        self._timers: KeyedTimerService | None = None
        if backend is not None:
            self._timers = KeyedTimerService(self.context, self._on_timer)
            service: Any = self._timers
        else:
            service = NonKeyedTimerService(self.context)
        self._ctx = ProcessContext(backend, service)
        super().open()
        if self._timers is not None:
            self._timers.restore_timers()

    def process_batch(self, records: list[Any]) -> None:
        process, ctx = self.function.process_element, self._ctx
        out: list[Any] = []
        if self.spec.keyed:
            get_key = self._key_selector()
            set_key = self.context.keyed_backend.set_current_key
            for r in records:
                key = get_key(r)
                if not self._key_checked:
                    self._first_key(key)
                set_key(key)
                _extend(out, process(r, ctx))
        else:
            for r in records:
                _extend(out, process(r, ctx))
        out = _route_side_outputs(out, ctx)
        if out:
            self.output.collect_batch(out)
        ctx.flush_side_outputs(self.context.side_outputs)


class CoOperator(TimerOperator):
    """CO_MAP, CO_FLAT_MAP, CO_PROCESS and KEYED_CO_PROCESS (two inputs)."""

    def open(self) -> None:
        keyed = self.spec.keyed
        backend = self.context.keyed_backend if keyed else None
        self._timers: KeyedTimerService | None = None
        if backend is not None and self.spec.kind is OperatorKind.KEYED_CO_PROCESS:
            self._timers = KeyedTimerService(self.context, self._on_timer)
        service = self._timers or NonKeyedTimerService(self.context)
        self._ctx = ProcessContext(backend, service)
        super().open()
        if self._timers is not None:
            self._timers.restore_timers()

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
        call = self._call(index)
        out: list[Any] = []
        if self.spec.keyed:
            get_key = self._key_selector(index)
            set_key = self.context.keyed_backend.set_current_key
            for r in records:
                key = get_key(r)
                if not self._key_checked:
                    self._first_key(key)
                set_key(key)
                _extend(out, call(r))
        else:
            for r in records:
                _extend(out, call(r))
        out = _route_side_outputs(out, self._ctx)
        if out:
            self.output.collect_batch(out)
        self._ctx.flush_side_outputs(self.context.side_outputs)

    def process_batch(self, records: list[Any]) -> None:
        self._process(records, 0)

    def process_batch2(self, records: list[Any]) -> None:
        self._process(records, 1)



_FACTORIES: dict[OperatorKind, Callable[[OperatorSpec], StreamOperator]] = {
    OperatorKind.MAP: MapOperator,
    OperatorKind.FLAT_MAP: FlatMapOperator,
    OperatorKind.FILTER: FilterOperator,
    OperatorKind.PROCESS: ProcessOperator,
    OperatorKind.KEYED_PROCESS: ProcessOperator,
    OperatorKind.REDUCE: ReduceOperator,
    OperatorKind.AGGREGATION: ReduceOperator,
    OperatorKind.CO_MAP: CoOperator,
    OperatorKind.CO_FLAT_MAP: CoOperator,
    OperatorKind.CO_PROCESS: CoOperator,
    OperatorKind.KEYED_CO_PROCESS: CoOperator,
}


def create_operator(spec: OperatorSpec) -> StreamOperator:
    """The runtime operator for ``spec`` (sources and sinks included)."""
    if spec.kind is OperatorKind.SOURCE:
        from flintlock.runtime.tasks.sources import create_source_operator

        return create_source_operator(spec)
    if spec.kind is OperatorKind.SINK:
        from flintlock.runtime.tasks.sinks import create_sink_operator

        return create_sink_operator(spec)
    if spec.keyed and spec.kind in (OperatorKind.MAP, OperatorKind.FLAT_MAP, OperatorKind.FILTER):
        return KeyedFunctionOperator(spec)
    return _FACTORIES[spec.kind](spec)
