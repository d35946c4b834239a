"""``GET /jobs/:jobid/exceptions``: the JobManager's exception history in Flink's shape,
newest first, with checkpoint fallbacks as entries of their own kind."""

from flintlock.common.job_status import JobStatus
from flintlock.runtime.jobmanager import JobDescription
from flintlock.runtime.jobmanager.history import JobEvent, JobEventKind, JobHistory
from flintlock.runtime.rest.api import RestApi, RestRequest
from flintlock.runtime.rest.triggers import SavepointTriggers

JOB_ID = "0123456789abcdef0123456789abcdef"
TOKEN = "t0ken"


class _Job:
    job_id = JOB_ID

    def __init__(self, events, truncated=False):
        self.events = events
        self.truncated = truncated

    def describe(self, timeout_s=10.0):
        return JobDescription(JOB_ID, "job", "RUNNING", 1, 0, (), None, self.events,
                              events_truncated=self.truncated)

    def get_status(self):
        return JobStatus.RUNNING


def _get(job, path):
    api = RestApi(job, TOKEN, SavepointTriggers(lambda: "t1"))
    return api.handle(RestRequest("GET", path, {}, f"Bearer {TOKEN}", lambda: b""))


def test_the_history_lists_failures_and_fallbacks_newest_first():
    events = (
        JobEvent(100, 0, JobEventKind.CHECKPOINT_FALLBACK, "CheckpointFallback",
                 "checkpoint 7 is damaged (...); restoring checkpoint 6"),
        JobEvent(200, 0, JobEventKind.ATTEMPT_FAILED, "InjectedFailure", "boom"),
        JobEvent(300, 1, JobEventKind.ATTEMPT_FAILED, "CorruptStateError", "file x"),
    )
    response = _get(_Job(events), f"/jobs/{JOB_ID}/exceptions")
    assert response.status == 200
    body = response.body
    assert body["root-exception"] == "file x" and body["timestamp"] == 300
    entries = body["exceptionHistory"]["entries"]
    assert [(e["kind"], e["exceptionName"], e["attempt"]) for e in entries] == [
        ("attempt-failed", "CorruptStateError", 1), ("attempt-failed", "InjectedFailure", 0),
        ("checkpoint-fallback", "CheckpointFallback", 0)]


def test_no_failure_yet_has_no_root_exception():
    body = _get(_Job(()), f"/jobs/{JOB_ID}/exceptions").body
    assert body["root-exception"] is None and body["exceptionHistory"]["entries"] == []


def test_only_get_is_allowed():
    api = RestApi(_Job(()), TOKEN, SavepointTriggers(lambda: "t1"))
    response = api.handle(RestRequest("POST", f"/jobs/{JOB_ID}/exceptions", {},
                                      f"Bearer {TOKEN}", lambda: b""))
    assert response.status == 405


def test_the_history_is_bounded_and_keeps_the_newest():
    history = JobHistory(size=2)
    for n in range(3):
        history.record(JobEvent(n, n, JobEventKind.ATTEMPT_FAILED, "E", str(n)))
    assert [e.message for e in history.entries()] == ["1", "2"]
    assert history.truncated


def test_a_history_that_dropped_entries_says_it_is_truncated():
    history = JobHistory(size=1)
    for n in range(2):
        history.record(JobEvent(n, n, JobEventKind.ATTEMPT_FAILED, "E", str(n)))
    body = _get(_Job(history.entries(), history.truncated), f"/jobs/{JOB_ID}/exceptions").body
    assert body["exceptionHistory"] == {
        "entries": [{"exceptionName": "E", "stacktrace": "E: 1", "message": "1",
                     "timestamp": 1, "kind": "attempt-failed", "attempt": 1}],
        "truncated": True}
    assert _get(_Job(()), f"/jobs/{JOB_ID}/exceptions").body["exceptionHistory"][
        "truncated"] is False


def test_an_entry_carries_the_failures_traceback():
    trace = 'Traceback (most recent call last):\n  File "job.py", line 3, in map\nE: boom'
    events = (JobEvent(5, 0, JobEventKind.ATTEMPT_FAILED, "E", "boom", trace),)
    entry = _get(_Job(events), f"/jobs/{JOB_ID}/exceptions").body["exceptionHistory"][
        "entries"][0]
    assert entry["stacktrace"] == trace and entry["message"] == "boom"
