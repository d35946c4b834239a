"""User-facing checkpointing enums, shared by the DataStream API and the runtime."""

from __future__ import annotations

import enum


class CheckpointingMode(enum.Enum):
    """How barriers are handled: aligned (exactly-once) or only tracked (at-least-once)."""

    EXACTLY_ONCE = 0
    AT_LEAST_ONCE = 1

    @classmethod
    def from_config(cls, value: str) -> CheckpointingMode:
        return cls[value.strip().upper().replace("-", "_")]

    def config_value(self) -> str:
        return self.name.lower().replace("_", "-")


class ExternalizedCheckpointRetention(enum.Enum):
    """Whether completed checkpoints outlive a cancelled job."""

    RETAIN_ON_CANCELLATION = 0
    DELETE_ON_CANCELLATION = 1
    NO_EXTERNALIZED_CHECKPOINTS = 2

    def config_value(self) -> str:
        return self.name.lower().replace("_", "-")
