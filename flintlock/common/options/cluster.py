"""JobManager/TaskManager control-plane options: slots, heartbeats, RPC, REST, Spark, and
JobManager high availability (Flink's keys, the filesystem kind only)."""

from flintlock.common.config_option import ConfigOption, OptionType

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
ARCHIVE_DIR = ConfigOption(
    "jobmanager.archive.fs.dir", OptionType.STRING, None,
    "Directory (a local path) where the JobManager archives a job's REST views as JSON when "
    "it ends (finished, failed or cancelled), for `flintlock history --dir` to serve; unset: "
    "no archive.",
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
SPARK_DIRECT_LAUNCH = ConfigOption(
    "flintlock.spark.direct-launch", OptionType.BOOLEAN, False,
    "Start the embedded session's driver JVM from the command Spark's launcher computed for "
    "an earlier session (cached under flintlock.spark.cache-dir), skipping spark-submit's "
    "scripts and launcher JVM; false: always through spark-submit.",
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

HA_TYPE = ConfigOption(
    "high-availability.type", OptionType.ENUM, "none",
    "none: a driver that dies takes its job with it. filesystem: the JobManager keeps the job "
    "graph, job id and completed-checkpoint pointers under high-availability.storageDir, and a "
    "driver started again with the same high-availability.cluster-id resumes the job from its "
    "latest completed checkpoint under the same id (docs/reliability.md).",
    allowed=("none", "filesystem"), deprecated_keys=("high-availability",),
)
HA_STORAGE_DIR = ConfigOption(
    "high-availability.storageDir", OptionType.STRING, None,
    "Where the JobManager's recovery data lives: a local path or an fsspec URL every driver "
    "of the cluster id can reach. Required with high-availability.type: filesystem.",
)
HA_CLUSTER_ID = ConfigOption(
    "high-availability.cluster-id", OptionType.STRING, "default",
    "Names the job's recovery data under the storage directory: a driver started with the same "
    "cluster id takes the job over; at most one driver runs it at a time.",
)
HA_LEASE_DURATION = ConfigOption(
    "high-availability.filesystem.lease-duration", OptionType.DURATION, 15_000,
    "How long a driver's leadership of the cluster id lasts without renewal (renewed every "
    "third of it). A driver that died holds it until it expires; a successor waits that long. "
    "Must exceed the clock skew between the hosts of competing drivers.", minimum=100,
)
HA_LEASE_WAIT = ConfigOption(
    "high-availability.filesystem.lease-wait-timeout", OptionType.DURATION, 60_000,
    "How long a starting driver waits for the leadership held by another driver before it "
    "gives up with LeadershipUnavailableError.", minimum=0,
)
