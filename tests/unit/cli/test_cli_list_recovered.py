"""``flintlock list`` marks a job a new driver took over after a driver failover (issue 16):
the REST job details say ``recovered``."""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from flintlock.cli.main import main
from flintlock.runtime.jobmanager import JobDescription
from flintlock.runtime.rest import jobfiles, views
from flintlock.runtime.rest.jobfiles import JobFile


class _Details(BaseHTTPRequestHandler):
    """Answers ``GET /jobs/<id>``: job ``a…`` was recovered, any other was not."""

    def do_GET(self):
        payload = json.dumps(_details(self.path.endswith("a" * 32))).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def endpoint(monkeypatch, tmp_path):
    monkeypatch.setenv("FLINTLOCK_HOME", str(tmp_path))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Details)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
    thread.join()


def _details(recovered):
    return views.job_details(JobDescription("a" * 32, "job", "RUNNING", 0, 0, (), None,
                                            recovered=recovered), 0)


def test_the_details_say_whether_the_job_was_recovered():
    assert _details(True)["recovered"] is True
    assert _details(False)["recovered"] is False


def test_list_marks_a_recovered_job(endpoint, capsys):
    for job_id in ("a" * 32, "b" * 32):
        jobfiles.write_job_file(JobFile(job_id, "job", "127.0.0.1", endpoint, "tok",
                                        os.getpid(), 1))
    assert main(["list"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert "RUNNING (recovered)" in rows["a" * 32]
    assert "recovered" not in rows["b" * 32]
