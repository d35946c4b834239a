"""Window evictors: Flink's ``Evictor`` and its three built-ins, ``CountEvictor``,
``TimeEvictor`` and ``DeltaEvictor`` (Java's ``org.apache.flink.streaming.api.windowing.
evictors``; PyFlink 2.3 has no Python evictors, so the names and semantics are Java Flink's,
with Python method names). ``flintlock.datastream.window`` re-exports them; they live in
``common`` because the runtime's window operator calls them.

Set with ``windowed_stream.evictor(...)``. When a window fires, the operator hands the evictor
the window's elements, oldest first, as a list of ``TimestampedValue``; the evictor removes
what it evicts from that list, in place (``del elements[:n]``, ``elements.remove(x)``):

1. ``evict_before(elements, size, window, ctx)``, then the window function sees what is left;
2. ``evict_after(elements, size, window, ctx)``, and what is left stays in the window (unless
   the trigger also purges).

``size`` is ``len(elements)`` at the call. A window with an evictor keeps its elements (with
their timestamps) instead of an accumulator, so ``reduce``/``aggregate`` run over what is left
when it fires, as in Flink.

The built-ins, exactly as Flink's (``do_evict_after`` moves their eviction after the function):

- ``CountEvictor.of(n)``: keeps the last ``n`` elements (removes the oldest ``size - n``).
- ``TimeEvictor.of(size)``: if the first element has a timestamp, removes every element whose
  timestamp is at most the largest timestamp minus ``size`` (in Java's 64-bit arithmetic).
- ``DeltaEvictor.of(threshold, delta_function)``: removes every element whose
  ``delta_function(element, last)`` (``last``: the newest element's value) is at least
  ``threshold`` — the newest element too, if its delta to itself reaches the threshold.

Timestamps: the runtime gives every element the timestamp its record carries, and a record
without one carries the smallest long — as in Flink 2.3, whose sources stamp such records with
``Long.MIN_VALUE`` (``has_timestamp()`` is true). So a ``TimeEvictor`` over records without
timestamps evicts *everything*: the cutoff ``MIN_VALUE - size`` wraps around to a large
positive number, in Flink as here (tests/evictors: the Java oracle shows it).

Evictors are stateless strategy objects: picklable, shared by every key and window.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from flintlock.common.windowing import MIN_LONG, Window, to_millis

T = TypeVar("T")
W = TypeVar("W", bound=Window)


class TimestampedValue(Generic[T]):
    """One element of a window as an evictor sees it: its value and, if it has one, its
    timestamp (``get_timestamp()`` is the smallest long when it has none, as in Flink)."""

    __slots__ = ("_timestamp", "_value")

    def __init__(self, value: T, timestamp: int | None = None) -> None:
        self._value = value
        self._timestamp = timestamp

    def get_value(self) -> T:
        return self._value

    def get_timestamp(self) -> int:
        return MIN_LONG if self._timestamp is None else self._timestamp

    def has_timestamp(self) -> bool:
        return self._timestamp is not None

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TimestampedValue) and self._value == other._value
                and self._timestamp == other._timestamp)

    def __hash__(self) -> int:
        return hash((TimestampedValue, self._timestamp))

    def __repr__(self) -> str:
        return f"TimestampedValue({self._value!r}, {self._timestamp!r})"


class EvictorContext(abc.ABC):
    """What an evictor may ask: the clocks (and, as in Flink, a metric group)."""

    @abc.abstractmethod
    def get_current_processing_time(self) -> int: ...

    @abc.abstractmethod
    def get_current_watermark(self) -> int: ...

    def get_metric_group(self) -> Any:
        raise NotImplementedError("EvictorContext.get_metric_group(): metric groups are not "
                                  "available to evictors")


class Evictor(abc.ABC, Generic[T, W]):
    """Removes elements from a firing window before and/or after the window function (see the
    module docstring); ``Evictor.EvictorContext`` names the context, as Flink's does."""

    @abc.abstractmethod
    def evict_before(self, elements: list[TimestampedValue[T]], size: int, window: W,
                     evictor_context: EvictorContext) -> None: ...

    @abc.abstractmethod
    def evict_after(self, elements: list[TimestampedValue[T]], size: int, window: W,
                    evictor_context: EvictorContext) -> None: ...


Evictor.EvictorContext = EvictorContext  # type: ignore[attr-defined]


