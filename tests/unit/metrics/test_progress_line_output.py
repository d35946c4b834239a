"""The progress line and the job's own output (issue 30): prints go above the line, never on
it; the line's last state is the job's final state. A fake JobManager; bounded waits."""

import io
import sys
import threading

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


class Screen:
    """A small VT100 screen: enough of it (text, CR/LF, save/restore cursor, scroll region,
    cursor position and up, erase line) to show what a pinned progress line looks like."""

    def __init__(self, rows, columns):
        self.rows, self.columns = rows, columns
        self.cells = [[" "] * columns for _ in range(rows)]
        self.row = self.col = 0
        self.top, self.bottom = 0, rows - 1
        self.saved = (0, 0)

    def feed(self, text):
        i = 0
        while i < len(text):
            char = text[i]
            if char == "\033":
                i = self._escape(text, i + 1)
                continue
            if char == "\n":
                self._line_feed()
            elif char == "\r":
                self.col = 0
            elif self.col < self.columns:
                self.cells[self.row][self.col] = char
                self.col += 1
            i += 1

    def _line_feed(self):  # a tty's output turns "\n" into CR LF
        self.col = 0
        if self.row == self.bottom:
            del self.cells[self.top]
            self.cells.insert(self.bottom, [" "] * self.columns)
        else:
            self.row = min(self.row + 1, self.rows - 1)

    def _escape(self, text, i):
        if text[i] == "7":
            self.saved = (self.row, self.col)
            return i + 1
        if text[i] == "8":
            self.row, self.col = self.saved
            return i + 1
        assert text[i] == "["
        end = i + 1
        while not text[end].isalpha():
            end += 1
        args, command = text[i + 1:end], text[end]
        numbers = [int(n) for n in args.split(";") if n]
        if command == "r":
            self.top, self.bottom = (numbers[0] - 1, numbers[1] - 1) if numbers else (
                0, self.rows - 1)
            self.row = self.col = 0
        elif command == "H":
            self.row, self.col = numbers[0] - 1, numbers[1] - 1
        elif command == "A":
            self.row = max(0, self.row - (numbers[0] if numbers else 1))
        elif command == "K":
            self.cells[self.row] = [" "] * self.columns
        return end + 1

    def lines(self):
        return ["".join(row).rstrip() for row in self.cells]


class ScreenStream:
    """One write at a time, as a terminal takes each process's write(2) whole."""

    def __init__(self, screen):
        self.screen = screen
        self.lock = threading.Lock()

    def write(self, text):
        with self.lock:
            self.screen.feed(text)
        return len(text)

    def flush(self):
        pass


def test_a_pinned_line_keeps_other_processes_output_above_it():
    import os

    screen = Screen(8, 80)
    stream = ScreenStream(screen)
    screen.feed("$ python job.py\n")
    job = EndingJob()
    printer = ProgressLine(job, stream, interval_s=0.01,
                           pinned=os.terminal_size((80, 8))).start()
    try:
        wait_until(lambda: screen.lines()[-1].startswith("flintlock: word count RUNNING"),
                   30, "the line on the last row")
        for n in range(12):  # a Spark worker's print sink: the same terminal, not wrapped
            stream.write(f"2> ({n},2000)\n")
        wait_until(lambda: screen.lines()[-1].startswith("flintlock:"), 30, "a redraw")
        shown = screen.lines()
        assert shown[-1].startswith("flintlock: word count RUNNING")
        assert shown[-2] == ""  # the cursor's row, where the next output goes
        assert shown[-3] == "2> (11,2000)"
        assert all("flintlock:" not in line for line in shown[:-1])
    finally:
        job.status = JobStatus.FINISHED
        printer.stop()
    shown = [line for line in screen.lines() if line]
    assert shown[-1].startswith("flintlock: word count FINISHED")
    assert shown[-2] == "2> (11,2000)"
    assert screen.bottom == screen.rows - 1  # the scroll region is the whole screen again
