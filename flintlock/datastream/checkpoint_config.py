"""``CheckpointConfig``: PyFlink's checkpointing settings, stored in the environment's
``Configuration`` under Flink's keys (``flintlock.common.options.checkpointing``).

The object holds no settings of its own: every getter reads the configuration and every setter
writes it, so ``env.get_checkpoint_config().set_checkpoint_timeout(...)``, a
``flintlock-conf.yaml`` entry and ``env.configure(...)`` all change the same value. Setters
validate at once (Flink's bounds: an interval of at least 10 ms, a timeout of at least 1 ms,
...) and raise ``InvalidCheckpointSettingError`` naming the setting.

Durations are accepted as ``Duration`` objects or as integer milliseconds, where PyFlink
accepts either. Owned by the user's thread while the job is built.
"""

from __future__ import annotations

from typing import Any

from flintlock.common.checkpointing import CheckpointingMode, ExternalizedCheckpointRetention
from flintlock.common.config import Configuration
from flintlock.common.errors import FlintlockError
from flintlock.common.options import checkpointing as options
from flintlock.common.time import Duration

ExternalizedCheckpointCleanup = ExternalizedCheckpointRetention
"""PyFlink's older name for the retention enum."""

MINIMAL_CHECKPOINT_INTERVAL_MS = 10
"""The shortest checkpoint interval Flink accepts."""

_UNBOUNDED_FAILURES = 2**31 - 1


class InvalidCheckpointSettingError(FlintlockError, ValueError):
    """A checkpoint setting out of its bounds; names the setting and the bound."""

    def __init__(self, setting: str, value: object, expected: str) -> None:
        super().__init__(setting, value, expected)
        self.setting = setting
        self.value = value
        self.expected = expected

    def __str__(self) -> str:
        return f"{self.setting}: {self.value!r} is invalid; expected {self.expected}"


def to_millis(value: Duration | int, setting: str) -> int:
    """Milliseconds of a ``Duration`` or an int (bool and other types are rejected)."""
    if isinstance(value, Duration):
        return value.to_milliseconds()
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise InvalidCheckpointSettingError(setting, value, "a Duration or integer milliseconds")


