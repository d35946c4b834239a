"""Windows, window assigners and triggers, with PyFlink's names (``pyflink.datastream.window``).

Pure logic, no I/O: an assigner maps an element (and its timestamp, or the processing time) to
the windows it belongs to; a trigger decides, per key and window, when a window's contents are
emitted (``TriggerResult``), using the timers and window-scoped state of the ``TriggerContext``
the runtime's window operator hands it. They live in ``common`` so that the runtime (which
never imports the user API) can call them; ``flintlock.datastream.window`` re-exports them.

Time windows are half-open, ``[start, end)``; ``max_timestamp()`` is ``end - 1``, the time
an event-time window fires at. Sizes are given as ``Time``/``Duration`` (or int
milliseconds) and must be positive. Objects here are immutable values or stateless strategy
objects: picklable, shared freely.
"""

from __future__ import annotations

import abc
import enum
import struct
from collections.abc import Callable, Collection, Iterable
from typing import Any, BinaryIO, Generic, TypeVar

from flintlock.common.errors import FlintlockError
from flintlock.common.state import ReducingStateDescriptor
from flintlock.common.type_serializer import TypeSerializer, read_exactly

MAX_LONG = 2**63 - 1
MIN_LONG = -(2**63)

W = TypeVar("W", bound="Window")
T = TypeVar("T")


class InvalidWindowError(FlintlockError, ValueError):
    """A window size, slide, offset, gap or count that cannot define windows."""


def to_millis(value: Any, what: str) -> int:
    """Milliseconds of a ``Time``, a ``Duration`` or an int."""
    if isinstance(value, bool):
        raise TypeError(f"{what} must be a Time, Duration or int milliseconds, got {value!r}")
    if isinstance(value, int):
        return value
    to_ms = getattr(value, "to_milliseconds", None)
    if to_ms is None:
        raise TypeError(f"{what} must be a Time, Duration or int milliseconds, got {value!r}")
    return int(to_ms())


def _positive(value: int, what: str) -> int:
    if value <= 0:
        raise InvalidWindowError(f"{what} must be positive, got {value}")
    return value


# -- windows ------------------------------------------------------------------------------


class Window(abc.ABC):
    """A finite group of elements; ``max_timestamp()`` is the last time it covers."""

    @abc.abstractmethod
    def max_timestamp(self) -> int: ...


class TimeWindow(Window):
    """The half-open time interval ``[start, end)``."""

    __slots__ = ("_hash", "end", "start")

    def __init__(self, start: int, end: int) -> None:
        self.start = start
        self.end = end
        self._hash = hash((start, end))  # windows are map keys of window state: hash once

    def max_timestamp(self) -> int:
        return self.end - 1

    def intersects(self, other: TimeWindow) -> bool:
        return self.start <= other.end and self.end >= other.start

    def cover(self, other: TimeWindow) -> TimeWindow:
        return TimeWindow(min(self.start, other.start), max(self.end, other.end))

    @staticmethod
    def get_window_start_with_offset(timestamp: int, offset: int, window_size: int) -> int:
        """The start of the window of ``window_size`` (shifted by ``offset``) holding
        ``timestamp``."""
        remainder = (timestamp - offset) % window_size
        return timestamp - remainder

    @staticmethod
    def merge_windows(windows: Iterable[TimeWindow],
                      callback: MergingWindowAssigner.MergeCallback) -> None:
        """Merges overlapping windows (sessions): ``callback.merge(merged, result)`` for each
        group of more than one window."""
        ordered = sorted(windows, key=lambda w: (w.start, w.end))
        groups: list[tuple[TimeWindow, list[TimeWindow]]] = []
        for window in ordered:
            if groups and groups[-1][0].intersects(window):
                cover, members = groups[-1]
                groups[-1] = (cover.cover(window), [*members, window])
            else:
                groups.append((window, [window]))
        for cover, members in groups:
            if len(members) > 1:
                callback.merge(members, cover)

    def __eq__(self, other: object) -> bool:
        return (type(other) is TimeWindow and self.start == other.start
                and self.end == other.end)

    def __lt__(self, other: TimeWindow) -> bool:
        return (self.start, self.end) < (other.start, other.end)

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[Any, ...]:
        return (TimeWindow, (self.start, self.end))

    def __repr__(self) -> str:
        return f"TimeWindow(start={self.start}, end={self.end})"


