"""StreamExecutionEnvironment: settings under Flink's keys, sources, submission to the
executor, closing."""

import datetime
import json
from pathlib import Path
from typing import Any

import pytest

from flintlock.common import (
    Configuration,
    Duration,
    RestartStrategies,
    Row,
    Types,
    WatermarkStrategy,
)
from flintlock.common.operator_spec import CollectionSource, OperatorKind
from flintlock.common.typeinfo import RecordTypeMismatchError
from flintlock.datastream import (
    EmbeddedRocksDBStateBackend,
    HashMapStateBackend,
    MemoryStateBackend,
    RuntimeExecutionMode,
    StreamExecutionEnvironment,
    TimeCharacteristic,
)
from flintlock.datastream.connectors import Sink, Source
from flintlock.datastream.errors import EmptyJobError, EnvironmentClosedError
from flintlock.graph.stream_graph import ChainingStrategy, StreamGraph


class NumberSource(Source):
    pass


class ListSink(Sink):
    pass


def keys(env: StreamExecutionEnvironment) -> dict[str, str]:
    return env.get_configuration().to_dict()


def test_configuration_file_then_given_configuration(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "flintlock-conf.yaml").write_text(
        "parallelism:\n  default: 3\nexecution.buffer-timeout: 5 ms\n")
    monkeypatch.setenv("FLINTLOCK_CONF_DIR", str(tmp_path))
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"parallelism.default": 4}))
    assert env.get_parallelism() == 4
    assert env.get_buffer_timeout() == 5


def test_each_call_returns_a_new_environment(env: StreamExecutionEnvironment) -> None:
    assert StreamExecutionEnvironment.get_execution_environment() is not env


def test_job_settings_use_flink_keys(env: StreamExecutionEnvironment) -> None:
    env.set_parallelism(4).set_max_parallelism(64).set_buffer_timeout(-1)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.disable_operator_chaining()
    env.set_default_savepoint_directory("/tmp/sp")
    assert keys(env) == {
        "parallelism.default": "4", "pipeline.max-parallelism": "64",
        "execution.buffer-timeout": "-1", "execution.runtime-mode": "batch",
        "pipeline.operator-chaining.enabled": "false",
        "execution.checkpointing.savepoint-dir": "/tmp/sp",
    }
    assert env.get_parallelism() == 4
    assert env.get_max_parallelism() == 64
    assert env.get_buffer_timeout() == -1
    assert not env.is_chaining_enabled()
    assert env.get_default_savepoint_directory() == "/tmp/sp"


def test_defaults(env: StreamExecutionEnvironment) -> None:
    assert env.get_parallelism() == 1
    assert env.get_max_parallelism() == -1
    assert env.get_buffer_timeout() == 100
    assert env.is_chaining_enabled()
    assert isinstance(env.get_state_backend(), HashMapStateBackend)
    assert not env.is_changelog_state_backend_enabled()


def test_invalid_settings_fail_naming_the_key(env: StreamExecutionEnvironment) -> None:
    with pytest.raises(ValueError, match=r"parallelism\.default"):
        env.set_parallelism(0)
    with pytest.raises(ValueError, match=r"execution\.buffer-timeout"):
        env.set_buffer_timeout(-2)
    with pytest.raises(TypeError):
        env.set_runtime_mode("batch")  # type: ignore[arg-type]


def test_execution_config_is_a_view_on_the_same_values(env: StreamExecutionEnvironment) -> None:
    env.get_config().set_parallelism(3)
    assert env.get_parallelism() == 3
    env.set_max_parallelism(16)
    assert env.get_config().get_max_parallelism() == 16
    env.get_config().enable_object_reuse()
    assert env.get_config().is_object_reuse_enabled()
    env.get_config().set_global_job_parameters({"a": "b", "n": 1})
    assert env.get_config().get_global_job_parameters() == {"a": "b", "n": "1"}
    assert env._configuration.get_string("pipeline.global-job-parameters") == "a:b,n:1"


def test_configure_applies_keys(env: StreamExecutionEnvironment) -> None:
    env.configure(Configuration({"execution.checkpointing.interval": "1 s"}))
    assert env.get_checkpoint_interval() == 1000


def test_state_backends_select_the_backend_type(env: StreamExecutionEnvironment) -> None:
    env.set_state_backend(EmbeddedRocksDBStateBackend(enable_incremental_checkpointing=True))
    assert keys(env) == {"state.backend.type": "rocksdb",
                         "execution.checkpointing.incremental": "true"}
    backend = env.get_state_backend()
    assert isinstance(backend, EmbeddedRocksDBStateBackend)
    assert backend.is_incremental_checkpoints_enabled()
    with pytest.raises(NotImplementedError, match="HashMapStateBackend"):
        MemoryStateBackend()
    with pytest.raises(TypeError):
        env.set_state_backend("rocksdb")  # type: ignore[arg-type]


def test_time_characteristic_is_recorded(env: StreamExecutionEnvironment) -> None:
    env.set_stream_time_characteristic(TimeCharacteristic.ProcessingTime)
    assert env.get_stream_time_characteristic() is TimeCharacteristic.ProcessingTime


