"""The progress line of ``execute()`` in a terminal, TaskManagers as threads: standard error
is a fake terminal that tells the job when a status line was written, so the job runs exactly
until then (a bounded wait, not a sleep); off by option, and off when not a terminal."""

import io
import sys
import threading

from flintlock.datastream import StreamExecutionEnvironment
from flintlock.testing.environments import local_configuration
from flintlock.testing.executor import use_thread_executor

SHOWN = threading.Event()


class FakeTerminal(io.StringIO):
    def __init__(self, tty=True):
        super().__init__()
        self._tty = tty

    def isatty(self):
        return self._tty

    def write(self, text):
        if text.startswith("\r"):
            SHOWN.set()
        return super().write(text)


def _hold_until_shown(value):
    if value == 0:
        SHOWN.wait(30)
    return value


def _run(monkeypatch, tmp_path, terminal, **options):
    use_thread_executor(monkeypatch)
    SHOWN.clear()
    monkeypatch.setattr(sys, "stderr", terminal)
    env = StreamExecutionEnvironment.get_execution_environment(
        local_configuration(tmp_path, options={"heartbeat.interval": "100 ms", **options}))
    env.set_parallelism(1)
    env.from_collection(list(range(100))).map(_hold_until_shown).filter(lambda x: False).print()
    env.execute("progress")
    return terminal.getvalue()


def test_execute_in_a_terminal_shows_one_line_and_ends_it(monkeypatch, tmp_path):
    text = _run(monkeypatch, tmp_path, FakeTerminal())
    assert SHOWN.is_set()
    assert text.startswith("\rflintlock: progress ") and text.endswith("\n")
    assert "rec/s from sources · backpressure " in text and text.count("\n") == 1


def test_no_line_when_turned_off_or_not_a_terminal(monkeypatch, tmp_path):
    use_thread_executor(monkeypatch)
    for terminal, options in ((FakeTerminal(), {"flintlock.progress-line": "false"}),
                              (FakeTerminal(False), {})):
        monkeypatch.setattr(sys, "stderr", terminal)
        env = StreamExecutionEnvironment.get_execution_environment(
            local_configuration(tmp_path, options=options))
        env.from_collection(list(range(100))).filter(lambda x: False).print()
        env.execute("quiet")
        assert terminal.getvalue() == ""
