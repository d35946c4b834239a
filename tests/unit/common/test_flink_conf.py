"""A Flink installation's configuration ($FLINK_CONF_DIR) read below flintlock's own."""

import logging

import pytest

from flintlock.common import errors
from flintlock.common.config import Configuration
from flintlock.common.flink_conf import is_flink_key, parse_legacy_flink_conf
from flintlock.common.options import checkpointing, cluster, execution, metrics, network, state

# Flink 1.19's shipped conf/config.yaml, plus what a team adds for its jobs.
FLINK_CONFIG_YAML = """\
env:
  java:
    opts:
      all: --add-exports=java.base/sun.net.util=ALL-UNNAMED
jobmanager:
  bind-host: localhost
  rpc:
    address: localhost
    port: 6123
  memory:
    process:
      size: 1600m
  execution:
    failover-strategy: region
taskmanager:
  bind-host: localhost
  host: localhost
  numberOfTaskSlots: 2
  memory:
    process:
      size: 1728m
    segment-size: 64 kb
parallelism:
  default: 4
rest:
  address: localhost
  bind-address: localhost
execution:
  checkpointing:
    interval: 3 min
    mode: AT_LEAST_ONCE
    snapshot-compression: true
state:
  backend:
    type: rocksdb
  checkpoints:
    dir: file:///var/flink/checkpoints
metrics.reporter.prom.factory.class: org.apache.flink.metrics.prometheus.PrometheusReporterFactory
metrics.reporter.prom.port: 9250-9260
high-availability:
  type: zookeeper
  zookeeper:
    quorum: zk1:2181,zk2:2181
taskmanager.network.netty.client.connectTimeoutSec: 30
pipeline.object-reuse: true
"""

IGNORED = [
    "env.java.opts.all", "jobmanager.memory.process.size",
    "jobmanager.execution.failover-strategy", "taskmanager.bind-host",
    "taskmanager.memory.process.size", "rest.address",
    "execution.checkpointing.snapshot-compression",
    "high-availability.type", "high-availability.zookeeper.quorum", "pipeline.object-reuse",
]
NOT_TAKEN = ["jobmanager.bind-host", "jobmanager.rpc.address", "jobmanager.rpc.port",
             "taskmanager.host", "rest.bind-address"]


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    """(Flink's conf dir, flintlock's conf dir), both empty and pointed at by the env."""
    flink, own = tmp_path / "flink-conf", tmp_path / "flintlock-conf"
    flink.mkdir()
    own.mkdir()
    monkeypatch.setenv("FLINK_CONF_DIR", str(flink))
    monkeypatch.setenv("FLINTLOCK_CONF_DIR", str(own))
    return flink, own


def _warnings(caplog):
    return [r for r in caplog.records if r.levelno == logging.WARNING]


def test_a_realistic_flink_config_yaml_loads_with_one_warning(dirs, caplog):
    flink, _ = dirs
    (flink / "config.yaml").write_text(FLINK_CONFIG_YAML)
    with caplog.at_level(logging.WARNING):
        config = Configuration.load()
    assert config.get(execution.PARALLELISM) == 4
    assert config.get(checkpointing.INTERVAL) == 180_000
    assert config.get(checkpointing.MODE) == "at-least-once"
    assert config.get(checkpointing.DIR) == "file:///var/flink/checkpoints"
    assert config.get(state.BACKEND) == "rocksdb"
    assert config.get(cluster.NUM_TASK_SLOTS) == 2
    assert config.get(network.SEGMENT_SIZE) == 64 * 1024
    assert config.get(network.CONNECT_TIMEOUT) == 30
    # Where Flink's processes listen stays flintlock's choice.
    assert config.get(cluster.JM_ADDRESS) is None and config.get(cluster.JM_PORT) == 0
    assert config.get(network.BIND_HOST) == "127.0.0.1"
    # Flink's Prometheus reporter keys are taken (issue 15)
    assert config.get(metrics.PROM_FACTORY_CLASS) == metrics.PROMETHEUS_FACTORY
    assert config.get(metrics.PROM_PORT) == "9250-9260"
    assert not any(config.contains_key(key) for key in IGNORED + NOT_TAKEN)
    [warning] = _warnings(caplog)
    message = warning.getMessage()
    assert str(flink / "config.yaml") in message
    assert all(key in message for key in IGNORED + NOT_TAKEN)
    assert "taskmanager.memory.segment-size" not in message


def test_flinks_classloader_keys_are_taken_not_ignored(dirs, caplog):
    flink, _ = dirs
    (flink / "config.yaml").write_text(
        "classloader:\n"
        "  resolve-order: parent-first\n"
        "  check-leaked-classloader: false\n"
        "  parent-first-patterns:\n"
        "    default: flintlock.;pyspark.;org.acme\n"
        "    additional: com.example.;org.other.\n")
    with caplog.at_level(logging.WARNING):
        config = Configuration.load()
    assert not _warnings(caplog)
    assert config.get(execution.CLASSLOADER_RESOLVE_ORDER) == "parent-first"
    assert config.get(execution.CLASSLOADER_CHECK_LEAKED) is False
    assert config.get(execution.CLASSLOADER_PARENT_FIRST_PATTERNS_DEFAULT) == [
        "flintlock.", "pyspark.", "org.acme"]
    assert config.get(execution.CLASSLOADER_PARENT_FIRST_PATTERNS) == [
        "com.example.", "org.other."]


