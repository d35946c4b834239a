"""The REST API core without a server: requests in, responses out, against a fake JobManager
that records every call."""

import json
from concurrent.futures import Future

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from flintlock.common.ids import CheckpointId
from flintlock.common.job_status import JobStatus
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason
from flintlock.runtime.checkpoint.stats import (
    CheckpointStatistics,
    CheckpointStats,
    CheckpointStatus,
    SubtaskAckStats,
    SubtaskCheckpointMetrics,
)
from flintlock.runtime.jobmanager import JobDescription, TaskDescription
from flintlock.runtime.rest.api import RestApi, RestRequest
from flintlock.runtime.rest.triggers import SavepointTriggers

JOB_ID = "0123456789abcdef0123456789abcdef"
TOKEN = "s3cret-token"


class FakeJob:
    job_id = JOB_ID

    def __init__(self, status=JobStatus.RUNNING, checkpoints=None):
        self.status = status
        self.calls = []
        self.futures = []
        self.describe_error = None
        self.checkpoints = checkpoints

    def describe(self, timeout_s=10.0):
        self.calls.append("describe")
        if self.describe_error is not None:
            raise self.describe_error
        return JobDescription(JOB_ID, "word count", self.status.name, 2, 1_000, (
            TaskDescription("Source: numbers", "v1", 0, "RUNNING"),
            TaskDescription("Map -> Sink", "v2", 1, "FINISHED"),
            TaskDescription("Map -> Sink", "v2", 0, "RUNNING"),
        ), self.checkpoints)

    def get_status(self):
        self.calls.append("get_status")
        return self.status

    def cancel(self):
        self.calls.append("cancel")

    def trigger_savepoint(self, target_dir=None, stop=False):
        self.calls.append(("savepoint", target_dir))
        self.futures.append(Future())
        return self.futures[-1]

    def stop_with_savepoint(self, target_dir=None, drain=False):
        self.calls.append(("stop", target_dir) if not drain else ("stop", target_dir, "drain"))
        self.futures.append(Future())
        return self.futures[-1]


def _body_never_read():
    raise AssertionError("the body was read")


def request(method, path, body=None, token=TOKEN, query=None, raw=None):
    if raw is None:
        raw = b"" if body is None else json.dumps(body).encode()
    return RestRequest(method, path, query or {},
                       None if token is None else f"Bearer {token}", lambda: raw)


@pytest.fixture
def job():
    return FakeJob()


@pytest.fixture
def api(job):
    ids = iter(f"trigger-{i}" for i in range(100))
    return RestApi(job, TOKEN, SavepointTriggers(lambda: next(ids)), job_name="word count",
                   start_time_ms=1_000, wall_ms=lambda: 5_000)


@pytest.mark.parametrize("authorization", [
    None, "", "Bearer", "Bearer wrong", f"Basic {TOKEN}", f"Bearer {TOKEN}x",
    f"Bearer {TOKEN[:-1]}",
])
def test_requests_without_the_token_get_401_and_nothing_else_happens(job, api, authorization):
    for method, path in [("GET", "/jobs"), ("PATCH", f"/jobs/{JOB_ID}"),
                         ("POST", f"/jobs/{JOB_ID}/savepoints"), ("GET", "/nowhere")]:
        response = api.handle(RestRequest(method, path, {}, authorization, _body_never_read))
        assert response.status == 401
        assert response.body == {"errors": [
            "missing or wrong bearer token (Authorization: Bearer <token>)"]}
        assert ("WWW-Authenticate", 'Bearer realm="flintlock"') in response.headers
    assert job.calls == []


@given(header=st.one_of(st.none(), st.text(max_size=60)),
       method=st.sampled_from(["GET", "POST", "PATCH", "PUT", "DELETE"]),
       path=st.sampled_from(["/jobs", f"/jobs/{JOB_ID}", f"/jobs/{JOB_ID}/stop", "/x"]))
def test_any_header_without_the_token_is_refused_untouched(header, method, path):
    scheme, _, credentials = (header or "").strip().partition(" ")
    assume(not (scheme.lower() == "bearer" and credentials.strip() == TOKEN))
    job = FakeJob()
    api = RestApi(job, TOKEN, SavepointTriggers(lambda: "t"))
    response = api.handle(RestRequest(method, path, {}, header, _body_never_read))
    assert response.status == 401 and job.calls == []


