"""The whole operator path on embedded Spark: ``flintlock run --detached`` starts a job script
in a background process (a Spark driver with its JobManager and REST endpoint), then
``list``, ``savepoint`` and ``cancel`` find and drive it through its job file."""

import contextlib
import os
import re
import signal

import pytest

from flintlock.cli.client import RestClient, resolve_job
from flintlock.cli.main import main
from flintlock.runtime.rest import jobfiles
from flintlock.testing.waiting import wait_until

# The job runs until cancelled: its source holds after 1000 numbers at a gate nobody opens.
SCRIPT = """
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.testing.gates import FileGate, gated_numbers

env = StreamExecutionEnvironment.get_execution_environment()
env.enable_checkpointing(500)
gate = FileGate(GATE_DIRECTORY)
gated_numbers(env, gate, 200_000, before_gate=1000).filter(lambda x: False).print()
env.execute("spark cli job")
"""
WAIT_S = 150.0


@pytest.mark.spark
def test_detached_run_on_spark_then_list_savepoint_and_cancel(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FLINTLOCK_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("FLINTLOCK_CONF_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "job.py"
    script.write_text(SCRIPT.replace("GATE_DIRECTORY", repr(str(tmp_path / "gate"))))
    code = main(["run", "--detached", "-p", "1", "--conf",
                 f"execution.checkpointing.dir={tmp_path / 'chk'}", "--conf", "rest.port=0",
                 str(script)])
    out = capsys.readouterr().out
    assert code == 0, out
    job_id = re.search(r"JobID ([0-9a-f]{32})", out).group(1)
    job = resolve_job(job_id)
    try:
        client = RestClient(job)
        wait_until(lambda: client.get(f"/jobs/{job_id}/checkpoints")["counts"]["completed"] >= 1,
                   WAIT_S, "no checkpoint completed")

        assert main(["list"]) == 0
        listing = capsys.readouterr().out
        assert job_id in listing and "spark cli job" in listing and "RUNNING" in listing

        assert main(["savepoint", job_id[:8], str(tmp_path / "sp")]) == 0
        path = capsys.readouterr().out.split("Path: ")[1].splitlines()[0]
        assert os.path.exists(os.path.join(path, "_metadata"))

        assert main(["cancel", job_id]) == 0
        assert capsys.readouterr().out == f"Cancelled job {job_id}.\n"
        wait_until(lambda: not jobfiles.process_alive(job.pid), WAIT_S, "the driver lives on")
        assert jobfiles.read_job_files() == []
    finally:
        if jobfiles.process_alive(job.pid):
            os.kill(job.pid, signal.SIGTERM)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(job.pid, 0)  # the driver is this process's child: reap it