def test_from_collection_is_a_non_parallel_source_node(env: StreamExecutionEnvironment) -> None:
    env.from_collection([1, 2, 3], Types.INT()).print()
    graph = env.get_stream_graph()
    source = graph.node(1)
    assert source.is_source and source.num_inputs == 0
    assert source.name == "Collection Source"
    assert source.parallelism == 1
    assert source.chaining is ChainingStrategy.HEAD
    assert source.operator.kind is OperatorKind.SOURCE
    assert source.operator.source == CollectionSource((1, 2, 3))
    assert source.output_type == Types.INT()


def test_from_collection_rejects_empty_and_mistyped_collections(
        env: StreamExecutionEnvironment) -> None:
    with pytest.raises(ValueError, match="must not be empty"):
        env.from_collection([])
    with pytest.raises(RecordTypeMismatchError, match="Collection Source"):
        env.from_collection([Row(1), Row("x")], Types.ROW([Types.INT()]))
    with pytest.raises(TypeError):
        env.from_collection([1], Types.INT)  # type: ignore[arg-type]


def test_from_source_carries_source_and_watermark_strategy(
        env: StreamExecutionEnvironment) -> None:
    source, strategy = NumberSource(), WatermarkStrategy.for_monotonous_timestamps()
    env.from_source(source, strategy, "numbers", Types.LONG()).sink_to(ListSink())
    graph = env.get_stream_graph()
    node = graph.node(1)
    assert node.name == "numbers" and node.is_source and node.parallelism is None
    assert node.operator.source is source
    assert node.operator.watermark_strategy == strategy
    assert graph.node(2).operator.kind is OperatorKind.SINK


@pytest.mark.parametrize("arguments", [
    (object(), WatermarkStrategy.no_watermarks(), "s"),
    (NumberSource(), None, "s"),
    (NumberSource(), WatermarkStrategy.no_watermarks(), ""),
])
def test_from_source_checks_its_arguments(env: StreamExecutionEnvironment,
                                          arguments: tuple[object, ...]) -> None:
    with pytest.raises(TypeError):
        env.from_source(*arguments)  # type: ignore[arg-type]


def test_the_legacy_source_api_is_not_supported(env: StreamExecutionEnvironment) -> None:
    with pytest.raises(NotImplementedError, match="legacy SourceFunction API"):
        env.add_source(object())


def test_execute_without_runtime_says_so(env: StreamExecutionEnvironment,
                                         no_runtime: None) -> None:
    env.from_collection([1]).print()
    with pytest.raises(NotImplementedError,
                       match=r"the Spark runtime is not available yet \(issue #4\)"):
        env.execute()


def test_execute_hands_graph_and_configuration_to_the_executor(
        env: StreamExecutionEnvironment, fake_executor) -> None:
    env.set_parallelism(2)
    env.from_collection([1, 2]).map(str).print()
    result = env.execute("my job")
    assert result.get_job_id() == "job-1" and result.get_net_runtime() == 42
    ((call, graph, configuration, job_name, _),) = fake_executor.calls
    assert call == "execute" and job_name == "my job"
    assert isinstance(graph, StreamGraph) and graph.job_name == "my job"
    assert [node.name for node in graph.topological_order()] == [
        "Collection Source", "Map", "Print to Std. Out"]
    assert graph.default_parallelism == 2
    assert configuration.get_integer("parallelism.default") == 2
    configuration.set_integer("parallelism.default", 5)
    assert env.get_parallelism() == 2


def test_execute_clears_the_transformations(env: StreamExecutionEnvironment,
                                            fake_executor) -> None:
    env.from_collection([1]).print()
    env.execute()
    with pytest.raises(EmptyJobError):
        env.execute()


def test_streams_of_an_executed_job_can_feed_the_next_job(
        env: StreamExecutionEnvironment, fake_executor) -> None:
    source = env.from_collection([1, 2])
    source.print()
    env.execute("first")
    source.map(str).print()
    env.execute("second")
    second = fake_executor.calls[1][1]
    assert [node.name for node in second.topological_order()] == [
        "Collection Source", "Map", "Print to Std. Out"]


def test_job_name_defaults(env: StreamExecutionEnvironment, fake_executor) -> None:
    env.from_collection([1]).print()
    env.execute()
    env.configure(Configuration({"pipeline.name": "from config"}))
    env.from_collection([1]).print()
    env.execute()
    assert [call[3] for call in fake_executor.calls] == ["Flink Streaming Job", "from config"]


def test_execute_async_returns_the_executors_client(env: StreamExecutionEnvironment,
                                                    fake_executor) -> None:
    env.from_collection([1]).print()
    assert env.execute_async("async") == "client"
    assert fake_executor.calls[0][0] == "execute_async"


def test_a_job_needs_an_operator(env: StreamExecutionEnvironment) -> None:
    with pytest.raises(EmptyJobError):
        env.get_stream_graph()
    env.from_collection([1])
    with pytest.raises(EmptyJobError):
        env.get_stream_graph()


