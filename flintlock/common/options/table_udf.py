"""Options of Python user-defined functions in the Table API (issue 32), Flink's keys.

Read by ``flintlock.table.codegen.vectorized``: how many calls of an async scalar function are
in flight, how long one may take over all its attempts and how it is retried (Flink's
``table.exec.async-scalar.*``), and how many rows a pandas function gets at once.
"""

from flintlock.common.config_option import ConfigOption, OptionType

ASYNC_SCALAR_MAX_CONCURRENT = ConfigOption(
    "table.exec.async-scalar.max-concurrent-operations", OptionType.INT, 10,
    "How many calls of an async scalar function are in flight at once.", minimum=1,
    deprecated_keys=("table.exec.async-scalar.buffer-capacity",),
)
ASYNC_SCALAR_TIMEOUT = ConfigOption(
    "table.exec.async-scalar.timeout", OptionType.DURATION, 180_000,
    "How long one call of an async scalar function may take, retries included; a call that "
    "takes longer fails the job with AsyncFunctionTimeoutError.", minimum=1,
)
ASYNC_SCALAR_RETRY_STRATEGY = ConfigOption(
    "table.exec.async-scalar.retry-strategy", OptionType.ENUM, "fixed-delay",
    "FIXED_DELAY retries a call that raised (any exception) after retry-delay, up to "
    "max-attempts attempts; NO_RETRY fails at the first exception.",
    allowed=("fixed-delay", "no-retry"),
)
ASYNC_SCALAR_RETRY_DELAY = ConfigOption(
    "table.exec.async-scalar.retry-delay", OptionType.DURATION, 100,
    "The pause before an async scalar function's call is attempted again.", minimum=0,
)
ASYNC_SCALAR_MAX_ATTEMPTS = ConfigOption(
    "table.exec.async-scalar.max-attempts", OptionType.INT, 3,
    "How many times an async scalar function's call is attempted at most.", minimum=1,
)
ARROW_BATCH_SIZE = ConfigOption(
    "python.fn-execution.arrow.batch.size", OptionType.INT, 1000,
    "How many rows a pandas (vectorized) function gets at most in one call.", minimum=1,
)
