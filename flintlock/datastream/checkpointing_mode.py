"""``CheckpointingMode`` under PyFlink's module path; defined in ``flintlock.common``."""

from flintlock.common.checkpointing import CheckpointingMode

__all__ = ["CheckpointingMode"]