def test_unread_sources_are_left_out(env: StreamExecutionEnvironment) -> None:
    env.from_collection([1])
    env.from_collection([2]).print()
    graph = env.get_stream_graph()
    assert len(graph.nodes) == 2
    assert graph.node(1).operator.source == CollectionSource((2,))


def test_closed_environment_rejects_everything(env: StreamExecutionEnvironment) -> None:
    stream = env.from_collection([1])
    env.close()
    env.close()
    with pytest.raises(EnvironmentClosedError, match="is closed"):
        stream.print()
    with pytest.raises(EnvironmentClosedError):
        stream.map(str)
    with pytest.raises(EnvironmentClosedError):
        env.from_collection([1])
    with pytest.raises(EnvironmentClosedError):
        env.execute()


def test_execution_plan_is_flink_shaped_json(env: StreamExecutionEnvironment) -> None:
    env.from_collection([("a", 1)]).key_by(lambda v: v[0]).sum(1).print()
    plan = json.loads(env.get_execution_plan())
    assert [(node["id"], node["pact"]) for node in plan["nodes"]] == [
        (1, "Data Source"), (2, "Operator"), (3, "Data Sink")]
    assert plan["nodes"][1]["predecessors"] == [{"id": 1, "ship_strategy": "HASH",
                                                 "side": "second"}]
    assert plan["nodes"][2]["predecessors"][0]["ship_strategy"] == "FORWARD"
    env.get_stream_graph()


def test_from_collection_converts_tuples_for_a_row_type(env: StreamExecutionEnvironment) -> None:
    env.from_collection([(1, "a")], Types.ROW_NAMED(["id", "name"],
                                                    [Types.INT(), Types.STRING()])).print()
    (element,) = env.get_stream_graph().node(1).operator.source.elements
    assert element == Row(id=1, name="a") and element.name == "a"


@pytest.mark.parametrize(("strategy", "expected"), [
    (RestartStrategies.no_restart(), {"restart-strategy.type": "none"}),
    (RestartStrategies.fixed_delay_restart(3, 1000), {
        "restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": "3",
        "restart-strategy.fixed-delay.delay": "1000"}),
    (RestartStrategies.failure_rate_restart(2, datetime.timedelta(minutes=1),
                                            Duration.of_seconds(5)), {
        "restart-strategy.type": "failure-rate",
        "restart-strategy.failure-rate.max-failures-per-interval": "2",
        "restart-strategy.failure-rate.failure-rate-interval": "60000",
        "restart-strategy.failure-rate.delay": "5000"}),
    (RestartStrategies.exponential_delay_restart(10, 1000, 2.0, 60_000, 0.0), {
        "restart-strategy.type": "exponential-delay",
        "restart-strategy.exponential-delay.initial-backoff": "10",
        "restart-strategy.exponential-delay.max-backoff": "1000",
        "restart-strategy.exponential-delay.backoff-multiplier": "2.0",
        "restart-strategy.exponential-delay.reset-backoff-threshold": "60000",
        "restart-strategy.exponential-delay.jitter-factor": "0.0"}),
])
def test_restart_strategies_are_written_as_keys_and_read_back(
        env: StreamExecutionEnvironment, strategy: Any, expected: dict[str, str]) -> None:
    env.set_restart_strategy(strategy)
    assert keys(env) == expected
    assert env.get_restart_strategy() == strategy


def test_fall_back_restart_unsets_the_type(env: StreamExecutionEnvironment) -> None:
    env.set_restart_strategy(RestartStrategies.no_restart())
    env.set_restart_strategy(RestartStrategies.fall_back_restart())
    assert keys(env) == {}
    assert env.get_restart_strategy() == RestartStrategies.fall_back_restart()
    fixed = RestartStrategies.fixed_delay_restart(2, datetime.timedelta(seconds=3))
    assert fixed.get_delay_between_attempts_interval() == datetime.timedelta(seconds=3)
    assert fixed.get_restart_attempts() == 2


def test_bad_restart_strategies_fail(env: StreamExecutionEnvironment) -> None:
    with pytest.raises(ValueError, match=r"restart-strategy\.fixed-delay\.attempts"):
        env.set_restart_strategy(RestartStrategies.fixed_delay_restart(-1, 10))
    with pytest.raises(TypeError):
        RestartStrategies.fixed_delay_restart(1, "10 s")
    with pytest.raises(TypeError):
        env.set_restart_strategy("none")  # type: ignore[arg-type]


def test_add_python_file_makes_a_helper_importable(env: StreamExecutionEnvironment,
                                                   tmp_path: Any) -> None:
    import importlib
    import sys

    (tmp_path / "parity_helper_module.py").write_text("VALUE = 42\n")
    env.add_python_file(str(tmp_path / "parity_helper_module.py"))
    try:
        assert importlib.import_module("parity_helper_module").VALUE == 42
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("parity_helper_module", None)
    with pytest.raises(FileNotFoundError):
        env.add_python_file(str(tmp_path / "missing.py"))


def test_row_of_kind() -> None:
    from flintlock.common import Row, RowKind

    row = Row.of_kind(RowKind.UPDATE_BEFORE, 1, "old")
    assert row.get_row_kind() is RowKind.UPDATE_BEFORE and list(row) == [1, "old"]
