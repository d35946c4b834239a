"""Where a cached stream's records live (``DataStream.cache()`` in BATCH mode).

A ``CachedResult`` is a directory on the driver's file system. The subtasks of the operator
that produces the cache (``runtime.tasks.cache_operator``) each write their records, pickled
batch by batch, to ``part-<i>-of-<n>.tmp`` and rename it to ``part-<i>-of-<n>`` when their
input ended — so a subtask that failed or was cancelled leaves no part, and one that ran
again after a restart replaces its part whole. The result is complete once the parts of one
``n`` exist for every subtask ``0..n-1``; the environment then reads them back (in subtask
order) and later jobs start from them instead of recomputing the stream.

The directory must be reachable from the TaskManagers under the same path: true with
TaskManagers as threads and on embedded Spark; on a cluster, a shared file system.

Who calls what: the producing operator (task thread) ``part_writer``; the environment (user's
thread, between jobs) ``is_complete``, ``read``, ``release``.
"""

from __future__ import annotations

import os
import pickle
import re
import shutil
from dataclasses import dataclass
from typing import Any, BinaryIO

from flintlock.common.errors import FlintlockError

_PART = re.compile(r"^part-(\d+)-of-(\d+)$")


class CachedResultCorruptError(FlintlockError):
    """A part file of a cached result cannot be read back."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(path, problem)
        self.path = path
        self.problem = problem

    def __str__(self) -> str:
        return f"cached result part {self.path} is unreadable ({self.problem}); invalidate() it"


@dataclass(frozen=True)
class CachedResult:
    directory: str

    def _part(self, subtask: int, parallelism: int) -> str:
        return os.path.join(self.directory, f"part-{subtask}-of-{parallelism}")

    def part_writer(self, subtask: int, parallelism: int) -> PartWriter:
        os.makedirs(self.directory, exist_ok=True)
        return PartWriter(self._part(subtask, parallelism))

    def _parts(self) -> dict[int, dict[int, str]]:
        """Finished parts by parallelism, then subtask."""
        found: dict[int, dict[int, str]] = {}
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return found
        for name in names:
            match = _PART.match(name)
            if match:
                subtask, parallelism = int(match[1]), int(match[2])
                found.setdefault(parallelism, {})[subtask] = os.path.join(self.directory, name)
        return found

    def _complete_parts(self) -> list[str] | None:
        for parallelism, parts in sorted(self._parts().items()):
            if set(parts) == set(range(parallelism)):
                return [parts[i] for i in range(parallelism)]
        return None

    def is_complete(self) -> bool:
        return self._complete_parts() is not None

    def read(self) -> list[Any]:
        """Every record of the complete result, subtask by subtask, each in its order."""
        parts = self._complete_parts()
        if parts is None:
            raise FileNotFoundError(f"cached result {self.directory} is not complete")
        records: list[Any] = []
        for path in parts:
            records.extend(_read_part(path))
        return records

    def release(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


def _read_part(path: str) -> list[Any]:
    records: list[Any] = []
    with open(path, "rb") as file:
        while True:
            try:
                batch = pickle.load(file)
            except EOFError:
                return records
            except (pickle.UnpicklingError, ValueError, AttributeError) as exc:
                raise CachedResultCorruptError(path, repr(exc)) from exc
            records.extend(batch)


class PartWriter:
    """One subtask's part: ``write`` batches, then ``commit`` (input ended) or ``abort``."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._file: BinaryIO | None = open(path + ".tmp", "wb")

    def write(self, records: list[Any]) -> None:
        assert self._file is not None
        pickle.dump(list(records), self._file, protocol=pickle.HIGHEST_PROTOCOL)

    def commit(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
            os.replace(self._path + ".tmp", self._path)

    def abort(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
            try:
                os.remove(self._path + ".tmp")
            except FileNotFoundError:
                pass


__all__ = ["CachedResult", "CachedResultCorruptError", "PartWriter"]
