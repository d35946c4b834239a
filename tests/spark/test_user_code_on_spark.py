"""A job's own code on embedded Spark (issue 13, docs/usercode.md): files given to
``add_python_file`` travel through Spark to every TaskManager process, their modules import
lazily from function bodies, resolution follows ``classloader.resolve-order`` and the
parent-first patterns, and a reused Python worker sees each job's own versions — except that
a worker whose job left a thread running retires instead of serving the next job."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
import zipfile
from pathlib import Path

import cloudpickle
import pytest

from flintlock.common import Types
from flintlock.common.config import Configuration
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.runtime.jobmanager import JobFailedError

pytestmark = [pytest.mark.spark, pytest.mark.slow]
cloudpickle.register_pickle_by_value(sys.modules[__name__])
PROGRAM = Path(__file__).with_name("usercode_program.py")


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_files_zips_and_data_reach_every_task_manager(tmp_path):
    library = _write(tmp_path / "lib", {
        "helper.py": "def tag(x):\n    return f'helper:{x}'\n",
        "tables/__init__.py": (
            "from importlib.resources import files\n"
            "import os\n"
            "def by_resources():\n"
            "    return files(__name__).joinpath('names.txt').read_text().split()\n"
            "def by_path():\n"
            "    here = os.path.dirname(__file__)\n"
            "    with open(os.path.join(here, 'names.txt')) as handle:\n"
            "        return handle.read().split()\n"),
        "tables/names.txt": "zero\none\ntwo\nthree\n",
    })
    zipped = tmp_path / "zipped.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("zipped_mod.py", "def triple(x):\n    return 3 * x\n")
    config = Configuration().set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
    config.set_string("flintlock.python.dependencies-dir", str(tmp_path / "deps"))
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.add_python_file(str(library))
    env.add_python_file(str(zipped))

    def describe(x: int) -> list[str]:
        import helper
        import tables
        import zipped_mod
        return [helper.tag(x), tables.by_resources()[x % 4], tables.by_path()[x % 4],
                str(zipped_mod.triple(x)), str(os.getpid()), helper.__file__]

    rows = list(env.from_collection(list(range(20))).rebalance()
                .map(describe, output_type=Types.LIST(Types.STRING()))
                .execute_and_collect("job files on spark"))
    names = ["zero", "one", "two", "three"]
    assert sorted(tuple(r[:4]) for r in rows) == sorted(
        (f"helper:{x}", names[x % 4], names[x % 4], str(3 * x)) for x in range(20))
    pids = {int(r[4]) for r in rows}
    assert os.getpid() not in pids and len(pids) == 2  # two TaskManager processes
    deps = tmp_path / "deps"
    assert all(r[5].startswith(str(deps)) for r in rows)  # imported from the unpacked copy


@pytest.fixture(scope="module")
def program_output(tmp_path_factory) -> dict[str, dict]:
    """Runs ``usercode_program.py`` once with an "installed" directory on PYTHONPATH."""
    work = tmp_path_factory.mktemp("usercode")
    versioned = {name: "VERSION = '{which}'\n" for name in
                 ("probe_mod.py", "pfa/__init__.py", "pfb/__init__.py", "pfd/__init__.py")}
    versioned["probe_mod.py"] += "def version():\n    return VERSION\n"
    for which in ("installed", "shipped"):
        _write(work / which, {n: t.format(which=which) for n, t in versioned.items()})
    _write(work / "shipped", {"colorsys.py": "SHIPPED = True\n"})
    for version in ("v1", "v2"):
        _write(work / version, {"probe_mod.py": f"VERSION = '{version}'\n"})
    _write(work / "leak", {"leaky.py": (
        "import os, threading, time\n"
        "_started = []\n"
        "def tick(count):\n"
        "    return count + 1\n"
        "def _loop(path):\n"
        "    count, outcome = 0, 'deadline'\n"
        "    deadline = time.monotonic() + 30\n"
        "    while time.monotonic() < deadline:\n"
        "        try:\n"
        "            count = tick(count)\n"
        "        except Exception as exc:\n"
        "            outcome = type(exc).__name__\n"
        "            break\n"
        "        time.sleep(0.001)\n"
        "    with open(path, 'w') as handle:\n"
        "        handle.write(f'{count} {outcome}')\n"
        "def start(prefix):\n"
        "    if not _started:\n"
        "        _started.append(1)\n"
        "        path = f'{prefix}-{os.getpid()}'\n"
        "        threading.Thread(target=_loop, args=(path,), name='leaky-ticker').start()\n")})
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(work / "installed"), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, str(PROGRAM), str(work)], env=env, cwd=str(work),
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-6000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    output = {line["job"]: line for line in lines}
    output["work"] = {"path": str(work)}
    return output


def test_child_first_ships_win_except_parent_first_patterns(program_output):
    rows = program_output["order-child-first"]["rows"]
    body = [r for r in rows if "body" in r]
    through_globals = [r for r in rows if "module" in r]
    assert len(body) == 8 and len(through_globals) == 8
    assert {r["body"] for r in body} == {"shipped"}
    assert {(r["module"], r["function"]) for r in through_globals} == {("shipped", "shipped")}
    # additional patterns with a trailing dot (pfa.) and without (pfb), and a default one
    assert {(r["pfa"], r["pfb"], r["pfd"]) for r in body} == {
        ("installed", "installed", "installed")}
    assert not any(r["colorsys_shipped"] for r in body)


def test_parent_first_prefers_installed_modules(program_output):
    rows = program_output["order-parent-first"]["rows"]
    assert {r["body"] for r in rows if "body" in r} == {"installed"}
    assert {(r["module"], r["function"]) for r in rows if "module" in r} == {
        ("installed", "installed")}


def test_successive_jobs_on_reused_workers_see_their_own_versions(program_output):
    reuse = program_output["reuse"]
    first = {(v, int(pid)) for v, pid in reuse["first"]}
    second = {(v, int(pid)) for v, pid in reuse["second"]}
    assert {v for v, _ in first} == {"v1"} and {v for v, _ in second} == {"v2"}
    assert {pid for _, pid in first} & {pid for _, pid in second}  # a worker was reused


def test_a_leaked_thread_is_reported_stopped_and_its_worker_not_reused(program_output):
    reuse = program_output["reuse"]
    leaking_pids = {int(pid) for _, pid in reuse["leaking"]}
    after = {(v, int(pid)) for v, pid in reuse["after"]}
    assert {v for v, _ in after} == {"v1"}
    assert not leaking_pids & {pid for _, pid in after}
    assert len(reuse["retirements"]) == len(leaking_pids)
    assert all("leaky-ticker" in message for message in reuse["retirements"])
    work = Path(program_output["work"]["path"])
    for pid in leaking_pids:  # the thread ran until its job's code was retired
        count, outcome = (work / f"leaked-{pid}").read_text().split()
        assert outcome == "LeakedUserCodeError" and int(count) > 0


def test_an_import_error_on_a_task_manager_says_where_it_looked(tmp_path):
    config = Configuration().set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
    config.set_string("flintlock.python.dependencies-dir", str(tmp_path / "deps"))
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.add_python_file(str(_write(tmp_path / "lib", {"present.py": "X = 1\n"})))

    def needs_a_missing_module(x: int) -> int:
        import fl_absent_module  # noqa: F401
        return x

    with pytest.raises(JobFailedError) as failed:
        list(env.from_collection([1, 2]).map(needs_a_missing_module)
             .execute_and_collect("missing module"))
    text = "".join(traceback.format_exception(failed.value))
    assert "looked for 'fl_absent_module'" in text
    assert "classloader.resolve-order: child-first" in text
    assert f"python.files entry {tmp_path / 'lib'}" in text
