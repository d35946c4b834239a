"""The REST API's metric routes, backpressure levels, the route table and the Prometheus
exposition (parsed with prometheus-client's own parser), from fixed metric reports."""

import pytest
from prometheus_client.parser import text_string_to_metric_families

from flintlock.common.job_status import JobStatus
from flintlock.runtime.jobmanager import JobDescription, TaskDescription
from flintlock.runtime.metrics import SubtaskMetricGroups, SubtaskMetrics, TaskIOCounters
from flintlock.runtime.metrics.report import TaskTimeSplit
from flintlock.runtime.rest.api import ROUTES, RestApi, RestRequest
from flintlock.runtime.rest.metrics_views import BackPressureLevel
from flintlock.runtime.rest.routes import Route, RouteTable
from flintlock.runtime.rest.triggers import SavepointTriggers

JOB_ID = "0123456789abcdef0123456789abcdef"
TOKEN = "t0ken"


def _report(subtask, vertex_name, records_out, backpressured_ms, hits=None):
    variables = {"host": "h", "tm_id": "tm-0", "job_id": JOB_ID, "job_name": "word count",
                 "task_id": "v1", "task_name": vertex_name, "subtask_index": str(subtask),
                 "task_attempt_num": "0"}
    groups = SubtaskMetricGroups(task_variables=variables)
    metrics = SubtaskMetrics(groups.registry, tuple(variables.items()), 0.0)
    groups.task.gauge("currentInputWatermark", lambda: 1_700_000_000_123 + subtask)
    if hits is not None:
        groups.operator("op1", "Map").add_group("user", "alice").counter("hits").inc(hits)
        groups.operator("op1", "Map").distribution("sizes").update(4)
    io = TaskIOCounters(records_out // 2, records_out, 10, 20, 0.5, 0.75)
    split = TaskTimeSplit(1000 - backpressured_ms, backpressured_ms, 0)
    return metrics.sample(io, split, now_s=2.0, wall_ms=2000)


class FakeJob:
    job_id = JOB_ID

    def __init__(self):
        self.tasks = (
            TaskDescription("Map", "v1", 0, "RUNNING", _report(0, "Map", 100, 50, hits=3)),
            TaskDescription("Map", "v1", 1, "RUNNING", _report(1, "Map", 300, 700, hits=4)),
            TaskDescription("Sink", "v2", 0, "RUNNING", None),
        )

    def describe(self, timeout_s=10.0):
        return JobDescription(JOB_ID, "word count", "RUNNING", 0, 1_000, self.tasks, None)

    def get_status(self):
        return JobStatus.RUNNING


@pytest.fixture
def api():
    return RestApi(FakeJob(), TOKEN, SavepointTriggers(lambda: "t"), job_name="word count",
                   start_time_ms=1_000, wall_ms=lambda: 5_000)


def get(api, path, **query):
    return api.handle(RestRequest("GET", path, {k: [v] for k, v in query.items()},
                                  f"Bearer {TOKEN}", lambda: b""))


def test_vertex_metrics_list_and_values_with_subtask_prefixes(api):
    path = f"/jobs/{JOB_ID}/vertices/v1/metrics"
    listed = get(api, path).body
    ids = {entry["id"] for entry in listed}
    assert {"0.numRecordsOut", "1.numRecordsOut", "0.Map.user.alice.hits",
            "1.backPressuredTimeMsPerSecond"} <= ids
    values = get(api, path, get="0.numRecordsOut,1.Map.user.alice.hits,1.nope").body
    assert values == [{"id": "0.numRecordsOut", "value": "100"},
                      {"id": "1.Map.user.alice.hits", "value": "4"}]


def test_subtask_aggregates(api):
    path = f"/jobs/{JOB_ID}/vertices/v1/subtasks/metrics"
    assert {"id": "numRecordsOut"} in get(api, path).body
    (entry,) = get(api, path, get="numRecordsOut").body
    assert entry == {"id": "numRecordsOut", "min": 100, "max": 300, "avg": 200.0, "sum": 400}
    (only,) = get(api, path, get="numRecordsOut", agg="sum,max", subtasks="1").body
    assert only == {"id": "numRecordsOut", "sum": 300, "max": 300}
    response = get(api, path, get="numRecordsOut", agg="median")
    assert response.status == 400 and "agg" in response.body["errors"][0]
    assert get(api, path, get="numRecordsOut", subtasks="x").status == 400


def test_backpressure_levels_follow_flinks_thresholds(api):
    body = get(api, f"/jobs/{JOB_ID}/vertices/v1/backpressure").body
    assert body["status"] == "ok" and body["backpressureLevel"] == "high"
    assert body["end-timestamp"] == 5_000
    assert [(s["subtask"], s["backpressureLevel"], s["ratio"]) for s in body["subtasks"]] == [
        (0, "ok", 0.05), (1, "high", 0.7)]
    assert body["subtasks"][1]["busyRatio"] == pytest.approx(0.3)
    # a vertex nothing reported for yet has no level
    assert get(api, f"/jobs/{JOB_ID}/vertices/v2/backpressure").body == {"status": "deprecated"}
    levels = [BackPressureLevel.of(r).value for r in (0.0, 0.1, 0.1001, 0.5, 0.5001, 1.0)]
    assert levels == ["ok", "ok", "low", "low", "high", "high"]


def test_watermarks_and_vertex_io_in_job_details(api):
    body = get(api, f"/jobs/{JOB_ID}/vertices/v1/watermarks").body
    assert body == [{"id": "0.currentInputWatermark", "value": "1700000000123"},
                    {"id": "1.currentInputWatermark", "value": "1700000000124"}]
    vertices = get(api, f"/jobs/{JOB_ID}").body["vertices"]
    (v1,) = [v for v in vertices if v["id"] == "v1"]
    assert v1["metrics"]["write-records"] == 400 and v1["metrics"]["read-records"] == 200
    assert v1["metrics"]["write-records-complete"] is False
    assert "pending-records" not in v1["metrics"]  # no source backlog reported


def test_vertex_io_sums_the_sources_backlog():
    from flintlock.runtime.rest.metrics_views import vertex_io

    def report(pending_records, pending_bytes):
        groups = SubtaskMetricGroups()
        source = groups.operator("src", "Source: lines")
        source.gauge("pendingRecords", lambda: pending_records)
        if pending_bytes is not None:
            source.gauge("pendingBytes", lambda: pending_bytes)
        metrics = SubtaskMetrics(groups.registry, (), 0.0)
        return metrics.sample(TaskIOCounters(0, 0, 0, 0, 0.0, 0.0), None, 1.0, 0)

    tasks = (TaskDescription("Source", "s", 0, "RUNNING", report(10, 300)),
             TaskDescription("Source", "s", 1, "RUNNING", report(5, None)))
    io = vertex_io(tasks)
    assert io["pending-records"] == 15 and io["pending-bytes"] == 300


def test_unknown_vertex_job_and_method(api):
    assert get(api, f"/jobs/{JOB_ID}/vertices/v9/metrics").status == 404
    assert get(api, f"/jobs/{'f' * 32}/vertices/v1/metrics").status == 404
    response = api.handle(RestRequest("POST", f"/jobs/{JOB_ID}/vertices/v1/metrics", {},
                                      f"Bearer {TOKEN}", lambda: b""))
    assert response.status == 405 and ("Allow", "GET") in response.headers
    response = api.handle(RestRequest("DELETE", f"/jobs/{JOB_ID}", {}, f"Bearer {TOKEN}",
                                      lambda: b""))
    assert response.status == 405 and ("Allow", "GET, PATCH") in response.headers


def test_route_table_literals_win_and_duplicates_are_refused():
    table = RouteTable([Route("GET", "/jobs/:jobid", "job"),
                        Route("GET", "/jobs/overview", "overview")])
    assert table.match("GET", "/jobs/overview").handler == "overview"
    match = table.match("GET", "/jobs/abc/")
    assert match.handler == "job" and match.params == {"jobid": "abc"}
    assert table.match("GET", "/jobs/abc/x").allowed == ()
    with pytest.raises(ValueError, match="two routes"):
        RouteTable([Route("GET", "/jobs/:a", 1), Route("GET", "/jobs/:b", 2)])
    assert len(ROUTES.routes) == len({(r.method, r.pattern) for r in ROUTES.routes})


def test_prometheus_exposition_parses_with_flinks_names_and_labels(api):
    response = get(api, "/metrics")
    assert response.status == 200 and response.content_type.startswith("text/plain")
    families = {f.name: f for f in text_string_to_metric_families(response.body.decode())}
    records = families["flink_taskmanager_job_task_numRecordsOut"]
    assert {(s.labels["subtask_index"], s.value) for s in records.samples} == {
        ("0", 100.0), ("1", 300.0)}
    assert records.samples[0].labels["job_name"] == "word count"
    assert records.samples[0].labels["task_name"] == "Map"
    hits = families["flink_taskmanager_job_task_operator_user_hits"]
    assert {(s.labels["user"], s.labels["operator_name"], s.value) for s in hits.samples} == {
        ("alice", "Map", 3.0), ("alice", "Map", 4.0)}
    sizes = families["flink_taskmanager_job_task_operator_sizes"]
    assert sizes.type == "summary"
    assert {s.name: s.value for s in sizes.samples if s.labels["subtask_index"] == "0"} == {
        "flink_taskmanager_job_task_operator_sizes_count": 1.0,
        "flink_taskmanager_job_task_operator_sizes_sum": 4.0}
    assert families["flink_taskmanager_job_task_operator_sizes_max"].samples[0].value == 4.0
    (uptime,) = families["flink_jobmanager_job_uptime"].samples
    assert uptime.value == 4_000 and uptime.labels == {"job_id": JOB_ID, "job_name": "word count"}
    assert families["flink_jobmanager_job_numRestarts"].samples[0].value == 0


def test_job_figures_name_the_checkpoint_counters_as_flink():
    from flintlock.common.ids import CheckpointId
    from flintlock.runtime.checkpoint.stats import (
        CheckpointStatistics,
        CheckpointStats,
        CheckpointStatus,
    )
    from flintlock.runtime.rest.metrics_views import job_figures

    latest = CheckpointStats(CheckpointId(7), False, CheckpointStatus.COMPLETED, 9_000, 2, 2,
                             4096, 120.0, 3.0, 1.0, ())
    stats = CheckpointStatistics(9, 1, 7, 1, latest_completed=latest)
    job = JobDescription(JOB_ID, "word count", "RUNNING", 2, 1_000, (), stats)
    assert dict(job_figures(job, 5_000)) == {
        "uptime": 4_000, "numRestarts": 2, "totalNumberOfCheckpoints": 9,
        "numberOfInProgressCheckpoints": 1, "numberOfCompletedCheckpoints": 7,
        "numberOfFailedCheckpoints": 1, "lastCheckpointDuration": 120.0,
        "lastCheckpointSize": 4096, "lastCompletedCheckpointId": 7}
    ended = JobDescription(JOB_ID, "word count", "FINISHED", 0, 1_000, (), None)
    assert dict(job_figures(ended, 5_000)) == {"uptime": 0, "numRestarts": 0}


def test_prometheus_exposition_needs_the_token(api):
    response = api.handle(RestRequest("GET", "/metrics", {}, None, lambda: b""))
    assert response.status == 401


def test_reporter_ports_and_configuration_errors():
    from flintlock.common.config import Configuration
    from flintlock.runtime.rest.reporter import (
        PrometheusReporter,
        ReporterConfigurationError,
        reporter_ports,
    )

    assert reporter_ports("9249") == [9249]
    assert reporter_ports("9250-9252") == [9250, 9251, 9252]
    for bad in ("x", "9252-9250", "70000"):
        with pytest.raises(ReporterConfigurationError, match=r"metrics\.reporter\.prom\.port"):
            reporter_ports(bad)
    assert PrometheusReporter.bind(Configuration()) is None  # not configured: no reporter
    wrong = Configuration().set_string("metrics.reporter.prom.factory.class", "com.example.X")
    with pytest.raises(ReporterConfigurationError, match="PrometheusReporterFactory"):
        PrometheusReporter.bind(wrong)


def test_reporter_skips_taken_ports_of_a_range():
    import socket

    from flintlock.common.config import Configuration
    from flintlock.runtime.rest.reporter import PrometheusReporter

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        config = (Configuration()
                  .set_string("metrics.reporter.prom.factory.class",
                              "org.apache.flink.metrics.prometheus.PrometheusReporterFactory")
                  .set_string("metrics.reporter.prom.port", f"{port}-{port + 20}"))
        reporter = PrometheusReporter.bind(config)
        assert reporter is not None
        try:
            assert port < reporter.address[1] <= port + 20
        finally:
            reporter.close()
        only_taken = config.set_string("metrics.reporter.prom.port", str(port))
        assert PrometheusReporter.bind(only_taken) is None


def test_dashboard_files_are_served_without_the_token_and_nothing_else_is(api):
    page = api.handle(RestRequest("GET", "/", {}, None, lambda: b""))
    assert page.status == 200 and page.content_type.startswith("text/html")
    assert b'<script src="/web/dashboard.js"' in page.body
    headers = dict(page.headers)
    assert headers["Content-Security-Policy"].startswith("default-src 'self'")
    script = api.handle(RestRequest("GET", "/web/dashboard.js", {}, None, lambda: b""))
    assert script.status == 200 and script.content_type.startswith("text/javascript")
    assert b"Authorization" in script.body  # the page sends the token with API calls
    for method, path in [("POST", "/"), ("GET", "/web/other.js"), ("GET", "/jobs"),
                         ("GET", "/metrics")]:
        assert api.handle(RestRequest(method, path, {}, None, lambda: b"")).status == 401


def test_plan_of_a_job_graph():
    from flintlock.datastream import StreamExecutionEnvironment
    from flintlock.graph.job_graph import build_job_graph
    from flintlock.runtime.rest.views import plan

    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_collection([1, 2, 3]).key_by(lambda x: x).map(lambda x: x).print()
    body = plan(build_job_graph(env.get_stream_graph("planned")))["plan"]
    assert body["name"] == "planned" and len(body["nodes"]) == 2
    source, consumer = body["nodes"]
    assert source["inputs"] == []
    assert consumer["inputs"] == [{"num": 0, "id": source["id"], "ship_strategy": "HASH",
                                   "exchange": "pipelined_bounded"}]


def test_job_config_shows_the_execution_config_and_hides_secrets():
    from flintlock.common.config import Configuration
    from flintlock.runtime.rest.views import job_config

    config = (Configuration().set_string("parallelism.default", "3")
              .set_string("restart-strategy.type", "fixed-delay")
              .set_string("security.ssl.rest.key", "/etc/hunter2.pem")
              .set_string("pipeline.global-job-parameters", "env:prod"))
    body = job_config(JOB_ID, "word count", config)
    assert body["jid"] == JOB_ID and body["name"] == "word count"
    assert body["execution-config"]["job-parallelism"] == 3
    assert body["execution-config"]["restart-strategy"] == "fixed-delay"
    assert body["execution-config"]["user-config"] == {"env": "prod"}
    assert body["configuration"]["security.ssl.rest.key"] == "******"
    assert body["configuration"]["parallelism.default"] == "3"
    assert "hunter2" not in repr(body)


def _tm_tasks():
    from flintlock.runtime.metrics import NetworkMemory, ProcessStats

    def report(tm, subtask, at_ms, free_segments):
        variables = (("host", "h1"), ("tm_id", tm), ("subtask_index", str(subtask)))
        metrics = SubtaskMetrics(SubtaskMetricGroups().registry, variables, 0.0)
        network = None if free_segments is None else NetworkMemory(32768, 64, free_segments)
        return metrics.sample(TaskIOCounters(0, 0, 0, 0, 0.0, 0.0), None, 1.0, at_ms,
                              ProcessStats(40 + int(tm[-1]), 5 << 20, 4, 8 << 30, 6 << 20,
                                           network))

    return (TaskDescription("A", "a", 0, "RUNNING", report("tm-0", 0, 1_000, 60)),
            TaskDescription("A", "a", 1, "RUNNING", report("tm-1", 1, 1_500, None)),
            TaskDescription("B", "b", 0, "RUNNING", report("tm-0", 0, 2_000, 50)),
            TaskDescription("B", "b", 1, "CREATED", None))


def test_task_managers_from_the_subtasks_reports():
    from flintlock.runtime.rest.metrics_views import task_managers

    body = task_managers(_tm_tasks())["taskmanagers"]
    assert [(m["id"], m["slotsNumber"], m["timeSinceLastHeartbeat"], m["pid"]) for m in body] == [
        ("tm-0", 2, 2_000, 40), ("tm-1", 1, 1_500, 41)]
    assert body[0]["memory"] == {"rss": 5 << 20, "peakRss": 6 << 20}
    assert body[0]["hardware"]["cpuCores"] == 4 and body[0]["hardware"]["physicalMemory"] == 8 << 30
    assert body[0]["metrics"] == {  # the newest report's network pool: 50 of 64 free
        "nettyShuffleMemorySegmentsTotal": 64, "nettyShuffleMemorySegmentsAvailable": 50,
        "nettyShuffleMemorySegmentsUsed": 14, "nettyShuffleMemoryTotal": 64 * 32768,
        "nettyShuffleMemoryAvailable": 50 * 32768, "nettyShuffleMemoryUsed": 14 * 32768}
    assert "metrics" not in body[1]  # its subtasks see no network pool


def test_registered_task_managers_are_listed_before_they_report():
    from flintlock.runtime.jobmanager.description import TaskManagerDescription
    from flintlock.runtime.rest.metrics_views import task_managers

    registered = (TaskManagerDescription(0, "h1", 7001, 40),
                  TaskManagerDescription(2, "h2", 7002, 42))
    body = task_managers(_tm_tasks(), registered)["taskmanagers"]
    assert [(m["id"], m["host"], m.get("dataPort"), m["pid"], m["slotsNumber"],
             m["timeSinceLastHeartbeat"]) for m in body] == [
        ("tm-0", "h1", 7001, 40, 2, 2_000), ("tm-1", "h1", None, 41, 1, 1_500),
        ("tm-2", "h2", 7002, 42, 0, -1)]
    assert "memory" not in body[2] and "metrics" not in body[2]


def test_task_manager_figures_in_prometheus_by_flinks_names():
    from flintlock.runtime.metrics.prometheus import Scrape, families

    reports = tuple(task.metrics for task in _tm_tasks() if task.metrics is not None)
    found = {(family.name, sample.labels["tm_id"]): sample.value
             for family in families(Scrape(reports)) for sample in family.samples
             if family.name.startswith("flink_taskmanager_Status")}
    assert found == {
        ("flink_taskmanager_Status_ProcessTree_Memory_RSS", "tm-0"): 5 << 20,
        ("flink_taskmanager_Status_ProcessTree_Memory_RSS", "tm-1"): 5 << 20,
        ("flink_taskmanager_Status_Shuffle_Netty_TotalMemorySegments", "tm-0"): 64,
        ("flink_taskmanager_Status_Shuffle_Netty_AvailableMemorySegments", "tm-0"): 50,
        ("flink_taskmanager_Status_Shuffle_Netty_UsedMemorySegments", "tm-0"): 14,
        ("flink_taskmanager_Status_Shuffle_Netty_TotalMemory", "tm-0"): 64 * 32768,
        ("flink_taskmanager_Status_Shuffle_Netty_AvailableMemory", "tm-0"): 50 * 32768,
        ("flink_taskmanager_Status_Shuffle_Netty_UsedMemory", "tm-0"): 14 * 32768,
    }


def test_the_reporter_speaks_https_when_the_rest_endpoint_does(tmp_path):
    import http.client
    import ssl
    import urllib.request

    from flintlock.runtime.rest.server import RestEndpoint
    from tests.unit.rest_support import self_signed, tls_config

    cert, key = self_signed(tmp_path, "endpoint")
    config = tls_config(cert, key)
    config.set_string("metrics.reporter.prom.factory.class",
                      "org.apache.flink.metrics.prometheus.PrometheusReporterFactory")
    config.set_string("metrics.reporter.prom.port", "0")
    endpoint = RestEndpoint.bind(config, jobs_directory=tmp_path).serve(FakeJob(), "fake")
    try:
        reporter = endpoint.reporter
        assert reporter is not None and reporter.scheme == "https"
        host, port = reporter.address
        context = ssl.create_default_context(cafile=str(cert))
        context.check_hostname = False
        with urllib.request.urlopen(f"https://{host}:{port}/metrics", context=context,
                                    timeout=10) as response:
            text = response.read().decode()
        names = {f.name for f in text_string_to_metric_families(text)}
        assert "flink_taskmanager_job_task_numRecordsOut" in names
        plain = http.client.HTTPConnection(host, port, timeout=10)
        with pytest.raises((OSError, http.client.HTTPException)):
            plain.request("GET", "/metrics")
            plain.getresponse()
        plain.close()
    finally:
        endpoint.close()
