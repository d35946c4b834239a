"""The watermark valve: a task's event time from the watermarks of its input channels.

Design note. A subtask's watermark is the minimum over its input channels (DESIGN.md §1), with
three refinements, as in Flink's status watermark valve:

* an **idle** channel (its producer sent ``WatermarkStatus(idle=True)``) does not hold the
  minimum back; when every open channel is idle the task itself is idle and says so
  downstream, and it becomes active again with the first channel that does;
* a **finished** channel (end of partition) counts as being at the maximum watermark: no
  record follows on it, so it no longer holds the minimum back, yet the other channels going
  idle still lets event time advance to what the finished channels allowed;
* a channel that comes back from idleness behind the task's watermark is left out until it
  catches up (the task's watermark never goes back).

A watermark or status from a channel that does not change what the task emits produces no
action. For a two-input task the valve spans the channels of both inputs: the minimum over all
of them is the minimum of the two inputs' watermarks, as a two-input operator computes it.

I/O free: ``StreamTask`` feeds it the events of its gate and carries out the actions it
returns (``EmitWatermark``, ``EmitWatermarkStatus``). Belongs to the task thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from flintlock.runtime.network.event_time import (
    MAX_WATERMARK,
    MIN_WATERMARK,
    Watermark,
    WatermarkStatus,
)


@dataclass(frozen=True, slots=True)
class EmitWatermark:
    """Advance the chain's event time to ``timestamp``."""

    timestamp: int


@dataclass(frozen=True, slots=True)
class EmitWatermarkStatus:
    """Tell the chain (and so downstream) that this task went idle or became active."""

    idle: bool


ValveAction = EmitWatermark | EmitWatermarkStatus


class WatermarkValve:
    """Combines per-channel watermarks and statuses into the task's (see module docstring)."""

    def __init__(self, num_channels: int) -> None:
        if num_channels < 1:
            raise ValueError(f"a watermark valve needs at least one channel, got {num_channels}")
        self._watermarks = [MIN_WATERMARK] * num_channels
        self._idle = [False] * num_channels
        self._finished = [False] * num_channels
        self.watermark = MIN_WATERMARK
        """The last watermark this valve let through."""
        self.idle = False
        """Whether the task is idle (every open channel is)."""

    def on_event(self, channel: int, event: Watermark | WatermarkStatus) -> list[ValveAction]:
        """A watermark or watermark status event from ``channel``."""
        if isinstance(event, Watermark):
            return self.on_watermark(channel, event.timestamp)
        return self.on_status(channel, event.idle)

    def on_watermark(self, channel: int, timestamp: int) -> list[ValveAction]:
        if self._finished[channel] or self._idle[channel]:
            return []  # an idle producer sends ACTIVE before new watermarks
        if timestamp <= self._watermarks[channel]:
            return []
        self._watermarks[channel] = timestamp
        return self._advance()

    def on_status(self, channel: int, idle: bool) -> list[ValveAction]:
        if self._finished[channel] or self._idle[channel] == idle:
            return []
        self._idle[channel] = idle
        actions: list[ValveAction] = []
        if not idle and self.idle:
            self.idle = False
            actions.append(EmitWatermarkStatus(False))
        actions += self._advance()
        if idle and not self.idle and self._all_idle():
            self.idle = True
            actions.append(EmitWatermarkStatus(True))
        return actions

    def on_finished(self, channel: int) -> list[ValveAction]:
        """The channel ended: it no longer holds the watermark back."""
        if self._finished[channel]:
            return []
        self._finished[channel] = True
        self._idle[channel] = False
        self._watermarks[channel] = MAX_WATERMARK
        return self._advance()

    def _all_idle(self) -> bool:
        open_channels = [c for c, done in enumerate(self._finished) if not done]
        return bool(open_channels) and all(self._idle[c] for c in open_channels)

    def _advance(self) -> list[ValveAction]:
        current = self.watermark
        candidates = [
            watermark for watermark, idle in zip(self._watermarks, self._idle, strict=True)
            if not idle and watermark >= current
        ]
        if not candidates:
            return []
        lowest = min(candidates)
        if lowest <= current:
            return []
        self.watermark = lowest
        return [EmitWatermark(lowest)]


class WatermarkTarget(Protocol):
    """Where a valve's actions go (the operator chain)."""

    def process_watermark(self, timestamp: int) -> None: ...

    def process_watermark_status(self, idle: bool) -> None: ...


def carry_out(actions: list[ValveAction], target: WatermarkTarget) -> None:
    """Hands the valve's actions to the chain, in order."""
    for action in actions:
        if isinstance(action, EmitWatermark):
            target.process_watermark(action.timestamp)
        else:
            target.process_watermark_status(action.idle)
