"""The CLI's pieces without a job: argument parsing, job id resolution, settings validation,
the shape of errors, and the REST client against a fake endpoint."""

import argparse
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flintlock.cli import jobs as job_commands
from flintlock.cli import run as run_command
from flintlock.cli.client import EndpointGoneError, RestCallError, RestClient, resolve_job
from flintlock.cli.errors import CliError
from flintlock.cli.main import build_parser, main
from flintlock.runtime.rest import jobfiles
from flintlock.runtime.rest.jobfiles import JobFile


def _job(job_id, port=1, pid=None, token="tok"):
    return JobFile(job_id, f"job {job_id[:4]}", "127.0.0.1", port, token, pid or os.getpid(), 1)


@pytest.fixture
def home(monkeypatch, tmp_path):
    monkeypatch.setenv("FLINTLOCK_HOME", str(tmp_path))
    return tmp_path / "jobs"


# -- parsing ------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [[], ["run"], ["list"], ["cancel"], ["savepoint"], ["stop"]])
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as info:
        main([*command, "--help"])
    assert info.value.code == 0
    assert capsys.readouterr().out.startswith("usage: flintlock")


def test_run_takes_the_scripts_arguments_after_the_script():
    args = build_parser().parse_args(["run", "-p", "2", "job.py", "--input", "x", "-p", "9"])
    assert (args.parallelism, args.script, args.args) == (2, "job.py", ["--input", "x", "-p", "9"])


def test_stop_savepoint_directory_is_optional():
    parse = build_parser().parse_args
    assert parse(["stop", "abc", "--savepoint"]).savepoint == ""
    assert parse(["stop", "abc", "--savepoint", "/sp"]).savepoint == "/sp"
    assert parse(["stop", "abc"]).savepoint == ""


def test_verbose_is_accepted_before_and_after_the_command():
    parse = build_parser().parse_args
    assert parse(["-v", "list"]).verbose and parse(["list", "--verbose"]).verbose
    assert not hasattr(parse(["list"]), "verbose")


