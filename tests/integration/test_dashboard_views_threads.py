"""The dashboard's REST views for running and ended jobs, TaskManagers as threads (issue 30):
a vertex's subtask table, the metric history kept on the server from the job's start, the
per-subtask checkpoint details, the job's TaskManagers, the real state of a restarting job's
vertices with the failure's traceback in the exception history, and the archive a finished
job leaves in ``jobmanager.archive.fs.dir``, served back by the history server (and the
``flintlock history`` command). Waits are bounded polls for a value, never timed assertions.
"""

import io
import json
import logging
import threading
import urllib.error
import urllib.request
from argparse import Namespace

import pytest

from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.functions import MapFunction
from flintlock.runtime.rest.archive import read_archive
from flintlock.runtime.rest.history_server import HistoryServer
from flintlock.testing.environments import local_configuration
from flintlock.testing.gates import FileGate, gated_numbers
from flintlock.testing.waiting import wait_for

WAIT_S = 60.0


def _environment(tmp_path, **options):
    config = local_configuration(tmp_path, options={
        "rest.port": "0", "heartbeat.interval": "100 ms", **options})
    return StreamExecutionEnvironment.get_execution_environment(config)


def _get(url, token, path, raw=False):
    request = urllib.request.Request(url + path, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        body = response.read()
    return body.decode() if raw else json.loads(body)


def _rest(client, path, raw=False):
    return _get(client.rest_endpoint.url, client.rest_endpoint.token, path, raw)


def _vertices(client):
    job = _rest(client, f"/jobs/{client.get_job_id()}")
    return {vertex["name"]: vertex["id"] for vertex in job["vertices"]}


def test_subtask_table_history_and_checkpoint_details_of_a_running_job(executor, tmp_path):
    env = _environment(tmp_path)
    env.set_parallelism(2)
    env.enable_checkpointing(100)
    gate = FileGate(tmp_path / "gate")
    gated_numbers(env, gate, 10_000, before_gate=500).map(lambda x: x * 2).name("Double") \
        .key_by(lambda x: x % 7).reduce(lambda a, b: a + b).name("Sum") \
        .filter(lambda x: False).print()
    client = env.execute_async("views")
    try:
        job = client.get_job_id()
        assert client.jm.wait_until_running(WAIT_S)
        vertices = _vertices(client)
        sum_id = next(v for name, v in vertices.items() if "Sum" in name)

        def subtasks():
            return _rest(client, f"/jobs/{job}/vertices/{sum_id}")["subtasks"]

        rows = wait_for(subtasks, lambda rows: len(rows) == 2 and all(
            r["state-size"] > 0 for r in rows) and sum(
            r["metrics"]["read-records"] for r in rows) == 1000, WAIT_S,
            "the 1000 records before the gate read by the Sum subtasks, and their state sizes")
        assert [r["subtask"] for r in rows] == [0, 1]
        for row in rows:
            assert row["status"] == "RUNNING" and row["taskmanager-id"].startswith("tm-")
            assert 0.0 <= row["busyRatio"] <= 1.0 and 0.0 <= row["idleRatio"] <= 1.0
            assert row["backPressuredRatio"] is not None
            assert row["watermark"] is None  # no watermark strategy: none arrived

        history = wait_for(lambda: _rest(client, f"/jobs/{job}/metrics-history"),
                           lambda h: len(h["times"]) >= 2, WAIT_S, "two history points")
        series = history["vertices"][sum_id]
        assert "Sum" in series["name"]
        assert len(series["records-in-per-second"]) == len(history["times"])
        assert any(rate and rate > 0 for rate in series["records-in-per-second"])
        assert history["times"] == sorted(history["times"])

        checkpoints = _rest(client, f"/jobs/{job}/checkpoints")["history"]
        completed = next(c for c in checkpoints if c["status"] == "COMPLETED")
        details = _rest(client, f"/jobs/{job}/checkpoints/details/{completed['id']}")
        assert details["tasks"][sum_id]["num_acknowledged_subtasks"] == 2
        per_subtask = _rest(client, f"/jobs/{job}/checkpoints/details/{completed['id']}"
                                    f"/subtasks/{sum_id}")
        assert [s["status"] for s in per_subtask["subtasks"]] == ["completed", "completed"]
        assert all(s["state_size"] > 0 and s["alignment"]["duration"] >= 0
                   for s in per_subtask["subtasks"])

        managers = _rest(client, f"/jobs/{job}/taskmanagers")["taskmanagers"]
        assert managers and all(m["id"].startswith("tm-") for m in managers)
        with pytest.raises(urllib.error.HTTPError) as missing:
            _rest(client, f"/jobs/{job}/checkpoints/details/999999")
        assert missing.value.code == 404
    finally:
        gate.open()
        client.jm.cancel()
        assert client.join(WAIT_S)


class FailsFirst(MapFunction):
    def open(self, runtime_context):
        self.attempt = runtime_context.get_attempt_number()

    def map(self, value):
        if self.attempt == 0:
            raise ZeroDivisionError(f"attempt {self.attempt} divides by zero")
        return value


def test_a_restarting_job_shows_restarting_and_the_failures_traceback(executor, tmp_path):
    env = _environment(tmp_path, **{"restart-strategy.type": "fixed-delay",
                                    "restart-strategy.fixed-delay.attempts": "3",
                                    "restart-strategy.fixed-delay.delay": "10 min",
                                    "jobmanager.archive.fs.dir": str(tmp_path / "archive")})
    env.set_parallelism(1)
    gate = FileGate(tmp_path / "gate")
    gated_numbers(env, gate, 1000, before_gate=10).map(FailsFirst()).name("Failing").print()
    client = env.execute_async("restarting")
    try:
        job = client.get_job_id()
        details = wait_for(lambda: _rest(client, f"/jobs/{job}"),
                           lambda d: d["state"] == "RESTARTING", WAIT_S, "RESTARTING")
        states = {v["name"]: v["status"] for v in details["vertices"]}
        assert "RUNNING" not in states.values(), states
        failing = next(status for name, status in states.items() if "Failing" in name)
        assert failing in ("FAILED", "RESTARTING")
        assert all(s["status"] != "RUNNING" for v in details["vertices"] for s in v["subtasks"])
        entries = _rest(client, f"/jobs/{job}/exceptions")["exceptionHistory"]["entries"]
        trace = entries[0]["stacktrace"]
        assert "ZeroDivisionError" in trace and "divides by zero" in trace
        assert __file__ in trace and "in map" in trace  # the user's frame, its real file
    finally:
        gate.open()
        client.jm.cancel()
        assert client.join(WAIT_S)
    assert client.jm.get_status().name == "CANCELED"
    views = read_archive(client.rest_endpoint.archive_path)  # a cancelled job is archived too
    assert views[f"/jobs/{job}"].body["state"] == "CANCELED"
    archived = views[f"/jobs/{job}/exceptions"].body["exceptionHistory"]["entries"]
    assert "divides by zero" in archived[0]["stacktrace"]


class Telling(MapFunction):
    """Prints and logs at its first record (what the TaskManager views show)."""

    def map(self, value):
        if value == 0:
            print("telling: the first record")
            logging.getLogger("dashboard.test").warning("telling: logged once")
        return value + 1


def test_a_finished_job_is_archived_and_served_by_the_history_server(executor, tmp_path):
    archive = tmp_path / "archive"
    env = _environment(tmp_path, **{"jobmanager.archive.fs.dir": str(archive)})
    env.set_parallelism(2)
    env.enable_checkpointing(50)
    env.from_collection(list(range(2000))).map(Telling()).name("Plus") \
        .key_by(lambda x: x % 3).reduce(lambda a, b: a + b).name("Total") \
        .filter(lambda x: False).print()
    client = env.execute_async("archived")
    client.wait(WAIT_S)
    assert client.join(WAIT_S)
    job = client.get_job_id()
    path = client.rest_endpoint.archive_path
    assert path == archive / f"{job}.json"
    assert (path.stat().st_mode & 0o777) == 0o600
    views = read_archive(path)
    assert views["/jobs/overview"].body["jobs"][0]["state"] == "FINISHED"
    vertex_ids = [v["id"] for v in views[f"/jobs/{job}"].body["vertices"]]
    assert all(f"/jobs/{job}/vertices/{v}" in views for v in vertex_ids)
    assert f"/jobs/{job}/metrics-history" in views and f"/jobs/{job}/config" in views
    managers = [m["id"] for m in views[f"/jobs/{job}/taskmanagers"].body["taskmanagers"]]
    stdout = "".join(views[f"/jobs/{job}/taskmanagers/{m}/stdout"].body for m in managers)
    log = "".join(views[f"/jobs/{job}/taskmanagers/{m}/log"].body for m in managers)
    assert "telling: the first record" in stdout
    assert "WARNING dashboard.test: telling: logged once" in log

    server = HistoryServer(archive, port=0)
    try:
        overview = _get(server.url, server.token, "/jobs/overview")
        assert [(j["jid"], j["state"]) for j in overview["jobs"]] == [(job, "FINISHED")]
        assert overview["jobs"][0]["end-time"] >= overview["jobs"][0]["start-time"]
        details = _get(server.url, server.token, f"/jobs/{job}")
        assert details["state"] == "FINISHED"
        assert all(v["status"] == "FINISHED" for v in details["vertices"])
        total = next(v for v in vertex_ids if "Total" in views[f"/jobs/{job}"].body[
            "vertices"][vertex_ids.index(v)]["name"])
        rows = _get(server.url, server.token, f"/jobs/{job}/vertices/{total}")["subtasks"]
        assert sum(r["metrics"]["read-records"] for r in rows) == 2000
        history = _get(server.url, server.token, f"/jobs/{job}/metrics-history")
        assert history["times"] and total in history["vertices"]
        with pytest.raises(urllib.error.HTTPError) as refused:
            _get(server.url, "wrong", "/jobs/overview")
        assert refused.value.code == 401
        request = urllib.request.Request(f"{server.url}/jobs/{job}?mode=cancel", method="PATCH",
                                         headers={"Authorization": f"Bearer {server.token}"})
        with pytest.raises(urllib.error.HTTPError) as read_only:
            urllib.request.urlopen(request, timeout=10)
        assert read_only.value.code == 405
        with urllib.request.urlopen(f"{server.url}/web/mode.json", timeout=10) as response:
            assert json.loads(response.read()) == {"mode": "history"}
    finally:
        server.close()


def test_the_history_command_serves_an_archive_directory(tmp_path):
    from flintlock.cli import history
    from flintlock.cli.main import main

    out = io.StringIO()
    stop = threading.Event()
    args = Namespace(dir=str(tmp_path), port=0)
    thread = threading.Thread(target=history.serve, args=(args, out, stop))
    thread.start()
    try:
        line = wait_for(out.getvalue, lambda text: "#token=" in text, WAIT_S, "the address")
        url, _, token = line.split(": ", 1)[1].split()[0].partition("/#token=")
        assert url.startswith("http://127.0.0.1:")
        assert _get(url, token, "/jobs/overview") == {"jobs": []}
    finally:
        stop.set()
        thread.join(WAIT_S)
    errors = io.StringIO()
    assert main(["history", "--dir", str(tmp_path / "missing")], errors) == 1