class CheckpointConfig:
    """Checkpointing settings of one environment (a view over its configuration)."""

    def __init__(self, configuration: Configuration) -> None:
        self._configuration = configuration

    # -- interval and mode -------------------------------------------------------------

    def is_checkpointing_enabled(self) -> bool:
        return self.get_checkpoint_interval() > 0

    def get_checkpoint_interval(self) -> int:
        """Milliseconds between checkpoints; -1 when checkpointing is disabled."""
        interval = self._configuration.get(options.INTERVAL)
        return interval if interval > 0 else -1

    def set_checkpoint_interval(self, checkpoint_interval: Duration | int) -> CheckpointConfig:
        millis = to_millis(checkpoint_interval, "checkpoint interval")
        if millis < MINIMAL_CHECKPOINT_INTERVAL_MS:
            raise InvalidCheckpointSettingError(
                "checkpoint interval", millis,
                f"at least {MINIMAL_CHECKPOINT_INTERVAL_MS} ms")
        self._configuration.set(options.INTERVAL, millis)
        return self

    def get_checkpointing_mode(self) -> CheckpointingMode:
        """As Flink: AT_LEAST_ONCE while checkpointing is disabled, else the configured mode."""
        if not self.is_checkpointing_enabled():
            return CheckpointingMode.AT_LEAST_ONCE
        return CheckpointingMode.from_config(self._configuration.get(options.MODE))

    def set_checkpointing_mode(self, checkpointing_mode: CheckpointingMode) -> CheckpointConfig:
        if not isinstance(checkpointing_mode, CheckpointingMode):
            raise InvalidCheckpointSettingError(
                "checkpointing mode", checkpointing_mode, "a CheckpointingMode")
        self._configuration.set(options.MODE, checkpointing_mode.config_value())
        return self

    # -- timing and concurrency ----------------------------------------------------------

    def get_checkpoint_timeout(self) -> int:
        return self._configuration.get(options.TIMEOUT)

    def set_checkpoint_timeout(self, checkpoint_timeout: Duration | int) -> CheckpointConfig:
        return self._set_at_least(options.TIMEOUT, "checkpoint timeout",
                                  to_millis(checkpoint_timeout, "checkpoint timeout"), 1)

    def get_min_pause_between_checkpoints(self) -> int:
        return self._configuration.get(options.MIN_PAUSE)

    def set_min_pause_between_checkpoints(
            self, min_pause_between_checkpoints: Duration | int) -> CheckpointConfig:
        millis = to_millis(min_pause_between_checkpoints, "min pause between checkpoints")
        return self._set_at_least(options.MIN_PAUSE, "min pause between checkpoints", millis, 0)

    def get_max_concurrent_checkpoints(self) -> int:
        return self._configuration.get(options.MAX_CONCURRENT)

    def set_max_concurrent_checkpoints(self, max_concurrent_checkpoints: int) -> CheckpointConfig:
        return self._set_at_least(options.MAX_CONCURRENT, "max concurrent checkpoints",
                                  max_concurrent_checkpoints, 1)

    # -- failures -------------------------------------------------------------------------

    def get_tolerable_checkpoint_failure_number(self) -> int:
        return self._configuration.get(options.TOLERABLE_FAILURES)

    def set_tolerable_checkpoint_failure_number(
            self, tolerable_checkpoint_failure_number: int) -> CheckpointConfig:
        return self._set_at_least(options.TOLERABLE_FAILURES, "tolerable checkpoint failures",
                                  tolerable_checkpoint_failure_number, 0)

    def is_fail_on_checkpointing_errors(self) -> bool:
        return self.get_tolerable_checkpoint_failure_number() == 0

    def set_fail_on_checkpointing_errors(self, fail_on_checkpointing_errors: bool
                                         ) -> CheckpointConfig:
        """Deprecated in Flink: True means no tolerated failures, False unlimited ones."""
        tolerated = 0 if fail_on_checkpointing_errors else _UNBOUNDED_FAILURES
        return self.set_tolerable_checkpoint_failure_number(tolerated)

    # -- externalized checkpoints --------------------------------------------------------

    def get_externalized_checkpoint_retention(self) -> ExternalizedCheckpointRetention:
        value = self._configuration.get(options.EXTERNALIZED)
        return ExternalizedCheckpointRetention[value.upper().replace("-", "_")]

    def set_externalized_checkpoint_retention(
            self, retention_mode: ExternalizedCheckpointRetention) -> CheckpointConfig:
        if not isinstance(retention_mode, ExternalizedCheckpointRetention):
            raise InvalidCheckpointSettingError(
                "externalized checkpoint retention", retention_mode,
                "an ExternalizedCheckpointRetention")
        self._configuration.set(options.EXTERNALIZED, retention_mode.config_value())
        return self

    get_externalized_checkpoint_cleanup = get_externalized_checkpoint_retention
    set_externalized_checkpoint_cleanup = set_externalized_checkpoint_retention
    enable_externalized_checkpoints = set_externalized_checkpoint_retention

    def is_externalized_checkpoints_enabled(self) -> bool:
        return (self.get_externalized_checkpoint_retention()
                is not ExternalizedCheckpointRetention.NO_EXTERNALIZED_CHECKPOINTS)

    # -- unaligned checkpoints -----------------------------------------------------------

    def is_unaligned_checkpoints_enabled(self) -> bool:
        """As Flink: unaligned checkpoints exist only in exactly-once mode."""
        if self.get_checkpointing_mode() is not CheckpointingMode.EXACTLY_ONCE:
            return False
        return bool(self._configuration.get(options.UNALIGNED))

    def enable_unaligned_checkpoints(self, enabled: bool = True) -> CheckpointConfig:
        self._configuration.set(options.UNALIGNED, bool(enabled))
        return self

    def disable_unaligned_checkpoints(self) -> CheckpointConfig:
        return self.enable_unaligned_checkpoints(False)

    def get_aligned_checkpoint_timeout(self) -> Duration:
        return Duration.of_millis(self._configuration.get(options.ALIGNED_TIMEOUT))

    def set_aligned_checkpoint_timeout(self, alignment_timeout: Duration | int
                                       ) -> CheckpointConfig:
        millis = to_millis(alignment_timeout, "aligned checkpoint timeout")
        return self._set_at_least(options.ALIGNED_TIMEOUT, "aligned checkpoint timeout",
                                  millis, 0)

    get_alignment_timeout = get_aligned_checkpoint_timeout
    set_alignment_timeout = set_aligned_checkpoint_timeout

    # -- storage ---------------------------------------------------------------------------

    def set_checkpoint_storage_dir(self, checkpoint_path: str) -> CheckpointConfig:
        """Where checkpoints are written: a local path or an fsspec URL."""
        if not isinstance(checkpoint_path, str) or not checkpoint_path.strip():
            raise InvalidCheckpointSettingError(
                "checkpoint storage dir", checkpoint_path, "a non-empty path or URL")
        self._configuration.set(options.DIR, checkpoint_path)
        return self

    def set_checkpoint_storage(self, storage: Any) -> CheckpointConfig:
        """A ``FileSystemCheckpointStorage`` (or a path string)."""
        path = storage if isinstance(storage, str) else getattr(
            storage, "get_checkpoint_path", lambda: None)()
        if path is None:
            raise InvalidCheckpointSettingError(
                "checkpoint storage", storage, "a FileSystemCheckpointStorage or a path")
        return self.set_checkpoint_storage_dir(str(path))

    def get_checkpoint_storage_dir(self) -> str | None:
        return self._configuration.get(options.DIR)

    def get_checkpoint_storage(self) -> Any:
        from flintlock.datastream.checkpoint_storage import FileSystemCheckpointStorage

        path = self.get_checkpoint_storage_dir()
        return None if path is None else FileSystemCheckpointStorage(path)

    # -- not supported yet -----------------------------------------------------------------

    def set_force_unaligned_checkpoints(self, force_unaligned_checkpoints: bool = True) -> None:
        raise NotImplementedError("forced unaligned checkpoints (for iterative jobs) are not "
                                  "supported yet (issue #3)")

    def is_force_unaligned_checkpoints(self) -> bool:
        raise NotImplementedError("forced unaligned checkpoints (for iterative jobs) are not "
                                  "supported yet (issue #3)")

    def _set_at_least(self, option: Any, setting: str, value: int, minimum: int
                      ) -> CheckpointConfig:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise InvalidCheckpointSettingError(setting, value, f"an integer >= {minimum}")
        self._configuration.set(option, value)
        return self
