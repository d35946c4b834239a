"""State backend options."""

from flintlock.common.config import ConfigOption, OptionType

BACKEND = ConfigOption(
    "state.backend.type", OptionType.ENUM, "hashmap",
    "Where keyed state lives: hashmap (Python heap) or an embedded on-disk store.",
    allowed=("hashmap", "rocksdb", "sqlite"),
)
LOCAL_DIR = ConfigOption(
    "state.backend.local-dir", OptionType.STRING, None,
    "Working directory of the on-disk backend (defaults to the system temp dir).",
)