def test_the_scheme_is_case_insensitive(api):
    response = api.handle(RestRequest("GET", "/jobs", {}, f"bearer {TOKEN}", lambda: b""))
    assert response.status == 200


def test_jobs_lists_the_job_with_its_status(api):
    response = api.handle(request("GET", "/jobs"))
    assert response.status == 200
    assert response.body == {"jobs": [
        {"id": JOB_ID, "status": "RUNNING", "name": "word count", "start-time": 1_000}]}


def test_overview_counts_tasks_by_state(api):
    (entry,) = api.handle(request("GET", "/jobs/overview")).body["jobs"]
    assert entry["jid"] == JOB_ID and entry["state"] == "RUNNING"
    assert entry["duration"] == 4_000
    assert entry["tasks"]["RUNNING"] == 2 and entry["tasks"]["FINISHED"] == 1
    assert entry["tasks"]["FAILED"] == 0


def test_job_details_show_vertices_with_subtask_states(api):
    body = api.handle(request("GET", f"/jobs/{JOB_ID}")).body
    assert body["state"] == "RUNNING" and body["attempt"] == 2 and body["isStoppable"]
    source, chain = body["vertices"]
    assert (source["name"], source["parallelism"], source["status"]) == (
        "Source: numbers", 1, "RUNNING")
    assert chain["status"] == "RUNNING"  # one subtask finished, one running
    assert chain["subtasks"] == [{"subtask": 0, "status": "RUNNING"},
                                 {"subtask": 1, "status": "FINISHED"}]
    assert body["status-counts"]["RUNNING"] == 2


@pytest.mark.parametrize("method,path,status", [
    ("GET", "/web/missing.js", 404), ("GET", "/jobs/overview/x", 404), ("GET", "/config", 404),
    ("GET", f"/jobs/{JOB_ID}/vertices", 404), ("GET", "/jobs/ffff", 404),
    ("GET", "/jobs/ffff/checkpoints", 404), ("DELETE", "/jobs", 405),
    ("POST", f"/jobs/{JOB_ID}", 405), ("GET", f"/jobs/{JOB_ID}/stop", 405),
    ("PUT", f"/jobs/{JOB_ID}/savepoints", 405),
])
def test_unknown_paths_jobs_and_methods_are_json_errors(api, method, path, status):
    response = api.handle(request(method, path))
    assert response.status == status
    assert isinstance(response.body["errors"][0], str) and response.body["errors"][0]


def test_an_unknown_job_is_named_in_the_404(api):
    response = api.handle(request("GET", "/jobs/ffff"))
    assert response.body == {"errors": ["Job ffff not found"]}


def test_wrong_method_names_the_allowed_ones(api):
    response = api.handle(request("POST", f"/jobs/{JOB_ID}"))
    assert ("Allow", "GET, PATCH") in response.headers


def test_patch_cancels(job, api):
    response = api.handle(request("PATCH", f"/jobs/{JOB_ID}", query={"mode": ["cancel"]}))
    assert (response.status, response.body) == (202, {})
    assert job.calls == ["cancel"]


def test_patch_without_mode_cancels_as_in_flink(job, api):
    assert api.handle(request("PATCH", f"/jobs/{JOB_ID}")).status == 202
    assert job.calls == ["cancel"]


def test_patch_with_another_mode_is_refused(job, api):
    response = api.handle(request("PATCH", f"/jobs/{JOB_ID}", query={"mode": ["stop"]}))
    assert response.status == 400 and "unsupported mode 'stop'" in response.body["errors"][0]
    assert "cancel" not in job.calls


def test_savepoint_trigger_then_poll_until_completed(job, api):
    response = api.handle(request("POST", f"/jobs/{JOB_ID}/savepoints",
                                  {"target-directory": "/sp", "cancel-job": False}))
    assert (response.status, response.body) == (202, {"request-id": "trigger-0"})
    assert ("savepoint", "/sp") in job.calls
    status_path = f"/jobs/{JOB_ID}/savepoints/trigger-0"
    assert api.handle(request("GET", status_path)).body == {"status": {"id": "IN_PROGRESS"}}
    job.futures[0].set_result("/sp/savepoint-1")
    assert api.handle(request("GET", status_path)).body == {
        "status": {"id": "COMPLETED"}, "operation": {"location": "/sp/savepoint-1"}}


