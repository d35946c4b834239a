"""Rolling policies of the ``FileSink`` (PyFlink's ``RollingPolicy`` family): when the writer
closes its in-progress part file and starts a new one.

Every policy here rolls at every checkpoint: a part file is closed at the checkpoint and
becomes pending for it (flintlock's ``FileSink`` does not keep a part file open across
checkpoints; see docs/connectors.md). In addition ``DefaultRollingPolicy`` rolls

* on an event, when the part file has reached ``part_size`` bytes (checked before each record
  is appended, so a part may exceed the size by one record);
* on processing time, when the part file is older than ``rollover_interval`` ms or had no
  write for ``inactivity_interval`` ms — checked whenever records arrive for its bucket.

``OnCheckpointRollingPolicy`` rolls only at checkpoints (and at the end of the input).

Policies are immutable and picklable; the ``PartFileInfo`` they look at belongs to the sink
writer's task thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flintlock.common.time import Duration

DEFAULT_PART_SIZE = 128 * 1024 * 1024
DEFAULT_ROLLOVER_INTERVAL_MS = 60 * 1000
DEFAULT_INACTIVITY_INTERVAL_MS = 60 * 1000


@dataclass(slots=True)
class PartFileInfo:
    """What a policy knows about an in-progress part file (times from ``Clock.now_ms``)."""

    bucket_id: str
    created_ms: float
    last_updated_ms: float
    size: int = 0


def _millis(value: Any, name: str) -> int:
    if isinstance(value, Duration):
        value = value.to_milliseconds()
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive number of milliseconds (or a Duration), "
                         f"got {value!r}")
    return value


class RollingPolicy:
    """Base of the rolling policies; the factories are PyFlink's."""

    @staticmethod
    def default_rolling_policy(part_size: int = DEFAULT_PART_SIZE,
                               rollover_interval: int | Duration = DEFAULT_ROLLOVER_INTERVAL_MS,
                               inactivity_interval: int | Duration =
                               DEFAULT_INACTIVITY_INTERVAL_MS) -> DefaultRollingPolicy:
        return DefaultRollingPolicy(part_size, rollover_interval, inactivity_interval)

    @staticmethod
    def on_checkpoint_rolling_policy() -> OnCheckpointRollingPolicy:
        return OnCheckpointRollingPolicy()

    def should_roll_on_event(self, part: PartFileInfo, element_size: int) -> bool:
        return False

    def should_roll_on_processing_time(self, part: PartFileInfo, now_ms: float) -> bool:
        return False

    @property
    def part_size(self) -> int | None:
        """The size limit the writer may batch writes under (None: no limit)."""
        return None


class DefaultRollingPolicy(RollingPolicy):
    """Rolls at checkpoints, at ``part_size`` bytes, and after the two intervals."""

    def __init__(self, part_size: int = DEFAULT_PART_SIZE,
                 rollover_interval: int | Duration = DEFAULT_ROLLOVER_INTERVAL_MS,
                 inactivity_interval: int | Duration = DEFAULT_INACTIVITY_INTERVAL_MS) -> None:
        if isinstance(part_size, bool) or not isinstance(part_size, int) or part_size <= 0:
            raise ValueError(f"part_size must be a positive number of bytes, got {part_size!r}")
        self._part_size = part_size
        self._rollover_ms = _millis(rollover_interval, "rollover_interval")
        self._inactivity_ms = _millis(inactivity_interval, "inactivity_interval")

    @property
    def part_size(self) -> int:
        return self._part_size

    @property
    def rollover_interval_ms(self) -> int:
        return self._rollover_ms

    @property
    def inactivity_interval_ms(self) -> int:
        return self._inactivity_ms

    def should_roll_on_event(self, part: PartFileInfo, element_size: int) -> bool:
        return part.size >= self._part_size

    def should_roll_on_processing_time(self, part: PartFileInfo, now_ms: float) -> bool:
        return (now_ms - part.created_ms >= self._rollover_ms
                or now_ms - part.last_updated_ms >= self._inactivity_ms)

    def __repr__(self) -> str:
        return (f"DefaultRollingPolicy(part_size={self._part_size}, rollover_interval="
                f"{self._rollover_ms}, inactivity_interval={self._inactivity_ms})")


class OnCheckpointRollingPolicy(RollingPolicy):
    """Rolls only at checkpoints (and when the input ends)."""

    def __repr__(self) -> str:
        return "OnCheckpointRollingPolicy()"
