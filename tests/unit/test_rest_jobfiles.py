"""Job files: written atomically and privately, read back, stale ones skipped and cleaned."""

import os
import stat
import subprocess
import sys

import pytest

from flintlock.runtime.rest import jobfiles
from flintlock.runtime.rest.jobfiles import JobFile


def _job(job_id="a" * 32, pid=None, start=1_000):
    return JobFile(job_id, "word count", "127.0.0.1", 8081, "tok", pid or os.getpid(), start)


@pytest.fixture
def dead_pid():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(30)
    return child.pid


def test_the_directory_follows_flintlock_home(monkeypatch, tmp_path):
    monkeypatch.setenv("FLINTLOCK_HOME", str(tmp_path / "home"))
    assert jobfiles.jobs_dir() == tmp_path / "home" / "jobs"
    monkeypatch.delenv("FLINTLOCK_HOME")
    assert jobfiles.jobs_dir() == jobfiles.Path("~/.flintlock/jobs").expanduser()


def test_written_private_and_read_back(tmp_path):
    directory = tmp_path / "jobs"
    path = jobfiles.write_job_file(_job(), directory)
    assert path == directory / f"{'a' * 32}.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert jobfiles.read_job_files(directory) == [_job()]
    assert [p.name for p in directory.iterdir()] == [path.name]  # no temporary left


def test_read_sorted_by_start_time(tmp_path):
    jobfiles.write_job_file(_job("b" * 32, start=2), tmp_path)
    jobfiles.write_job_file(_job("c" * 32, start=1), tmp_path)
    assert [job.job_id for job in jobfiles.read_job_files(tmp_path)] == ["c" * 32, "b" * 32]


def test_stale_files_are_skipped_and_cleaned(tmp_path, dead_pid):
    jobfiles.write_job_file(_job("d" * 32, pid=dead_pid), tmp_path)
    jobfiles.write_job_file(_job("e" * 32), tmp_path)
    assert [job.job_id for job in jobfiles.read_job_files(tmp_path)] == ["e" * 32]
    assert jobfiles.remove_stale_job_files(tmp_path) == [tmp_path / f"{'d' * 32}.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{'e' * 32}.json"]


def test_corrupt_files_are_skipped_not_fatal(tmp_path):
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "partial.json").write_text('{"job_id": "x"}')
    (tmp_path / "list.json").write_text("[]")
    jobfiles.write_job_file(_job(), tmp_path)
    assert jobfiles.read_job_files(tmp_path) == [_job()]
    assert jobfiles.remove_stale_job_files(tmp_path) == []


def test_a_missing_directory_has_no_jobs(tmp_path):
    assert jobfiles.read_job_files(tmp_path / "nope") == []


def test_remove(tmp_path):
    jobfiles.write_job_file(_job(), tmp_path)
    jobfiles.remove_job_file("a" * 32, tmp_path)
    jobfiles.remove_job_file("a" * 32, tmp_path)  # twice is harmless
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_directory_is_a_typed_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(jobfiles.JobFileError) as info:
        jobfiles.write_job_file(_job(), blocker / "jobs")
    assert str(blocker) in str(info.value)


def test_urls_bracket_ipv6_addresses():
    assert _job().url == "http://127.0.0.1:8081"
    ipv6 = JobFile("f" * 32, "n", "::1", 9, "t", 1, 0)
    assert ipv6.url == "http://[::1]:9"


def test_process_alive(dead_pid):
    assert jobfiles.process_alive(os.getpid())
    assert not jobfiles.process_alive(dead_pid)
    assert not jobfiles.process_alive(0)


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs Linux /proc")
def test_an_ended_but_unreaped_process_is_not_alive():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # ended, left unreaped
        assert not jobfiles.process_alive(child.pid)
    finally:
        child.wait(30)
