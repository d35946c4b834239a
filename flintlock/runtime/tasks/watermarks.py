"""Watermark generation: what a ``WatermarkStrategy`` does at run time.

``WatermarkEmitter`` is the part shared by the two places that generate watermarks — a source
given a strategy (``env.from_source``) and the timestamp assigner operator
(``DataStream.assign_timestamps_and_watermarks``):

* ``timestamps_of(values, previous)`` applies the strategy's ``TimestampAssigner`` (without
  one, records keep the timestamps they have);
* ``on_timestamps`` feeds the generator: monotonous and bounded out-of-orderness keep the
  largest timestamp seen and offer ``largest - max_out_of_orderness - 1`` (Flink's
  definition: a watermark t says no record at or below t follows); ``no_watermarks`` offers
  none;
* ``eager_watermarks(values)`` (the ``EXPRESSION`` generator of a SQL table's
  ``WATERMARK FOR``, Flink's WatermarkAssignerOperator): each record's watermark value
  raises the current one (which starts at 0); when it passed the last emitted watermark by
  more than the interval, it is due at once, after that record — the owner splits its batch
  there;
* ``on_periodic_emit`` (every ``pipeline.auto-watermark-interval``) emits the offered
  watermark when it advanced, or, with ``with_idleness``, the idle status once no record came
  for the idle timeout; the next record makes the output active again.

The emitter decides; its owner (an operator) carries out ``emit_watermark`` /
``emit_watermark_status`` on its outputs and schedules the periodic calls. Clock injected for
tests. Belongs to the task thread.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from flintlock.common.errors import FlintlockError
from flintlock.common.watermark_strategy import WatermarkGeneratorKind, WatermarkStrategy
from flintlock.runtime.network.event_time import MAX_WATERMARK, MIN_WATERMARK, NO_TIMESTAMP


class WatermarkOutput(Protocol):
    def emit_watermark(self, timestamp: int) -> None: ...

    def emit_watermark_status(self, idle: bool) -> None: ...


class WatermarkEmitter:
    """Timestamps, watermarks and idleness of one watermark strategy (module docstring)."""

    def __init__(self, strategy: WatermarkStrategy, output: WatermarkOutput,
                 now_ms: Callable[[], int], interval_ms: int = 0) -> None:
        self._strategy = strategy
        self._assigner = strategy.timestamp_assigner
        self._output = output
        self._now_ms = now_ms
        self._generates = strategy.generator is not WatermarkGeneratorKind.NONE
        delay = strategy.max_out_of_orderness_ms
        self._delay = delay
        self._largest = MIN_WATERMARK + delay + 1
        self._emitted = MIN_WATERMARK
        self._idle_timeout = strategy.idle_timeout_ms
        self._last_activity = now_ms()
        self._idle = False
        self._ended = False
        self._interval = interval_ms
        self._expression: Callable[[Any], int | None] | None = None
        if strategy.generator is WatermarkGeneratorKind.EXPRESSION:
            self._expression = strategy.watermark_expression
            self._delay = -1  # the offered watermark is the largest value itself
            self._largest = 0
            self._emitted = 0

    @property
    def is_eager(self) -> bool:
        """Whether records bring watermarks of their own (``eager_watermarks``)."""
        return self._expression is not None

    def eager_watermarks(self, values: Sequence[Any], timestamps: Sequence[int] | None = None
                         ) -> list[tuple[int, int]]:
        """(records before it, watermark) for each watermark due within ``values``, in
        order (see the module docstring); marks the input active. With ``timestamps`` (the
        values' own) and an expression that is a timestamp minus a constant (its
        ``timestamp_offset``), the watermarks come from the timestamps: no call per record,
        and a batch that brings none due is one ``max``."""
        if not values:
            return []
        self._note_activity()
        expression = self._expression
        assert expression is not None, "eager_watermarks needs an EXPRESSION strategy"
        offset = getattr(expression, "timestamp_offset", None)
        if offset is None or timestamps is None:
            return self._due(map(expression, values))
        top = max(timestamps) - offset
        if top <= self._largest:
            return []
        if top - self._emitted <= self._interval:
            self._largest = top  # raised, but not past the interval: nothing due yet
            return []
        if all(map(operator.le, timestamps, itertools.islice(timestamps, 1, None))):
            return self._due_in_order(timestamps, offset)
        return self._due([timestamp - offset for timestamp in timestamps])

    def _due_in_order(self, timestamps: Sequence[int], offset: int) -> list[tuple[int, int]]:
        """``_due`` of non-decreasing ``timestamps`` minus ``offset``: each due watermark is
        the first value past both the largest so far and the last emitted plus the interval,
        found by bisection instead of a step per value."""
        largest, emitted, interval = self._largest, self._emitted, self._interval
        due = []
        index = 0
        while True:
            index = bisect.bisect_right(timestamps, max(largest, emitted + interval) + offset,
                                        index)
            if index == len(timestamps):
                break
            largest = emitted = timestamps[index] - offset
            index += 1
            due.append((index, largest))
        self._largest = max(largest, timestamps[-1] - offset)
        self._emitted = emitted
        return due

    def _due(self, watermarks: Iterable[int | None]) -> list[tuple[int, int]]:
        largest = self._largest
        emitted = self._emitted
        interval = self._interval
        due = []
        for index, watermark in enumerate(watermarks):
            if watermark is not None and watermark > largest:
                largest = watermark
                if largest - emitted > interval:
                    emitted = largest
                    due.append((index + 1, largest))
        self._largest = largest
        self._emitted = emitted
        return due

    def _note_activity(self) -> None:
        self._last_activity = self._now_ms()
        if self._idle:
            self._idle = False
            self._output.emit_watermark_status(False)

    @property
    def is_periodic(self) -> bool:
        """Whether periodic calls can ever emit something."""
        return self._generates or bool(self._idle_timeout)

    @property
    def emitted(self) -> int:
        return self._emitted

    def timestamps_of(self, values: Sequence[Any], previous: Sequence[int] | None) -> list[int]:
        """The event timestamps of ``values`` (``previous``: their current ones, if any)."""
        assigner = self._assigner
        if previous is None:
            previous = [NO_TIMESTAMP] * len(values)
        if assigner is None:
            return list(previous)
        if len(previous) != len(values):
            raise ValueError(f"{len(values)} values but {len(previous)} timestamps")
        batch = getattr(assigner, "extract_timestamps", None)  # a table's rowtime: per batch
        # One C-level pass calls the assigner, one more checks the results' types: no Python
        # call per record besides the user's.
        timestamps = (batch(values) if batch is not None
                      else list(map(assigner.extract_timestamp, values, previous)))
        if not _ONLY_INTS.issuperset(map(type, timestamps)):
            for timestamp in timestamps:
                _as_timestamp(timestamp)  # raises on the first that is not an int
        return timestamps

    def on_timestamps(self, timestamps: Sequence[int]) -> None:
        if not timestamps:
            return
        self._note_activity()
        if self._generates and self._expression is None:
            largest = max(timestamps)
            if largest > self._largest:
                self._largest = largest

    def on_periodic_emit(self) -> None:
        if self._ended:
            return
        timeout = self._idle_timeout
        if timeout and not self._idle and self._now_ms() - self._last_activity >= timeout:
            self._idle = True
            self._output.emit_watermark_status(True)
            return
        if self._idle or not self._generates:
            return
        offered = self._largest - self._delay - 1
        if offered > self._emitted:
            self._emitted = offered
            self._output.emit_watermark(offered)

    def end(self, final_watermark: int) -> None:
        """The input ended: ``final_watermark`` (the maximum one from upstream or the
        source's end), nothing after it. A last periodic watermark comes first only if the
        final one is not the maximum: the maximum subsumes it, and Flink emits the maximum
        alone (its assigner forwards it, then finds its last periodic watermark behind it).
        That matters to timers: a processing-time timer held for the end of a bundle
        (``timer_service``) may fire between two watermarks, never within one."""
        if self._ended:
            return
        if self._idle:
            self._idle = False
            self._output.emit_watermark_status(False)
        if final_watermark < MAX_WATERMARK:
            self.on_periodic_emit()
        self._ended = True
        if final_watermark > self._emitted:
            self._emitted = final_watermark
            self._output.emit_watermark(final_watermark)


class PeriodicEmission:
    """Calls ``emit()`` every ``interval_ms`` on the task thread, through the task's timer
    scheduler, until ``stop()``."""

    def __init__(self, timers: Any, interval_ms: int, emit: Callable[[], None]) -> None:
        self._timers = timers
        self._interval = interval_ms
        self._emit = emit
        self._stopped = False

    def start(self) -> None:
        if self._interval > 0:
            self._timers.schedule(self._timers.now_ms() + self._interval, self._fire)

    def _fire(self, now: int) -> None:
        if self._stopped:
            return
        self._emit()
        self.start()

    def stop(self) -> None:
        self._stopped = True


class InvalidTimestampError(FlintlockError, TypeError):
    """A timestamp assigner returned something that is not an int."""


_ONLY_INTS = frozenset({int})


def _as_timestamp(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTimestampError(
            f"TimestampAssigner.extract_timestamp must return an int (epoch milliseconds), "
            f"got {type(value).__name__} {value!r}")
    return value
