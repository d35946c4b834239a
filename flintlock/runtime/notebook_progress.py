"""The progress status of ``execute()`` in a Jupyter notebook: one output line that is updated
in place once a second, then shows the job's final state (issue 30).

In a notebook standard error is not a terminal, so ``progress.ProgressLine`` writes nothing
there; a notebook cell has its own way to update output in place, IPython's display with a
``display_id``: ``NotebookProgress`` shows the same text as the terminal's line
(``progress.progress_line``) in one ``text/plain`` display and updates that display, so the
cell shows one line that changes rather than a line per second. The job's own output (print
sink, prints) goes to the cell's streams as usual, above or below it; nothing is wrapped.

``in_notebook()`` tells a Jupyter kernel (IPython's ``ZMQInteractiveShell``) from a terminal
IPython or plain Python without importing IPython where it was not imported already.

Threads: the ``ProgressLine`` thread; ``display`` is called from it (IPython's display
publisher is thread-safe for ``update``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from flintlock.runtime.progress import INTERVAL_S, ProgressLine

Display = Callable[..., Any]
"""``IPython.display.display``: ``display(obj, raw=True, display_id=True)`` → a handle with
``update(obj, raw=True)``."""


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (an IPython ZMQ shell is running)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def _ipython_display() -> Display:
    from IPython.display import display

    return display  # type: ignore[no-any-return]


class NotebookProgress(ProgressLine):
    """``ProgressLine`` drawn into one updating notebook display."""

    def __init__(self, job: Any, display: Display | None = None,
                 interval_s: float = INTERVAL_S) -> None:
        super().__init__(job, sys.stderr, interval_s)
        self._display = display or _ipython_display()
        self._handle: Any = None

    def _write(self, line: str) -> None:
        with self.lock:
            bundle = {"text/plain": line}
            if self._handle is None:
                self._handle = self._display(bundle, raw=True, display_id=True)
            else:
                self._handle.update(bundle, raw=True)

    def stop(self) -> None:
        """Stops the updates and shows the job's final state in the same display."""
        self._stopped.set()
        self._thread.join()
        final = self._final_line()
        if final is not None:
            self._write(final)
