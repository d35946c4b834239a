"""The dashboard's server side without a job (issue 30): the metric history's rates and its
bounded memory (a hypothesis law: any number of samples keeps at most ``capacity`` points,
the first sample's time, increasing times and every sample's weight), the states subtasks
are shown in by job status, vertices of the plan not yet reported, the subtask table from
fixed reports, the archive directory's validation and reading, the history server's index
and refusals, and the TaskManagers' output tails."""

import io
import json
import logging
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common.config import Configuration
from flintlock.common.errors import InvalidConfigValueError
from flintlock.runtime.jobmanager import JobDescription, TaskDescription
from flintlock.runtime.metrics import (
    SubtaskMetricGroups,
    SubtaskMetrics,
    TaskIOCounters,
    output_tail,
)
from flintlock.runtime.metrics.report import TaskTimeSplit
from flintlock.runtime.rest import detail_views, views
from flintlock.runtime.rest.api import RestRequest
from flintlock.runtime.rest.archive import (
    ArchivedView,
    ArchiveError,
    archive_dir,
    read_archive,
    write_archive,
)
from flintlock.runtime.rest.history_server import HistoryApi
from flintlock.runtime.rest.metric_history import MetricHistory, Sample, VertexPoint

JOB_ID = "0123456789abcdef0123456789abcdef"


def _report(subtask, records_in, records_out, wall_ms, busy_ms=500, watermark=None):
    variables = {"host": "h", "tm_id": f"tm-{subtask}", "subtask_index": str(subtask),
                 "task_attempt_num": "0"}
    groups = SubtaskMetricGroups(task_variables=variables)
    if watermark is not None:
        groups.task.gauge("currentInputWatermark", lambda: watermark)
    metrics = SubtaskMetrics(groups.registry, tuple(variables.items()), 0.0)
    io_counters = TaskIOCounters(records_in, records_out, 10, 20, 0.5, 0.5)
    return metrics.sample(io_counters, TaskTimeSplit(busy_ms, 100, 1000 - busy_ms - 100),
                          now_s=wall_ms / 1000.0, wall_ms=wall_ms)


def _job(status, *tasks, start_ms=0):
    return JobDescription(JOB_ID, "job", status, 0, start_ms, tuple(tasks), None)


def test_rates_come_from_the_reports_and_a_restart_counts_from_zero():
    history = MetricHistory(capacity=16)
    for wall_ms, records, now in ((1000, 100, 1100), (2000, 300, 2100), (2000, 300, 3100),
                                  (3000, 50, 4100)):
        task = TaskDescription("Map", "v", 0, "RUNNING", _report(0, records, records, wall_ms))
        history.record(now, _job("RUNNING", task))
    series = history.series()["vertices"]["v"]
    # from the job's start; then the growth; no new report: the same; a restart: from 0
    assert series["records-in-per-second"] == [100.0, 200.0, 200.0, 50.0]
    assert series["busy-ratio"][0] == 0.5 and series["backpressured-ratio"][0] == 0.1


def test_the_watermark_is_the_smallest_of_the_subtasks():
    history = MetricHistory()
    tasks = [TaskDescription("W", "v", i, "RUNNING", _report(i, 1, 1, 1000, watermark=w))
             for i, w in enumerate((5_000, 3_000))]
    history.record(1000, _job("RUNNING", *tasks))
    assert history.series()["vertices"]["v"]["watermark"] == [3_000]


@settings(max_examples=40, deadline=None)
@given(capacity=st.integers(4, 40), samples=st.integers(1, 400))
def test_the_history_is_bounded_and_reaches_back_to_the_first_sample(capacity, samples):
    history = MetricHistory(capacity)
    for i in range(samples):
        history.add(Sample(1000 + i, {"v": VertexPoint(float(i), 0.0, 0.0, 0.0, i)}))
    points = history.samples
    assert len(points) <= capacity
    times = [p.time_ms for p in points]
    assert times == sorted(set(times)) and times[-1] == 1000 + samples - 1
    assert sum(p.weight for p in points) == samples
    assert points[0].time_ms - points[0].weight + 1 == 1000  # the first sample is in it
    assert points[-1].weight == 1  # the newest keep their resolution
    mean = sum(p.vertices["v"].records_in_per_s * p.weight for p in points) / samples
    assert mean == pytest.approx((samples - 1) / 2)  # merging keeps the average


