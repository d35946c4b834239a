import pickle

import pytest

from flintlock.common import errors
from flintlock.common.config import Configuration
from flintlock.common.config_option import ConfigOption, OptionType, parse_duration_ms
from flintlock.common.config_units import parse_memory_bytes
from flintlock.common.option_lookup import all_options
from flintlock.common.options import checkpointing, execution, network


def test_defaults_come_from_the_option():
    config = Configuration()
    assert config.get(network.SEGMENT_SIZE) == 32 * 1024
    assert config.get(execution.BUFFER_TIMEOUT) == 100
    assert config.get_integer("taskmanager.network.memory.buffers-per-channel") == 2


def test_pyflink_setters_and_getters_round_trip():
    config = Configuration()
    assert config.set_string("execution.checkpointing.mode", "AT_LEAST_ONCE") is config
    config.set_integer("parallelism.default", 4).set_boolean(
        "execution.checkpointing.unaligned.enabled", True
    )
    assert config.get_string("execution.checkpointing.mode") == "AT_LEAST_ONCE"
    assert config.get(checkpointing.MODE) == "at-least-once"
    assert config.get_integer("parallelism.default") == 4
    assert config.get_boolean("execution.checkpointing.unaligned.enabled") is True
    assert config.to_dict() == {
        "execution.checkpointing.mode": "AT_LEAST_ONCE",
        "parallelism.default": "4",
        "execution.checkpointing.unaligned.enabled": "true",
    }
    assert config.keys_set() == set(config.to_dict())
    assert config.contains_key("parallelism.default")
    assert config.remove_config("parallelism.default")
    assert not config.contains_key("parallelism.default")


def test_caller_default_wins_over_option_default_when_unset():
    assert Configuration().get_integer("parallelism.default", 7) == 7


def test_unknown_key_names_the_nearest_valid_key():
    with pytest.raises(errors.UnknownConfigKeyError) as info:
        Configuration().set_string("execution.checkpointing.intervall", "1 s")
    assert "execution.checkpointing.intervall" in str(info.value)
    assert "execution.checkpointing.interval" in str(info.value)


def test_bad_value_names_key_and_expected_type():
    with pytest.raises(errors.InvalidConfigValueError) as info:
        Configuration().set_string("parallelism.default", "lots")
    assert "parallelism.default" in str(info.value) and "int" in str(info.value)


def test_bad_enum_value_lists_allowed_values():
    with pytest.raises(errors.InvalidConfigValueError) as info:
        Configuration().set_string("state.backend.type", "redis")
    assert "hashmap" in str(info.value) and "state.backend.type" in str(info.value)


def test_minimum_is_enforced():
    with pytest.raises(errors.InvalidConfigValueError):
        Configuration().set_integer("parallelism.default", 0)


def test_spark_keys_pass_through():
    config = Configuration().set_string("spark.executor.memory", "2g")
    assert config.get_string("spark.executor.memory") == "2g"


def test_durations_and_memory_sizes_parse_with_units():
    assert parse_duration_ms("100 ms") == 100
    assert parse_duration_ms("10 s") == 10_000
    assert parse_duration_ms("1 min") == 60_000
    assert parse_duration_ms(250) == 250
    assert parse_duration_ms("-1") == -1
    assert parse_memory_bytes("32kb") == 32 * 1024
    assert parse_memory_bytes("64 mb") == 64 << 20
    assert parse_memory_bytes(4096) == 4096
    with pytest.raises(ValueError):
        parse_duration_ms("10 fortnights")


def test_yaml_file_nested_and_flat_keys(tmp_path, monkeypatch):
    (tmp_path / "flintlock-conf.yaml").write_text(
        "execution:\n  checkpointing:\n    interval: 500 ms\n"
        "taskmanager.memory.segment-size: 64kb\n"
    )
    monkeypatch.setenv("FLINTLOCK_CONF_DIR", str(tmp_path))
    config = Configuration.load()
    assert config.get(checkpointing.INTERVAL) == 500
    assert config.get(network.SEGMENT_SIZE) == 64 * 1024
    code = config.merged({"execution.checkpointing.interval": "2 s"})
    assert code.get(checkpointing.INTERVAL) == 2000
    assert config.get(checkpointing.INTERVAL) == 500


