"""The progress status in a Jupyter notebook (issue 30): one display, created once and then
updated in place (never a new output line per second), ending with the job's final state;
``in_notebook`` tells a Jupyter kernel from other shells. The display is a fake with
IPython's call shape (``display(bundle, raw=True, display_id=True)`` → a handle with
``update``)."""

import sys
import types

from flintlock.common.job_status import JobStatus
from flintlock.runtime.notebook_progress import NotebookProgress, in_notebook
from flintlock.testing.waiting import wait_until
from tests.unit.metrics.test_progress_line_output import EndingJob


class FakeDisplay:
    def __init__(self):
        self.created = []
        self.updates = []

    def __call__(self, bundle, raw, display_id):
        assert raw is True and display_id is True
        self.created.append(bundle["text/plain"])
        return self

    def update(self, bundle, raw):
        assert raw is True
        self.updates.append(bundle["text/plain"])


def test_one_display_updated_in_place_ending_with_the_final_state():
    job = EndingJob()
    display = FakeDisplay()
    progress = NotebookProgress(job, display, interval_s=0.01).start()
    wait_until(lambda: len(display.updates) >= 2, 30, "fewer than two updates")
    job.status = JobStatus.FINISHED
    progress.stop()
    assert len(display.created) == 1  # one line in the cell, not one per second
    assert "RUNNING" in display.created[0] and "41.2k rec/s from sources" in display.created[0]
    assert "FINISHED" in display.updates[-1] and "RUNNING" not in display.updates[-1]


def test_in_notebook_only_in_a_jupyter_kernel(monkeypatch):
    class ZMQInteractiveShell:
        pass

    class TerminalInteractiveShell:
        pass

    fake = types.ModuleType("IPython")
    monkeypatch.setitem(sys.modules, "IPython", fake)
    fake.get_ipython = lambda: ZMQInteractiveShell()
    assert in_notebook()
    fake.get_ipython = lambda: TerminalInteractiveShell()
    assert not in_notebook()
    fake.get_ipython = lambda: None
    assert not in_notebook()
    monkeypatch.delitem(sys.modules, "IPython")
    assert not in_notebook()
