"""The progress line on a real pseudo-terminal (issue 30): ``execute()`` pins it to the last
row, the job's print-sink lines scroll above it, and it ends with the job's final state. The
job runs in a child process whose standard streams are the pty, TaskManagers as threads; the
terminal's output is replayed on the small VT100 screen of the unit tests. Waits are bounded
reads, not sleeps."""

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time

from flintlock.testing.gates import FileGate
from tests.unit.metrics.test_progress_line_output import Screen

ROWS, COLUMNS = 12, 100
SCRIPT = '''
import sys
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.testing.environments import local_configuration
from flintlock.testing.executor import ThreadExecutor
from flintlock.testing.gates import FileGate
import flintlock.datastream.stream_execution_environment as environment

executor = ThreadExecutor()
environment.load_executor = lambda: executor
gate = FileGate(sys.argv[2])


def held(value):
    if value == 20:
        gate.wait_open(60)  # the parent opens it once it saw the line drawn
    return value


env = StreamExecutionEnvironment.get_execution_environment(
    local_configuration(sys.argv[1], options={"heartbeat.interval": "100 ms"}))
env.set_parallelism(1)
env.from_collection(list(range(40))).map(held).print()
env.execute("pinned")
'''


def _read(fd, until, budget_s=60.0):
    """What the pty shows until ``until(data)`` holds, it closes, or ``budget_s`` passed."""
    data = b""
    deadline = time.monotonic() + budget_s
    while not until(data) and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the pty
                break
            if not chunk:
                break
            data += chunk
    return data


def test_the_line_is_pinned_below_the_jobs_output_on_a_real_terminal(tmp_path):
    script = tmp_path / "pinned_job.py"
    script.write_text(SCRIPT, encoding="utf-8")
    gate = tmp_path / "gate"
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    env = dict(os.environ, TERM="xterm", SPARK_LOCAL_IP="127.0.0.1")
    child = subprocess.Popen([sys.executable, str(script), str(tmp_path / "job"), str(gate)],
                             stdin=slave, stdout=slave, stderr=slave, env=env,
                             cwd=os.getcwd())
    os.close(slave)
    try:
        shown = _read(master, lambda data: b"flintlock: pinned RUNNING" in data)
        assert f"\033[1;{ROWS - 1}r".encode() in shown, shown[-2000:]
        FileGate(gate).open()
        rest = _read(master, lambda data: False)
        assert child.wait(60) == 0
    finally:
        if child.poll() is None:
            child.kill()
        os.close(master)
    screen = Screen(ROWS, COLUMNS)
    screen.feed((shown + rest).decode("utf-8", "replace"))
    lines = [line for line in screen.lines() if line]
    assert lines[-1].startswith("flintlock: pinned FINISHED")
    assert lines[-2] == "39"  # the print sink's last line, above the final status
    assert not any("flintlock:" in line for line in lines[:-1])
    assert screen.bottom == ROWS - 1  # the scroll region was reset