def test_flintlock_file_and_code_win_over_the_flink_file(dirs):
    flink, own = dirs
    (flink / "config.yaml").write_text(
        "parallelism.default: 4\nexecution.checkpointing.interval: 10 s\n"
        "pipeline.max-parallelism: 256\n")
    (own / "flintlock-conf.yaml").write_text("parallelism.default: 2\n")
    config = Configuration.load()
    assert config.get(execution.PARALLELISM) == 2
    assert config.get(execution.MAX_PARALLELISM) == 256
    assert config.merged({"execution.checkpointing.interval": "1 s"}).get(
        checkpointing.INTERVAL) == 1000


def test_legacy_flink_conf_yaml_is_read_as_flink_reads_it(dirs, caplog):
    flink, _ = dirs
    (flink / "flink-conf.yaml").write_text(
        "# Flink 1.18\n"
        "jobmanager.rpc.address: localhost\n"
        "taskmanager.memory.process.size: 1728m\n"
        "parallelism.default: 3   # trailing comment\n"
        "execution.checkpointing.interval: 30s\n"
        "state.checkpoints.num-retained: 5\n"
        "pipeline.global-job-parameters: region:eu,tier:gold\n"
        "env.java.opts: -Dkey=a:b\n"
        "malformed-line-without-a-colon\n"
        "\n")
    with caplog.at_level(logging.WARNING):
        config = Configuration.load()
    assert config.get(execution.PARALLELISM) == 3
    assert config.get(checkpointing.INTERVAL) == 30_000
    assert config.get(checkpointing.NUM_RETAINED) == 5
    assert config.get(execution.GLOBAL_JOB_PARAMETERS) == {"region": "eu", "tier": "gold"}
    [warning] = _warnings(caplog)
    message = warning.getMessage()
    assert "taskmanager.memory.process.size" in message and "env.java.opts" in message
    assert "jobmanager.rpc.address" in message and "skipped, as Flink skips them: 9" in message


def test_config_yaml_wins_and_flink_conf_yaml_is_not_read(dirs):
    flink, _ = dirs
    (flink / "config.yaml").write_text("parallelism.default: 4\n")
    (flink / "flink-conf.yaml").write_text("parallelism.default: 8\nno.such.key: 1\n")
    assert Configuration.load().get(execution.PARALLELISM) == 4


def test_an_unknown_key_in_a_flink_file_is_an_error_with_a_suggestion(dirs):
    flink, _ = dirs
    path = flink / "config.yaml"
    path.write_text("taskmanager.memory.process.size: 1728m\nparalelism.default: 4\n")
    with pytest.raises(errors.UnknownConfigKeyError) as info:
        Configuration.load()
    assert info.value.key == "paralelism.default" and info.value.source == str(path)
    assert "did you mean 'parallelism.default'" in str(info.value) and str(path) in str(info.value)


def test_a_typo_of_a_flink_key_flintlock_ignores_is_still_an_error(dirs):
    flink, _ = dirs
    (flink / "config.yaml").write_text("state.backend.local-recovry: true\n")
    with pytest.raises(errors.UnknownConfigKeyError, match=r"state\.backend\.local-recovery"):
        Configuration.load()


def test_a_bad_value_in_a_flink_file_names_the_key_and_the_file(dirs):
    flink, _ = dirs
    path = flink / "config.yaml"
    path.write_text("execution:\n  checkpointing:\n    interval: 0.4\n")
    with pytest.raises(errors.InvalidConfigValueError) as info:
        Configuration.load()
    text = str(info.value)
    assert "execution.checkpointing.interval" in text and str(path) in text and "0.4" in text


def test_no_warning_when_every_key_is_taken(dirs, caplog):
    flink, _ = dirs
    (flink / "config.yaml").write_text("parallelism:\n  default: 2\n")
    with caplog.at_level(logging.WARNING):
        assert Configuration.load().get(execution.PARALLELISM) == 2
    assert _warnings(caplog) == []


def test_without_flink_conf_dir_nothing_is_read(tmp_path, monkeypatch):
    monkeypatch.delenv("FLINK_CONF_DIR", raising=False)
    assert Configuration.load(tmp_path).to_dict() == {}
    assert Configuration.load(tmp_path, flink_conf_dir=tmp_path).to_dict() == {}


def test_a_flink_conf_dir_without_a_file_is_reported(dirs, caplog):
    flink, _ = dirs
    with caplog.at_level(logging.WARNING):
        assert Configuration.load().to_dict() == {}
    [warning] = _warnings(caplog)
    assert str(flink) in warning.getMessage() and "config.yaml" in warning.getMessage()


def test_flink_keys_are_unknown_outside_a_flink_file(tmp_path):
    with pytest.raises(errors.UnknownConfigKeyError):
        Configuration().set_string("taskmanager.memory.process.size", "1728m")
    path = tmp_path / "flintlock-conf.yaml"
    path.write_text("taskmanager.memory.process.size: 1728m\n")
    with pytest.raises(errors.UnknownConfigKeyError, match=r"flintlock-conf\.yaml"):
        Configuration.from_yaml_file(path)


def test_which_keys_count_as_flinks():
    assert is_flink_key("taskmanager.memory.process.size")
    assert is_flink_key("high-availability") and is_flink_key("high-availability.type")
    assert is_flink_key("pipeline.object-reuse")
    assert not is_flink_key("high-availabilityx")
    assert not is_flink_key("paralelism.default")
    assert not is_flink_key("classloader.check-leaked-classloader")  # flintlock's own now


def test_legacy_lines_split_at_the_first_colon_space():
    items, skipped = parse_legacy_flink_conf(
        "a.b: x: y\n  c.d :  v # comment\nnovalue: \n: nokey\nurl: http://h:1/p\n")
    assert items == [("a.b", "x: y"), ("c.d", "v"), ("url", "http://h:1/p")]
    assert skipped == (3, 4)
