"""One fixed Prometheus scrape config reads two jobs in turn (issue 30): each job sets only
``metrics.reporter.prom.port`` to the same port, and a scraper without any token reads the
exposition there, parsed with prometheus-client's parser: Flink's names, HELP texts from
Flink's descriptions, whole-millisecond durations. TaskManagers run as threads; waits are
bounded polls for a value."""

import socket
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.functions import MapFunction
from flintlock.testing.environments import local_configuration
from flintlock.testing.gates import FileGate, HoldAt
from flintlock.testing.waiting import wait_for

N = 200
WAIT_S = 60.0


class Held(MapFunction):
    def __init__(self, gate):
        self.hold = HoldAt(gate, N - 1)

    def map(self, value):
        return self.hold(value)


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _scrape(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
            return {f.name: f for f in text_string_to_metric_families(reply.read().decode())}
    except (urllib.error.URLError, ConnectionError):
        return {}


def _run_and_scrape(tmp_path, port, name):
    config = local_configuration(tmp_path / name, options={
        "rest.port": "0", "heartbeat.interval": "100 ms",
        "metrics.reporter.prom.port": str(port)})
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(1)
    gate = FileGate(tmp_path / f"{name}.gate")
    env.from_collection(list(range(N))).map(Held(gate)).name("Held").print()
    client = env.execute_async(name)
    try:
        def job_named():
            families = _scrape(port)
            uptime = families.get("flink_jobmanager_job_uptime")
            records = families.get("flink_taskmanager_job_task_operator_numRecordsIn")
            if uptime is None or records is None:
                return None
            if [s.labels["job_name"] for s in uptime.samples] != [name]:
                return None
            return families

        families = wait_for(job_named, lambda f: f is not None, WAIT_S,
                            f"job {name!r} on the fixed port {port}")
        assert client.rest_endpoint.reporter.address == ("127.0.0.1", port)
        return families
    finally:
        gate.open()
        assert client.join(60)


def test_a_fixed_scrape_config_reads_two_jobs_in_turn(executor, tmp_path):
    port = _free_port()
    first = _run_and_scrape(tmp_path, port, "first")
    second = _run_and_scrape(tmp_path, port, "second")
    for families, name in ((first, "first"), (second, "second")):
        (uptime,) = families["flink_jobmanager_job_uptime"].samples
        assert uptime.labels["job_name"] == name
        assert uptime.value == int(uptime.value) and uptime.value >= 0
        assert families["flink_jobmanager_job_uptime"].documentation.startswith(
            "The time (in milliseconds) the job has been running")
        records = families["flink_taskmanager_job_task_operator_numRecordsIn"]
        assert records.documentation.startswith(
            "The total number of records this operator/task has received.")
        assert {s.labels["job_name"] for s in records.samples} == {name}
        for family in families.values():
            assert not family.documentation.startswith("flintlock metric")
        for sample in families["flink_taskmanager_job_task_idleTimeMsPerSecond"].samples:
            assert sample.value == int(sample.value)