class CountWindow(Window):
    """A window of a count assigner: an id; it never ends in time."""

    __slots__ = ("id",)

    def __init__(self, id: int) -> None:
        self.id = id

    def max_timestamp(self) -> int:
        return MAX_LONG

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CountWindow) and self.id == other.id

    def __lt__(self, other: CountWindow) -> bool:
        return self.id < other.id

    def __hash__(self) -> int:
        return hash((CountWindow, self.id))

    def __reduce__(self) -> tuple[Any, ...]:
        return (CountWindow, (self.id,))

    def __repr__(self) -> str:
        return f"CountWindow(id={self.id})"


class GlobalWindow(Window):
    """The one window of ``GlobalWindows``: everything, forever."""

    __slots__ = ()

    @staticmethod
    def get() -> GlobalWindow:
        return GlobalWindow()

    def max_timestamp(self) -> int:
        return MAX_LONG

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GlobalWindow)

    def __hash__(self) -> int:
        return hash(GlobalWindow)

    def __repr__(self) -> str:
        return "GlobalWindow"


# -- window serializers (PyFlink's names; flintlock itself pickles windows) ---------------

_LONG = struct.Struct(">q")
_TWO_LONGS = struct.Struct(">qq")


class TimeWindowSerializer(TypeSerializer[TimeWindow]):
    """A ``TimeWindow`` as its start and end, two big-endian 64-bit integers."""

    def serialize(self, element: TimeWindow, stream: BinaryIO) -> None:
        stream.write(_TWO_LONGS.pack(element.start, element.end))

    def deserialize(self, stream: BinaryIO) -> TimeWindow:
        start, end = _TWO_LONGS.unpack(read_exactly(stream, 16, "TimeWindow"))
        return TimeWindow(start, end)


class CountWindowSerializer(TypeSerializer[CountWindow]):
    """A ``CountWindow`` as its id, a big-endian 64-bit integer."""

    def serialize(self, element: CountWindow, stream: BinaryIO) -> None:
        stream.write(_LONG.pack(element.id))

    def deserialize(self, stream: BinaryIO) -> CountWindow:
        return CountWindow(_LONG.unpack(read_exactly(stream, 8, "CountWindow"))[0])


class GlobalWindowSerializer(TypeSerializer[GlobalWindow]):
    """The one ``GlobalWindow`` as a single zero byte."""

    def serialize(self, element: GlobalWindow, stream: BinaryIO) -> None:
        stream.write(b"\x00")

    def deserialize(self, stream: BinaryIO) -> GlobalWindow:
        read_exactly(stream, 1, "GlobalWindow")
        return GlobalWindow()


# -- triggers -----------------------------------------------------------------------------


class TriggerResult(enum.Enum):
    """What a trigger asks for: emit the window's contents (FIRE), drop them (PURGE), both,
    or nothing (CONTINUE)."""

    CONTINUE = (False, False)
    FIRE_AND_PURGE = (True, True)
    FIRE = (True, False)
    PURGE = (False, True)

    def is_fire(self) -> bool:
        return self.value[0]

    def is_purge(self) -> bool:
        return self.value[1]


class TriggerContext(abc.ABC):
    """What a trigger may use: clocks, timers and state scoped to the key and window."""

    @abc.abstractmethod
    def get_current_processing_time(self) -> int: ...

    @abc.abstractmethod
    def get_current_watermark(self) -> int: ...

    @abc.abstractmethod
    def register_processing_time_timer(self, time: int) -> None: ...

    @abc.abstractmethod
    def register_event_time_timer(self, time: int) -> None: ...

    @abc.abstractmethod
    def delete_processing_time_timer(self, time: int) -> None: ...

    @abc.abstractmethod
    def delete_event_time_timer(self, time: int) -> None: ...

    @abc.abstractmethod
    def get_partitioned_state(self, state_descriptor: Any) -> Any: ...

    def get_metric_group(self) -> Any:
        raise NotImplementedError("TriggerContext.get_metric_group(): metrics groups are not "
                                  "supported yet (issue #5)")


