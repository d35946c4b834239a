"""The one-line progress status a long ``execute()`` prints in a terminal (issue 15):

``flintlock: word count RUNNING 0:01:23 · 41.2k rec/s from sources · backpressure ok ·
checkpoint 12 2 s ago``

rewritten in place once a second on standard error, only when that is a terminal and
``flintlock.progress-line`` is true (the default); turned off, or not a terminal (a log
file, a pipe, a notebook), nothing is written. The line is built from the JobManager's
description — the metrics the TaskManagers' heartbeats carry (docs/metrics.md) — by
``progress_line``, a pure function; ``ProgressLine`` is the thread that prints it and, when
the job ends, redraws it once with the job's final state (FINISHED, CANCELED, FAILED) and
ends the line.

Output of this process never lands on the line (issue 30): while it is shown, ``sys.stdout``
and ``sys.stderr`` are wrapped (``_AboveTheLine``) so that a write first erases the line,
then writes, and the line is drawn again below once the output ended its line — print-sink
lines of TaskManagers hosted in this process and the job script's own prints go above it.
Output of other processes writing to the same terminal (Spark's Python workers, where the
print sink of an embedded-Spark job writes) cannot be wrapped from here, so on a terminal
that has them (``for_terminal``: a tty, ``TERM`` not ``dumb``, at least 3 rows) the line is
*pinned*, as apt pins its progress bar: the terminal's scroll region is set to every row but
the last, the line is drawn on the last row (cursor saved and restored around it), and every
process's output scrolls above it. ``stop`` resets the scroll region, clears the pinned row
and prints the final line where the output ended.

Threads: ``ProgressLine`` owns one daemon thread; ``start``/``stop`` from the caller's; the
line's state is guarded by one lock shared with the wrapped streams.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
import time
from collections.abc import Iterable
from typing import Any, TextIO

from flintlock.runtime.jobmanager import JobDescription
from flintlock.runtime.metrics import DistributionValue
from flintlock.runtime.metrics.report import BACKPRESSURED, NUM_RECORDS_OUT, PER_SECOND
from flintlock.runtime.rest.metrics_views import BackPressureLevel

INTERVAL_S = 1.0
_SAVE, _RESTORE, _CLEAR_LINE, _RESET_REGION = "\0337", "\0338", "\033[2K", "\033[r"


def _rate(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:.2f}M rec/s"
    if value >= 1e3:
        return f"{value / 1e3:.1f}k rec/s"
    return f"{value:.0f} rec/s"


def _number(value: float | DistributionValue | None) -> float:
    return 0.0 if value is None or isinstance(value, DistributionValue) else float(value)


def progress_line(job: JobDescription, source_vertices: Iterable[str], now_ms: int) -> str:
    """The status of ``job``: state, running time, records per second leaving its sources,
    the worst backpressure level, the latest completed checkpoint."""
    sources = set(source_vertices)
    rate = worst = 0.0
    for task in job.tasks:
        report = task.metrics
        if report is None:
            continue
        if task.vertex_id in sources:
            rate += _number(report.value(NUM_RECORDS_OUT + PER_SECOND))
        worst = max(worst, _number(report.value(BACKPRESSURED)) / 1000)
    elapsed = max(0, now_ms - job.start_time_ms) // 1000
    parts = [f"flintlock: {job.name} {job.status} "
             f"{elapsed // 3600}:{elapsed // 60 % 60:02d}:{elapsed % 60:02d}",
             f"{_rate(rate)} from sources", f"backpressure {BackPressureLevel.of(worst).value}"]
    latest = getattr(job.checkpoints, "latest_completed", None)
    if latest is not None:
        done_ms = latest.trigger_timestamp + (latest.end_to_end_duration_ms or 0)
        parts.append(f"checkpoint {int(latest.checkpoint_id)} "
                     f"{max(0, now_ms - done_ms) / 1000:.0f} s ago")
    return " · ".join(parts)


class _AboveTheLine:
    """A stream whose writes go above the progress line (see the module doc)."""

    def __init__(self, inner: TextIO, owner: ProgressLine) -> None:
        self._inner = inner
        self._owner = owner

    def write(self, text: str) -> int:
        with self._owner.lock:
            self._owner.erase_locked()
            written = self._inner.write(text)
            self._inner.flush()
            self._owner.mid_line = bool(text) and not text.endswith("\n")
            if not self._owner.mid_line:
                self._owner.redraw_locked()
            return written

    def flush(self) -> None:
        self._inner.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class ProgressLine:
    """Prints ``progress_line`` of ``job`` (a ``JobManager``) to ``stream`` every
    ``interval_s`` until ``stop``; with ``wrap_streams``, this process's standard output and
    error go above the line meanwhile."""

    def __init__(self, job: Any, stream: TextIO, interval_s: float = INTERVAL_S,
                 wrap_streams: bool = False, pinned: os.terminal_size | None = None) -> None:
        self._job = job
        self._pinned = pinned  # the terminal's size: draw on its last row
        self._stream = stream
        self._interval_s = interval_s
        self._sources = [str(v.id) for v in job.job_graph.vertices if v.is_source]
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"flintlock-progress-{job.job_id[:8]}")
        self._width = 0
        self._line = ""
        self._last: JobDescription | None = None
        self._wrap = wrap_streams
        self._wrapped: tuple[Any, Any] | None = None
        self.lock = threading.RLock()
        self.mid_line = False  # other output has not ended its line: do not draw now

    @classmethod
    def for_terminal(cls, job: Any, stream: TextIO) -> ProgressLine:
        """Pinned to the last row where the terminal allows it, else rewritten in place with
        this process's output wrapped (see the module doc)."""
        size = None
        if os.environ.get("TERM", "dumb") != "dumb":
            try:
                size = os.get_terminal_size(stream.fileno())
            except (OSError, ValueError, AttributeError):
                size = None
        if size is not None and size.lines >= 3 and size.columns >= 20:
            return cls(job, stream, pinned=size)
        return cls(job, stream, wrap_streams=True)

    def start(self) -> ProgressLine:
        if self._pinned is not None:
            rows = self._pinned.lines
            self._stream.write(f"\n{_SAVE}\033[1;{rows - 1}r{_RESTORE}\033[1A")
            self._stream.flush()
        if self._wrap:
            self._wrapped = (sys.stdout, sys.stderr)
            sys.stdout = _AboveTheLine(sys.stdout, self)
            sys.stderr = _AboveTheLine(sys.stderr, self)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()
        self._unwrap()
        if self._pinned is not None:
            self._unpin()
            return
        with self.lock:
            final = self._final_line()
            if final is not None and not self.mid_line:
                self._write_locked(final)
            if self._width:
                self._stream.write("\n")
                self._stream.flush()
            self._width = 0

    def _unpin(self) -> None:
        rows = self._pinned.lines if self._pinned is not None else 0
        self._stream.write(f"{_SAVE}{_RESET_REGION}\033[{rows};1H{_CLEAR_LINE}{_RESTORE}")
        final = self._final_line()
        if final is not None:
            self._stream.write(final + "\n")
        self._stream.flush()

    def _unwrap(self) -> None:
        if self._wrapped is None:
            return
        if isinstance(sys.stdout, _AboveTheLine):
            sys.stdout = self._wrapped[0]
        if isinstance(sys.stderr, _AboveTheLine):
            sys.stderr = self._wrapped[1]
        self._wrapped = None

    def _final_line(self) -> str | None:
        """The last line again, with the job's final state (None: nothing was drawn)."""
        if self._last is None:
            return None
        status = getattr(self._job, "get_status", None)
        if status is None:
            return None
        final = status()
        name = getattr(final, "name", str(final))
        last = self._last
        if dataclasses.is_dataclass(last):
            last = dataclasses.replace(last, status=name)
        return progress_line(last, self._sources, int(time.time() * 1000))

    def _run(self) -> None:
        while not self._stopped.wait(self._interval_s):
            try:
                description = self._job.describe(self._interval_s)
            except TimeoutError:
                continue  # the JobManager is busy (deploying, restarting): next time
            self._last = description
            self._write(progress_line(description, self._sources, int(time.time() * 1000)))

    def _write(self, line: str) -> None:
        with self.lock:
            self._line = line
            if not self.mid_line:
                self._write_locked(line)

    def _write_locked(self, line: str) -> None:
        self._line = line
        if self._pinned is not None:
            shown = line[:self._pinned.columns - 1]
            self._stream.write(f"{_SAVE}\033[{self._pinned.lines};1H{_CLEAR_LINE}{shown}"
                               f"{_RESTORE}")
            self._stream.flush()
            return
        self._stream.write("\r" + line.ljust(self._width))
        self._stream.flush()
        self._width = len(line)

    def erase_locked(self) -> None:
        """Erases the line (called by a wrapped stream, under ``lock``)."""
        if self._width and not self.mid_line:
            self._stream.write("\r" + " " * self._width + "\r")
            self._stream.flush()
            self._width = 0

    def redraw_locked(self) -> None:
        """Draws the line again after other output (under ``lock``)."""
        if self._line and not self._stopped.is_set():
            self._write_locked(self._line)
