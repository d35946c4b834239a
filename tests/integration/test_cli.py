"""The REST endpoint and the ``flintlock`` command against real jobs: a JobManager with
TaskManagers as threads (``use_thread_executor``), RPC and TCP between them, and the
endpoint each job starts. Waits are bounded polls for a state, never timed assertions."""

import json
import os
import threading
import urllib.error
import urllib.request

import pytest

from flintlock.cli.main import main
from flintlock.common import WatermarkStrategy
from flintlock.common.config import Configuration
from flintlock.common.job_status import JobStatus
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.runtime.rest import jobfiles
from flintlock.testing.executor import use_thread_executor
from flintlock.testing.gates import FileGate, GatedNumberSequenceSource
from flintlock.testing.waiting import wait_for


def _never(pair):
    return False


@pytest.fixture
def home(monkeypatch, tmp_path):
    monkeypatch.setenv("FLINTLOCK_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("FLINTLOCK_CONF_DIR", raising=False)
    return tmp_path / "home"


@pytest.fixture
def executor(monkeypatch, home):
    return use_thread_executor(monkeypatch)


@pytest.fixture
def running_job(executor, tmp_path, request):
    """A keyed job at parallelism 1 that runs until it is cancelled or stopped: its source
    holds after 1000 of its numbers at a gate nobody opens (idle, so checkpoints every 200 ms,
    or the interval a test asks for: indirect parameter, complete while the tests take
    savepoints)."""
    interval_ms = getattr(request, "param", None)
    config = (Configuration()
              .set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
              .set_string("execution.checkpointing.savepoint-dir", str(tmp_path / "sp-default"))
              .set_string("rest.port", "0"))
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(1)
    env.enable_checkpointing(interval_ms or 200)
    source = GatedNumberSequenceSource(0, 49_999, FileGate(tmp_path / "gate"), before_gate=1000)
    (env.from_source(source, WatermarkStrategy.no_watermarks(), "numbers")
     .key_by(lambda x: x % 3).map(lambda x: (x % 3, 1))
     .key_by(lambda pair: pair[0]).reduce(lambda a, b: (a[0], a[1] + b[1]))
     .filter(_never).print())
    client = env.execute_async("slow counts")
    assert client.jm.wait_until_running(60)
    yield client
    client.jm.cancel()
    assert client.join(60)


def _ended(client):
    """Why a job is gone, for assertion messages."""
    result = client.get_job_execution_result()
    return (client.jm.get_status(), result.done() and repr(result.exception()))


def _job_file(client):
    (job,) = [job for job in jobfiles.read_job_files() if job.job_id == client.get_job_id()]
    return job


def _call(job, method, path, body=None, token=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(job.url + path, data=data, method=method)
    if token != "":
        request.add_header("Authorization", f"Bearer {token or job.token}")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _poll(check, explain=lambda: ""):
    """Calls ``check`` until it returns something truthy (bounded); returns that."""
    try:
        return wait_for(check, timeout_s=60)
    except AssertionError as error:
        raise AssertionError(f"{error} {explain()}") from None


def _savepoint_location(job, trigger_id):
    def completed():
        body = _call(job, "GET", f"/jobs/{job.job_id}/savepoints/{trigger_id}")[1]
        return body if body["status"]["id"] == "COMPLETED" else None

    def explain():
        checkpoints = _call(job, "GET", f"/jobs/{job.job_id}/checkpoints")[1]
        details = _call(job, "GET", f"/jobs/{job.job_id}")[1]
        return json.dumps({"history": checkpoints["history"][:3], "counts": checkpoints["counts"],
                           "vertices": details["vertices"]})
    return _poll(completed, explain=explain)["operation"]


# -- the REST endpoint --------------------------------------------------------------------------

@pytest.mark.parametrize("running_job", [200], indirect=True)
def test_every_read_path_of_a_running_job(running_job):
    job = _job_file(running_job)
    assert (job.name, job.pid) == ("slow counts", os.getpid())
    assert _call(job, "GET", "/jobs", token="")[0] == 401
    assert _call(job, "GET", f"/jobs/{job.job_id}", token="not-the-token")[0] == 401

    status, body = _call(job, "GET", "/jobs")
    assert status == 200 and body["jobs"][0]["id"] == job.job_id
    assert body["jobs"][0]["status"] == "RUNNING"
    overview = _call(job, "GET", "/jobs/overview")[1]["jobs"][0]
    assert overview["name"] == "slow counts" and overview["tasks"]["RUNNING"] >= 2

    details = _call(job, "GET", f"/jobs/{job.job_id}")[1]
    assert details["state"] == "RUNNING" and details["attempt"] == 0
    assert [v["status"] for v in details["vertices"]] == ["RUNNING"] * len(details["vertices"])
    assert any(v["name"].startswith("Source") for v in details["vertices"])

    def a_completed_checkpoint():
        body = _call(job, "GET", f"/jobs/{job.job_id}/checkpoints")[1]
        return body if body["counts"]["completed"] >= 1 else None
    checkpoints = _poll(a_completed_checkpoint)
    latest = checkpoints["latest"]["completed"]
    assert latest["status"] == "COMPLETED" and latest["num_acknowledged_subtasks"] >= 2
    assert latest["end_to_end_duration"] >= 0 and "alignment_duration" in latest
    assert os.path.exists(latest["external_path"])

    assert _call(job, "GET", f"/jobs/{job.job_id}/nothing")[0] == 404
    assert _call(job, "GET", "/jobs/0000/checkpoints")[0] == 404


def test_savepoint_over_rest_then_cancel(running_job, tmp_path):
    job = _job_file(running_job)
    status, body = _call(job, "POST", f"/jobs/{job.job_id}/savepoints",
                         {"target-directory": str(tmp_path / "sp"), "cancel-job": False})
    assert status == 202
    location = _savepoint_location(job, body["request-id"])["location"]
    assert location.startswith(str(tmp_path / "sp"))
    assert os.path.exists(os.path.join(location, "_metadata"))

    assert _call(job, "PATCH", f"/jobs/{job.job_id}?mode=cancel")[0] == 202
    assert running_job.jm.wait_for_status({JobStatus.CANCELED}, 60)
    assert running_job.join(60)
    assert jobfiles.read_job_files() == []
    assert not [t for t in threading.enumerate() if t.name.startswith("flintlock-rest")]


def test_stop_over_rest_ends_the_job_after_a_savepoint(running_job, tmp_path):
    job = _job_file(running_job)
    status, body = _call(job, "POST", f"/jobs/{job.job_id}/stop",
                         {"targetDirectory": str(tmp_path / "final")})
    assert status == 202
    location = _savepoint_location(job, body["request-id"])["location"]
    assert os.path.exists(os.path.join(location, "_metadata"))
    assert running_job.jm.wait_for_status({JobStatus.FINISHED}, 60)
    assert running_job.join(60)
    assert jobfiles.read_job_files() == []


# -- the CLI against it -------------------------------------------------------------------------

def test_cli_list_shows_the_running_job(running_job, capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["JOB", "ID", "NAME", "STATUS", "START", "TIME", "REST", "HEALTH"]
    row = out[1]
    assert row.startswith(running_job.get_job_id())
    assert "slow counts" in row and "RUNNING" in row and _job_file(running_job).url in row
    assert "/s from sources, backpressure " in row and "checkpoint" in row


def test_cli_info_shows_vertices_and_the_latest_checkpoint(running_job, capsys):
    def info():
        assert main(["info", running_job.get_job_id()[:6]]) == 0
        return capsys.readouterr().out

    out = wait_for(info, lambda out: "Latest checkpoint: #" in out, 60,
                   "no checkpoint completed")
    lines = out.splitlines()
    assert lines[0].startswith(f"Job {running_job.get_job_id()} 'slow counts': RUNNING")
    assert lines[1] == f"Dashboard: {_job_file(running_job).url}/ (with the token of the job file)"
    assert lines[2].split() == ["VERTEX", "PAR", "STATUS", "IN", "OUT", "BUSY", "BACKPRESSURE"]
    vertex_rows = lines[3:-1]
    assert len(vertex_rows) == len(running_job.jm.job_graph.vertices)
    assert all(row.split()[-1] in ("ok", "low", "high") for row in vertex_rows)
    assert lines[-1].startswith("Latest checkpoint: #")
    names = [row.split()[0] for row in vertex_rows]
    sources = [v.name.split()[0] for v in running_job.jm.job_graph.vertices if v.is_source]
    assert names[0] in sources  # pipeline order: a source first


def test_cli_savepoint_by_prefix_then_cancel(running_job, tmp_path, capsys):
    prefix = running_job.get_job_id()[:6]
    assert main(["savepoint", prefix, str(tmp_path / "sp")]) == 0
    out = capsys.readouterr().out
    path = out.split("Savepoint completed. Path: ")[1].splitlines()[0]
    assert os.path.exists(os.path.join(path, "_metadata"))
    assert path.startswith(str(tmp_path / "sp"))

    assert main(["cancel", prefix]) == 0, _ended(running_job)
    assert capsys.readouterr().out == f"Cancelled job {running_job.get_job_id()}.\n"
    assert running_job.jm.get_status() is JobStatus.CANCELED


def test_cli_savepoint_goes_to_the_configured_directory_by_default(running_job, tmp_path,
                                                                   capsys):
    assert main(["savepoint", running_job.get_job_id()]) == 0
    path = capsys.readouterr().out.split("Path: ")[1].splitlines()[0]
    assert path.startswith(str(tmp_path / "sp-default"))


def test_cli_stop_with_savepoint(running_job, tmp_path, capsys):
    assert main(["stop", running_job.get_job_id(), "--savepoint", str(tmp_path / "stop")]) == 0
    out = capsys.readouterr().out
    path = out.split("Path: ")[1].splitlines()[0]
    assert os.path.exists(os.path.join(path, "_metadata"))
    assert out.endswith(f"Stopped job {running_job.get_job_id()}.\n")
    assert running_job.jm.wait_for_status({JobStatus.FINISHED}, 60)


def test_cli_stop_with_drain(running_job, tmp_path, capsys):
    """``--drain`` (issue 29; before, the REST API refused it): the source ends its input
    before the savepoint, the job finishes."""
    assert main(["stop", running_job.get_job_id(), "--savepoint", str(tmp_path / "stop"),
                 "--drain"]) == 0
    path = capsys.readouterr().out.split("Path: ")[1].splitlines()[0]
    assert os.path.exists(os.path.join(path, "_metadata"))
    assert running_job.jm.wait_for_status({JobStatus.FINISHED}, 60)


def test_cli_unknown_job_id(running_job, capsys):
    assert main(["cancel", "zzz"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: no running job with id 'zzz'")
    assert err.splitlines()[1] == "hint: `flintlock list` shows running jobs"
    assert "Traceback" not in err
    assert running_job.jm.get_status() is JobStatus.RUNNING


def test_cli_list_with_no_jobs(home, capsys):
    assert main(["list"]) == 0
    assert capsys.readouterr().out == "No running jobs.\n"