class OnMergeContext(TriggerContext):
    @abc.abstractmethod
    def merge_partitioned_state(self, state_descriptor: Any) -> None: ...


class Trigger(abc.ABC, Generic[T, W]):
    """Decides when a window fires; timers it registers call ``on_*_time`` back
    (``Trigger.TriggerContext`` / ``Trigger.OnMergeContext`` name the contexts, as in
    PyFlink)."""

    @abc.abstractmethod
    def on_element(self, element: T, timestamp: int, window: W,
                   ctx: TriggerContext) -> TriggerResult: ...

    @abc.abstractmethod
    def on_processing_time(self, time: int, window: W, ctx: TriggerContext) -> TriggerResult: ...

    @abc.abstractmethod
    def on_event_time(self, time: int, window: W, ctx: TriggerContext) -> TriggerResult: ...

    def can_merge(self) -> bool:
        return False

    def on_merge(self, window: W, ctx: OnMergeContext) -> None:
        raise NotImplementedError(f"{type(self).__name__} cannot merge windows")

    @abc.abstractmethod
    def clear(self, window: W, ctx: TriggerContext) -> None: ...


Trigger.TriggerContext = TriggerContext  # type: ignore[attr-defined]
Trigger.OnMergeContext = OnMergeContext  # type: ignore[attr-defined]


class EventTimeTrigger(Trigger[Any, Window]):
    """Fires once the watermark passes the window's end (at once if it has already)."""

    @staticmethod
    def create() -> EventTimeTrigger:
        return EventTimeTrigger()

    def on_element(self, element: Any, timestamp: int, window: Window,
                   ctx: TriggerContext) -> TriggerResult:
        if window.max_timestamp() <= ctx.get_current_watermark():
            return TriggerResult.FIRE
        ctx.register_event_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Window,
                           ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Window, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.FIRE if time == window.max_timestamp() else TriggerResult.CONTINUE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: Window, ctx: OnMergeContext) -> None:
        if window.max_timestamp() > ctx.get_current_watermark():
            ctx.register_event_time_timer(window.max_timestamp())

    def clear(self, window: Window, ctx: TriggerContext) -> None:
        ctx.delete_event_time_timer(window.max_timestamp())

    def __eq__(self, other: object) -> bool:
        return type(other) is EventTimeTrigger

    def __hash__(self) -> int:
        return hash(EventTimeTrigger)


class ProcessingTimeTrigger(Trigger[Any, Window]):
    """Fires when the processing-time clock passes the window's end."""

    @staticmethod
    def create() -> ProcessingTimeTrigger:
        return ProcessingTimeTrigger()

    def on_element(self, element: Any, timestamp: int, window: Window,
                   ctx: TriggerContext) -> TriggerResult:
        ctx.register_processing_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Window,
                           ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.FIRE

    def on_event_time(self, time: int, window: Window, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: Window, ctx: OnMergeContext) -> None:
        if window.max_timestamp() > ctx.get_current_processing_time():
            ctx.register_processing_time_timer(window.max_timestamp())

    def clear(self, window: Window, ctx: TriggerContext) -> None:
        ctx.delete_processing_time_timer(window.max_timestamp())

    def __eq__(self, other: object) -> bool:
        return type(other) is ProcessingTimeTrigger

    def __hash__(self) -> int:
        return hash(ProcessingTimeTrigger)


