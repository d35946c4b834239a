"""State backend options."""

from flintlock.common.config_option import ConfigOption, OptionType

BACKEND = ConfigOption(
    "state.backend.type", OptionType.ENUM, "hashmap",
    "Where keyed state lives: hashmap (Python heap) or an embedded on-disk store.",
    allowed=("hashmap", "rocksdb", "sqlite"),
)
LOCAL_DIR = ConfigOption(
    "state.backend.local-dir", OptionType.STRING, None,
    "Working directory of the on-disk backend (defaults to the system temp dir).",
)
INLINE_THRESHOLD = ConfigOption(
    "state.storage.fs.memory-threshold", OptionType.MEMORY, 20 * 1024,
    "State blobs smaller than this are kept inline in the checkpoint metadata, not as files.",
    minimum=0, maximum=1 << 20,
    deprecated_keys=("state.backend.fs.memory-threshold",
                     "execution.checkpointing.data-inline-threshold"),
)
