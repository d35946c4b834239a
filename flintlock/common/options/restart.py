"""Restart strategy options; Flink's keys and defaults."""

from flintlock.common.config_option import ConfigOption, OptionType

TYPE = ConfigOption(
    "restart-strategy.type", OptionType.ENUM, None,
    "none, fixed-delay, failure-rate or exponential-delay; unset means exponential-delay when "
    "checkpointing is on and none otherwise.",
    allowed=("none", "off", "disable", "fixed-delay", "fixeddelay", "failure-rate",
             "failurerate", "exponential-delay", "exponentialdelay"),
    deprecated_keys=("restart-strategy",),
)
FIXED_DELAY_ATTEMPTS = ConfigOption(
    "restart-strategy.fixed-delay.attempts", OptionType.INT, 1,
    "Restarts before the job fails.", minimum=0,
)
FIXED_DELAY_DELAY = ConfigOption(
    "restart-strategy.fixed-delay.delay", OptionType.DURATION, 1000,
    "Pause before each restart.", minimum=0,
)
FAILURE_RATE_MAX = ConfigOption(
    "restart-strategy.failure-rate.max-failures-per-interval", OptionType.INT, 1,
    "Failures allowed within one interval.", minimum=1,
)
FAILURE_RATE_INTERVAL = ConfigOption(
    "restart-strategy.failure-rate.failure-rate-interval", OptionType.DURATION, 60_000,
    "The sliding interval failures are counted in.", minimum=1,
)
FAILURE_RATE_DELAY = ConfigOption(
    "restart-strategy.failure-rate.delay", OptionType.DURATION, 1000,
    "Pause before each restart.", minimum=0,
)
EXP_INITIAL = ConfigOption(
    "restart-strategy.exponential-delay.initial-backoff", OptionType.DURATION, 1000,
    "First pause.", minimum=0,
)
EXP_MAX = ConfigOption(
    "restart-strategy.exponential-delay.max-backoff", OptionType.DURATION, 60_000,
    "Longest pause.", minimum=0,
)
EXP_MULTIPLIER = ConfigOption(
    "restart-strategy.exponential-delay.backoff-multiplier", OptionType.FLOAT, 1.5,
    "Factor applied to the pause after each failure.", minimum=1.0,
)
EXP_RESET = ConfigOption(
    "restart-strategy.exponential-delay.reset-backoff-threshold", OptionType.DURATION, 3_600_000,
    "Running this long without failure resets the pause to the initial one.", minimum=1,
)
EXP_JITTER = ConfigOption(
    "restart-strategy.exponential-delay.jitter-factor", OptionType.FLOAT, 0.1,
    "Random fraction added to or taken from each pause.", minimum=0.0, maximum=1.0,
)
EXP_ATTEMPTS = ConfigOption(
    "restart-strategy.exponential-delay.attempts-before-reset-backoff", OptionType.INT,
    2**31 - 1, "Restarts allowed before the back-off resets.", minimum=1,
)
