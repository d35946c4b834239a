"""The PyFlink-compatible DataStream API (issue #5): replace ``pyflink`` with ``flintlock`` in
a job's imports. Builds stream graphs; nothing runs here.

May import ``flintlock.common`` and ``flintlock.graph`` (the stream graph it builds); never the
runtime or Spark, which ``execute()`` loads lazily.
"""

from flintlock.common.checkpointing import CheckpointingMode, ExternalizedCheckpointRetention
from flintlock.common.time_domain import TimeDomain
from flintlock.datastream import async_retry_predicates, async_retry_strategies
from flintlock.datastream.async_data_stream import AsyncDataStream
from flintlock.datastream.checkpoint_config import CheckpointConfig, ExternalizedCheckpointCleanup
from flintlock.datastream.checkpoint_storage import (
    CheckpointStorage,
    FileSystemCheckpointStorage,
    JobManagerCheckpointStorage,
)
from flintlock.datastream.data_stream import (
    BroadcastConnectedStream,
    BroadcastStream,
    ConnectedStreams,
    DataStream,
    DataStreamSink,
    KeyedStream,
)
from flintlock.datastream.execution_mode import RuntimeExecutionMode
from flintlock.datastream.functions import (
    AggregateFunction,
    AllWindowFunction,
    AsyncFunction,
    AsyncRetryPredicate,
    AsyncRetryStrategy,
    BroadcastProcessFunction,
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    FilterFunction,
    FlatMapFunction,
    KeyedBroadcastProcessFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    KeySelector,
    MapFunction,
    NullByteKeySelector,
    Partitioner,
    ProcessAllWindowFunction,
    ProcessFunction,
    ProcessWindowFunction,
    ReduceFunction,
    RuntimeContext,
    SinkFunction,
    SourceFunction,
    TimerService,
    WindowFunction,
)
from flintlock.datastream.output_tag import OutputTag
from flintlock.datastream.slot_sharing_group import MemorySize, SlotSharingGroup
from flintlock.datastream.state_backend import (
    EmbeddedRocksDBStateBackend,
    FsStateBackend,
    HashMapStateBackend,
    MemoryStateBackend,
    RocksDBStateBackend,
    StateBackend,
)
from flintlock.datastream.stream_execution_environment import StreamExecutionEnvironment
from flintlock.datastream.time_characteristic import TimeCharacteristic
from flintlock.datastream.window import (
    CountWindow,
    GlobalWindow,
    MergingWindowAssigner,
    TimeWindow,
    Trigger,
    TriggerResult,
    Window,
    WindowAssigner,
)
from flintlock.datastream.windowed_stream import AllWindowedStream, WindowedStream

__all__ = [
    "AggregateFunction",
    "AllWindowFunction",
    "AllWindowedStream",
    "AsyncDataStream",
    "AsyncFunction",
    "AsyncRetryPredicate",
    "AsyncRetryStrategy",
    "BroadcastConnectedStream",
    "BroadcastProcessFunction",
    "BroadcastStream",
    "CheckpointConfig",
    "CheckpointStorage",
    "CheckpointingMode",
    "CoFlatMapFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "ConnectedStreams",
    "CountWindow",
    "DataStream",
    "DataStreamSink",
    "EmbeddedRocksDBStateBackend",
    "ExternalizedCheckpointCleanup",
    "ExternalizedCheckpointRetention",
    "FileSystemCheckpointStorage",
    "FilterFunction",
    "FlatMapFunction",
    "FsStateBackend",
    "GlobalWindow",
    "HashMapStateBackend",
    "JobManagerCheckpointStorage",
    "KeySelector",
    "KeyedBroadcastProcessFunction",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "KeyedStream",
    "MapFunction",
    "MemorySize",
    "MemoryStateBackend",
    "MergingWindowAssigner",
    "NullByteKeySelector",
    "OutputTag",
    "Partitioner",
    "ProcessAllWindowFunction",
    "ProcessFunction",
    "ProcessWindowFunction",
    "ReduceFunction",
    "RocksDBStateBackend",
    "RuntimeContext",
    "RuntimeExecutionMode",
    "SinkFunction",
    "SlotSharingGroup",
    "SourceFunction",
    "StateBackend",
    "StreamExecutionEnvironment",
    "TimeCharacteristic",
    "TimeDomain",
    "TimeWindow",
    "TimerService",
    "Trigger",
    "TriggerResult",
    "Window",
    "WindowAssigner",
    "WindowFunction",
    "WindowedStream",
    "async_retry_predicates",
    "async_retry_strategies",
]
