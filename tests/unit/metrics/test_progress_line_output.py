"""The progress line and the job's own output (issue 30): prints go above the line, never on
it; the line's last state is the job's final state. A fake JobManager; bounded waits."""

import io
import sys

from flintlock.common.job_status import JobStatus
from flintlock.runtime.progress import ProgressLine
from flintlock.testing.waiting import wait_until
from tests.unit.metrics.test_progress_line import FakeJob


class EndingJob(FakeJob):
    status = JobStatus.RUNNING

    def get_status(self):
        return self.status


class Terminal(io.StringIO):
    """What a terminal shows: ``\\r`` returns to the line's start, text overwrites."""

    def screen(self):
        lines = []
        for raw in self.getvalue().split("\n"):
            shown = ""
            for part in raw.split("\r"):
                shown = part + shown[len(part):]
            lines.append(shown.rstrip())
        return lines


def test_prints_go_above_the_line_and_the_last_state_is_the_final_one(monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    monkeypatch.setattr(sys, "stderr", terminal)
    job = EndingJob()
    printer = ProgressLine(job, terminal, interval_s=0.01, wrap_streams=True).start()
    try:
        wait_until(lambda: terminal.getvalue().count("\r") >= 2, 30, "fewer than two updates")
        print("2> (1,2000)")
        sys.stdout.write("3> (2,")
        sys.stdout.write("4000)\n")
        wait_until(lambda: terminal.getvalue().count("\r") >= 8, 30, "no redraw after output")
    finally:
        job.status = JobStatus.CANCELED
        printer.stop()
    assert sys.stdout is terminal  # unwrapped
    screen = [line for line in terminal.screen() if line]
    assert "2> (1,2000)" in screen and "3> (2,4000)" in screen
    for line in screen:  # no line holds both the job's output and the status
        assert not ("flintlock:" in line and ("(1,2000)" in line or "(2,4000)" in line))
    assert screen[-1].startswith("flintlock: word count CANCELED")
    assert screen.index("3> (2,4000)") < len(screen) - 1