class CountTrigger(Trigger[Any, Window]):
    """Fires each time the window has received ``count`` more elements."""

    def __init__(self, count: int) -> None:
        self.count = _positive(int(count), "CountTrigger count")

    @staticmethod
    def of(count: int) -> CountTrigger:
        return CountTrigger(count)

    def _counter(self, ctx: TriggerContext) -> Any:
        return ctx.get_partitioned_state(COUNT_TRIGGER_STATE)

    def on_element(self, element: Any, timestamp: int, window: Window,
                   ctx: TriggerContext) -> TriggerResult:
        counter = self._counter(ctx)
        counter.add(1)
        if counter.get() >= self.count:
            counter.clear()
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Window,
                           ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Window, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: Window, ctx: OnMergeContext) -> None:
        ctx.merge_partitioned_state(COUNT_TRIGGER_STATE)

    def clear(self, window: Window, ctx: TriggerContext) -> None:
        self._counter(ctx).clear()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CountTrigger) and other.count == self.count

    def __hash__(self) -> int:
        return hash((CountTrigger, self.count))


class PurgingTrigger(Trigger[Any, Window]):
    """Another trigger whose every FIRE becomes FIRE_AND_PURGE."""

    def __init__(self, nested_trigger: Trigger[Any, Any]) -> None:
        if not isinstance(nested_trigger, Trigger):
            raise TypeError(f"PurgingTrigger needs a Trigger, got {nested_trigger!r}")
        self.nested_trigger = nested_trigger

    @staticmethod
    def of(nested_trigger: Trigger[Any, Any]) -> PurgingTrigger:
        return PurgingTrigger(nested_trigger)

    @staticmethod
    def _purging(result: TriggerResult) -> TriggerResult:
        return TriggerResult.FIRE_AND_PURGE if result.is_fire() else result

    def on_element(self, element: Any, timestamp: int, window: Window,
                   ctx: TriggerContext) -> TriggerResult:
        return self._purging(self.nested_trigger.on_element(element, timestamp, window, ctx))

    def on_processing_time(self, time: int, window: Window,
                           ctx: TriggerContext) -> TriggerResult:
        return self._purging(self.nested_trigger.on_processing_time(time, window, ctx))

    def on_event_time(self, time: int, window: Window, ctx: TriggerContext) -> TriggerResult:
        return self._purging(self.nested_trigger.on_event_time(time, window, ctx))

    def can_merge(self) -> bool:
        return self.nested_trigger.can_merge()

    def on_merge(self, window: Window, ctx: OnMergeContext) -> None:
        self.nested_trigger.on_merge(window, ctx)

    def clear(self, window: Window, ctx: TriggerContext) -> None:
        self.nested_trigger.clear(window, ctx)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PurgingTrigger) and other.nested_trigger == self.nested_trigger

    def __hash__(self) -> int:
        return hash((PurgingTrigger, self.nested_trigger))


FIRE_TIME_STATE = ReducingStateDescriptor("_flintlock_continuous_fire_time", min, None)
"""The next time a continuous trigger fires, per key and window (merged windows: the
earliest)."""


class _ContinuousTrigger(Trigger[Any, TimeWindow]):
    """Fires every ``interval`` ms while a window is open: the first firing at the end of the
    interval the first element fell into (intervals aligned to the epoch), then every
    ``interval`` after it, never past the window's ``max_timestamp()``."""

    def __init__(self, interval: int) -> None:
        self.interval = _positive(int(interval), f"{type(self).__name__} interval")

    def _fire_time(self, ctx: TriggerContext) -> Any:
        return ctx.get_partitioned_state(FIRE_TIME_STATE)

    def _schedule_after(self, time: int, window: TimeWindow, ctx: TriggerContext) -> None:
        next_fire = min(time + self.interval, window.max_timestamp())
        self._fire_time(ctx).add(next_fire)
        self._register(ctx, next_fire)

    def _schedule_first(self, time: int, window: TimeWindow, ctx: TriggerContext) -> None:
        if self._fire_time(ctx).get() is None:
            self._schedule_after(time - time % self.interval, window, ctx)

    def _fire_if_due(self, time: int, window: TimeWindow, ctx: TriggerContext
                     ) -> TriggerResult:
        state = self._fire_time(ctx)
        if state.get() == time:
            state.clear()
            self._schedule_after(time, window, ctx)
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def _register(self, ctx: TriggerContext, time: int) -> None:
        raise NotImplementedError

    def _delete(self, ctx: TriggerContext, time: int) -> None:
        raise NotImplementedError

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: TimeWindow, ctx: OnMergeContext) -> None:
        ctx.merge_partitioned_state(FIRE_TIME_STATE)
        next_fire = self._fire_time(ctx).get()
        if next_fire is not None:
            self._register(ctx, next_fire)

    def clear(self, window: TimeWindow, ctx: TriggerContext) -> None:
        state = self._fire_time(ctx)
        next_fire = state.get()
        if next_fire is not None:
            self._delete(ctx, next_fire)
            state.clear()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _ContinuousTrigger) and type(other) is type(self) and (
            other.interval == self.interval)

    def __hash__(self) -> int:
        return hash((type(self), self.interval))

    def __repr__(self) -> str:
        return f"{type(self).__name__}.of({self.interval} ms)"


