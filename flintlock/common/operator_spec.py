"""Operator descriptions: what each node of a stream graph does, as plain picklable data.

The DataStream API (``flintlock.datastream``) puts one ``OperatorSpec`` into every
``StreamNode.operator``; the runtime reads it to instantiate the operator of that node. It
lives here, in ``common``, so the runtime never imports the user-facing API. Specs are frozen
and travel to the TaskManagers with cloudpickle (the user functions they carry are checked
for picklability before submission).

Kinds and their fields (``function`` is always normalised: a plain callable the user passed
has been wrapped in the matching function class, see ``flintlock.datastream.functions``):

=================  ========================================================================
kind               fields and behaviour
=================  ========================================================================
SOURCE             ``source``: a ``CollectionSource`` (``from_collection``; the runtime
                   emits ``elements`` in order and snapshots how many it emitted) or the
                   user's ``Source`` object (``from_source``). ``watermark_strategy``: the
                   ``WatermarkStrategy`` given to ``from_source`` (None for collections).
TIMESTAMPS         ``watermark_strategy``: ``assign_timestamps_and_watermarks``; each record gets
                   the timestamp the strategy's assigner extracts, and the operator emits the
                   strategy's watermarks periodically.
MAP                ``function.map(value)`` → one output.
FLAT_MAP           ``function.flat_map(value)`` → iterable of outputs, or None.
FILTER             ``function.filter(value)`` → forward ``value`` if truthy.
PROCESS            ``function.process_element(value, ctx)`` → iterable or None; ``ctx`` is a
                   ``ProcessFunction.Context`` (``timestamp()``, ``timer_service()``).
KEYED_PROCESS      ``function.process_element(value, ctx)`` and ``function.on_timer(ts,
                   ctx)`` → iterable or None; ``ctx`` is a ``KeyedProcessFunction.Context``
                   (``get_current_key()``, ``timestamp()``, ``timer_service()``); timers
                   are per key.
KEYED_BATCH_PROCESS  a KEYED_PROCESS whose function can also take a whole batch on the heap
                   backend: ``function.batch_state()`` → the ``ValueStateDescriptor`` it keeps
                   per key, ``function.process_batch(records, access)`` → output list, with
                   ``access`` the state's dict (``runtime.tasks.batch_process_operator``);
                   per record as KEYED_PROCESS where the backend has no direct table
                   (RocksDB, TTL) or the batch is timestamped. Internal: the Table planner's.
KEYED_BUNDLE_PROCESS  a KEYED_PROCESS whose function takes its input a bundle at a time:
                   ``function.process_bundle(rows, ctx)`` once per key at the end of each
                   bundle (``runtime.tasks.bundle_process_operator``; PyFlink's Python
                   aggregate functions). Internal: the Table planner's.
BUNDLE_PROCESS     not keyed: ``function.add_input(value, record)`` folds each record into
                   its key's bundle value (key from ``function.key_selector()``),
                   ``function.finish_bundle(bundle)`` → outputs at each bundle's end (Flink's
                   local aggregation). Internal: the Table planner's.
REDUCE             keyed: per key keep ``acc``; first value: ``acc = value``; later:
                   ``acc = function.reduce(acc, value)``; emit ``acc`` after every record.
AGGREGATION        keyed: like REDUCE with ``aggregation.reduce(acc, value)`` (sum, min,
                   max, min_by, max_by of one field; see ``Aggregation``).
WINDOW             keyed: ``window`` (a ``WindowSpec``): elements go to the windows the
                   assigner picks; the trigger fires a window, whose contents (or incremental
                   aggregate) the window function turns into outputs stamped with the
                   window's ``max_timestamp()``; window contents and timers are keyed state.
ASYNC              ``function.async_invoke(value)``: a coroutine run on the subtask's event
                   loop, returning a list of outputs; ``async_io`` (an ``AsyncIOSpec``): timeout,
                   capacity, ordered or unordered emission, retry strategy
                   (``runtime.tasks.async_operator``). Outputs keep the input's timestamp.
CACHE              ``cache`` (a ``CachedResult``): pass every record on and store it
                   (``DataStream.cache()``, BATCH mode; ``runtime.tasks.cache_operator``).
CO_MAP             two inputs: ``function.map1(v)`` for input 0, ``map2`` for input 1.
CO_FLAT_MAP        two inputs: ``function.flat_map1/flat_map2(v)`` → iterable or None.
CO_PROCESS         two inputs: ``function.process_element1/2(v, ctx)`` → iterable or None.
KEYED_CO_PROCESS   two keyed inputs: ``process_element1/2(v, ctx)`` and ``on_timer``.
BROADCAST_PROCESS  input 0 any stream, input 1 a broadcast stream: ``process_element(v, ctx)``
                   (read-only broadcast state) and ``process_broadcast_element(v, ctx)``
                   (writable); ``broadcast_states``: the ``MapStateDescriptor``s of the
                   broadcast state, which every subtask keeps a copy of.
KEYED_BROADCAST_PROCESS  the same with input 0 keyed: keyed state, timers and ``on_timer``,
                   ``ctx.apply_to_keyed_state`` on the broadcast side.
SINK               ``output_type`` is the declared type of the records the sink receives.
                   ``sink``: a ``PrintSink`` (write ``PrintSink.format(...)`` lines to
                   stdout/stderr), a ``CollectSink`` (send records back to the client of
                   ``execute_and_collect``, matched by ``collect_id``) or the user's ``Sink``
                   object (``sink_to``). Sinks have no outputs.
=================  ========================================================================

Common fields:

* ``keyed`` — the operator runs on a keyed stream: the stream node's ``key_selectors`` hold, per
  input, the callable that extracts the key. Before calling the function for a record the
  runtime sets that key as the current key of the keyed state backend. MAP, FLAT_MAP, FILTER
  are keyed when applied to a ``KeyedStream`` (as in PyFlink, they may then use keyed state);
  CO_MAP, CO_FLAT_MAP and CO_PROCESS when both connected streams are keyed; REDUCE,
  AGGREGATION, KEYED_PROCESS, KEYED_BATCH_PROCESS and KEYED_CO_PROCESS always. Call ``check_key(key,
  operator_name)`` on the first record of each subtask (and whenever cheap, e.g. on a
  state-backend miss) so an unhashable key, or one without a stable hash (the key-group
  hash itself refuses those too, so a later key of another type fails as well), fails with a
  clear error naming the operator. The runtime context of a
  non-keyed operator rejects ``get_state`` and the other keyed-state getters with a typed
  error naming the operator (``flintlock.runtime.tasks.contexts``). A key selector (or custom
  partitioner) the user gave as a ``KeySelector`` (``Partitioner``) object appears as its
  bound ``get_key`` (``partition``): its ``__self__`` has the ``open``/``close`` hooks PyFlink
  calls.
* ``output_type`` — the declared ``TypeInformation`` of the outputs, or None when none was
  declared (PICKLED_BYTE_ARRAY: any picklable object). When set, the runtime converts each
  output as PyFlink does (``record = output_type.coerce(record)`` when
  ``output_type.need_conversion()``: a tuple returned for a ROW type becomes a ``Row``) and
  validates it with ``output_type.validate(record, operator_name)``.

Every function's ``open(runtime_context)`` is called before its first record and ``close()``
after its last.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from flintlock.common.aggregation import Aggregation, AggregationKind
from flintlock.common.errors import FlintlockError
from flintlock.common.key_encoding import UnstableKeyError, stable_hash
from flintlock.common.print_format import print_string
from flintlock.common.typeinfo import TypeInformation
from flintlock.common.watermark_strategy import WatermarkStrategy


class OperatorKind(enum.Enum):
    SOURCE = "source"
    TIMESTAMPS = "timestamps"
    MAP = "map"
    FLAT_MAP = "flat_map"
    FILTER = "filter"
    PROCESS = "process"
    KEYED_PROCESS = "keyed_process"
    KEYED_BATCH_PROCESS = "keyed_batch_process"
    KEYED_BUNDLE_PROCESS = "keyed_bundle_process"
    BUNDLE_PROCESS = "bundle_process"
    REDUCE = "reduce"
    AGGREGATION = "aggregation"
    WINDOW = "window"
    ASYNC = "async"
    CACHE = "cache"
    CO_MAP = "co_map"
    CO_FLAT_MAP = "co_flat_map"
    CO_PROCESS = "co_process"
    KEYED_CO_PROCESS = "keyed_co_process"
    BROADCAST_PROCESS = "broadcast_process"
    KEYED_BROADCAST_PROCESS = "keyed_broadcast_process"
    SINK = "sink"

    @property
    def num_inputs(self) -> int:
        if self is OperatorKind.SOURCE:
            return 0
        return 2 if self in _TWO_INPUT else 1

    @property
    def always_keyed(self) -> bool:
        return self in _ALWAYS_KEYED


_TWO_INPUT = frozenset({OperatorKind.CO_MAP, OperatorKind.CO_FLAT_MAP, OperatorKind.CO_PROCESS,
                        OperatorKind.KEYED_CO_PROCESS, OperatorKind.BROADCAST_PROCESS,
                        OperatorKind.KEYED_BROADCAST_PROCESS})
_ALWAYS_KEYED = frozenset({OperatorKind.KEYED_PROCESS, OperatorKind.KEYED_BATCH_PROCESS,
                           OperatorKind.KEYED_BUNDLE_PROCESS,
                           OperatorKind.REDUCE, OperatorKind.AGGREGATION,
                           OperatorKind.KEYED_CO_PROCESS, OperatorKind.WINDOW,
                           OperatorKind.KEYED_BROADCAST_PROCESS})


class UnhashableKeyError(FlintlockError, TypeError):
    """A key selector returned a value that cannot be a key (it is not hashable)."""

    def __init__(self, operator: str, key_repr: str, key_type: str) -> None:
        super().__init__(operator, key_repr, key_type)
        self.operator = operator
        self.key_repr = key_repr
        self.key_type = key_type

    def __str__(self) -> str:
        return (f"the key selector of operator {self.operator!r} returned {self.key_repr}, a "
                f"{self.key_type}, which is not hashable; return a str, number, tuple or "
                "another immutable value (e.g. tuple(list_value))")


def check_key(key: Any, operator_name: str) -> Any:
    """``key`` itself if it can be a key; raises ``UnhashableKeyError`` if it is not hashable
    and ``UnstableKeyError`` if it has no stable hash (``flintlock.common.key_encoding``)."""
    try:
        hash(key)
    except TypeError:
        raise UnhashableKeyError(operator_name, repr(key)[:200], type(key).__name__) from None
    try:
        stable_hash(key)
    except UnstableKeyError as error:
        raise error.at(f"the key selector of operator {operator_name!r}") from None
    return key


@dataclass(frozen=True)
class CollectionSource:
    """The elements of ``env.from_collection``, emitted in order by one subtask."""

    elements: tuple[Any, ...]


@dataclass(frozen=True)
class PrintSink:
    """``DataStream.print(sink_identifier)``: one line per record on stdout (or stderr)."""

    identifier: str | None = None
    to_stderr: bool = False

    def format(self, value: Any, subtask_index: int, parallelism: int,
               output_type: TypeInformation | None = None) -> str:
        """Flink's print format: ``id:3> value`` / ``3> value`` / ``id> value`` / ``value``
        (the subtask number is shown only when the sink runs with parallelism > 1)."""
        prefix = self.identifier or ""
        if parallelism > 1:
            prefix = f"{prefix}:{subtask_index + 1}" if prefix else str(subtask_index + 1)
        text = print_string(value, output_type) if output_type is not None else str(value)
        return f"{prefix}> {text}" if prefix else text


@dataclass(frozen=True)
class CollectSink:
    """``DataStream.execute_and_collect``: send records back to the client; ``collect_id``
    tells the executor which sink's records the client's iterator yields."""

    collect_id: str


class WindowFunctionKind(enum.Enum):
    """How the window function of a ``WindowSpec`` is called."""

    NONE = "none"
    """Emit the reduce / aggregate result itself."""
    WINDOW = "window"
    """``WindowFunction.apply(key, window, inputs)``."""
    PROCESS = "process"
    """``ProcessWindowFunction.process(key, context, elements)``."""
    ALL_WINDOW = "all_window"
    """``AllWindowFunction.apply(window, inputs)``."""
    PROCESS_ALL = "process_all"
    """``ProcessAllWindowFunction.process(context, elements)``."""


@dataclass(frozen=True)
class WindowSpec:
    """A windowed operation: assigner, trigger, optional incremental function, window
    function, allowed lateness and late-data side output."""

    assigner: Any
    trigger: Any = None
    """None: the assigner's default trigger."""
    reduce_function: Any = None
    aggregate_function: Any = None
    window_function: Any = None
    window_function_kind: WindowFunctionKind = WindowFunctionKind.NONE
    allowed_lateness_ms: int = 0
    late_output_tag: str | None = None
    keep_last: int | None = None
    """Keep only the last n elements of a window before it fires (sliding count windows)."""
    evictor: Any = None
    """An ``Evictor`` (``flintlock.common.evictors``): the window keeps its elements with
    their timestamps, and the evictor removes some before and/or after the function."""

    def __post_init__(self) -> None:
        if (self.reduce_function is not None) and (self.aggregate_function is not None):
            raise ValueError("a window has a reduce or an aggregate function, not both")
        if self.window_function is None and self.reduce_function is None and (
                self.aggregate_function is None):
            raise ValueError("a window needs a reduce, aggregate or window function")
        if self.allowed_lateness_ms < 0:
            raise ValueError("allowed lateness must not be negative")

    @property
    def incremental(self) -> bool:
        """Whether the window keeps an accumulator instead of its elements."""
        return self.keep_last is None and self.evictor is None and (
            self.reduce_function is not None or self.aggregate_function is not None)


