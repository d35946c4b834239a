"""The user code of the four ported jobs, shared by every engine.

flintlock, the bare loop and Bytewax call these same function objects, so the three differ
only in what runs around them. They are written as a PyFlink user writes them: plain
functions and lambdas, a ``TimestampAssigner``, an ``AggregateFunction``, a
``ProcessWindowFunction`` and a ``KeyedProcessFunction`` with a ``ValueState``.

Records: the keyed and event-time jobs turn the integers 0..n-1 into ``(key, value)`` tuples
with ``KEYS`` keys; ``to_event`` gives record i the event time ``BASE_MS + i`` minus a jitter
below ``JITTER_MS`` (so records are out of order by less than ``OUT_OF_ORDERNESS_MS`` and none
is late). All event times of a run fall in one UTC day as long as ``n <= MAX_EVENTS``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from flintlock.common.watermark_strategy import TimestampAssigner
from flintlock.datastream.functions import (
    AggregateFunction,
    KeyedProcessFunction,
    ProcessWindowFunction,
    RuntimeContext,
)
from flintlock.datastream.state import ValueStateDescriptor

KEYS = 100
WORDS_PER_LINE = 5
DAY_MS = 86_400_000
BASE_MS = 19_675 * DAY_MS + 3_600_000  # 2023-11-14 01:00 UTC
JITTER_MS = 500
OUT_OF_ORDERNESS_MS = 1_000
WINDOW_MS = 10_000
MAX_EVENTS = DAY_MS - 3_600_000 - JITTER_MS


# -- (a) keyed running count, and the keyed part of (b) --------------------------------------


def to_pair(i: int) -> tuple[int, int]:
    return (i % KEYS, 1)


def first_field(t: tuple[Any, ...]) -> Any:
    return t[0]


def add_counts(a: tuple[Any, int], b: tuple[Any, int]) -> tuple[Any, int]:
    return (a[0], a[1] + b[1])


def final_counts_only(n: int) -> Callable[[tuple[int, int]], bool]:
    """The filter of (a): keeps a key's running count once it reaches its final value."""
    final = n // KEYS
    return lambda t: t[1] == final


# -- (b) word count ---------------------------------------------------------------------------


def split(line: str) -> Iterator[str]:
    yield from line.split()


def to_word_pair(word: str) -> tuple[str, int]:
    return (word, 1)


def format_count(t: tuple[str, int]) -> str:
    return f"{t[0]}\t{t[1]}"


# -- (c) and (d): event time ------------------------------------------------------------------


def to_event(i: int) -> tuple[int, int]:
    return (i % KEYS, BASE_MS + i - (i * 7919) % JITTER_MS)


class EventTimestamp(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value[1])


class CountEvents(AggregateFunction):
    """Counts a window's records incrementally."""

    def create_accumulator(self) -> int:
        return 0

    def add(self, value: Any, accumulator: int) -> int:
        return accumulator + 1

    def get_result(self, accumulator: int) -> int:
        return accumulator

    def merge(self, a: int, b: int) -> int:
        return a + b


class LabelWindow(ProcessWindowFunction[Any, Any, int, Any]):
    """``(key, window start, count)`` for a window's one aggregate."""

    def process(self, key: int, context: Any, elements: Any) -> Any:
        yield key, context.window().start, next(iter(elements))


def end_of_day(timestamp: int) -> int:
    return timestamp - timestamp % DAY_MS + DAY_MS - 1


class DailyCount(KeyedProcessFunction):
    """Counts a key's records in a ``ValueState``; the key's first record registers an
    event-time timer at the end of its UTC day, which reports ``(key, day start, count)``."""

    def __init__(self, typed: bool = True) -> None:
        self.typed = typed

    def open(self, runtime_context: RuntimeContext) -> None:
        from flintlock.common import Types

        value_type = Types.LONG() if self.typed else None
        self.count = runtime_context.get_state(ValueStateDescriptor("count", value_type))

    def process_element(self, value: Any, ctx: Any) -> None:
        current = self.count.value()
        if current is None:
            current = 0
            ctx.timer_service().register_event_time_timer(end_of_day(ctx.timestamp()))
        self.count.update(current + 1)

    def on_timer(self, timestamp: int, ctx: Any) -> Iterator[tuple[int, int, int]]:
        yield ctx.get_current_key(), timestamp + 1 - DAY_MS, self.count.value()
        self.count.clear()
