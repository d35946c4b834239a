"""The progress line of a long execute(): its text from a job description, and the printer
rewriting it in place and ending it with a newline (a fake JobManager; bounded waits)."""

import io

from flintlock.common.ids import CheckpointId
from flintlock.runtime.checkpoint.stats import (
    CheckpointStatistics,
    CheckpointStats,
    CheckpointStatus,
)
from flintlock.runtime.jobmanager import JobDescription, TaskDescription
from flintlock.runtime.metrics import SubtaskMetricGroups, SubtaskMetrics, TaskIOCounters
from flintlock.runtime.metrics.report import TaskTimeSplit
from flintlock.runtime.progress import ProgressLine, progress_line
from flintlock.testing.waiting import wait_until


def _report(records_out, backpressured_ms, now_s):
    metrics = SubtaskMetrics(SubtaskMetricGroups().registry, (), 0.0)
    return metrics.sample(TaskIOCounters(0, records_out, 0, 0, 0.0, 0.0),
                          TaskTimeSplit(0, backpressured_ms, 0), now_s=now_s, wall_ms=0)


def _job(checkpoints=None):
    return JobDescription("j" * 32, "word count", "RUNNING", 0, 1_000, (
        TaskDescription("Source", "src", 0, "RUNNING", _report(41_200, 600, 1.0)),
        TaskDescription("Sink", "sink", 0, "RUNNING", _report(0, 0, 1.0)),
    ), checkpoints)


def test_the_line_sums_the_sources_and_takes_the_worst_level():
    line = progress_line(_job(), ["src"], now_ms=84_000)
    assert line == ("flintlock: word count RUNNING 0:01:23 · 41.2k rec/s from sources · "
                    "backpressure high")


def test_the_line_names_the_latest_completed_checkpoint():
    completed = CheckpointStats(CheckpointId(7), False, CheckpointStatus.COMPLETED, 80_000,
                                2, 2, 4096, 1_500.0, 0.0, 0.0, ())
    stats = CheckpointStatistics(7, 0, 7, 0, latest_completed=completed)
    line = progress_line(_job(stats), ["src"], now_ms=84_500)
    assert line.endswith(" · checkpoint 7 3 s ago")


class FakeJob:
    job_id = "f" * 32

    class job_graph:  # the attribute a JobManager has
        class _Vertex:
            id = "src"
            is_source = True

        vertices = (_Vertex,)

    def describe(self, timeout_s):
        return _job()


def test_the_printer_rewrites_one_line_and_ends_it():
    stream = io.StringIO()
    printer = ProgressLine(FakeJob(), stream, interval_s=0.01).start()
    wait_until(lambda: stream.getvalue().count("\r") >= 2, 30, "fewer than two updates")
    printer.stop()
    text = stream.getvalue()
    assert text.count("\r") >= 2 and text.endswith("\n") and text.count("\n") == 1
    assert "41.2k rec/s from sources" in text.split("\r")[-1]
