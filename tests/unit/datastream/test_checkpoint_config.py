"""CheckpointConfig: every setting lands in the environment's configuration under Flink's key,
getters read it back, and bounds are enforced with errors naming the setting."""

import pytest

from flintlock.common import Configuration, Duration
from flintlock.datastream import (
    CheckpointingMode,
    ExternalizedCheckpointCleanup,
    ExternalizedCheckpointRetention,
    FileSystemCheckpointStorage,
    JobManagerCheckpointStorage,
    StreamExecutionEnvironment,
)
from flintlock.datastream.checkpoint_config import CheckpointConfig, InvalidCheckpointSettingError


@pytest.fixture
def env() -> StreamExecutionEnvironment:
    return StreamExecutionEnvironment(Configuration())


def keys(env: StreamExecutionEnvironment) -> dict[str, str]:
    return env.get_configuration().to_dict()


def test_disabled_by_default(env: StreamExecutionEnvironment) -> None:
    config = env.get_checkpoint_config()
    assert not config.is_checkpointing_enabled()
    assert config.get_checkpoint_interval() == -1
    # as real PyFlink reports it (tests/parity/expected/environment_settings.txt)
    assert config.get_checkpointing_mode() is CheckpointingMode.AT_LEAST_ONCE
    assert not config.is_unaligned_checkpoints_enabled()
    assert not config.is_externalized_checkpoints_enabled()


def test_unaligned_counts_only_for_exactly_once(env: StreamExecutionEnvironment) -> None:
    config = env.get_checkpoint_config()
    config.enable_unaligned_checkpoints()
    assert not config.is_unaligned_checkpoints_enabled()  # checkpointing is off
    env.enable_checkpointing(100, CheckpointingMode.AT_LEAST_ONCE)
    assert not config.is_unaligned_checkpoints_enabled()
    config.set_checkpointing_mode(CheckpointingMode.EXACTLY_ONCE)
    assert config.is_unaligned_checkpoints_enabled()


def test_enable_checkpointing_writes_interval_and_mode(env: StreamExecutionEnvironment) -> None:
    env.enable_checkpointing(500, CheckpointingMode.AT_LEAST_ONCE)
    assert keys(env)["execution.checkpointing.interval"] == "500"
    assert keys(env)["execution.checkpointing.mode"] == "at-least-once"
    assert env.get_checkpoint_interval() == 500
    assert env.get_checkpointing_mode() is CheckpointingMode.AT_LEAST_ONCE
    assert env.get_checkpoint_config().is_checkpointing_enabled()


def test_interval_below_flinks_minimum_is_rejected(env: StreamExecutionEnvironment) -> None:
    with pytest.raises(InvalidCheckpointSettingError, match=r"checkpoint interval.*at least 10"):
        env.enable_checkpointing(5)
    env.enable_checkpointing(Duration.of_seconds(1))
    assert env.get_checkpoint_interval() == 1000


def test_setters_write_flink_keys(env: StreamExecutionEnvironment) -> None:
    config = env.get_checkpoint_config()
    config.set_checkpoint_timeout(60_000)
    config.set_min_pause_between_checkpoints(Duration.of_millis(250))
    config.set_max_concurrent_checkpoints(2)
    config.set_tolerable_checkpoint_failure_number(3)
    config.enable_unaligned_checkpoints()
    config.set_aligned_checkpoint_timeout(Duration.of_seconds(2))
    config.set_externalized_checkpoint_retention(
        ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION)
    config.set_checkpoint_storage_dir("file:///tmp/checkpoints")
    config.set_checkpoint_interval(100)
    assert keys(env) == {
        "execution.checkpointing.timeout": "60000",
        "execution.checkpointing.min-pause": "250",
        "execution.checkpointing.max-concurrent-checkpoints": "2",
        "execution.checkpointing.tolerable-failed-checkpoints": "3",
        "execution.checkpointing.unaligned.enabled": "true",
        "execution.checkpointing.aligned-checkpoint-timeout": "2000",
        "execution.checkpointing.externalized-checkpoint-retention": "retain-on-cancellation",
        "execution.checkpointing.dir": "file:///tmp/checkpoints",
        "execution.checkpointing.interval": "100",
    }