@pytest.mark.parametrize(("task", "job", "shown"), [
    ("RUNNING", "RUNNING", "RUNNING"),
    ("RUNNING", "RESTARTING", "RESTARTING"),
    ("FAILED", "RESTARTING", "FAILED"),
    ("FINISHED", "RESTARTING", "RESTARTING"),
    ("RUNNING", "FAILING", "CANCELING"),
    ("RUNNING", "CANCELLING", "CANCELING"),
    ("RUNNING", "CANCELED", "CANCELED"),
    ("RUNNING", "FAILED", "CANCELED"),
    ("FAILED", "FAILED", "FAILED"),
    ("FINISHED", "FINISHED", "FINISHED"),
])
def test_a_subtask_is_shown_in_its_jobs_state(task, job, shown):
    assert views.subtask_state(task, job) == shown


def test_no_vertex_reads_running_while_its_job_restarts():
    tasks = [TaskDescription("Source", "s", 0, "RUNNING"),
             TaskDescription("Map", "m", 0, "FAILED"), TaskDescription("Map", "m", 1, "RUNNING")]
    details = views.job_details(_job("RESTARTING", *tasks), 10)
    assert {v["id"]: v["status"] for v in details["vertices"]} == {"s": "RESTARTING",
                                                                   "m": "FAILED"}
    assert [s["status"] for s in details["vertices"][1]["subtasks"]] == ["FAILED", "RESTARTING"]
    overview = views.job_overview(_job("RESTARTING", *tasks), 10)
    assert overview["tasks"]["RUNNING"] == 0 and overview["tasks"]["RESTARTING"] == 2


def test_vertices_of_the_plan_not_reported_yet_are_listed():
    plan = {"plan": {"nodes": [{"id": "s", "parallelism": 1, "description": "Source"},
                               {"id": "m", "parallelism": 2, "description": "Map"}]}}
    details = views.job_details(_job("RUNNING", TaskDescription("Source", "s", 0, "RUNNING")),
                                10, plan)
    waiting = details["vertices"][1]
    assert (waiting["id"], waiting["status"], waiting["parallelism"]) == ("m", "CREATED", 2)


def test_the_subtask_table():
    tasks = [TaskDescription("Map", "m", i, "RUNNING", _report(i, 10 * (i + 1), 5, 1000))
             for i in (1, 0)]
    table = detail_views.vertex_details(_job("RUNNING", *tasks), "m", 2000)
    rows = table["subtasks"]
    assert [r["subtask"] for r in rows] == [0, 1]
    assert [r["metrics"]["read-records"] for r in rows] == [10, 20]
    assert rows[1]["taskmanager-id"] == "tm-1" and rows[0]["busyRatio"] == 0.5
    assert rows[0]["idleRatio"] == 0.4 and rows[0]["state-size"] == -1
    assert rows[0]["watermark"] is None
    assert detail_views.vertex_details(_job("RUNNING", *tasks), "nope", 0) is None


def test_the_archive_directory_is_checked():
    assert archive_dir(Configuration()) is None
    config = Configuration({"jobmanager.archive.fs.dir": "file:///tmp/a"})
    assert str(archive_dir(config)) == "/tmp/a"
    with pytest.raises(InvalidConfigValueError) as error:
        archive_dir(Configuration({"jobmanager.archive.fs.dir": "s3://bucket/a"}))
    assert "jobmanager.archive.fs.dir" in str(error.value)


def _get(api, path, token="t"):
    return api.handle(RestRequest("GET", path, {}, f"Bearer {token}", lambda: b""))