class _BuiltIn(Evictor[Any, Any]):
    """An evictor that evicts one way, before or after the function."""

    def __init__(self, do_evict_after: bool) -> None:
        if not isinstance(do_evict_after, bool):
            raise TypeError(f"do_evict_after must be a bool, got {do_evict_after!r}")
        self.do_evict_after = do_evict_after

    def evict_before(self, elements: list[TimestampedValue[Any]], size: int, window: Any,
                     evictor_context: EvictorContext) -> None:
        if not self.do_evict_after:
            self._evict(elements, size)

    def evict_after(self, elements: list[TimestampedValue[Any]], size: int, window: Any,
                    evictor_context: EvictorContext) -> None:
        if self.do_evict_after:
            self._evict(elements, size)

    @abc.abstractmethod
    def _evict(self, elements: list[TimestampedValue[Any]], size: int) -> None: ...


class CountEvictor(_BuiltIn):
    """Keeps at most ``max_count`` elements: the newest."""

    def __init__(self, max_count: int, do_evict_after: bool = False) -> None:
        super().__init__(do_evict_after)
        if isinstance(max_count, bool) or not isinstance(max_count, int) or max_count < 0:
            raise ValueError(f"CountEvictor needs a count >= 0, got {max_count!r}")
        self.max_count = max_count

    @staticmethod
    def of(max_count: int, do_evict_after: bool = False) -> CountEvictor:
        return CountEvictor(max_count, do_evict_after)

    def _evict(self, elements: list[TimestampedValue[Any]], size: int) -> None:
        if size > self.max_count:
            del elements[:size - self.max_count]

    def __repr__(self) -> str:
        return f"CountEvictor({self.max_count}, do_evict_after={self.do_evict_after})"


class TimeEvictor(_BuiltIn):
    """Keeps the elements within ``window_size`` (ms) of the newest timestamp."""

    def __init__(self, window_size: Any, do_evict_after: bool = False) -> None:
        super().__init__(do_evict_after)
        self.window_size = to_millis(window_size, "TimeEvictor window size")

    @staticmethod
    def of(window_size: Any, do_evict_after: bool = False) -> TimeEvictor:
        return TimeEvictor(window_size, do_evict_after)

    def _evict(self, elements: list[TimestampedValue[Any]], size: int) -> None:
        if not elements or not elements[0].has_timestamp():
            return
        cutoff = _java_long(max(e.get_timestamp() for e in elements) - self.window_size)
        elements[:] = [e for e in elements if e.get_timestamp() > cutoff]

    def __repr__(self) -> str:
        return f"TimeEvictor({self.window_size}, do_evict_after={self.do_evict_after})"


def _java_long(value: int) -> int:
    """``value`` wrapped into a signed 64-bit integer, as Java's ``long`` arithmetic does."""
    return (value + 2**63) % 2**64 - 2**63


class DeltaFunction(abc.ABC, Generic[T]):
    """The distance between two elements (``DeltaEvictor``); a plain callable works too."""

    @abc.abstractmethod
    def get_delta(self, old_data_point: T, new_data_point: T) -> float: ...


class DeltaEvictor(_BuiltIn):
    """Removes the elements whose delta to the newest element reaches ``threshold``."""

    def __init__(self, threshold: float, delta_function: Any,
                 do_evict_after: bool = False) -> None:
        super().__init__(do_evict_after)
        delta: Callable[[Any, Any], float] = getattr(delta_function, "get_delta",
                                                     delta_function)
        if not callable(delta):
            raise TypeError(f"DeltaEvictor needs a DeltaFunction or a callable (old, new) -> "
                            f"float, got {delta_function!r}")
        self.threshold = threshold
        self.delta_function = delta_function
        self._delta = delta

    @staticmethod
    def of(threshold: float, delta_function: Any, do_evict_after: bool = False
           ) -> DeltaEvictor:
        return DeltaEvictor(threshold, delta_function, do_evict_after)

    def _evict(self, elements: list[TimestampedValue[Any]], size: int) -> None:
        if not elements:
            return
        last = elements[-1].get_value()
        elements[:] = [e for e in elements
                       if not self._delta(e.get_value(), last) >= self.threshold]

    def __repr__(self) -> str:
        return f"DeltaEvictor({self.threshold}, do_evict_after={self.do_evict_after})"


__all__ = ["CountEvictor", "DeltaEvictor", "DeltaFunction", "Evictor", "EvictorContext",
           "TimeEvictor", "TimestampedValue"]
