"""``flintlock run`` of job scripts written to a temporary directory, in this process, with the
TaskManagers as threads (``use_thread_executor``)."""

import json
import os
import sys
import textwrap

import pytest

from flintlock.cli.main import main
from flintlock.testing.executor import use_thread_executor

JOB_SCRIPT = """
import json
import sys

from helper import times_ten  # a module next to the script
from flintlock.datastream import StreamExecutionEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
conf = env.get_configuration()
result = sorted(env.from_collection([1, 2, 3]).map(times_ten).execute_and_collect())
with open(sys.argv[1], "w") as out:
    json.dump({
        "name": __name__, "argv": sys.argv[1:], "parallelism": env.get_parallelism(),
        "master": conf.get_string("flintlock.spark.master"),
        "recovery": conf.get_string("execution.state-recovery.path"),
        "buffer_timeout": conf.get_string("execution.buffer-timeout"),
        "max_parallelism": conf.get_string("pipeline.max-parallelism"),
        "result": result,
    }, out)
"""


@pytest.fixture
def workdir(monkeypatch, tmp_path):
    """A working directory without a conf file, a private FLINTLOCK_HOME, the thread
    executor."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("FLINTLOCK_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("FLINTLOCK_CONF_DIR", raising=False)
    use_thread_executor(monkeypatch)
    return work


def _script(directory, source, name="job.py"):
    jobs = directory / "jobs"
    jobs.mkdir(exist_ok=True)
    (jobs / "helper.py").write_text("def times_ten(x):\n    return x * 10\n")
    path = jobs / name
    path.write_text(textwrap.dedent(source))
    return path


def test_run_applies_the_command_line_settings_to_the_script(workdir, tmp_path):
    script = _script(tmp_path, JOB_SCRIPT)
    out = tmp_path / "out.json"
    argv_before, path_before = sys.argv[:], sys.path[:]
    code = main(["run", "--parallelism", "2", "--master", "local[3]",
                 "--conf", "execution.buffer-timeout=5 ms",
                 "-D", "pipeline.max-parallelism=64", str(script), str(out), "--flag"])
    assert code == 0
    seen = json.loads(out.read_text())
    assert seen == {
        "name": "__main__", "argv": [str(out), "--flag"], "parallelism": 2,
        "master": "local[3]", "recovery": None, "buffer_timeout": "5 ms",
        "max_parallelism": "64", "result": [10, 20, 30],
    }
    assert (sys.argv, sys.path) == (argv_before, path_before)
    assert "FLINTLOCK_CONF_DIR" not in os.environ


def test_from_savepoint_sets_the_recovery_path(workdir, tmp_path):
    savepoint = tmp_path / "sp"
    savepoint.mkdir()
    out = tmp_path / "out.txt"
    script = _script(tmp_path, """
        import sys
        from flintlock.datastream import StreamExecutionEnvironment
        conf = StreamExecutionEnvironment.get_execution_environment().get_configuration()
        open(sys.argv[1], "w").write(conf.get_string("execution.state-recovery.path"))
        """)
    assert main(["run", "-s", str(savepoint), str(script), str(out)]) == 0
    assert out.read_text() == str(savepoint)


def test_the_users_conf_file_is_kept_and_the_command_line_wins(workdir, tmp_path):
    (workdir / "flintlock-conf.yaml").write_text(
        "parallelism.default: 3\npipeline:\n  max-parallelism: 32\n"
        "execution.buffer-timeout: 7 ms\n")
    out = tmp_path / "out.json"
    assert main(["run", "--conf", "execution.buffer-timeout=1 ms",
                 str(_script(tmp_path, JOB_SCRIPT)), str(out)]) == 0
    seen = json.loads(out.read_text())
    assert (seen["parallelism"], seen["max_parallelism"], seen["buffer_timeout"]) == (
        3, "32", "1 ms")


def test_the_conf_dir_variable_names_the_users_file(workdir, tmp_path, monkeypatch):
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    (conf_dir / "flintlock-conf.yaml").write_text("parallelism.default: 4\n")
    monkeypatch.setenv("FLINTLOCK_CONF_DIR", str(conf_dir))
    out = tmp_path / "out.json"
    assert main(["run", str(_script(tmp_path, JOB_SCRIPT)), str(out)]) == 0
    assert json.loads(out.read_text())["parallelism"] == 4
    assert os.environ["FLINTLOCK_CONF_DIR"] == str(conf_dir)


def test_a_failing_script_is_one_line_and_a_hint(workdir, tmp_path, capsys):
    script = _script(tmp_path, "raise RuntimeError('boom')\n")
    assert main(["run", str(script)]) == 1
    err = capsys.readouterr().err
    assert err == (f"error: the job script {script} failed: RuntimeError: boom\n"
                   "hint: rerun with --verbose for the traceback\n")


def test_verbose_shows_the_traceback(workdir, tmp_path, capsys):
    script = _script(tmp_path, "def job():\n    raise RuntimeError('boom')\njob()\n")
    assert main(["run", "--verbose", str(script)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "in job" in err and "RuntimeError: boom" in err


def test_a_failing_job_reports_the_job_failure(workdir, tmp_path, capsys):
    script = _script(tmp_path, """
        from flintlock.datastream import StreamExecutionEnvironment
        env = StreamExecutionEnvironment.get_execution_environment()
        env.get_configuration().set_string("restart-strategy.type", "none")
        env.from_collection([1, 2]).map(lambda x: 1 // (x - 2)).print()
        env.execute("divide")
        """)
    assert main(["run", str(script)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"error: the job script {script} failed: ")
    assert "divide" in err[0] and err[-1] == "hint: rerun with --verbose for the traceback"
    # the task, then the user's frame first (issue 30)
    assert err[1].startswith("in task 'Source: Collection Source -> Map")
    assert f'  File "{script}", line 5, in <lambda>' in err


def test_sys_exit_in_the_script_is_the_exit_code(workdir, tmp_path):
    assert main(["run", str(_script(tmp_path, "import sys\nsys.exit(3)\n"))]) == 3
    assert main(["run", str(_script(tmp_path, "import sys\nsys.exit()\n"))]) == 0


@pytest.mark.parametrize("argv,message,hint", [
    (["run", "--conf", "paralelism.default=2", "job.py"],
     "error: unknown configuration key 'paralelism.default'; did you mean "
     "'parallelism.default'?", "hint: docs/configuration.md lists every configuration key"),
    (["run", "--conf", "parallelism.default=many", "job.py"],
     "error: invalid value 'many' for configuration key 'parallelism.default'",
     "hint: docs/configuration.md lists every configuration key"),
    (["run", "--conf", "no-equals-sign", "job.py"],
     "error: --conf 'no-equals-sign': expected key=value", "hint: for example"),
    (["run", "missing.py"], "error: no job script at missing.py",
     "hint: give the path of a Python file"),
    (["run", "--from-savepoint", "/no/such/savepoint", "job.py"],
     "error: savepoint /no/such/savepoint does not exist", "hint: `flintlock savepoint`"),
    (["run", "--parallelism", "0", "job.py"],
     "error: argument -p/--parallelism: expected a number >= 1, not 0",
     "hint: `flintlock run --help` shows the usage"),
    (["run"], "error: the following arguments are required: SCRIPT",
     "hint: `flintlock run --help`"),
])
def test_bad_input_is_refused_before_the_script_runs(workdir, capsys, argv, message, hint):
    (workdir / "job.py").write_text("raise AssertionError('the script ran')\n")
    code = main(argv)
    err = capsys.readouterr().err.splitlines()
    assert code != 0
    assert len(err) == 2 and err[0].startswith(message) and err[1].startswith(hint)


def test_a_broken_conf_file_is_reported(workdir, tmp_path, capsys):
    (workdir / "flintlock-conf.yaml").write_text("no-such.key: 1\n")
    assert main(["run", str(_script(tmp_path, "pass\n"))]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: unknown configuration key 'no-such.key'")
