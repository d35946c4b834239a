"""The REST endpoint over real HTTP on loopback, with a fake job: authentication, port
fallback, the job file's life, and a clean close."""

import socket
import threading

import pytest

from flintlock.common.config import Configuration
from flintlock.runtime.rest import jobfiles
from flintlock.runtime.rest.server import MAX_BODY_BYTES, RestEndpoint, RestEndpointError
from tests.unit.rest_support import JOB_ID, FakeJob, call


@pytest.fixture
def endpoint(tmp_path):
    endpoint = RestEndpoint("127.0.0.1", 0, jobs_directory=tmp_path, linger_s=30)
    endpoint.serve(FakeJob(), "fake")
    yield endpoint
    endpoint.close()


def _rest_threads():
    return [t for t in threading.enumerate() if t.name.startswith("flintlock-rest")]


def test_answers_only_with_the_token(endpoint):
    assert call(endpoint, "GET", "/jobs", token=False)[0] == 401
    assert call(endpoint, "GET", "/jobs", token="wrong")[0] == 401
    status, body = call(endpoint, "GET", "/jobs")
    assert status == 200 and body["jobs"][0]["id"] == JOB_ID


def test_tokens_are_random_per_endpoint(tmp_path, endpoint):
    other = RestEndpoint("127.0.0.1", 0, jobs_directory=tmp_path / "other")
    try:
        assert other.token != endpoint.token and len(other.token) >= 32
    finally:
        other.close()


def test_errors_are_json(endpoint):
    assert call(endpoint, "GET", "/nothing") == (404, {"errors": ["not found: /nothing"]})
    status, body = call(endpoint, "POST", f"/jobs/{JOB_ID}/savepoints", b"{oops",
                        headers={"Content-Type": "application/json"})
    assert status == 400 and "not valid JSON" in body["errors"][0]


def test_an_oversized_body_is_refused(endpoint):
    status, body = call(endpoint, "POST", f"/jobs/{JOB_ID}/savepoints",
                        b" " * (MAX_BODY_BYTES + 1))
    assert status == 413 and "limit" in body["errors"][0]


def test_the_job_file_tells_where_the_endpoint_is(endpoint, tmp_path):
    (job,) = jobfiles.read_job_files(tmp_path)
    assert (job.job_id, job.name, job.token) == (JOB_ID, "fake", endpoint.token)
    assert (job.address, job.port) == endpoint.address


def test_a_taken_port_falls_back_to_a_free_one(tmp_path, caplog):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = Configuration().set_string("rest.port", str(port))
        endpoint = RestEndpoint.bind(config, jobs_directory=tmp_path)
        try:
            endpoint.serve(FakeJob(), "fake")
            assert endpoint.address[1] not in (0, port)
            assert call(endpoint, "GET", "/jobs")[0] == 200
            assert f"rest.port {port} is taken" in caplog.text
        finally:
            endpoint.close()


def test_an_address_that_cannot_be_bound_is_a_typed_error(tmp_path):
    config = Configuration().set_string("rest.bind-address", "256.1.1.1").set_string(
        "rest.port", "0")
    with pytest.raises(RestEndpointError) as info:
        RestEndpoint.bind(config, jobs_directory=tmp_path)
    assert "256.1.1.1" in str(info.value) and "rest.bind-address" in str(info.value)


def test_close_removes_the_job_file_and_leaves_no_thread_or_socket(tmp_path):
    before = set(_rest_threads())
    endpoint = RestEndpoint("127.0.0.1", 0, jobs_directory=tmp_path).serve(FakeJob(), "fake")
    address = endpoint.address
    assert call(endpoint, "GET", "/jobs")[0] == 200
    endpoint.close()
    endpoint.close()
    assert list(tmp_path.iterdir()) == []
    assert set(_rest_threads()) == before
    with pytest.raises(ConnectionRefusedError), socket.create_connection(address, timeout=5):
        pass


def test_close_removes_the_file_it_wrote_even_if_the_home_changed(tmp_path, monkeypatch):
    monkeypatch.setenv("FLINTLOCK_HOME", str(tmp_path / "first"))
    endpoint = RestEndpoint("127.0.0.1", 0).serve(FakeJob(), "fake")
    monkeypatch.setenv("FLINTLOCK_HOME", str(tmp_path / "second"))
    endpoint.close()
    assert list((tmp_path / "first" / "jobs").iterdir()) == []


def test_a_bound_endpoint_that_never_served_closes(tmp_path):
    endpoint = RestEndpoint("127.0.0.1", 0, jobs_directory=tmp_path)
    endpoint.close()
    assert list(tmp_path.iterdir()) == []


def test_close_waits_until_a_savepoint_outcome_was_fetched(tmp_path):
    job = FakeJob()
    endpoint = RestEndpoint("127.0.0.1", 0, jobs_directory=tmp_path, linger_s=60)
    endpoint.serve(job, "fake")
    _, body = call(endpoint, "POST", f"/jobs/{JOB_ID}/stop", {})
    job.futures[0].set_result("/sp/1")
    closer = threading.Thread(target=endpoint.close)
    closer.start()
    path = f"/jobs/{JOB_ID}/savepoints/{body['request-id']}"
    assert call(endpoint, "GET", path)[1]["operation"] == {"location": "/sp/1"}
    closer.join(30)
    assert not closer.is_alive()


def test_a_savepoint_still_running_at_close_is_failed_for_its_poller(tmp_path):
    job = FakeJob()
    endpoint = RestEndpoint("127.0.0.1", 0, jobs_directory=tmp_path, linger_s=60)
    endpoint.serve(job, "fake")
    _, body = call(endpoint, "POST", f"/jobs/{JOB_ID}/savepoints", {})
    closer = threading.Thread(target=endpoint.close)
    closer.start()
    path = f"/jobs/{JOB_ID}/savepoints/{body['request-id']}"
    for _ in range(10_000):  # IN_PROGRESS until close() has failed it
        answer = call(endpoint, "GET", path)[1]
        if answer["status"]["id"] == "COMPLETED":
            break
    closer.join(30)
    assert not closer.is_alive()
    assert "ended before the savepoint completed" in (
        answer["operation"]["failure-cause"]["message"])
