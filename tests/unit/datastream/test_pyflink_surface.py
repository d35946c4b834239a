"""Every PyFlink method of the environment and the stream classes exists: supported ones work
(tested elsewhere), the others raise NotImplementedError naming class, method and feature —
never AttributeError."""

import importlib
from typing import Any

import pytest

from flintlock.datastream import StreamExecutionEnvironment

ENVIRONMENT = [
    "get_config", "set_parallelism", "set_max_parallelism", "register_slot_sharing_group",
    "get_parallelism", "get_max_parallelism", "set_runtime_mode", "set_buffer_timeout",
    "get_buffer_timeout", "disable_operator_chaining", "is_chaining_enabled",
    "is_chaining_of_operators_with_different_max_parallelism_enabled",
    "get_checkpoint_config", "enable_checkpointing", "get_checkpoint_interval",
    "get_checkpointing_mode", "get_state_backend", "set_state_backend",
    "enable_changelog_state_backend", "is_changelog_state_backend_enabled",
    "set_default_savepoint_directory", "get_default_savepoint_directory",
    "set_restart_strategy", "get_restart_strategy", "add_default_kryo_serializer",
    "register_type_with_kryo_serializer", "register_type", "set_stream_time_characteristic",
    "get_stream_time_characteristic", "configure", "add_python_file",
    "set_python_requirements", "add_python_archive", "set_python_executable", "add_jars",
    "add_classpaths", "get_default_local_parallelism", "set_default_local_parallelism",
    "execute", "execute_async", "get_execution_plan", "register_cached_file",
    "get_execution_environment", "create_input", "add_source", "from_source",
    "read_text_file", "from_collection", "close",
]
DATA_STREAM = [
    "get_name", "name", "uid", "set_uid_hash", "set_parallelism", "set_max_parallelism",
    "get_type", "get_execution_environment", "get_execution_config", "force_non_parallel",
    "set_buffer_timeout", "start_new_chain", "disable_chaining", "slot_sharing_group",
    "set_description", "map", "flat_map", "key_by", "filter", "window_all",
    "count_window_all", "union", "connect", "shuffle", "project", "rescale", "rebalance",
    "forward", "broadcast", "process", "assign_timestamps_and_watermarks", "partition_custom",
    "add_sink", "sink_to", "execute_and_collect", "print", "get_side_output", "cache",
]
KEYED_STREAM = [
    *DATA_STREAM, "reduce", "sum", "min", "max", "min_by", "max_by", "window", "count_window",
]
DATA_STREAM_SINK = ["name", "uid", "set_uid_hash", "set_parallelism", "set_description",
                    "disable_chaining", "slot_sharing_group"]
CONNECTED_STREAMS = ["key_by", "map", "flat_map", "process"]

UNSUPPORTED = {
    "StreamExecutionEnvironment": [
        "enable_changelog_state_backend",
        "add_default_kryo_serializer",
        "register_type_with_kryo_serializer", "register_type",
        "set_python_executable", "add_jars", "add_classpaths", "get_default_local_parallelism",
        "set_default_local_parallelism", "register_cached_file", "create_input",
        "add_source", "read_text_file",
    ],
    "DataStream": ["set_uid_hash", "add_sink"],
    "DataStreamSink": ["set_uid_hash"],
}


def objects(env: StreamExecutionEnvironment) -> dict[str, Any]:
    stream = env.from_collection([1])
    return {
        "StreamExecutionEnvironment": env,
        "DataStream": stream.map(str),
        "KeyedStream": stream.key_by(lambda value: value),
        "DataStreamSink": stream.print(),
        "ConnectedStreams": stream.connect(env.from_collection([2])),
    }


@pytest.mark.parametrize(("owner", "methods"), [
    ("StreamExecutionEnvironment", ENVIRONMENT), ("DataStream", DATA_STREAM),
    ("KeyedStream", KEYED_STREAM), ("DataStreamSink", DATA_STREAM_SINK),
    ("ConnectedStreams", CONNECTED_STREAMS),
])
def test_every_pyflink_method_exists(env: StreamExecutionEnvironment, owner: str,
                                     methods: list[str]) -> None:
    target = objects(env)[owner]
    missing = [method for method in methods if not callable(getattr(target, method, None))]
    assert missing == []


@pytest.mark.parametrize(("owner", "method"), [
    (owner, method) for owner, methods in UNSUPPORTED.items() for method in methods
])
def test_unsupported_methods_name_themselves(env: StreamExecutionEnvironment, owner: str,
                                             method: str) -> None:
    target = objects(env)[owner]
    with pytest.raises(NotImplementedError) as caught:
        getattr(target, method)("argument")
    message = str(caught.value)
    assert f"{owner}.{method}()" in message
    assert "not supported yet (issue #" in message


def test_unsupported_methods_also_raise_when_looked_up_on_the_class() -> None:
    with pytest.raises(NotImplementedError, match=r"StreamExecutionEnvironment\.add_jars"):
        StreamExecutionEnvironment.add_jars("x.jar")


