"""Per-split watermarks of a source (Flink's per-partition watermarks for the Kafka source).

A source whose reader says which split each record came from gets one ``WatermarkEmitter``
per split, each with its own largest timestamp and its own idleness (``with_idleness``: a
split with no record for the timeout stops holding the others back). The source's watermark
is the minimum over the splits that are not idle; when every split is idle — or the source
has no split at all, e.g. more subtasks than Kafka partitions — the source says it is idle,
so it does not hold back the watermarks downstream; the first record makes it active again.

Laws: the emitted watermark never decreases; a split that has produced nothing (and is not
idle) holds the source's watermark back, as in Flink; removing a split (it finished) can only
advance the watermark.

``SplitWatermarks`` decides and calls ``emit_watermark`` / ``emit_watermark_status`` on its
output (the source operator); it does no I/O and owns no timer: the operator calls
``on_periodic_emit`` every auto-watermark interval. Belongs to the task thread.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

from flintlock.common.watermark_strategy import WatermarkStrategy
from flintlock.runtime.network.event_time import MIN_WATERMARK
from flintlock.runtime.tasks.watermarks import WatermarkEmitter, WatermarkOutput


class _SplitState:
    """What one split's emitter last said (its ``WatermarkOutput``)."""

    __slots__ = ("idle", "watermark")

    def __init__(self) -> None:
        self.watermark = MIN_WATERMARK
        self.idle = False

    def emit_watermark(self, timestamp: int) -> None:
        self.watermark = max(self.watermark, timestamp)

    def emit_watermark_status(self, idle: bool) -> None:
        self.idle = idle


class SplitWatermarks:
    """Combines the watermarks of a source's splits (see the module docstring)."""

    def __init__(self, strategy: WatermarkStrategy, output: WatermarkOutput,
                 now_ms: Callable[[], int]) -> None:
        self._strategy = strategy
        self._output = output
        self._now_ms = now_ms
        self._splits: dict[Hashable, tuple[WatermarkEmitter, _SplitState]] = {}
        self._emitted = MIN_WATERMARK
        self._idle = False
        self._ended = False

    @property
    def emitted(self) -> int:
        return self._emitted

    def add_split(self, split_id: Hashable) -> None:
        if split_id not in self._splits:
            state = _SplitState()
            self._splits[split_id] = (WatermarkEmitter(self._strategy, state, self._now_ms),
                                      state)

    def remove_split(self, split_id: Hashable) -> None:
        """A finished split no longer holds the watermark back."""
        self._splits.pop(split_id, None)
        self._combine()

    def on_timestamps(self, split_ids: Sequence[Hashable], timestamps: Sequence[int]) -> None:
        """Records of a batch: ``timestamps[i]`` came from split ``split_ids[i]``."""
        by_split: dict[Hashable, list[int]] = {}
        for split_id, timestamp in zip(split_ids, timestamps, strict=True):
            by_split.setdefault(split_id, []).append(timestamp)
        for split_id, stamps in by_split.items():
            self.add_split(split_id)
            emitter, _ = self._splits[split_id]
            emitter.on_timestamps(stamps)
        if self._idle and any(not state.idle for _, state in self._splits.values()):
            self._idle = False
            self._output.emit_watermark_status(False)

    def on_values(self, split_ids: Sequence[Hashable], values: Sequence[Any]) -> None:
        """Records of a batch for a strategy whose watermark is computed from each record (a
        SQL table's ``WATERMARK FOR ts AS <expression>``, pushed into the source): each
        split's emitter sees its own records; a watermark they make due is that split's at
        once, and the source's is the minimum over the splits."""
        by_split: dict[Hashable, list[Any]] = {}
        for split_id, value in zip(split_ids, values, strict=True):
            by_split.setdefault(split_id, []).append(value)
        for split_id, split_values in by_split.items():
            self.add_split(split_id)
            emitter, state = self._splits[split_id]
            due = emitter.eager_watermarks(split_values)
            if due:
                state.emit_watermark(due[-1][1])
        if self._idle and any(not state.idle for _, state in self._splits.values()):
            self._idle = False
            self._output.emit_watermark_status(False)
        self._combine()

    def on_periodic_emit(self) -> None:
        if self._ended:
            return
        for emitter, _ in self._splits.values():
            emitter.on_periodic_emit()
        self._combine()

    def end(self, final_watermark: int) -> None:
        """The input ended: active again if idle, then ``final_watermark``; nothing after."""
        if self._ended:
            return
        self._ended = True
        if self._idle:
            self._idle = False
            self._output.emit_watermark_status(False)
        if final_watermark > self._emitted:
            self._emitted = final_watermark
            self._output.emit_watermark(final_watermark)

    def _combine(self) -> None:
        if self._ended:
            return
        active = [state.watermark for _, state in self._splits.values() if not state.idle]
        if not active:
            if not self._idle:
                self._idle = True
                self._output.emit_watermark_status(True)
            return
        if self._idle:
            self._idle = False
            self._output.emit_watermark_status(False)
        combined = min(active)
        if combined > self._emitted:
            self._emitted = combined
            self._output.emit_watermark(combined)