@dataclass(frozen=True)
class AsyncIOSpec:
    """``AsyncDataStream.(un)ordered_wait(_with_retry)``: at most ``capacity`` records in
    flight; ``timeout_ms`` covers all attempts of one record (<= 0: no timeout, allowed only
    without retries); ``retry_strategy`` is the user's ``AsyncRetryStrategy``."""

    timeout_ms: int
    capacity: int
    ordered: bool
    retry_strategy: Any

    def __post_init__(self) -> None:
        if self.capacity <= 0:
            raise ValueError(f"async I/O capacity must be positive, got {self.capacity}")


@dataclass(frozen=True)
class OperatorSpec:
    """What one stream node does (see the module docstring for each kind's fields)."""

    kind: OperatorKind
    function: Any = None
    output_type: TypeInformation | None = None
    keyed: bool = False
    source: Any = None
    watermark_strategy: WatermarkStrategy | None = None
    aggregation: Aggregation | None = None
    sink: Any = None
    window: WindowSpec | None = None
    broadcast_states: tuple[Any, ...] = ()
    async_io: AsyncIOSpec | None = None
    cache: Any = None

    def __post_init__(self) -> None:
        problem = _shape_problem(self)
        if problem is not None:
            raise ValueError(f"invalid {self.kind.name} operator description: {problem}")

    @property
    def num_inputs(self) -> int:
        return self.kind.num_inputs