def test_yaml_file_with_unknown_key_fails(tmp_path):
    path = tmp_path / "flintlock-conf.yaml"
    path.write_text("taskmanager.memory.segment-sise: 64kb\n")
    with pytest.raises(errors.UnknownConfigKeyError) as info:
        Configuration.from_yaml_file(path)
    assert "taskmanager.memory.segment-size" in str(info.value)


def test_yaml_file_not_a_map_fails(tmp_path):
    path = tmp_path / "flintlock-conf.yaml"
    path.write_text("- a\n- b\n")
    with pytest.raises(errors.ConfigurationError):
        Configuration.from_yaml_file(path)


def test_missing_file_gives_empty_configuration(tmp_path):
    assert Configuration.load(tmp_path).to_dict() == {}


def test_errors_survive_pickling():
    err = errors.UnknownConfigKeyError("a.b", ("a.c",))
    back = pickle.loads(pickle.dumps(err))
    assert str(back) == str(err) and back.suggestions == ("a.c",)
    bad = errors.InvalidConfigValueError("k", "v", "an int")
    assert str(pickle.loads(pickle.dumps(bad))) == str(bad)


def test_defining_a_key_twice_differently_fails():
    ConfigOption("flintlock.test.same", OptionType.INT, 1, "x")
    ConfigOption("flintlock.test.same", OptionType.INT, 1, "x")
    with pytest.raises(errors.ConfigurationError):
        ConfigOption("flintlock.test.same", OptionType.INT, 2, "x")


def test_every_option_default_parses_as_its_type():
    for option in all_options().values():
        if option.default is not None:
            assert option.parse(option.default) == option.default, option.key


def test_connect_timeout_is_read_in_seconds_as_flink_reads_it():
    option = network.CONNECT_TIMEOUT
    assert Configuration().get(option) == 120
    config = Configuration().set_string(option.key, "120")
    assert config.get(option) == 120 and config.get_integer(option.key) == 120
    assert Configuration().set_integer(option.key, 30).get(option) == 30
    assert Configuration().set_string(option.key, "2 min").get(option) == 120
    assert Configuration().set_string(option.key, "5000 ms").get(option) == 5
    for bad in ("1500 ms", "0.5", "0"):
        with pytest.raises(errors.InvalidConfigValueError, match="connectTimeoutSec"):
            Configuration().set_string(option.key, bad)


def test_millisecond_options_keep_bare_numbers_in_milliseconds():
    assert Configuration().set_string("heartbeat.timeout", "500").get_integer(
        "heartbeat.timeout") == 500
    assert Configuration().set_string("taskmanager.network.request-backoff.max", "2 s").get(
        network.REQUEST_BACKOFF_MAX) == 2000


def test_a_fractional_duration_names_key_value_and_accepted_forms():
    with pytest.raises(errors.InvalidConfigValueError) as info:
        Configuration().set_string("execution.checkpointing.interval", "0.4")
    text = str(info.value)
    assert "execution.checkpointing.interval" in text and "'0.4'" in text
    assert "whole number" in text and "fraction" in text and "bare number is ms" in text
    assert not isinstance(info.value, errors.ConfigValueOutOfRangeError)


