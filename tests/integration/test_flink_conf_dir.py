"""A job started with a Flink installation's config.yaml in $FLINK_CONF_DIR (TaskManagers as
threads of this process, real RPC and TCP): the keys flintlock has take effect, Flink's own
process addresses do not, and the rest is named in one warning."""

import logging

from flintlock.datastream import MapFunction, StreamExecutionEnvironment
from flintlock.testing.environments import local_configuration

CONFIG_YAML = """\
jobmanager:
  bind-host: 0.0.0.0
  rpc:
    address: flink-jobmanager.example
    port: 6123
  memory:
    process:
      size: 1600m
taskmanager:
  host: flink-taskmanager.example
  numberOfTaskSlots: 1
  memory:
    process:
      size: 1728m
  network:
    netty:
      client:
        connectTimeoutSec: 30
parallelism:
  default: 2
rest:
  port: 8081
execution:
  checkpointing:
    interval: 200 ms
metrics.reporter.prom.factory.class: org.apache.flink.metrics.prometheus.PrometheusReporterFactory
"""


class Where(MapFunction):
    def open(self, runtime_context):
        self.where = (runtime_context.get_index_of_this_subtask(),
                      runtime_context.get_number_of_parallel_subtasks())

    def map(self, value):
        return (value, *self.where)


def test_a_job_runs_with_a_flink_config_yaml(executor, tmp_path, monkeypatch, caplog):
    flink_dir = tmp_path / "flink"
    flink_dir.mkdir()
    (flink_dir / "config.yaml").write_text(CONFIG_YAML)
    monkeypatch.setenv("FLINK_CONF_DIR", str(flink_dir))
    monkeypatch.setenv("FLINTLOCK_CONF_DIR", str(tmp_path))
    with caplog.at_level(logging.WARNING, logger="flintlock.common.config"):
        env = StreamExecutionEnvironment.get_execution_environment(
            local_configuration(tmp_path))
    assert env.get_parallelism() == 2
    assert env.get_checkpoint_config().get_checkpoint_interval() == 200
    out = list(env.from_collection(list(range(20))).rebalance().map(Where())
               .execute_and_collect())
    assert sorted(value for value, _, _ in out) == list(range(20))
    assert {(index, parallelism) for _, index, parallelism in out} == {(0, 2), (1, 2)}
    [warning] = [r for r in caplog.records if r.name == "flintlock.common.config"]
    message = warning.getMessage()
    for key in ("jobmanager.memory.process.size", "taskmanager.memory.process.size",
                "jobmanager.rpc.address", "jobmanager.rpc.port", "taskmanager.host",
                "rest.port"):
        assert key in message
    # flintlock has a Prometheus reporter now (issue 15): the key is taken, not ignored
    assert "metrics.reporter.prom.factory.class" not in message
