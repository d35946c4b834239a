"""What a job wrote to files, read back by a test.

``completed_checkpoints(directory)`` are the ids of the checkpoints whose metadata exists
under a checkpoint directory (``<directory>/<job id>/chk-<n>/_metadata``): completed ones.

``committed_lines(root)`` is the text of every committed file under ``root``: a file sink
writes in-progress and pending files hidden (their names start with a dot) and renames them
into view when the checkpoint covering them completes, so what is visible is exactly what is
committed. Called on the test's thread, after or while the job runs.
"""

from __future__ import annotations

import glob
import os

__all__ = ["committed_lines", "completed_checkpoints"]


def completed_checkpoints(directory: str | os.PathLike[str]) -> list[int]:
    """The ids of the completed checkpoints of every job under ``directory``, ascending."""
    pattern = os.path.join(os.fspath(directory), "*", "chk-*", "_metadata")
    return sorted(int(os.path.basename(os.path.dirname(path))[len("chk-"):])
                  for path in glob.glob(pattern))


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