def test_getters_read_what_was_set(env: StreamExecutionEnvironment) -> None:
    config = env.get_checkpoint_config()
    config.set_checkpoint_timeout(Duration.of_seconds(30))
    config.set_min_pause_between_checkpoints(7)
    config.set_max_concurrent_checkpoints(4)
    config.set_tolerable_checkpoint_failure_number(1)
    config.set_alignment_timeout(Duration.of_millis(20))
    config.enable_externalized_checkpoints(ExternalizedCheckpointCleanup.DELETE_ON_CANCELLATION)
    assert config.get_checkpoint_timeout() == 30_000
    assert config.get_min_pause_between_checkpoints() == 7
    assert config.get_max_concurrent_checkpoints() == 4
    assert config.get_tolerable_checkpoint_failure_number() == 1
    assert config.get_aligned_checkpoint_timeout() == Duration.of_millis(20)
    assert config.get_alignment_timeout() == Duration.of_millis(20)
    assert config.get_externalized_checkpoint_cleanup() is (
        ExternalizedCheckpointRetention.DELETE_ON_CANCELLATION)
    assert config.is_externalized_checkpoints_enabled()
    config.disable_unaligned_checkpoints()
    assert not config.is_unaligned_checkpoints_enabled()


def test_fail_on_checkpointing_errors_maps_to_tolerable_failures(
        env: StreamExecutionEnvironment) -> None:
    config = env.get_checkpoint_config()
    assert config.is_fail_on_checkpointing_errors()
    config.set_fail_on_checkpointing_errors(False)
    assert config.get_tolerable_checkpoint_failure_number() == 2**31 - 1
    assert not config.is_fail_on_checkpointing_errors()


@pytest.mark.parametrize(("setter", "value", "setting"), [
    ("set_checkpoint_timeout", 0, "checkpoint timeout"),
    ("set_min_pause_between_checkpoints", -1, "min pause"),
    ("set_max_concurrent_checkpoints", 0, "max concurrent"),
    ("set_tolerable_checkpoint_failure_number", -1, "tolerable"),
    ("set_aligned_checkpoint_timeout", -5, "aligned checkpoint timeout"),
    ("set_checkpoint_timeout", "10s", "checkpoint timeout"),
    ("set_max_concurrent_checkpoints", True, "max concurrent"),
    ("set_checkpointing_mode", "exactly_once", "checkpointing mode"),
    ("set_externalized_checkpoint_retention", "retain", "externalized"),
    ("set_checkpoint_storage_dir", "", "checkpoint storage dir"),
])
def test_out_of_bounds_values_are_rejected_naming_the_setting(
        env: StreamExecutionEnvironment, setter: str, value: object, setting: str) -> None:
    with pytest.raises(InvalidCheckpointSettingError, match=setting):
        getattr(env.get_checkpoint_config(), setter)(value)
    assert keys(env) == {}


def test_checkpoint_storage_objects(env: StreamExecutionEnvironment) -> None:
    config = env.get_checkpoint_config()
    assert config.get_checkpoint_storage() is None
    config.set_checkpoint_storage(FileSystemCheckpointStorage("s3://bucket/cp"))
    assert config.get_checkpoint_storage_dir() == "s3://bucket/cp"
    assert config.get_checkpoint_storage() == FileSystemCheckpointStorage("s3://bucket/cp")
    with pytest.raises(InvalidCheckpointSettingError):
        config.set_checkpoint_storage(object())
    with pytest.raises(NotImplementedError, match="JobManagerCheckpointStorage"):
        JobManagerCheckpointStorage()


def test_the_config_is_a_view_over_the_configuration() -> None:
    configuration = Configuration({"execution.checkpointing.timeout": "5 s"})
    config = CheckpointConfig(configuration)
    assert config.get_checkpoint_timeout() == 5000
    configuration.set_string("execution.checkpointing.interval", "1 min")
    assert config.get_checkpoint_interval() == 60_000


def test_forced_unaligned_checkpoints_are_not_supported(env: StreamExecutionEnvironment) -> None:
    with pytest.raises(NotImplementedError, match="issue #3"):
        env.get_checkpoint_config().set_force_unaligned_checkpoints(True)
