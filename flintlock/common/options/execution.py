"""Job-level execution options: parallelism, buffer timeout, runtime mode, pipeline settings."""

from flintlock.common.config_option import ConfigOption, OptionType

PARALLELISM = ConfigOption(
    "parallelism.default", OptionType.INT, 1,
    "Default parallelism of operators that do not set their own.", minimum=1, maximum=32768,
)
MAX_PARALLELISM = ConfigOption(
    "pipeline.max-parallelism", OptionType.INT, 128,
    "Number of key groups: the upper bound for rescaling keyed state.", minimum=1,
    maximum=32768,
)
BUFFER_TIMEOUT = ConfigOption(
    "execution.buffer-timeout", OptionType.DURATION, 100,
    "How long a partly filled output buffer may wait before it is flushed: 0 flushes after "
    "every record, -1 only when a buffer is full.", minimum=-1,
)
RUNTIME_MODE = ConfigOption(
    "execution.runtime-mode", OptionType.ENUM, "streaming",
    "STREAMING (pipelined exchanges) or BATCH (blocking exchanges).",
    allowed=("streaming", "batch", "automatic"),
)
OPERATOR_CHAINING = ConfigOption(
    "pipeline.operator-chaining.enabled", OptionType.BOOLEAN, True,
    "Chain operators connected by forward edges into one subtask.",
    deprecated_keys=("pipeline.operator-chaining",),
)
NAME = ConfigOption("pipeline.name", OptionType.STRING, None, "The job's name.")
CLASSLOADER_RESOLVE_ORDER = ConfigOption(
    "classloader.resolve-order", OptionType.ENUM, "child-first",
    "Whether a job's own modules shadow the TaskManager's (child-first) or not.",
    allowed=("child-first", "parent-first"),
)
CLASSLOADER_PARENT_FIRST_PATTERNS_DEFAULT: ConfigOption[list[str]] = ConfigOption(
    "classloader.parent-first-patterns.default", OptionType.LIST,
    ["flintlock.", "pyspark.", "py4j.", "cloudpickle.", "_pytest.", "pytest.", "pluggy.",
     "hypothesis."],
    "Module-name prefixes always resolved parent-first (semicolon-separated, plain prefix "
    "match as in Flink: `org.example.` matches `org.example` and its submodules, "
    "`org.example` also matches `org.examplefoo`). The standard library and flintlock itself "
    "are parent-first whatever this says. Change `.additional` instead of this.",
)
CLASSLOADER_PARENT_FIRST_PATTERNS: ConfigOption[list[str]] = ConfigOption(
    "classloader.parent-first-patterns.additional", OptionType.LIST, [],
    "Module-name prefixes resolved parent-first on top of the default patterns "
    "(semicolon-separated, matched as those are).",
)
CLASSLOADER_CHECK_LEAKED = ConfigOption(
    "classloader.check-leaked-classloader", OptionType.BOOLEAN, True,
    "When a TaskManager that has its Python worker to itself ends, wait up to 5 s for the "
    "threads its job started, retire the job's code (calling a function of the ended job "
    "raises LeakedUserCodeError) and end a worker whose job threads are still alive instead "
    "of letting Spark reuse it (docs/usercode.md). The job's modules are unloaded either way.",
)
STATE_RECOVERY_PATH = ConfigOption(
    "execution.state-recovery.path", OptionType.STRING, None,
    "A savepoint or retained checkpoint (its directory or _metadata file) the job restores "
    "when it is submitted.", deprecated_keys=("execution.savepoint.path",),
)
ALLOW_NON_RESTORED_STATE = ConfigOption(
    "execution.state-recovery.ignore-unclaimed-state", OptionType.BOOLEAN, False,
    "Allow a restore that leaves state of operators the job no longer has unclaimed.",
    deprecated_keys=("execution.savepoint.ignore-unclaimed-state",),
)
GLOBAL_JOB_PARAMETERS: ConfigOption[dict[str, str]] = ConfigOption(
    "pipeline.global-job-parameters", OptionType.MAP, {},
    "Key/value parameters every function can read with RuntimeContext.get_job_parameter "
    "(text form: key1:value1,key2:value2).",
)
AUTO_WATERMARK_INTERVAL = ConfigOption(
    "pipeline.auto-watermark-interval", OptionType.DURATION, 200,
    "How often timestamp assigners and sources with a watermark strategy emit a watermark "
    "(periodic watermarks); 0 disables periodic emission (only the end of input's).",
    minimum=0,
)