PYFLINK_IMPORTS = {
    "flintlock.common": [
        "Configuration", "Types", "TypeInformation", "Row", "RowKind", "Duration", "Time",
        "Instant", "WatermarkStrategy", "JobExecutionResult", "JobClient", "JobStatus",
        "ExecutionConfig", "RestartStrategies", "CompletableFuture",
    ],
    "flintlock.common.configuration": ["Configuration"],
    "flintlock.common.typeinfo": [
        "Types", "TypeInformation", "RowTypeInfo", "TupleTypeInfo", "BasicTypeInfo",
        "ListTypeInfo", "MapTypeInfo", "PickledBytesTypeInfo", "PrimitiveArrayTypeInfo",
        "BasicArrayTypeInfo", "ObjectArrayTypeInfo",
    ],
    "flintlock.common.types": ["Row", "RowKind"],
    "flintlock.common.time": ["Duration", "Time", "Instant"],
    "flintlock.common.watermark_strategy": ["WatermarkStrategy", "TimestampAssigner"],
    "flintlock.common.restart_strategy": ["RestartStrategies"],
    "flintlock.common.job_status": ["JobStatus"],
    "flintlock.common.job_client": ["JobClient"],
    "flintlock.common.job_execution_result": ["JobExecutionResult"],
    "flintlock.common.execution_config": ["ExecutionConfig"],
    "flintlock.datastream": [
        "StreamExecutionEnvironment", "DataStream", "KeyedStream", "ConnectedStreams",
        "DataStreamSink", "CheckpointingMode", "CheckpointConfig", "TimeCharacteristic",
        "RuntimeExecutionMode", "TimeDomain", "HashMapStateBackend",
        "EmbeddedRocksDBStateBackend", "FileSystemCheckpointStorage", "OutputTag",
        "SlotSharingGroup", "MapFunction", "KeyedProcessFunction", "RuntimeContext",
        "WindowedStream", "AllWindowedStream", "TimeWindow", "CountWindow", "WindowAssigner",
        "MergingWindowAssigner", "TriggerResult", "Trigger", "AsyncDataStream", "AsyncFunction",
        "AsyncRetryStrategy", "async_retry_predicates", "async_retry_strategies",
    ],
    "flintlock.datastream.functions": [
        "MapFunction", "FlatMapFunction", "FilterFunction", "ReduceFunction",
        "AggregateFunction", "KeySelector", "Partitioner", "ProcessFunction",
        "KeyedProcessFunction", "CoMapFunction", "CoFlatMapFunction", "CoProcessFunction",
        "KeyedCoProcessFunction", "RuntimeContext", "TimerService", "WindowFunction",
        "ProcessWindowFunction", "AllWindowFunction", "ProcessAllWindowFunction",
        "AsyncFunction", "AsyncRetryStrategy", "AsyncRetryPredicate",
    ],
    "flintlock.datastream.async_retry_predicates": [
        "empty_result_predicate", "has_exception_predicate", "exception_type_predicate",
    ],
    "flintlock.datastream.async_retry_strategies": [
        "NO_RETRY_STRATEGY", "FixedDelayRetryStrategy", "ExponentialBackoffDelayRetryStrategy",
        "NoRetryStrategy", "RetryPredicate",
    ],
    "flintlock.common.serializer": ["TypeSerializer"],
    "flintlock.datastream.window": [
        "Window", "TimeWindow", "CountWindow", "GlobalWindow", "TumblingProcessingTimeWindows",
        "TumblingEventTimeWindows", "SlidingProcessingTimeWindows", "SlidingEventTimeWindows",
        "ProcessingTimeSessionWindows", "EventTimeSessionWindows",
        "DynamicProcessingTimeSessionWindows", "DynamicEventTimeSessionWindows",
        "WindowAssigner", "MergingWindowAssigner", "CountTumblingWindowAssigner",
        "CountSlidingWindowAssigner", "TriggerResult", "Trigger", "EventTimeTrigger",
        "ProcessingTimeTrigger", "NeverTrigger", "PurgingTrigger", "CountTrigger",
        "SessionWindowTimeGapExtractor", "GlobalWindows", "ContinuousEventTimeTrigger",
        "ContinuousProcessingTimeTrigger", "TimeWindowSerializer", "CountWindowSerializer",
        "GlobalWindowSerializer",
    ],
    "flintlock.datastream.state": [
        "ValueStateDescriptor", "ListStateDescriptor", "MapStateDescriptor",
        "ReducingStateDescriptor", "AggregatingStateDescriptor", "StateTtlConfig",
        "ValueState", "ListState", "MapState", "ReducingState", "AggregatingState",
    ],
    "flintlock.datastream.data_stream": [
        "DataStream", "KeyedStream", "ConnectedStreams", "DataStreamSink", "WindowedStream",
        "AllWindowedStream",
    ],
    "flintlock.datastream.checkpointing_mode": ["CheckpointingMode"],
    "flintlock.datastream.checkpoint_config": ["CheckpointConfig",
                                               "ExternalizedCheckpointCleanup"],
    "flintlock.datastream.execution_mode": ["RuntimeExecutionMode"],
    "flintlock.datastream.time_characteristic": ["TimeCharacteristic"],
    "flintlock.datastream.state_backend": ["HashMapStateBackend",
                                           "EmbeddedRocksDBStateBackend"],
    "flintlock.datastream.checkpoint_storage": ["FileSystemCheckpointStorage"],
    "flintlock.datastream.connectors": ["Source", "Sink"],
    "flintlock.datastream.slot_sharing_group": ["SlotSharingGroup"],
    "flintlock.datastream.output_tag": ["OutputTag"],
    "flintlock.datastream.stream_execution_environment": ["StreamExecutionEnvironment"],
}


@pytest.mark.parametrize("module_name", sorted(PYFLINK_IMPORTS))
def test_pyflink_module_paths_export_pyflink_names(module_name: str) -> None:
    module = importlib.import_module(module_name)
    missing = [name for name in PYFLINK_IMPORTS[module_name] if not hasattr(module, name)]
    assert missing == []


def test_a_name_the_window_module_lacks_is_an_attribute_error() -> None:
    module = importlib.import_module("flintlock.datastream.window")
    with pytest.raises(AttributeError, match="NoSuchTrigger"):
        module.NoSuchTrigger  # noqa: B018
