"""What a job wrote to files, read back by a test.

``committed_lines(root)`` is the text of every committed file under ``root``: a file sink
writes in-progress and pending files hidden (their names start with a dot) and renames them
into view when the checkpoint covering them completes, so what is visible is exactly what is
committed. Called on the test's thread, after or while the job runs.
"""

from __future__ import annotations

import os

__all__ = ["committed_lines"]


def committed_lines(root: str | os.PathLike[str]) -> list[str]:
    """The lines of every file under ``root`` whose name does not start with a dot (UTF-8);
    none if ``root`` does not exist."""
    lines: list[str] = []
    for directory, _, names in os.walk(root):
        for name in sorted(names):
            if not name.startswith("."):
                with open(os.path.join(directory, name), encoding="utf-8") as handle:
                    lines.extend(handle.read().splitlines())
    return lines