@pytest.mark.parametrize(("key", "largest", "too_large"), [
    ("taskmanager.memory.segment-size", "4 mb", "4097 kb"),
    ("taskmanager.memory.network.max", "4 gb", "4097 mb"),
    ("taskmanager.network.memory.buffers-per-channel", "1048576", "1048577"),
    ("taskmanager.network.memory.floating-buffers-per-gate", "1048576", "1048577"),
    ("taskmanager.network.memory.max-buffers-per-channel", "1048576", "1048577"),
    ("flintlock.network.max-frame-size", "64 mb", "65537 kb"),
    ("flintlock.network.write-buffer.high-water-mark", "256 mb", "257 mb"),
    ("flintlock.network.write-buffer.low-water-mark", "256 mb", "1 gb"),
    ("state.storage.fs.memory-threshold", "1 mb", "1025 kb"),
    ("pipeline.max-parallelism", "32768", "32769"),
    ("parallelism.default", "32768", "32769"),
    ("rest.port", "65535", "65536"),
    ("jobmanager.rpc.port", "65535", "65536"),
    ("taskmanager.data.port", "65535", "65536"),
    ("taskmanager.network.netty.client.connectTimeoutSec", "2147483647", "2147483648"),
    ("taskmanager.numberOfTaskSlots", "2147483647", "2147483648"),
    ("restart-strategy.exponential-delay.jitter-factor", "1.0", "1.01"),
])
def test_upper_bounds_refuse_larger_values_with_a_typed_error(key, largest, too_large):
    Configuration().set_string(key, largest)
    with pytest.raises(errors.ConfigValueOutOfRangeError) as info:
        Configuration().set_string(key, too_large)
    text = str(info.value)
    assert key in text and repr(too_large) in text and ("at most" in text or "between" in text)


def test_a_bound_is_written_in_the_options_unit():
    with pytest.raises(errors.ConfigValueOutOfRangeError) as info:
        Configuration().set_string("taskmanager.memory.segment-size", "1 gb")
    assert "between 4 kb and 4 mb" in str(info.value)
    with pytest.raises(errors.ConfigValueOutOfRangeError) as info:
        Configuration().set_string("heartbeat.interval", "0")
    assert "at least 1 ms" in str(info.value)


def test_every_option_default_lies_within_its_bounds():
    for option in all_options().values():
        if isinstance(option.default, (int, float)) and not isinstance(option.default, bool):
            high = option.upper_bound()
            assert option.minimum is None or option.default >= option.minimum, option.key
            assert high is None or option.default <= high, option.key


def test_flinks_older_key_names_are_read(tmp_path):
    config = Configuration({"state.checkpoints.dir": "/c", "state.savepoints.dir": "/s",
                            "state.checkpoints.num-retained": "3",
                            "execution.checkpointing.unaligned": "true",
                            "execution.checkpointing.alignment-timeout": "5 s",
                            "restart-strategy": "fixed-delay",
                            "pipeline.operator-chaining": "false",
                            "execution.checkpointing.data-inline-threshold": "1 kb"})
    assert config.get(checkpointing.DIR) == "/c"
    assert config.get(checkpointing.SAVEPOINT_DIR) == "/s"
    assert config.get(checkpointing.NUM_RETAINED) == 3
    assert config.get(checkpointing.UNALIGNED) is True
    assert config.get(checkpointing.ALIGNED_TIMEOUT) == 5000
    assert config.get(execution.OPERATOR_CHAINING) is False
    assert config.get_string("restart-strategy.type") == "fixed-delay"
    assert config.get_integer("state.storage.fs.memory-threshold") == 1024


def test_an_error_from_a_file_names_the_file(tmp_path):
    path = tmp_path / "flintlock-conf.yaml"
    path.write_text("execution.checkpointing.interval: 1.5 s\n")
    with pytest.raises(errors.InvalidConfigValueError) as info:
        Configuration.from_yaml_file(path)
    assert str(path) in str(info.value) and "write '1500 ms'" in str(info.value)
    assert isinstance(info.value.__cause__, ValueError)
    path.write_text("taskmanager.memory.segment-size: 1 gb\n")
    with pytest.raises(errors.ConfigValueOutOfRangeError, match=r"flintlock-conf\.yaml"):
        Configuration.from_yaml_file(path)


def test_errors_with_a_source_survive_pickling():
    unknown = errors.UnknownConfigKeyError("a.b", ("a.c",)).in_source("/etc/f.yaml")
    back = pickle.loads(pickle.dumps(unknown))
    assert str(back) == str(unknown) and back.source == "/etc/f.yaml"
    bound = errors.ConfigValueOutOfRangeError("k", "9", "an int at most 8").in_source("/x")
    back_bound = pickle.loads(pickle.dumps(bound))
    assert type(back_bound) is errors.ConfigValueOutOfRangeError
    assert str(back_bound) == str(bound) and "/x" in str(bound)