class ContinuousEventTimeTrigger(_ContinuousTrigger):
    """Fires every ``interval`` of event time (watermarks) and once more at the window's end;
    an element arriving after the watermark passed the window's end fires it at once."""

    @staticmethod
    def of(interval: Any) -> ContinuousEventTimeTrigger:
        return ContinuousEventTimeTrigger(to_millis(interval, "ContinuousEventTimeTrigger"))

    def _register(self, ctx: TriggerContext, time: int) -> None:
        ctx.register_event_time_timer(time)

    def _delete(self, ctx: TriggerContext, time: int) -> None:
        ctx.delete_event_time_timer(time)

    def on_element(self, element: Any, timestamp: int, window: TimeWindow,
                   ctx: TriggerContext) -> TriggerResult:
        if window.max_timestamp() <= ctx.get_current_watermark():
            return TriggerResult.FIRE
        ctx.register_event_time_timer(window.max_timestamp())
        self._schedule_first(timestamp, window, ctx)
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: TimeWindow, ctx: TriggerContext
                      ) -> TriggerResult:
        if time == window.max_timestamp():
            return TriggerResult.FIRE
        return self._fire_if_due(time, window, ctx)

    def on_processing_time(self, time: int, window: TimeWindow, ctx: TriggerContext
                           ) -> TriggerResult:
        return TriggerResult.CONTINUE


class ContinuousProcessingTimeTrigger(_ContinuousTrigger):
    """Fires every ``interval`` of processing time while the window has elements."""

    @staticmethod
    def of(interval: Any) -> ContinuousProcessingTimeTrigger:
        return ContinuousProcessingTimeTrigger(
            to_millis(interval, "ContinuousProcessingTimeTrigger"))

    def _register(self, ctx: TriggerContext, time: int) -> None:
        ctx.register_processing_time_timer(time)

    def _delete(self, ctx: TriggerContext, time: int) -> None:
        ctx.delete_processing_time_timer(time)

    def on_element(self, element: Any, timestamp: int, window: TimeWindow,
                   ctx: TriggerContext) -> TriggerResult:
        self._schedule_first(ctx.get_current_processing_time(), window, ctx)
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: TimeWindow, ctx: TriggerContext
                           ) -> TriggerResult:
        return self._fire_if_due(time, window, ctx)

    def on_event_time(self, time: int, window: TimeWindow, ctx: TriggerContext
                      ) -> TriggerResult:
        return TriggerResult.CONTINUE


def _add(a: int, b: int) -> int:
    return a + b


COUNT_TRIGGER_STATE = ReducingStateDescriptor("_flintlock_count_trigger", _add, None)


# -- assigners ----------------------------------------------------------------------------