def test_the_history_server_indexes_archives_and_skips_other_files(tmp_path, caplog):
    overview = {"jobs": [{"jid": JOB_ID, "state": "FAILED", "start-time": 5}]}
    write_archive(tmp_path, JOB_ID, [
        ArchivedView("/jobs/overview", overview),
        ArchivedView("/jobs", {"jobs": [{"id": JOB_ID, "status": "FAILED", "start-time": 5}]}),
        ArchivedView(f"/jobs/{JOB_ID}", {"jid": JOB_ID, "state": "FAILED"}),
        ArchivedView(f"/jobs/{JOB_ID}/taskmanagers/tm-0/log", "a line\n", text=True)])
    (tmp_path / "junk.json").write_text("not json")
    api = HistoryApi(tmp_path, "t")
    with caplog.at_level(logging.WARNING):
        assert _get(api, "/jobs/overview").body == overview
    assert "junk.json" in caplog.text
    assert _get(api, f"/jobs/{JOB_ID}").body["state"] == "FAILED"
    log = _get(api, f"/jobs/{JOB_ID}/taskmanagers/tm-0/log")
    assert log.body == b"a line\n" and log.content_type.startswith("text/plain")
    assert _get(api, f"/jobs/{JOB_ID}/plan").status == 404
    assert _get(api, "/jobs/overview", token="wrong").status == 401
    assert api.handle(RestRequest("POST", f"/jobs/{JOB_ID}/stop", {}, "Bearer t",
                                  lambda: b"{}")).status == 405
    assert json.loads(_get(api, "/web/mode.json").body) == {"mode": "history"}
    with pytest.raises(ArchiveError):
        read_archive(tmp_path / "junk.json")


def test_a_tail_notes_the_lines_a_slow_reader_missed():
    tail = output_tail._Tail(size=3)
    for i in range(5):
        tail.append(f"line {i}")
    lines, cursor = tail.since(0, 10)
    assert lines == ["[2 lines dropped]", "line 2", "line 3", "line 4"] and cursor == 5
    assert tail.since(cursor, 10) == ([], 5)


def test_the_process_output_is_captured_and_released(monkeypatch):
    target = io.StringIO()
    monkeypatch.setattr(sys, "stdout", target)
    reader = output_tail.attach()
    try:
        print("first line")
        print("half", end="")
        logging.getLogger("flintlock.test").warning("a warning")
        logs, stdout = reader.take()
        assert stdout == ("first line",)  # a line is taken once it is complete
        assert any("WARNING flintlock.test: a warning" in line for line in logs)
    finally:
        output_tail.detach(reader)
    assert sys.stdout is target and target.getvalue() == "first line\nhalf"


def test_the_jobmanager_keeps_a_tail_per_taskmanager_and_marks_attempts():
    outputs = output_tail.TaskManagerOutputs(kept=3)
    assert outputs.tail(0, "log") is None
    outputs.add(0, 0, ("a",), ("x",))
    outputs.add(1, 0, ("b", "c"), ())
    assert outputs.tail(0, "log") == ("--- attempt 1 ---", "b", "c")
    assert outputs.tail(0, "stdout") == ("x", "--- attempt 1 ---")
    assert outputs.tail(0, "other") is None


def test_a_capture_wrapped_by_another_wrapper_ends_writing_through(monkeypatch):
    class Wrapper:  # what a progress line does to sys.stdout while it is shown
        def __init__(self, inner):
            self.inner = inner

        def write(self, text):
            return self.inner.write(text)

    target = io.StringIO()
    monkeypatch.setattr(sys, "stdout", target)
    reader = output_tail.attach()
    tee = sys.stdout
    sys.stdout = Wrapper(tee)
    output_tail.detach(reader)
    sys.stdout = tee  # the wrapper put back what it wrapped: the ended capture's tee
    print("after")
    assert target.getvalue() == "after\n" and not tee.active
    again = output_tail.attach()
    try:
        assert sys.stdout.target is target  # the new capture wraps past the ended tee
    finally:
        output_tail.detach(again)
    assert sys.stdout is target
