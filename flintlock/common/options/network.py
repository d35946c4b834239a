"""Data-exchange options: buffers, pools, flow control, transport (DESIGN.md §4)."""

from flintlock.common.config_option import ConfigOption, OptionType

MIN_SEGMENT_SIZE = 4096
MAX_NETWORK_MEMORY = 4 << 30
MAX_SEGMENTS = MAX_NETWORK_MEMORY // MIN_SEGMENT_SIZE
"""The most segments any TaskManager can hold; a larger buffer count can never be granted."""

SEGMENT_SIZE = ConfigOption(
    "taskmanager.memory.segment-size", OptionType.MEMORY, 32 * 1024,
    "Size of one network buffer (memory segment).", minimum=MIN_SEGMENT_SIZE, maximum=4 << 20,
)
NETWORK_MEMORY = ConfigOption(
    "taskmanager.memory.network.max", OptionType.MEMORY, 64 * 1024 * 1024,
    "Network memory of one TaskManager: the NetworkBufferPool holds this many bytes of "
    "segments (rounded down to whole segments), allocated when the TaskManager starts.",
    minimum=MIN_SEGMENT_SIZE, maximum=MAX_NETWORK_MEMORY,
)
BUFFERS_PER_CHANNEL = ConfigOption(
    "taskmanager.network.memory.buffers-per-channel", OptionType.INT, 2,
    "Exclusive buffers per input channel, and the per-subpartition share of an output pool; "
    "also a channel's initial credit.", minimum=0, maximum=MAX_SEGMENTS,
)
FLOATING_BUFFERS_PER_GATE = ConfigOption(
    "taskmanager.network.memory.floating-buffers-per-gate", OptionType.INT, 8,
    "Floating buffers an input gate (or result partition) may borrow beyond the exclusive ones.",
    minimum=0, maximum=MAX_SEGMENTS,
)
MAX_BUFFERS_PER_CHANNEL = ConfigOption(
    "taskmanager.network.memory.max-buffers-per-channel", OptionType.INT, 10,
    "At most this many buffers of a result partition's pool may sit in one subpartition, so "
    "one slow consumer cannot starve the others (data skew).", minimum=1, maximum=MAX_SEGMENTS,
)
REQUEST_BACKOFF_INITIAL = ConfigOption(
    "taskmanager.network.request-backoff.initial", OptionType.DURATION, 100,
    "First back-off before a consumer asks again for a partition the producer has not "
    "registered yet.", minimum=0,
)
REQUEST_BACKOFF_MAX = ConfigOption(
    "taskmanager.network.request-backoff.max", OptionType.DURATION, 10_000,
    "Longest back-off between partition requests; after it the request fails with "
    "PartitionNotFound.", minimum=0,
)
BIND_HOST = ConfigOption(
    "taskmanager.host", OptionType.STRING, "127.0.0.1",
    "Address the TaskManager's data server binds to and announces.",
)
DATA_PORT = ConfigOption(
    "taskmanager.data.port", OptionType.INT, 0,
    "Port of the TaskManager's data server; 0 picks a free port.", minimum=0, maximum=65535,
)
CONNECT_TIMEOUT = ConfigOption(
    "taskmanager.network.netty.client.connectTimeoutSec", OptionType.DURATION, 120,
    "How long a TaskManager waits to open a data connection to another TaskManager, in "
    "seconds as in Flink (a value with a unit, such as '2 min', is converted).",
    minimum=1, maximum=2**31 - 1, time_unit="s",
)
WRITE_HIGH_WATER_MARK = ConfigOption(
    "flintlock.network.write-buffer.high-water-mark", OptionType.MEMORY, 4 * 1024 * 1024,
    "Bytes queued for one TCP connection above which senders stop handing it buffers.",
    minimum=1, maximum=256 << 20,
)
WRITE_LOW_WATER_MARK = ConfigOption(
    "flintlock.network.write-buffer.low-water-mark", OptionType.MEMORY, 1024 * 1024,
    "Bytes queued for one TCP connection below which senders resume.", minimum=0,
    maximum=256 << 20,
)
MAX_FRAME_SIZE = ConfigOption(
    "flintlock.network.max-frame-size", OptionType.MEMORY, 16 * 1024 * 1024,
    "Largest frame a peer may announce; a larger length field fails the connection.",
    minimum=1024, maximum=64 << 20,
)
AUTH_TIMEOUT = ConfigOption(
    "flintlock.network.auth-timeout", OptionType.DURATION, 10_000,
    "How long a new connection may take to prove the job secret.", minimum=1,
)
TMP_DIRS: ConfigOption[list[str]] = ConfigOption(
    "io.tmp.dirs", OptionType.LIST, [],
    "Directories for spilled BLOCKING result partitions (';'-separated); empty: the system "
    "temporary directory. A partition's spill file goes to one of them, chosen by partition.",
)
