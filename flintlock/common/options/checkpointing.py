"""Checkpointing options (DESIGN.md §5); Flink's keys."""

from flintlock.common.config_option import ConfigOption, OptionType

INTERVAL = ConfigOption(
    "execution.checkpointing.interval", OptionType.DURATION, -1,
    "Interval between periodic checkpoints; -1 (or 0) disables checkpointing.", minimum=-1,
)
MODE = ConfigOption(
    "execution.checkpointing.mode", OptionType.ENUM, "exactly-once",
    "Barrier handling: EXACTLY_ONCE aligns barriers, AT_LEAST_ONCE only tracks them.",
    allowed=("exactly-once", "at-least-once"),
)
TIMEOUT = ConfigOption(
    "execution.checkpointing.timeout", OptionType.DURATION, 600_000,
    "A checkpoint not complete after this long expires.", minimum=1,
)
MIN_PAUSE = ConfigOption(
    "execution.checkpointing.min-pause", OptionType.DURATION, 0,
    "Least time between the end of one checkpoint and the trigger of the next.", minimum=0,
)
MAX_CONCURRENT = ConfigOption(
    "execution.checkpointing.max-concurrent-checkpoints", OptionType.INT, 1,
    "Checkpoints that may be pending at once.", minimum=1,
)
TOLERABLE_FAILURES = ConfigOption(
    "execution.checkpointing.tolerable-failed-checkpoints", OptionType.INT, 0,
    "Consecutive checkpoint failures tolerated before the job fails.", minimum=0,
)
UNALIGNED = ConfigOption(
    "execution.checkpointing.unaligned.enabled", OptionType.BOOLEAN, False,
    "Let barriers overtake in-flight buffers, which become part of the checkpoint.",
    deprecated_keys=("execution.checkpointing.unaligned",),
)
ALIGNED_TIMEOUT = ConfigOption(
    "execution.checkpointing.aligned-checkpoint-timeout", OptionType.DURATION, 0,
    "With unaligned checkpoints on: start aligned and switch to unaligned after this long "
    "(0 = unaligned from the start).", minimum=0,
    deprecated_keys=("execution.checkpointing.alignment-timeout",),
)
DIR = ConfigOption(
    "execution.checkpointing.dir", OptionType.STRING, None,
    "Where checkpoints are written: a local path or an fsspec URL. Defaults to a directory "
    "under the system temp dir in the embedded mode.",
    deprecated_keys=("state.checkpoints.dir",),
)
SAVEPOINT_DIR = ConfigOption(
    "execution.checkpointing.savepoint-dir", OptionType.STRING, None,
    "Default directory for savepoints.", deprecated_keys=("state.savepoints.dir",),
)
NUM_RETAINED = ConfigOption(
    "execution.checkpointing.num-retained", OptionType.INT, 1,
    "Completed checkpoints kept in the completed-checkpoint store.", minimum=1,
    deprecated_keys=("state.checkpoints.num-retained",),
)
EXTERNALIZED = ConfigOption(
    "execution.checkpointing.externalized-checkpoint-retention", OptionType.ENUM,
    "no-externalized-checkpoints",
    "Whether completed checkpoints outlive a cancelled job.",
    allowed=("retain-on-cancellation", "delete-on-cancellation", "no-externalized-checkpoints"),
)
INCREMENTAL = ConfigOption(
    "execution.checkpointing.incremental", OptionType.BOOLEAN, False,
    "Write only what changed since the last checkpoint, where the state backend can "
    "(rocksdb: only new SST files, shared under <dir>/<job-id>/shared/; savepoints stay "
    "full). The hashmap backend always writes full checkpoints.",
    deprecated_keys=("state.backend.incremental",),
)
FALLBACK_TO_OLDER = ConfigOption(
    "execution.checkpointing.recovery.fallback-to-older-checkpoint", OptionType.BOOLEAN, True,
    "When a recovering JobManager finds the newest completed checkpoint damaged (its "
    "_metadata truncated, altered or unreadable): true restores the newest older valid one "
    "and records the fallback in the job's log and exception history; false fails the job "
    "with the CorruptStateError naming the file. A fallback can repeat output a "
    "two-phase-commit sink already committed for the skipped checkpoint.",
)