class WindowAssigner(abc.ABC, Generic[T, W]):
    """Assigns each element to zero or more windows."""

    class WindowAssignerContext(abc.ABC):
        @abc.abstractmethod
        def get_current_processing_time(self) -> int: ...

        def get_runtime_context(self) -> Any:
            raise NotImplementedError("this assigner context has no runtime context")

    @abc.abstractmethod
    def assign_windows(self, element: T, timestamp: int,
                       context: WindowAssigner.WindowAssignerContext) -> Collection[W]: ...

    @abc.abstractmethod
    def get_default_trigger(self, env: Any = None) -> Trigger[T, W]: ...

    @abc.abstractmethod
    def is_event_time(self) -> bool: ...

    def get_window_serializer(self) -> TypeSerializer[W]:
        """Abstract in PyFlink; flintlock pickles windows and never calls it, so an assigner
        needs it only to run on PyFlink as well."""
        raise NotImplementedError(f"{type(self).__name__}.get_window_serializer()")


class MergingWindowAssigner(WindowAssigner[T, W]):
    """An assigner whose windows merge (sessions)."""

    class MergeCallback(abc.ABC):
        @abc.abstractmethod
        def merge(self, to_be_merged: Iterable[Any], merge_result: Any) -> None: ...

    @abc.abstractmethod
    def merge_windows(self, windows: Iterable[W],
                      callback: MergingWindowAssigner.MergeCallback) -> None: ...


class _Tumbling(WindowAssigner[Any, TimeWindow]):
    _event_time = True

    def __init__(self, size: int, offset: int = 0) -> None:
        self._size = _positive(to_millis(size, "window size"), "window size")
        self._offset = to_millis(offset, "window offset")
        if abs(self._offset) >= self._size:
            raise InvalidWindowError(f"window offset must satisfy abs(offset) < size, got "
                                     f"offset {self._offset} and size {self._size}")

    def _time(self, timestamp: int, context: Any) -> int:
        if self._event_time:
            if timestamp == MIN_LONG:
                raise MissingTimestampError(type(self).__name__)
            return timestamp
        return int(context.get_current_processing_time())

    def assign_windows(self, element: Any, timestamp: int, context: Any) -> list[TimeWindow]:
        now = self._time(timestamp, context)
        start = TimeWindow.get_window_start_with_offset(now, self._offset, self._size)
        return [TimeWindow(start, start + self._size)]

    def get_default_trigger(self, env: Any = None) -> Trigger[Any, Any]:
        return EventTimeTrigger() if self._event_time else ProcessingTimeTrigger()

    def get_window_serializer(self) -> TypeSerializer[Any]:
        return TimeWindowSerializer()

    def is_event_time(self) -> bool:
        return self._event_time

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._size}, {self._offset})"


class TumblingEventTimeWindows(_Tumbling):
    """Non-overlapping windows of a fixed size, by the elements' timestamps."""

    @staticmethod
    def of(size: Any, offset: Any = 0) -> TumblingEventTimeWindows:
        return TumblingEventTimeWindows(size, offset)


class TumblingProcessingTimeWindows(_Tumbling):
    """Non-overlapping windows of a fixed size, by the processing-time clock."""

    _event_time = False

    @staticmethod
    def of(size: Any, offset: Any = 0) -> TumblingProcessingTimeWindows:
        return TumblingProcessingTimeWindows(size, offset)


class _Sliding(_Tumbling):
    def __init__(self, size: int, slide: int, offset: int = 0) -> None:
        self._slide = _positive(to_millis(slide, "window slide"), "window slide")
        super().__init__(size, 0)
        self._offset = to_millis(offset, "window offset")
        if abs(self._offset) >= self._slide:
            raise InvalidWindowError(f"window offset must satisfy abs(offset) < slide, got "
                                     f"offset {self._offset} and slide {self._slide}")

    def assign_windows(self, element: Any, timestamp: int, context: Any) -> list[TimeWindow]:
        now = self._time(timestamp, context)
        last_start = TimeWindow.get_window_start_with_offset(now, self._offset, self._slide)
        windows = []
        start = last_start
        while start > now - self._size:
            windows.append(TimeWindow(start, start + self._size))
            start -= self._slide
        return windows


class SlidingEventTimeWindows(_Sliding):
    """Windows of ``size`` starting every ``slide``, by the elements' timestamps."""

    @staticmethod
    def of(size: Any, slide: Any, offset: Any = 0) -> SlidingEventTimeWindows:
        return SlidingEventTimeWindows(size, slide, offset)


