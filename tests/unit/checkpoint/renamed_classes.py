"""A later flintlock in which every class a checkpoint is made of was renamed.

``renamed_copy(root)`` copies the ``flintlock`` package into ``root`` and renames, in every
module, each identifier of ``RENAMED`` (Python tokens named so, as a refactoring tool would:
strings and comments keep the old words). ``run_renamed(root, script)`` runs ``script`` in a
fresh interpreter that imports that copy (``root`` comes first on ``sys.path``; the tests
package still comes from this checkout) and returns its standard output.

Used by the savepoint-format tests: a savepoint written by this flintlock must restore in
the renamed one, where ``flintlock.runtime.checkpoint.completed.CompletedCheckpoint`` and the
others do not exist any more.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[3]
RENAMED = {name: f"Renamed{name}" for name in (
    "CompletedCheckpoint", "CheckpointProperties", "TaskId", "FinishedTaskState",
    "StreamStateHandle", "ByteStateHandle", "EnumeratorState", "KeyGroupRange",
    "TaskStateSnapshot", "OperatorSubtaskState", "KeyGroupsStateHandle",
    "IncrementalKeyedStateHandle", "OperatorStateHandle", "OperatorStateMeta",
    "DistributionMode")} | {"FINISHED_TASK": "RENAMED_FINISHED_TASK"}


def _rename(source: str) -> str:
    lines = source.splitlines(keepends=True)
    edits = [token.start for token in tokenize.generate_tokens(io.StringIO(source).readline)
             if token.type == tokenize.NAME and token.string in RENAMED]
    for row, col in reversed(edits):
        line = lines[row - 1]
        name = next(n for n in RENAMED if line.startswith(n, col))
        lines[row - 1] = line[:col] + RENAMED[name] + line[col + len(name):]
    return "".join(lines)


def renamed_copy(root: Path) -> Path:
    """``root/flintlock``: this checkout's package with the classes renamed."""
    target = root / "flintlock"
    shutil.copytree(REPOSITORY / "flintlock", target,
                    ignore=shutil.ignore_patterns("__pycache__"))
    for path in target.rglob("*.py"):
        path.write_text(_rename(path.read_text(encoding="utf-8")), encoding="utf-8")
    # FinishedTaskState pickles by the name of its singleton (``__reduce__``), a string:
    finished = target / "runtime" / "checkpoint" / "finished.py"
    finished.write_text(finished.read_text(encoding="utf-8").replace(
        'return "FINISHED_TASK"', 'return "RENAMED_FINISHED_TASK"'), encoding="utf-8")
    return root


def run_renamed(root: Path, script: str, timeout: float = 240) -> str:
    """Run ``script`` (Python source) against the renamed copy in ``root``."""
    path = root / "run_renamed.py"
    path.write_text(script, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, str(path)], cwd=root, env=env, timeout=timeout,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise AssertionError(f"renamed run failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return done.stdout
