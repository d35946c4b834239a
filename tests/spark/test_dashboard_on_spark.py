"""The dashboard's TaskManager views and the archive on embedded Spark (issue 30): the
TaskManagers run as Spark tasks in Spark's Python workers, so what they print (the print
sink) and log goes to those processes' streams; the dashboard's ``stdout`` and ``log`` views
show it through the heartbeats, and the archive the job leaves in
``jobmanager.archive.fs.dir`` keeps it with the job's other views, served back by the history
server."""

from __future__ import annotations

import json
import logging
import sys
import urllib.request

import cloudpickle
import pytest

from flintlock.common.config import Configuration
from flintlock.datastream import MapFunction, StreamExecutionEnvironment
from flintlock.runtime.rest.archive import read_archive
from flintlock.runtime.rest.history_server import HistoryServer

pytestmark = [pytest.mark.spark]
cloudpickle.register_pickle_by_value(sys.modules[__name__])

N = 20


class Logging(MapFunction):
    def map(self, value):
        if value == N - 1:
            logging.getLogger("dashboard.test").warning("the last record: %d", value)
        return f"record-{value}"


def test_a_spark_taskmanagers_stdout_and_log_reach_the_archive(tmp_path):
    archive = tmp_path / "archive"
    config = (Configuration()
              .set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
              .set_string("restart-strategy.type", "none")
              .set_string("rest.port", "0")
              .set_string("heartbeat.interval", "200 ms")
              .set_string("jobmanager.archive.fs.dir", str(archive)))
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(1)
    env.from_collection(list(range(N))).map(Logging()).name("Logging").print()
    client = env.execute_async("dashboard on spark")
    assert client.join(300)
    assert client.jm.get_status().name == "FINISHED"
    job = client.get_job_id()
    views = read_archive(client.rest_endpoint.archive_path)
    stdout = views[f"/jobs/{job}/taskmanagers/tm-0/stdout"].body
    assert all(f"record-{i}" in stdout for i in range(N)), stdout
    log = views[f"/jobs/{job}/taskmanagers/tm-0/log"].body
    assert f"WARNING dashboard.test: the last record: {N - 1}" in log, log

    server = HistoryServer(archive, port=0)
    try:
        request = urllib.request.Request(f"{server.url}/jobs/{job}",
                                         headers={"Authorization": f"Bearer {server.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.loads(response.read())["state"] == "FINISHED"
    finally:
        server.close()