class SlidingProcessingTimeWindows(_Sliding):
    """Windows of ``size`` starting every ``slide``, by the processing-time clock."""

    _event_time = False

    @staticmethod
    def of(size: Any, slide: Any, offset: Any = 0) -> SlidingProcessingTimeWindows:
        return SlidingProcessingTimeWindows(size, slide, offset)


class SessionWindowTimeGapExtractor(abc.ABC):
    """The session gap of an element (dynamic session windows)."""

    @abc.abstractmethod
    def extract(self, element: Any) -> int: ...


class _Sessions(MergingWindowAssigner[Any, TimeWindow]):
    _event_time = True

    def __init__(self, gap: Any) -> None:
        self._gap: Callable[[Any], int] | None = None
        self._fixed = 0
        if isinstance(gap, SessionWindowTimeGapExtractor) or (
                callable(gap) and not hasattr(gap, "to_milliseconds")):
            self._gap = gap.extract if isinstance(gap, SessionWindowTimeGapExtractor) else gap
        else:
            self._fixed = _positive(to_millis(gap, "session gap"), "session gap")

    def assign_windows(self, element: Any, timestamp: int, context: Any) -> list[TimeWindow]:
        if self._event_time:
            if timestamp == MIN_LONG:
                raise MissingTimestampError(type(self).__name__)
            now = timestamp
        else:
            now = int(context.get_current_processing_time())
        gap = self._fixed
        if self._gap is not None:
            gap = _positive(to_millis(self._gap(element), "session gap"), "session gap")
        return [TimeWindow(now, now + gap)]

    def merge_windows(self, windows: Iterable[TimeWindow], callback: Any) -> None:
        TimeWindow.merge_windows(windows, callback)

    def get_default_trigger(self, env: Any = None) -> Trigger[Any, Any]:
        return EventTimeTrigger() if self._event_time else ProcessingTimeTrigger()

    def get_window_serializer(self) -> TypeSerializer[Any]:
        return TimeWindowSerializer()

    def is_event_time(self) -> bool:
        return self._event_time


class EventTimeSessionWindows(_Sessions):
    """Sessions: elements closer than ``gap`` in event time share a window."""

    @staticmethod
    def with_gap(size: Any) -> EventTimeSessionWindows:
        return EventTimeSessionWindows(size)

    @staticmethod
    def with_dynamic_gap(extractor: Any) -> DynamicEventTimeSessionWindows:
        return DynamicEventTimeSessionWindows(extractor)


class ProcessingTimeSessionWindows(_Sessions):
    """Sessions by the processing-time clock."""

    _event_time = False

    @staticmethod
    def with_gap(size: Any) -> ProcessingTimeSessionWindows:
        return ProcessingTimeSessionWindows(size)

    @staticmethod
    def with_dynamic_gap(extractor: Any) -> DynamicProcessingTimeSessionWindows:
        return DynamicProcessingTimeSessionWindows(extractor)


class DynamicEventTimeSessionWindows(EventTimeSessionWindows):
    """Event-time sessions whose gap an extractor computes per element."""

    def __init__(self, extractor: Any) -> None:
        if not (isinstance(extractor, SessionWindowTimeGapExtractor) or callable(extractor)):
            raise TypeError(f"a session gap extractor is needed, got {extractor!r}")
        super().__init__(extractor)


class DynamicProcessingTimeSessionWindows(ProcessingTimeSessionWindows):
    """Processing-time sessions whose gap an extractor computes per element."""

    def __init__(self, extractor: Any) -> None:
        if not (isinstance(extractor, SessionWindowTimeGapExtractor) or callable(extractor)):
            raise TypeError(f"a session gap extractor is needed, got {extractor!r}")
        super().__init__(extractor)


