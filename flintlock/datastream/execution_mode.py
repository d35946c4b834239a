"""``RuntimeExecutionMode``: streaming (pipelined exchanges) or batch (blocking exchanges)."""

from __future__ import annotations

import enum


class RuntimeExecutionMode(enum.Enum):
    STREAMING = 0
    BATCH = 1
    AUTOMATIC = 2

    def config_value(self) -> str:
        """The value of ``execution.runtime-mode`` for this mode."""
        return self.name.lower()