@pytest.mark.parametrize("argv,first_line", [
    ([], "error: no command given"),
    (["frobnicate"], "error: argument COMMAND: invalid choice: 'frobnicate'"),
    (["cancel"], "error: the following arguments are required: JOB_ID"),
    (["savepoint", "x", "--timeout", "soon"], "error: argument --timeout: invalid float value"),
])
def test_usage_errors_are_one_line_and_a_hint(argv, first_line, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(first_line) and err[1].startswith("hint: `flintlock")
    assert len(err) == 2


def test_an_unexpected_error_is_still_one_line_without_verbose(monkeypatch, capsys, home):
    def broken(*args):
        raise KeyError("surprise")
    monkeypatch.setattr(job_commands, "remove_stale_job_files", broken)
    assert main(["list"]) == 1
    assert capsys.readouterr().err == (
        "error: unexpected KeyError: 'surprise'\nhint: rerun with --verbose for the traceback\n")


# -- job ids ------------------------------------------------------------------------------------

def test_resolve_by_full_id_or_unique_prefix():
    jobs = [_job("abc1" + "0" * 28), _job("abd2" + "0" * 28)]
    assert resolve_job("abc1" + "0" * 28, jobs) is jobs[0]
    assert resolve_job("abd", jobs) is jobs[1]
    assert resolve_job("ABD", jobs) is jobs[1]


def test_an_ambiguous_prefix_names_the_candidates():
    jobs = [_job("abc1" + "0" * 28), _job("abd2" + "0" * 28)]
    with pytest.raises(CliError) as info:
        resolve_job("ab", jobs)
    assert "ambiguous" in info.value.message and jobs[0].job_id in info.value.message
    assert info.value.hint == "give more characters of the job id"


@pytest.mark.parametrize("given", ["zzz", ""])
def test_no_match(given):
    with pytest.raises(CliError) as info:
        resolve_job(given, [_job("abc" + "0" * 29)])
    assert info.value.message.startswith(f"no running job with id {given!r}")
    assert info.value.hint == "`flintlock list` shows running jobs"


def test_jobs_of_dead_processes_are_ignored_and_list_cleans_them(home, capsys):
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(30)
    jobfiles.write_job_file(_job("dead" + "0" * 28, pid=child.pid))
    with pytest.raises(CliError):
        resolve_job("dead")
    assert main(["list"]) == 0
    assert capsys.readouterr().out == "No running jobs.\n"
    assert list(home.iterdir()) == []


# -- run settings -------------------------------------------------------------------------------

def _run_args(**overrides):
    values = {"conf": None, "parallelism": None, "master": None, "from_savepoint": None,
              "script": "job.py", "args": [], "detached": False}
    values.update(overrides)
    return argparse.Namespace(**values)


def test_settings_flags_win_over_conf_entries():
    args = _run_args(conf=["parallelism.default=5", "spark.executor.memory=2g",
                           "execution.checkpointing.interval = 10 s"], parallelism=3)
    assert run_command.settings_from_args(args) == {
        "parallelism.default": "3", "spark.executor.memory": "2g",
        "execution.checkpointing.interval": "10 s"}


def test_a_value_may_contain_equals_signs():
    args = _run_args(conf=["pipeline.name=a=b"])
    assert run_command.settings_from_args(args) == {"pipeline.name": "a=b"}


def test_the_merged_file_keeps_the_users_keys(tmp_path, monkeypatch):
    (tmp_path / "flintlock-conf.yaml").write_text(
        "pipeline:\n  name: mine\nparallelism.default: 2\n")
    monkeypatch.setenv("FLINTLOCK_CONF_DIR", str(tmp_path))
    merged = run_command.merged_configuration({"parallelism.default": "7"})
    assert merged.get_string("pipeline.name") == "mine"
    assert merged.get_integer("parallelism.default") == 7


def test_run_reads_flinks_file_once_and_the_script_sees_its_keys(tmp_path, monkeypatch, caplog):
    flink, own = tmp_path / "flink", tmp_path / "own"
    flink.mkdir()
    own.mkdir()
    (flink / "config.yaml").write_text(
        "parallelism.default: 5\ntaskmanager.memory.process.size: 1728m\n")
    monkeypatch.setenv("FLINK_CONF_DIR", str(flink))
    monkeypatch.setenv("FLINTLOCK_CONF_DIR", str(own))
    seen = tmp_path / "seen.json"
    script = tmp_path / "job.py"
    script.write_text(
        "import json, os, sys\n"
        "from flintlock.common.config import Configuration\n"
        "json.dump([Configuration.load().get_integer('parallelism.default'),\n"
        "           os.environ.get('FLINK_CONF_DIR')], open(sys.argv[1], 'w'))\n")
    with caplog.at_level("WARNING", logger="flintlock.common.config"):
        assert main(["run", str(script), str(seen)]) == 0
    assert json.loads(seen.read_text()) == [5, None]
    assert os.environ["FLINK_CONF_DIR"] == str(flink)
    assert len([r for r in caplog.records if "taskmanager.memory.process.size"
                in r.getMessage()]) == 1


def test_detached_runs_the_same_command_attached():
    args = _run_args(parallelism=2, master="local[2]", from_savepoint="/sp",
                     conf=["a.b=c"], script="job.py", args=["--x", "1"], detached=True)
    assert run_command._attached_command(args)[1:] == [
        "-m", "flintlock.cli.main", "run", "--parallelism", "2", "--master", "local[2]",
        "--from-savepoint", "/sp", "--conf", "a.b=c", "job.py", "--x", "1"]


def test_detached_reports_a_script_that_exits_before_a_job_starts(home, tmp_path, capsys):
    script = tmp_path / "quick.py"
    script.write_text("import sys\nsys.exit(4)\n")
    assert main(["run", "--detached", str(script)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "error: the job script exited (code 4) before a job started"
    assert err[1].startswith(f"hint: its output is in {home.parent / 'log'}")


# -- the REST client ----------------------------------------------------------------------------

class _Fake(BaseHTTPRequestHandler):
    answers: dict = {}

    def do_GET(self):
        status, body = self.answers[self.path]
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_endpoint():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Fake)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


def test_http_errors_carry_the_endpoints_message(fake_endpoint):
    _Fake.answers = {"/a": (404, {"errors": ["Job x not found"]}),
                     "/b": (401, {"errors": ["bad token"]}), "/c": (200, b"<html>")}
    client = RestClient(_job("f" * 32, port=fake_endpoint.server_address[1]))
    with pytest.raises(RestCallError) as info:
        client.get("/a")
    assert (info.value.status, info.value.message) == (404, "GET /a failed (404): Job x not found")
    with pytest.raises(RestCallError) as info:
        client.get("/b")
    assert "token" in info.value.hint
    with pytest.raises(CliError) as info:
        client.get("/c")
    assert "not JSON" in info.value.message


def test_a_closed_endpoint_means_the_job_ended(fake_endpoint):
    port = fake_endpoint.server_address[1]
    fake_endpoint.shutdown()
    fake_endpoint.server_close()
    with pytest.raises(EndpointGoneError):
        RestClient(_job("f" * 32, port=port)).get("/jobs")


def test_list_marks_jobs_it_cannot_ask(home, fake_endpoint, capsys):
    _Fake.answers = {f"/jobs/{'a' * 32}": (500, {"errors": ["internal"]})}
    jobfiles.write_job_file(_job("a" * 32, port=fake_endpoint.server_address[1]))
    assert main(["list"]) == 0
    assert "UNREACHABLE" in capsys.readouterr().out.splitlines()[1]


@pytest.mark.parametrize("operation,message,hint", [
    ({"failure-cause": {"class": "x.NoSavepointDirectoryError",
                        "message": "no savepoint target directory given"}},
     "failed: no savepoint target directory given", "set execution.checkpointing.savepoint-dir"),
    ({"failure-cause": {"class": "x.Other", "message": "disk full"}}, "failed: disk full",
     "the job's log has the details"),
])
def test_a_failed_savepoint_becomes_an_error(operation, message, hint):
    with pytest.raises(CliError) as info:
        job_commands._location(_job("a" * 32), {"status": {"id": "COMPLETED"},
                                                "operation": operation})
    assert info.value.message.endswith(message) and info.value.hint.startswith(hint)


def test_errors_survive_pickling():
    import pickle

    for error in (CliError("m", "h", 3), RestCallError("m", "h", 404), EndpointGoneError("m")):
        copy = pickle.loads(pickle.dumps(error))
        assert (type(copy), str(copy), copy.hint) == (type(error), str(error), error.hint)


def test_local_directories_are_made_absolute_urls_are_not(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert job_commands.absolute("sp") == str(tmp_path / "sp")
    assert job_commands.absolute("/abs/sp") == "/abs/sp"
    assert job_commands.absolute("s3://bucket/sp") == "s3://bucket/sp"
    assert job_commands.absolute(None) is None


def test_a_relative_savepoint_to_restore_is_resolved_here(monkeypatch, tmp_path):
    (tmp_path / "sp").mkdir()
    monkeypatch.chdir(tmp_path)
    settings = run_command.settings_from_args(_run_args(from_savepoint="sp"))
    assert settings["execution.state-recovery.path"] == str(tmp_path / "sp")


job_ids = st.text(alphabet="0123456789abcdef", min_size=32, max_size=32)


@given(ids=st.lists(job_ids, min_size=0, max_size=6, unique=True),
       given_id=st.text(alphabet="0123456789abcdef", min_size=0, max_size=33))
def test_resolution_picks_the_exact_or_only_matching_job_or_fails(ids, given_id):
    jobs = [_job(job_id) for job_id in ids]
    matching = [job for job in jobs if given_id and job.job_id.startswith(given_id)]
    exact = [job for job in jobs if job.job_id == given_id]
    try:
        chosen = resolve_job(given_id, jobs)
    except CliError:
        assert not exact and len(matching) != 1
    else:
        assert chosen in (exact or matching) and (exact or len(matching) == 1)


def test_runs_as_a_module(tmp_path):
    env = {**os.environ, "FLINTLOCK_HOME": str(tmp_path)}
    command = [sys.executable, "-m", "flintlock.cli.main"]
    listing = subprocess.run([*command, "list"], env=env, capture_output=True, text=True,
                             timeout=120)
    assert (listing.returncode, listing.stdout) == (0, "No running jobs.\n")
    cancel = subprocess.run([*command, "cancel", "abc"], env=env, capture_output=True,
                            text=True, timeout=120)
    assert cancel.returncode == 1
    assert cancel.stderr.splitlines()[0].startswith("error: no running job with id 'abc'")
