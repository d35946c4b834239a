"""Metrics over REST and Prometheus for running jobs, TaskManagers as threads: backpressure
HIGH before a deliberately slow operator and OK at it, numRecordsOut growing, and a user
counter registered in ``open()`` read back from the REST API, from ``GET /metrics`` and from
the Prometheus reporter's own port, both parsed with prometheus-client's parser; the
exception history of a job that failed twice and runs in its third attempt. Waits are
bounded polls for a value, never timed assertions."""

import json
import os
import time
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from flintlock.common import WatermarkStrategy
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.connectors.number_seq import NumberSequenceSource
from flintlock.datastream.functions import MapFunction
from flintlock.testing.environments import local_configuration
from flintlock.testing.gates import FileGate, HoldAt
from flintlock.testing.waiting import wait_for

N = 3000
WAIT_S = 60.0


class CountingMap(MapFunction):
    """Counts its records in a user counter; the last one waits until ``gate`` opens."""

    def __init__(self, gate):
        self.hold = HoldAt(gate, N - 1)

    def open(self, runtime_context):
        self.seen = runtime_context.get_metrics_group().add_group("app", "demo").counter("seen")

    def map(self, value):
        self.seen.inc()
        return self.hold(value)


class Slow(MapFunction):
    """Takes ``seconds`` a record until ``gate`` opens (the test is done)."""

    def __init__(self, gate, seconds):
        self.gate = gate
        self.seconds = seconds

    def map(self, value):
        if not self.gate.is_open():
            time.sleep(self.seconds)  # the slow operator whose backpressure is under test
        return value


def _environment(tmp_path, **options):
    config = local_configuration(tmp_path, options={
        "rest.port": "0", "heartbeat.interval": "100 ms", **options})
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(1)
    return env