class GlobalWindows(WindowAssigner[Any, GlobalWindow]):
    """Every element in one window per key, which never fires unless a trigger says so."""

    @staticmethod
    def create() -> GlobalWindows:
        return GlobalWindows()

    def assign_windows(self, element: Any, timestamp: int, context: Any) -> list[GlobalWindow]:
        return [GlobalWindow()]

    def get_default_trigger(self, env: Any = None) -> Trigger[Any, Any]:
        return NeverTrigger()

    def get_window_serializer(self) -> TypeSerializer[Any]:
        return GlobalWindowSerializer()

    def is_event_time(self) -> bool:
        return False


class NeverTrigger(Trigger[Any, Window]):
    """Never fires (the default trigger of ``GlobalWindows``)."""

    @staticmethod
    def create() -> NeverTrigger:
        return NeverTrigger()

    def on_element(self, element: Any, timestamp: int, window: Window,
                   ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Window,
                           ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Window, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: Window, ctx: OnMergeContext) -> None:
        pass

    def clear(self, window: Window, ctx: TriggerContext) -> None:
        pass


class CountTumblingWindowAssigner(WindowAssigner[Any, CountWindow]):
    """Count windows of ``window_size`` elements per key, one after the other."""

    def __init__(self, window_size: int) -> None:
        self.window_size = _positive(int(window_size), "count window size")

    @staticmethod
    def of(window_size: int) -> CountTumblingWindowAssigner:
        return CountTumblingWindowAssigner(window_size)

    def assign_windows(self, element: Any, timestamp: int, context: Any) -> list[CountWindow]:
        return [CountWindow(0)]

    def get_default_trigger(self, env: Any = None) -> Trigger[Any, Any]:
        return PurgingTrigger(CountTrigger(self.window_size))

    def get_window_serializer(self) -> TypeSerializer[Any]:
        return CountWindowSerializer()

    def is_event_time(self) -> bool:
        return False


class CountSlidingWindowAssigner(WindowAssigner[Any, CountWindow]):
    """Count windows of the last ``window_size`` elements, every ``window_slide`` elements."""

    def __init__(self, window_size: int, window_slide: int) -> None:
        self.window_size = _positive(int(window_size), "count window size")
        self.window_slide = _positive(int(window_slide), "count window slide")

    @staticmethod
    def of(window_size: int, window_slide: int) -> CountSlidingWindowAssigner:
        return CountSlidingWindowAssigner(window_size, window_slide)

    def assign_windows(self, element: Any, timestamp: int, context: Any) -> list[CountWindow]:
        return [CountWindow(0)]

    def get_default_trigger(self, env: Any = None) -> Trigger[Any, Any]:
        return CountTrigger(self.window_slide)

    def get_window_serializer(self) -> TypeSerializer[Any]:
        return CountWindowSerializer()

    def is_event_time(self) -> bool:
        return False

    @property
    def keep_last(self) -> int:
        """The runtime keeps only the last ``window_size`` elements (Flink's count evictor)."""
        return self.window_size


class MissingTimestampError(FlintlockError, ValueError):
    """An event-time window assigner got a record without a timestamp."""

    def __init__(self, assigner: str) -> None:
        super().__init__(assigner)
        self.assigner = assigner

    def __str__(self) -> str:
        return (f"{self.assigner} got a record without a timestamp: event-time windows need "
                "timestamps (call assign_timestamps_and_watermarks(...) or give from_source a "
                "WatermarkStrategy with a TimestampAssigner), or use processing-time windows")


__all__ = [
    "CountSlidingWindowAssigner", "CountTrigger", "CountTumblingWindowAssigner", "CountWindow",
    "DynamicEventTimeSessionWindows", "DynamicProcessingTimeSessionWindows",
    "EventTimeSessionWindows", "EventTimeTrigger", "GlobalWindow", "GlobalWindows",
    "InvalidWindowError", "MergingWindowAssigner", "MissingTimestampError", "NeverTrigger",
    "OnMergeContext",
    "ProcessingTimeSessionWindows", "ProcessingTimeTrigger", "PurgingTrigger",
    "SessionWindowTimeGapExtractor", "SlidingEventTimeWindows", "SlidingProcessingTimeWindows",
    "TimeWindow", "Trigger", "TriggerContext", "TriggerResult", "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows", "Window", "WindowAssigner",
]
