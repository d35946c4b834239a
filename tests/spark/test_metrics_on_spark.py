"""Metrics on embedded Spark (issue 15): a job with a deliberately slow sink, TaskManagers as
Spark tasks in their own processes. While it runs, REST reports backpressure HIGH on the
vertex before the sink and OK at the sink, and numRecordsOut grows; the Prometheus reporter's
port exposes the user counter registered in ``open()`` with Flink's labels (parsed with
prometheus-client's parser); when the job has finished, the counter's value is exactly the
number of records, and so are the operator-level counts. Waits are bounded polls for a
value."""

from __future__ import annotations

import json
import sys
import time
import urllib.request

import cloudpickle
import pytest
from prometheus_client.parser import text_string_to_metric_families

from flintlock.common.config import Configuration
from flintlock.datastream import MapFunction, StreamExecutionEnvironment
from flintlock.datastream.connectors import Sink

pytestmark = [pytest.mark.spark, pytest.mark.slow]
cloudpickle.register_pickle_by_value(sys.modules[__name__])

N = 30_000  # about 10 s behind the slow sink: time to look at the running job
PAYLOAD = "x" * 2048  # 60 MiB in all: more than the network buffers between the two hold


class Counting(MapFunction):
    def open(self, runtime_context):
        self.seen = runtime_context.get_metrics_group().add_group("app", "demo").counter("seen")

    def map(self, value):
        self.seen.inc()
        return value, PAYLOAD


class SlowSink(Sink):
    """A sink whose writer takes 0.3 ms a record (and keeps nothing)."""

    def create_writer(self, subtask_index, parallelism):
        return _SlowWriter()


class _SlowWriter:
    def restore(self, state):
        pass

    def write(self, records):
        time.sleep(0.0003 * len(records))

    def snapshot_state(self, checkpoint_id):
        return []

    def commit(self, checkpoint_id):
        pass

    def end_input(self):
        pass

    def close(self):
        pass


def _get(client, path):
    endpoint = client.rest_endpoint
    request = urllib.request.Request(endpoint.url + path,
                                     headers={"Authorization": f"Bearer {endpoint.token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def _poll(read, ready, what, bound_s=120.0):
    deadline = time.monotonic() + bound_s
    seen = []
    while time.monotonic() < deadline:
        try:
            value = read()
        except OSError as error:  # the job ended and took its endpoint with it
            raise AssertionError(f"{what}: {error}; seen before: {seen[-20:]!r}") from error
        if ready(value):
            return value
        seen.append(value)
        time.sleep(0.1)
    raise AssertionError(f"{what} within {bound_s} s; seen: {seen[-20:]!r}")


def test_backpressure_throughput_and_a_user_counter_on_spark(tmp_path):
    config = (Configuration()
              .set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
              .set_string("restart-strategy.type", "none")
              .set_string("rest.port", "0")
              .set_string("heartbeat.interval", "200 ms")
              .set_string("metrics.reporter.prom.factory.class",
                          "org.apache.flink.metrics.prometheus.PrometheusReporterFactory")
              .set_string("metrics.reporter.prom.port", "0"))
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(1)
    env.from_collection(list(range(N))).map(Counting()).name("Counting") \
        .rebalance().sink_to(SlowSink()).name("Slow sink")
    client = env.execute_async("metrics on spark")
    assert client.jm.wait_until_running(180)
    job = client.get_job_id()
    vertices = {v["name"]: v["id"] for v in _get(client, f"/jobs/{job}")["vertices"]}
    (counting,) = [v for name, v in vertices.items() if "Counting" in name]
    (slow,) = [v for name, v in vertices.items() if "Slow" in name]

    def levels():
        return [_get(client, f"/jobs/{job}/vertices/{vertex}/backpressure").get(
            "backpressureLevel") for vertex in (counting, slow)]

    _poll(levels, lambda both: both == ["high", "ok"],
          "backpressure HIGH before the slow sink and OK at it")

    def records_out():
        (entry,) = _get(client, f"/jobs/{job}/vertices/{counting}/subtasks/metrics"
                                "?get=numRecordsOut&agg=sum")
        return entry["sum"]

    first = _poll(records_out, lambda n: n > 0, "records out before the slow sink")
    _poll(records_out, lambda n: n > first, "numRecordsOut growing")

    host, port = client.rest_endpoint.reporter.address
    with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=10) as response:
        families = {f.name: f for f in text_string_to_metric_families(response.read().decode())}
    (sample,) = families["flink_taskmanager_job_task_operator_app_seen"].samples
    assert 0 < sample.value <= N
    assert sample.labels["app"] == "demo" and sample.labels["operator_name"] == "Counting"
    assert sample.labels["job_id"] == job and sample.labels["job_name"] == "metrics on spark"
    assert sample.labels["subtask_index"] == "0" and sample.labels["task_id"] == counting

    assert client.join(300)
    assert client.jm.get_status().name == "FINISHED"
    reports = {t.vertex_id: t.metrics for t in client.jm.describe().tasks}
    assert reports[counting].value("Counting.app.demo.seen") == N
    assert reports[counting].value("numRecordsOut") == N
    assert reports[counting].value("Counting.numRecordsIn") == N  # operator level
    assert reports[counting].value("Counting.numRecordsOut") == N
    assert reports[slow].value("numRecordsIn") == N
    assert reports[slow].value("Slow sink.numRecordsIn") == N
