"""Options of the Table API and SQL (``TableConfig``, ``SET 'k' = 'v'``), Flink's keys.

Only keys flintlock reads are defined; a Flink table key that means nothing here is unknown and
refused with suggestions, like any other key (docs/table.md lists them).
"""

from flintlock.common.config_option import ConfigOption, OptionType

LOCAL_TIME_ZONE = ConfigOption(
    "table.local-time-zone", OptionType.STRING, "default",
    "The session time zone: TIMESTAMP_LTZ values print in it and PROCTIME() is read in it; "
    "'default' is the machine's zone, else a zone id such as 'UTC' or 'Asia/Shanghai'.",
)
STATE_TTL = ConfigOption(
    "table.exec.state.ttl", OptionType.DURATION, 0,
    "How long the state of a key in a stateful SQL operator (aggregation, join, Top-N) is kept "
    "after its last update; 0 keeps it for ever.", minimum=0,
)
SOURCE_IDLE_TIMEOUT = ConfigOption(
    "table.exec.source.idle-timeout", OptionType.DURATION, 0,
    "When a source with a watermark receives no record for this long, it is marked idle and "
    "downstream watermarks advance without it; 0 never marks it idle (issue 32).", minimum=0,
)
DML_SYNC = ConfigOption(
    "table.dml-sync", OptionType.BOOLEAN, False,
    "Whether execute_sql of an INSERT waits for the job to finish.",
)
MAX_COLUMN_WIDTH = ConfigOption(
    "table.display.max-column-width", OptionType.INT, 30,
    "The widest a column of TableResult.print() grows in streaming mode before values are cut "
    "with '...'.", minimum=1,
)
DEFAULT_PARALLELISM = ConfigOption(
    "table.exec.resource.default-parallelism", OptionType.INT, -1,
    "Parallelism of the planned operators; -1 uses parallelism.default.", minimum=-1,
)
SQL_DIALECT = ConfigOption(
    "table.sql-dialect", OptionType.ENUM, "default",
    "The SQL dialect; flintlock parses Flink's default dialect only.", allowed=("default",),
)