def test_a_failed_savepoint_reports_its_cause(job, api):
    api.handle(request("POST", f"/jobs/{JOB_ID}/savepoints", {}))
    job.futures[0].set_exception(ValueError("disk full"))
    body = api.handle(request("GET", f"/jobs/{JOB_ID}/savepoints/trigger-0")).body
    assert body["status"] == {"id": "COMPLETED"}
    cause = body["operation"]["failure-cause"]
    assert cause["class"] == "builtins.ValueError" and cause["message"] == "disk full"


def test_cancel_job_cancels_after_the_savepoint_completed(job, api):
    api.handle(request("POST", f"/jobs/{JOB_ID}/savepoints", {"cancel-job": True}))
    assert "cancel" not in job.calls
    job.futures[0].set_result("/sp/1")
    assert job.calls[-1] == "cancel"


def test_cancel_job_does_not_cancel_when_the_savepoint_failed(job, api):
    api.handle(request("POST", f"/jobs/{JOB_ID}/savepoints", {"cancel-job": True}))
    job.futures[0].set_exception(ValueError("no"))
    assert "cancel" not in job.calls


def test_a_client_chosen_trigger_id_is_used_once(api):
    body = {"triggerId": "mine"}
    first = api.handle(request("POST", f"/jobs/{JOB_ID}/savepoints", body))
    assert first.body == {"request-id": "mine"}
    assert api.handle(request("POST", f"/jobs/{JOB_ID}/savepoints", body)).status == 409


def test_an_unknown_trigger_is_404(api):
    response = api.handle(request("GET", f"/jobs/{JOB_ID}/savepoints/nope"))
    assert response.status == 404 and "'nope'" in response.body["errors"][0]


def test_stop_takes_a_savepoint_and_stops(job, api):
    response = api.handle(request("POST", f"/jobs/{JOB_ID}/stop", {"targetDirectory": "/sp"}))
    assert (response.status, response.body) == (202, {"request-id": "trigger-0"})
    assert job.calls[-1] == ("stop", "/sp")


def test_stop_with_drain_stops_draining(job, api):
    """Refused (400) before issue 29; now passed on to the job."""
    response = api.handle(request("POST", f"/jobs/{JOB_ID}/stop", {"drain": True}))
    assert (response.status, response.body) == (202, {"request-id": "trigger-0"})
    assert job.calls[-1] == ("stop", None, "drain")


def test_stop_with_a_drain_that_is_no_boolean_is_refused(job, api):
    response = api.handle(request("POST", f"/jobs/{JOB_ID}/stop", {"drain": "yes"}))
    assert response.status == 400 and "'drain'" in response.body["errors"][0]
    assert not job.futures


@pytest.mark.parametrize("raw,problem", [
    (b"{not json", "not valid JSON"),
    (b"\xff\xfe", "not UTF-8"),
    (b"[1, 2]", "must be a JSON object, not list"),
    (b'{"target-directory": 3}', "field 'target-directory' must be a string or null, not 3"),
    (b'{"cancel-job": "yes"}', "field 'cancel-job' must be a boolean, not \"yes\""),
    (b'{"targetDirectory": "/x"}', "unknown field 'targetDirectory'"),
])
def test_bad_savepoint_bodies_get_400_naming_the_problem(job, api, raw, problem):
    response = api.handle(request("POST", f"/jobs/{JOB_ID}/savepoints", raw=raw))
    assert response.status == 400
    assert problem in response.body["errors"][0]
    assert not job.futures


def test_stop_body_fields_are_checked_too(api):
    response = api.handle(request("POST", f"/jobs/{JOB_ID}/stop", {"target-directory": "/x"}))
    assert response.status == 400 and "unknown field 'target-directory'" in (
        response.body["errors"][0])


@pytest.mark.parametrize("status", [JobStatus.FINISHED, JobStatus.CANCELED, JobStatus.CANCELLING])
def test_no_savepoint_of_a_job_that_ended(job, api, status):
    job.status = status
    for path in ("savepoints", "stop"):
        response = api.handle(request("POST", f"/jobs/{JOB_ID}/{path}", {}))
        assert response.status == 409 and status.name in response.body["errors"][0]
    assert not job.futures


