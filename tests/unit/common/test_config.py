import pickle

import pytest

from flintlock.common import errors
from flintlock.common.config import (
    ConfigOption,
    Configuration,
    OptionType,
    all_options,
    parse_duration_ms,
    parse_memory_bytes,
)
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
