"""Options of the Table planner's aggregation strategies: mini-batch aggregation and its
phases (docs/table.md, "Mini-batch and two-phase aggregation"). Keys are Flink's."""

from flintlock.common.config_option import ConfigOption, OptionType

MINI_BATCH_ENABLED = ConfigOption(
    "table.exec.mini-batch.enabled", OptionType.BOOLEAN, False,
    "Whether a streaming GROUP BY of built-in aggregate functions buffers its input rows and "
    "aggregates them a mini-batch at a time (one result per key and mini-batch); needs "
    "table.exec.mini-batch.allow-latency and table.exec.mini-batch.size.",
)
MINI_BATCH_ALLOW_LATENCY = ConfigOption(
    "table.exec.mini-batch.allow-latency", OptionType.DURATION, 0,
    "How long a mini-batch lasts at most after its first row (with "
    "table.exec.mini-batch.enabled; must then be more than 0).", minimum=0,
)
MINI_BATCH_SIZE = ConfigOption(
    "table.exec.mini-batch.size", OptionType.INT, -1,
    "How many rows a mini-batch holds at most (with table.exec.mini-batch.enabled; must then "
    "be more than 0).", minimum=-1,
)
AGG_PHASE_STRATEGY = ConfigOption(
    "table.optimizer.agg-phase-strategy", OptionType.ENUM, "auto",
    "ONE_PHASE aggregates after the shuffle only; TWO_PHASE also folds each mini-batch's rows "
    "into one partial result per key before the shuffle (local-global); AUTO takes TWO_PHASE "
    "where it applies: mini-batch on and every aggregate function mergeable, no DISTINCT.",
    allowed=("auto", "one_phase", "two_phase"),
)
DISTINCT_AGG_SPLIT_ENABLED = ConfigOption(
    "table.optimizer.distinct-agg.split.enabled", OptionType.BOOLEAN, False,
    "Whether a streaming GROUP BY with a DISTINCT aggregate (COUNT(DISTINCT x), SUM(DISTINCT "
    "x)...) of splittable built-in functions runs in two levels: a partial aggregation grouped "
    "by the keys and MOD(HASH_CODE(x), bucket-num), then a final one merging the partial "
    "results per key (docs/table.md, \"Split distinct aggregation\").",
)
DISTINCT_AGG_SPLIT_BUCKET_NUM = ConfigOption(
    "table.optimizer.distinct-agg.split.bucket-num", OptionType.INT, 1024,
    "How many buckets a split distinct aggregation spreads each key's distinct values over "
    "(with table.optimizer.distinct-agg.split.enabled).", minimum=1,
)
REUSE_SUB_PLAN_ENABLED = ConfigOption(
    "table.optimizer.reuse-sub-plan-enabled", OptionType.BOOLEAN, True,
    "Whether sub-plans written more than once in a job (the same scan, aggregation or join "
    "over the same inputs) are built once and their output read by every consumer; never for "
    "a sub-plan calling a nondeterministic function (planner/subplan_reuse.py).",
)
