"""JobFailedError prints the TaskManager's traceback, user frames first (issue 30)."""

from __future__ import annotations

from flintlock.runtime.jobmanager.errors import (
    DistinctFailures,
    JobFailedError,
    fold_runtime_frames,
    task_note,
)
from flintlock.runtime.rpc.errors import RemoteTraceback

ROOTS = ("/opt/flintlock/", "/usr/lib/python3.11/")
TEXT = '''Traceback (most recent call last):
  File "/opt/flintlock/runtime/tasks/stream_task.py", line 248, in run
    self._run_source()
  File "/opt/flintlock/runtime/tasks/operators.py", line 77, in process_batch
    out = [f(r) for r in records]
  File "/home/me/boom_job.py", line 5, in parse
    return 10 // (value - 3)
  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads
    return _default_decoder.decode(s)
ZeroDivisionError: integer division or modulo by zero
'''


def test_user_frames_come_first_and_runtime_frames_are_counted():
    folded = fold_runtime_frames(TEXT, ROOTS).splitlines()
    assert folded[1:3] == ['  File "/home/me/boom_job.py", line 5, in parse',
                           "    return 10 // (value - 3)"]
    assert folded[3].startswith("  ... 3 runtime frames folded")
    assert folded[-1] == "ZeroDivisionError: integer division or modulo by zero"


def test_a_traceback_without_user_frames_keeps_the_innermost_one():
    text = TEXT.replace("/home/me/boom_job.py", "/opt/flintlock/x.py")
    folded = fold_runtime_frames(text, ROOTS)
    assert '"/usr/lib/python3.11/json/__init__.py", line 346' in folded
    assert "3 runtime frames folded" in folded


def test_job_failed_error_prints_the_remote_traceback():
    error = JobFailedError("boom", "ZeroDivisionError: integer division or modulo by zero")
    assert str(error) == "job 'boom' failed: ZeroDivisionError: integer division or modulo by zero"
    cause = ZeroDivisionError("integer division or modulo by zero")
    cause.__cause__ = RemoteTraceback(TEXT)
    error.__cause__ = cause
    assert error.remote_traceback == TEXT
    lines = str(error).splitlines()
    assert lines[0].startswith("job 'boom' failed: ZeroDivisionError")
    assert lines[1].startswith("TaskManager traceback")
    assert '  File "/home/me/boom_job.py", line 5, in parse' in lines


def test_a_failure_repeated_on_every_restart_is_logged_once():
    failures = DistinctFailures()
    first = ZeroDivisionError("integer division or modulo by zero")
    first.__cause__ = RemoteTraceback(TEXT)
    again = ZeroDivisionError("integer division or modulo by zero")
    again.__cause__ = RemoteTraceback(TEXT)
    other = ValueError("bad record")
    trace = failures.traceback_if_new(first)
    assert trace is not None and "boom_job.py" in trace
    assert failures.traceback_if_new(again) is None
    assert "ValueError: bad record" in failures.traceback_if_new(other)
    assert failures.traceback_if_new(other) is None


def test_the_failure_names_its_task_and_operators():
    cause = TypeError("'int' object is not iterable")
    cause.add_note(task_note("Source -> parse", 1, 2, (("Source", None), ("parse", "p-1"))))
    error = JobFailedError("boom", "TypeError: 'int' object is not iterable")
    error.__cause__ = cause
    assert str(error).splitlines()[1] == (
        "in task 'Source -> parse' (2/2); operators: 'Source' (no uid), 'parse' (uid 'p-1')")
