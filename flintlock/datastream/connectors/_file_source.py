"""The machinery behind ``FileSource``: file discovery in the JobManager and the text-line
reader in each source subtask.

**Splits** are whole files (``FileSplit``): a text file is read from start to end by one
reader, as Flink's ``TextLineInputFormat`` (not splittable). A split carries its ``position``:
where the next line starts (for UTF-8 and other byte-oriented charsets the byte offset, see
``_line_cursors``). A reader's snapshot is its unfinished splits with positions, so a
restore reopens the file and seeks there — mid-file, without repeating or skipping a line.

**Discovery** (``FileDiscovery``) lists the given paths with fsspec (local paths or any fsspec
URL): files directly, directories recursively, leaving out hidden files and directories (name
starting with ``.`` or ``_``, e.g. a ``FileSink``'s in-progress files). Files come in path
order. A continuous source lists again every interval and keeps every path it has handed out
in its checkpointed state, so each file becomes a split exactly once, even across restarts.
Files must appear atomically (write under a hidden name, then rename), as for any
directory-watching reader: a file is read as it is when its reader gets to it.

**Backlog**: a text file's lines are not known before it is read, so the reader reports no
``pendingRecords``; for byte-oriented charsets (where a position is a byte offset) it reports
FLIP-33's ``pendingBytes``: its unfinished files' sizes (one size request per file when it is
assigned) less their positions.

Discovery runs on the JobManager thread; a reader and its open file belong to its source
task's thread.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, BinaryIO

import fsspec

from flintlock.common.errors import FlintlockError
from flintlock.datastream.connectors._enumeration import SplitQueueReader
from flintlock.datastream.connectors._line_cursors import (
    ByteLineCursor,
    TextLineCursor,
    is_byte_oriented,
    open_cursor,
)

log = logging.getLogger(__name__)


class FileSourcePathNotFoundError(FlintlockError, FileNotFoundError):
    """A path given to a bounded ``FileSource`` does not exist."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path

    def __str__(self) -> str:
        return f"FileSource: no file or directory at {self.path!r}"


@dataclass(frozen=True, slots=True)
class FileSplit:
    """One file to read, from ``position`` (a ``tell()`` value; 0 = the start) to its end."""

    path: str
    position: int = 0

    @property
    def split_id(self) -> str:
        return self.path


def _is_hidden(relative: str) -> bool:
    return any(part.startswith((".", "_")) for part in relative.split("/") if part)


def list_files(path: str, *, must_exist: bool) -> list[str]:
    """Every visible file at or under ``path``, as fsspec URLs, in path order."""
    fs, root = fsspec.core.url_to_fs(path)
    if not fs.exists(root):
        if must_exist:
            raise FileSourcePathNotFoundError(path)
        return []
    if not fs.isdir(root):
        return [fs.unstrip_protocol(root)]
    prefix = root.rstrip("/") + "/"
    found = [p for p in fs.find(root) if not _is_hidden(p[len(prefix):])]
    return [fs.unstrip_protocol(p) for p in sorted(found)]


class FileDiscovery:
    """Finds files not handed out before (``SplitDiscovery`` of ``DealingEnumerator``)."""

    def __init__(self, paths: tuple[str, ...], *, continuous: bool,
                 seen: frozenset[str] = frozenset()) -> None:
        self._paths = paths
        self._continuous = continuous
        self._seen = set(seen)  # every file handed out so far; JobManager thread

    def initial(self) -> list[Any]:
        return self._new_splits()

    def discover(self) -> list[Any]:
        return self._new_splits()

    def snapshot(self) -> Any:
        return frozenset(self._seen) if self._continuous else None

    def _new_splits(self) -> list[FileSplit]:
        files = []
        for path in self._paths:
            files.extend(list_files(path, must_exist=not self._continuous))
        new = [f for f in dict.fromkeys(files) if f not in self._seen]
        self._seen.update(new)
        if new:
            log.info("FileSource discovered %d new file(s)", len(new))
        return [FileSplit(f) for f in new]


class TextLineReader(SplitQueueReader):
    """Reads its files line by line (``\\n``, ``\\r\\n`` and ``\\r`` end a line; the line
    terminator is not part of the record); see ``_line_cursors``."""

    def __init__(self, charset: str) -> None:
        super().__init__()
        self._charset = charset
        self._open_path: str | None = None
        self._file: BinaryIO | None = None  # the head split's file; task thread
        self._cursor: ByteLineCursor | TextLineCursor | None = None
        self._sizes: dict[str, int] = {}  # file sizes, for pendingBytes; task thread writes
        if is_byte_oriented(charset):
            self.pending_bytes = self._pending_bytes

    def restore(self, state: list[Any]) -> None:
        super().restore(state)
        self._note_sizes(state)

    def add_splits(self, splits: list[Any]) -> None:
        super().add_splits(splits)
        self._note_sizes(splits)

    def _note_sizes(self, splits: list[Any]) -> None:
        if not hasattr(self, "pending_bytes"):
            return
        for split in splits:
            try:
                fs, path = fsspec.core.url_to_fs(split.path)
                self._sizes[split.path] = int(fs.size(path))
            except (OSError, TypeError, ValueError) as failed:  # reading it will say why
                log.debug("FileSource: no size of %s for pendingBytes: %s", split.path, failed)

    def _pending_bytes(self) -> int:
        """Bytes left in the unfinished files (the heartbeat thread: reads copies)."""
        sizes = self._sizes
        return sum(max(0, sizes.get(split.path, split.position) - split.position)
                   for split in tuple(self._splits))

    def read_split(self, split: Any, budget: int, out: list[Any]) -> tuple[Any, bool]:
        cursor = self._cursor_for(split)
        if cursor.read(budget, out):
            return split, True
        return FileSplit(split.path, cursor.position), False

    def split_finished(self, split: Any) -> None:
        self._close_file()
        self._sizes.pop(split.path, None)

    def close(self) -> None:
        self._close_file()

    def _cursor_for(self, split: FileSplit) -> ByteLineCursor | TextLineCursor:
        if self._cursor is None or self._open_path != split.path:
            self._close_file()
            self._file = fsspec.open(split.path, "rb").open()
            self._cursor = open_cursor(self._file, split.position, self._charset)
            self._open_path = split.path
        return self._cursor

    def _close_file(self) -> None:
        if self._file is not None:
            self._file.close()
        self._file, self._cursor, self._open_path = None, None, None