def test_a_busy_jobmanager_answers_with_the_last_description_and_current_status(job, api):
    assert api.handle(request("GET", f"/jobs/{JOB_ID}")).body["attempt"] == 2
    job.describe_error = TimeoutError()
    job.status = JobStatus.RESTARTING
    body = api.handle(request("GET", f"/jobs/{JOB_ID}")).body
    assert body["state"] == "RESTARTING" and body["attempt"] == 2


def test_before_the_first_description_the_fallback_has_no_tasks(job, api):
    job.describe_error = TimeoutError()
    body = api.handle(request("GET", f"/jobs/{JOB_ID}")).body
    assert (body["name"], body["state"], body["vertices"]) == ("word count", "RUNNING", [])


def _stats(checkpoint_id, status, *, savepoint=False, size=100, duration=40.0, path=None,
           reason=None):
    ack = SubtaskAckStats(("v", 0), 30.0, size,
                          SubtaskCheckpointMetrics(alignment_duration_ms=7.4, start_delay_ms=2.6,
                                                   bytes_persisted_during_alignment=5))
    return CheckpointStats(
        CheckpointId(checkpoint_id), savepoint, status, 10_000 + checkpoint_id, 2, 1, size,
        duration, 7.4, 2.6, (ack,), failure_reason=reason,
        failure_message="expired" if reason else "", external_path=path)


def test_checkpoint_statistics_in_flinks_shape(job, api):
    completed = _stats(3, CheckpointStatus.COMPLETED, path="/chk/3")
    savepoint = _stats(2, CheckpointStatus.COMPLETED, savepoint=True, size=300, duration=80.0,
                       path="/sp/2")
    failed = _stats(1, CheckpointStatus.FAILED, reason=CheckpointFailureReason.CHECKPOINT_EXPIRED)
    running = _stats(4, CheckpointStatus.IN_PROGRESS, duration=None)
    job.checkpoints = CheckpointStatistics(
        num_triggered=4, num_in_progress=1, num_completed=2, num_failed=1,
        refused={CheckpointFailureReason.CHECKPOINT_EXPIRED: 2},
        history=(running, completed, savepoint, failed), latest_completed=completed,
        latest_failed=failed, restored_checkpoint_id=CheckpointId(9))
    body = api.handle(request("GET", f"/jobs/{JOB_ID}/checkpoints")).body
    assert body["counts"] == {"restored": 1, "total": 4, "in_progress": 1, "completed": 2,
                              "failed": 1, "refused": {"CHECKPOINT_EXPIRED": 2}}
    assert body["summary"]["state_size"] == {"min": 100, "max": 300, "avg": 200}
    assert body["summary"]["end_to_end_duration"] == {"min": 40, "max": 80, "avg": 60}
    assert body["latest"]["completed"]["external_path"] == "/chk/3"
    assert body["latest"]["savepoint"]["id"] == 2
    assert body["latest"]["failed"]["failure_message"] == "expired"
    assert body["latest"]["restored"] == {"id": 9}
    assert [entry["@class"] for entry in body["history"]] == [
        "in_progress", "completed", "completed", "failed"]
    entry = body["history"][1]
    assert entry == {
        "@class": "completed", "id": 3, "status": "COMPLETED", "is_savepoint": False,
        "checkpoint_type": "CHECKPOINT", "trigger_timestamp": 10_003,
        "latest_ack_timestamp": 10_033, "state_size": 100, "checkpointed_size": 100,
        "end_to_end_duration": 40, "alignment_duration": 7, "start_delay": 3,
        "persisted_data": 5, "num_subtasks": 2, "num_acknowledged_subtasks": 1,
        "external_path": "/chk/3", "discarded": False,
    }
    assert body["history"][0]["end_to_end_duration"] == 30  # in progress: the latest ack
    assert body["history"][3]["failure_reason"] == "CHECKPOINT_EXPIRED"


def test_a_job_without_checkpoints_has_zero_counts(api):
    body = api.handle(request("GET", f"/jobs/{JOB_ID}/checkpoints")).body
    assert body["counts"]["total"] == 0 and body["history"] == []
    assert body["latest"] == {"completed": None, "savepoint": None, "failed": None,
                              "restored": None}