def _shape_problem(spec: OperatorSpec) -> str | None:
    kind = spec.kind
    if kind.always_keyed and not spec.keyed:
        return "this kind is always keyed"
    if kind is OperatorKind.SOURCE:
        return None if spec.source is not None else "a source needs `source`"
    if kind is OperatorKind.SINK:
        return None if spec.sink is not None else "a sink needs `sink`"
    if kind is OperatorKind.TIMESTAMPS:
        return None if spec.watermark_strategy is not None else "needs `watermark_strategy`"
    if kind is OperatorKind.WINDOW:
        return None if spec.window is not None else "needs `window`"
    if kind is OperatorKind.ASYNC and spec.async_io is None:
        return "needs `async_io`"
    if kind is OperatorKind.CACHE:
        return None if spec.cache is not None else "needs `cache`"
    if kind is OperatorKind.AGGREGATION:
        return None if spec.aggregation is not None else "needs `aggregation`"
    if spec.function is None:
        return "needs `function`"
    return None


__all__ = [
    "Aggregation", "AggregationKind", "AsyncIOSpec", "CollectSink", "CollectionSource",
    "OperatorKind", "OperatorSpec", "PrintSink", "UnhashableKeyError", "UnstableKeyError",
    "WindowFunctionKind", "WindowSpec", "check_key",
]