def _get(client, path, raw=False):
    endpoint = client.rest_endpoint
    request = urllib.request.Request(endpoint.url + path,
                                     headers={"Authorization": f"Bearer {endpoint.token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        body = response.read()
    return body.decode() if raw else json.loads(body)


def _vertex_ids(client):
    assert client.jm.wait_until_running(60)
    job = _get(client, f"/jobs/{client.get_job_id()}")
    return {vertex["name"]: vertex["id"] for vertex in job["vertices"]}


def test_backpressure_high_before_a_slow_operator_and_ok_at_it(executor, tmp_path):
    env = _environment(tmp_path)
    done = FileGate(tmp_path / "done")
    env.from_collection(list(range(1_000_000))).map(lambda x: x).name("Fast") \
        .rebalance().map(Slow(done, 0.001)).name("Slow").filter(lambda x: False).print()
    client = env.execute_async("backpressure")
    try:
        ids = _vertex_ids(client)
        (fast,) = [v for name, v in ids.items() if "Fast" in name]
        (slow,) = [v for name, v in ids.items() if "Slow" in name]
        job = client.get_job_id()

        def level(vertex):
            return lambda: _get(client, f"/jobs/{job}/vertices/{vertex}/backpressure")

        body = wait_for(level(fast), lambda b: b.get("backpressureLevel") == "high", WAIT_S,
                        "backpressure HIGH on the vertex before the slow one")
        assert body["subtasks"][0]["ratio"] > 0.5
        at_slow = wait_for(level(slow), lambda b: b.get("status") == "ok", WAIT_S,
                           "a level at the slow one")
        assert at_slow["backpressureLevel"] == "ok"
        assert at_slow["subtasks"][0]["busyRatio"] > 0.5

        def records_out():
            (entry,) = _get(client, f"/jobs/{job}/vertices/{fast}/subtasks/metrics"
                                    "?get=numRecordsOut&agg=sum")
            return entry["sum"]

        first = wait_for(records_out, lambda n: n > 0, WAIT_S, "records out of the fast vertex")
        wait_for(records_out, lambda n: n > first, WAIT_S, "numRecordsOut growing")
    finally:
        done.open()
        client.jm.cancel()
        assert client.join(60)


def test_a_user_counter_over_rest_and_prometheus(executor, tmp_path):
    env = _environment(tmp_path, **{
        "metrics.reporter.prom.factory.class":
            "org.apache.flink.metrics.prometheus.PrometheusReporterFactory",
        "metrics.reporter.prom.port": "0"})
    gate = FileGate(tmp_path / "gate")
    env.from_collection(list(range(N))).rebalance().map(CountingMap(gate)).name("Counting") \
        .filter(lambda x: False).print()
    client = env.execute_async("prometheus")
    try:
        job = client.get_job_id()
        (counting,) = [v for name, v in _vertex_ids(client).items() if "Counting" in name]
        metric_id = "0.Counting.app.demo.seen"

        def seen():
            return _get(client, f"/jobs/{job}/vertices/{counting}/metrics?get={metric_id}")

        assert wait_for(seen, lambda b: b == [{"id": metric_id, "value": str(N)}], WAIT_S,
                        f"the counter at {N}")
        # Operator-level counts. The map holds its last batch (the gate), so it has taken in all
        # N records and handed on all but that batch; the chained filter took what it handed.
        listed = {e["id"] for e in _get(client, f"/jobs/{job}/vertices/{counting}/metrics")}
        (into_filter,) = [i for i in listed if i.endswith(".numRecordsIn")
                          and i.count(".") == 2 and "Counting" not in i]
        operator_ids = ["0.Counting.numRecordsIn", "0.Counting.numRecordsOut", into_filter]

        def operator_counts():
            values = _get(client, f"/jobs/{job}/vertices/{counting}/metrics?get="
                                  + ",".join(operator_ids))
            return [int(entry["value"]) for entry in values]

        counted_in, counted_out, _ = wait_for(
            operator_counts, lambda v: len(v) == 3 and v[0] == N and v[1] == v[2], WAIT_S,
            "the map's numRecordsIn at N and its numRecordsOut equal to the filter's input")
        assert 0 < counted_out < N
        config = _get(client, f"/jobs/{job}/config")
        assert config["execution-config"]["job-parallelism"] == 1
        assert config["configuration"]["metrics.reporter.prom.port"] == "0"
        plan = _get(client, f"/jobs/{job}/plan")["plan"]
        assert [len(node["inputs"]) for node in plan["nodes"]] == [0, 1]
        managers = _get(client, "/taskmanagers")["taskmanagers"]
        assert sum(m["slotsNumber"] for m in managers) == 2  # source and Counting subtasks
        assert all(m["pid"] == os.getpid() and m["memory"]["rss"] > 0 for m in managers)
        assert all(m["metrics"]["nettyShuffleMemorySegmentsTotal"] > 0 for m in managers)
        reporter = client.rest_endpoint.reporter
        assert reporter is not None
        host, port = reporter.address
        with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=10) as response:
            scraped = response.read().decode()
        for text in (scraped, _get(client, "/metrics", raw=True)):
            families = {f.name: f for f in text_string_to_metric_families(text)}
            (sample,) = families["flink_taskmanager_job_task_operator_app_seen"].samples
            assert sample.value == N
            assert sample.labels["app"] == "demo"
            assert sample.labels["operator_name"] == "Counting"
            assert sample.labels["job_id"] == job and sample.labels["job_name"] == "prometheus"
            assert sample.labels["subtask_index"] == "0"
            assert "Counting" in sample.labels["task_name"]
            operator_in = families["flink_taskmanager_job_task_operator_numRecordsIn"]
            (counted,) = [s for s in operator_in.samples
                          if s.labels["operator_name"] == "Counting"]
            assert counted.value == counted_in and counted.labels["subtask_index"] == "0"
            rss = families["flink_taskmanager_Status_ProcessTree_Memory_RSS"]
            assert all(s.value > 0 and s.labels["tm_id"] for s in rss.samples)
            source_out = families["flink_taskmanager_job_task_numRecordsOut"]
            assert max(s.value for s in source_out.samples) == N
    finally:
        gate.open()
        assert client.join(60)


class FailingTwice(MapFunction):
    """Fails its first two attempts on their first record; the third holds its last record
    until ``gate`` opens."""

    def __init__(self, gate):
        self.hold = HoldAt(gate, N - 1)

    def open(self, runtime_context):
        self.attempt = runtime_context.get_attempt_number()

    def map(self, value):
        if self.attempt < 2:
            raise ValueError(f"attempt {self.attempt} gives up")
        return self.hold(value)


def test_the_exception_history_spans_restarts(executor, tmp_path):
    env = _environment(tmp_path, **{"restart-strategy.type": "fixed-delay",
                                    "restart-strategy.fixed-delay.attempts": "3",
                                    "restart-strategy.fixed-delay.delay": "10 ms"})
    gate = FileGate(tmp_path / "gate")
    env.from_collection(list(range(N))).map(FailingTwice(gate)).name("Failing").print()
    client = env.execute_async("restarts")
    try:
        job = client.get_job_id()

        def history():
            return _get(client, f"/jobs/{job}/exceptions")

        body = wait_for(history, lambda b: len(b["exceptionHistory"]["entries"]) == 2, WAIT_S,
                        "two failures in the exception history")
        entries = body["exceptionHistory"]["entries"]
        assert [(e["kind"], e["attempt"]) for e in entries] == [
            ("attempt-failed", 1), ("attempt-failed", 0)]
        assert all("ValueError" in e["exceptionName"] + e["stacktrace"] for e in entries)
        assert "attempt 1 gives up" in body["root-exception"]
        assert body["timestamp"] == entries[0]["timestamp"] >= entries[1]["timestamp"]
        details = wait_for(lambda: _get(client, f"/jobs/{job}"),
                           lambda d: d["state"] == "RUNNING" and d["attempt"] == 2, WAIT_S,
                           "the third attempt running")
        assert details["attempt"] == 2
    finally:
        gate.open()
        assert client.join(60)


@pytest.mark.parametrize("unaligned", [False, True], ids=["aligned", "unaligned"])
def test_checkpoints_show_alignment_time_and_persisted_in_flight_data(executor, tmp_path,
                                                                      unaligned):
    """Two source subtasks feed a slow operator through full buffers: an aligned checkpoint waits
    for the second barrier behind the backlog (alignment time), an unaligned one lets it
    overtake and persists the buffers it overtook (in-flight data). Small buffers keep the
    backlog an aligned barrier waits behind to a few seconds."""
    env = _environment(tmp_path, **{"taskmanager.memory.segment-size": "4 kb"})
    env.enable_checkpointing(100)
    if unaligned:
        env.get_checkpoint_config().enable_unaligned_checkpoints()
    done = FileGate(tmp_path / "done")
    env.from_source(NumberSequenceSource(0, 10**9), WatermarkStrategy.no_watermarks(),
                    "numbers").set_parallelism(2) \
        .rebalance().map(Slow(done, 0.0002)).name("Slow").filter(lambda x: False).print()
    client = env.execute_async("checkpoint figures")
    try:
        job = client.get_job_id()
        assert client.jm.wait_until_running(60)
        figure = "persisted_data" if unaligned else "alignment_duration"

        def history():
            return _get(client, f"/jobs/{job}/checkpoints")["history"]

        found = wait_for(history, lambda h: any(c["status"] == "COMPLETED" and c[figure] > 0
                                                for c in h),
                         WAIT_S, f"a completed checkpoint with {figure} above 0")
        completed = [c for c in found if c["status"] == "COMPLETED" and c[figure] > 0]
        assert all(c["num_acknowledged_subtasks"] == c["num_subtasks"] for c in completed)
        summary = _get(client, f"/jobs/{job}/checkpoints")["summary"]
        assert summary["alignment_duration"]["max"] >= 0
    finally:
        done.open()
        client.jm.cancel()
        assert client.join(60)
