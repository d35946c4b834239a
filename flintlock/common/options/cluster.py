"""JobManager/TaskManager control-plane options: slots, heartbeats, RPC, REST, Spark."""

from flintlock.common.config import ConfigOption, OptionType

NUM_TASK_SLOTS = ConfigOption(
    "taskmanager.numberOfTaskSlots", OptionType.INT, 1,
    "Slots per TaskManager (one Spark barrier task each).", minimum=1,
)
HEARTBEAT_INTERVAL = ConfigOption(
    "heartbeat.interval", OptionType.DURATION, 1_000,
    "How often JobManager and TaskManagers send heartbeats.", minimum=1,
)
HEARTBEAT_TIMEOUT = ConfigOption(
    "heartbeat.timeout", OptionType.DURATION, 15_000,
    "Silence after which a peer is declared failed; also how long an authenticated data or "
    "RPC connection may hear nothing (keepalives are sent after a third of it).", minimum=1,
)
JM_BIND_HOST = ConfigOption(
    "jobmanager.bind-host", OptionType.STRING, "127.0.0.1",
    "Address the JobManager's RPC endpoint binds to.",
)
JM_ADDRESS = ConfigOption(
    "jobmanager.rpc.address", OptionType.STRING, None,
    "Address TaskManagers use to reach the JobManager (defaults to the bind host, or "
    "spark.driver.host on a cluster).",
)
JM_PORT = ConfigOption(
    "jobmanager.rpc.port", OptionType.INT, 0,
    "Port of the JobManager's RPC endpoint; 0 picks a free port.", minimum=0, maximum=65535,
)
REST_BIND_HOST = ConfigOption(
    "rest.bind-address", OptionType.STRING, "127.0.0.1", "Address of the REST/JSON endpoint.",
)
REST_PORT = ConfigOption(
    "rest.port", OptionType.INT, 8081, "Port of the REST/JSON endpoint; 0 picks one.", minimum=0,
    maximum=65535,
)
REGISTRATION_TIMEOUT = ConfigOption(
    "taskmanager.registration.timeout", OptionType.DURATION, 120_000,
    "How long the JobManager waits for all TaskManagers of an attempt to register.", minimum=1,
)
SPARK_MASTER = ConfigOption(
    "flintlock.spark.master", OptionType.STRING, None,
    "Spark master URL when no SparkSession is active; default local[N], N = slots needed.",
)
SPARK_UI = ConfigOption(
    "flintlock.spark.ui.enabled", OptionType.BOOLEAN, False,
    "Start the Spark UI of the embedded session.",
)
SPARK_CLASS_DATA_SHARING = ConfigOption(
    "flintlock.spark.class-data-sharing", OptionType.BOOLEAN, True,
    "Start the embedded session's driver JVM from a class-data-sharing archive of Spark's "
    "classes (seconds faster). The archive is written when the first such process exits, "
    "under flintlock.spark.cache-dir (about 120 MB per JDK and Spark version).",
)
SPARK_CACHE_DIR = ConfigOption(
    "flintlock.spark.cache-dir", OptionType.STRING, None,
    "Where flintlock keeps what speeds up the embedded session's start (the class-data "
    "archive); default $XDG_CACHE_HOME/flintlock, else ~/.cache/flintlock.",
)
TASK_CANCELLATION_INTERVAL = ConfigOption(
    "task.cancellation.interval", OptionType.DURATION, 30_000,
    "While a cancelled task thread has not ended: how often it is cancelled again and where "
    "it is stuck is logged.", minimum=1,
)
TASK_CANCELLATION_TIMEOUT = ConfigOption(
    "task.cancellation.timeout", OptionType.DURATION, 180_000,
    "A TaskManager whose cancelled task thread has not ended after this long ends its "
    "process (on Spark; a Python thread cannot be interrupted). 0 waits for ever.", minimum=0,
)
