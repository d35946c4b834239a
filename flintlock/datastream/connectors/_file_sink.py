"""The ``FileSink`` writer: exactly-once part files by two-phase commit.

A part file goes through three states, in this order only:

1. **in progress** — open for appending under a hidden name in its bucket directory,
   ``.<prefix>-<subtask>-<counter><suffix>.inprogress.<uuid>``; readers that skip hidden files
   (a ``FileSource``, Spark, Hive) never see it;
2. **pending** — closed (rolled by the rolling policy, or at a checkpoint's ``snapshot_state``)
   and recorded with its final name; pending files rolled since the last checkpoint belong to
   the next one, and the writer's state lists every pending file not yet committed;
3. **committed** — renamed to ``<prefix>-<subtask>-<counter><suffix>`` once the checkpoint
   it belongs to is complete (``commit(n)`` commits everything pending up to ``n``).

Recovery: ``restore(state)`` commits every pending file of the restored checkpoint (it is
complete, whether or not its notification arrived before the failure). The commit is
idempotent: a file already renamed is recognised by its final name and left alone. In-progress
files written after the checkpoint are never committed; a writer that gets its own state back
(same subtask index and parallelism) deletes them when it first writes into their bucket.

Counters: the counter continues from the checkpointed one; in addition, the first time the
writer writes into a bucket it lists the directory and continues past every counter of its
subtask already there (committed or hidden), so a rerun into the same directory or a rescaled
restore never reuses a name.

Bulk formats (Parquet): each part file has a writer from the format's factory that takes
batches of records and writes its footer when the part closes; a bulk part rolls only at
checkpoints (and at the end of the input), as in Flink.

End of the input: ``end_input`` closes the in-progress parts. With checkpointing on they are
committed by the final checkpoint that follows; without, they are committed right away (see
``EndOfInputRule`` for how the writer knows which).

Everything here belongs to the sink subtask's task thread.
"""

from __future__ import annotations

import enum
import logging
import os
import posixpath
import re
import uuid
from dataclasses import dataclass, replace
from typing import Any, BinaryIO

import fsspec
from fsspec.implementations.local import LocalFileSystem

from flintlock.common.clock import SYSTEM_CLOCK, Clock
from flintlock.common.errors import FlintlockError
from flintlock.common.serialization import Encoder
from flintlock.datastream.connectors._buckets import BucketAssigner, OutputFileConfig
from flintlock.datastream.connectors._delivery import EndOfInputRule
from flintlock.datastream.connectors._rolling import PartFileInfo, RollingPolicy

log = logging.getLogger(__name__)


class PartFileCollisionError(FlintlockError):
    """A pending file's final name is taken by a different file."""

    def __init__(self, final_path: str) -> None:
        super().__init__(final_path)
        self.final_path = final_path

    def __str__(self) -> str:
        return f"FileSink: cannot commit {self.final_path!r}: a different file has that name"


class PartState(enum.Enum):
    IN_PROGRESS = "in progress"
    PENDING = "pending"
    DISCARDED = "discarded"


_MOVES = {(PartState.IN_PROGRESS, PartState.PENDING), (PartState.IN_PROGRESS, PartState.DISCARDED)}


class IllegalPartMoveError(FlintlockError):
    """A part file was used in a state that does not allow it (a writer bug)."""

    def __init__(self, hidden_path: str, state: str, action: str) -> None:
        super().__init__(hidden_path, state, action)
        self.hidden_path = hidden_path
        self.state = state
        self.action = action

    def __str__(self) -> str:
        return f"FileSink: cannot {self.action} part file {self.hidden_path!r}: it is {self.state}"


@dataclass(frozen=True, slots=True)
class FileSinkSettings:
    base_path: str
    encoder: Encoder
    rolling_policy: RollingPolicy
    bucket_assigner: BucketAssigner
    output_config: OutputFileConfig
    # A bulk format (``for_bulk_format``): ``create(stream)`` gives each part file a writer
    # with ``add_elements(records)`` and ``finish()``; None for row formats (the encoder).
    bulk_writer_factory: Any = None
    # Flink's batch-mode names ``<prefix>-task-<subtask>-file-<counter><suffix>`` (the table
    # filesystem sink in batch mode) instead of ``<prefix>-<subtask>-<counter><suffix>``.
    task_file_names: bool = False


@dataclass(frozen=True, slots=True)
class PendingFile:
    """A closed part file waiting for its checkpoint (None: not in a checkpoint yet)."""

    checkpoint_id: int | None
    hidden: str
    final: str


@dataclass(frozen=True, slots=True)
class PartCounter:
    """The next counter of a writer, checkpointed with the subtask and parallelism it had."""

    subtask: int
    parallelism: int
    next: int


def commit_file(fs: Any, pending: PendingFile) -> None:
    """Renames a pending file to its final name; idempotent."""
    if fs.exists(pending.hidden):
        if fs.exists(pending.final):
            if fs.size(pending.final) != fs.size(pending.hidden):
                raise PartFileCollisionError(pending.final)
            fs.rm(pending.hidden)  # an interrupted copy-and-delete move: finish it
            return
        fs.mv(pending.hidden, pending.final)
    elif not fs.exists(pending.final):
        log.warning("FileSink: pending file %s is gone and %s does not exist; was the output "
                    "directory changed by someone else?", pending.hidden, pending.final)


class _InProgressPart:
    """An open part file: in progress until ``close()`` (pending) or ``abandon()``."""

    __slots__ = ("_bulk", "_file", "_local", "final", "hidden", "info", "state")

    def __init__(self, fs: Any, hidden: str, final: str, info: PartFileInfo,
                 bulk_writer_factory: Any = None) -> None:
        self._local = isinstance(fs, LocalFileSystem)
        self._file: BinaryIO = open(hidden, "wb") if self._local else fs.open(hidden, "wb")
        self._bulk = (bulk_writer_factory.create(self._file)
                      if bulk_writer_factory is not None else None)
        self.hidden = hidden
        self.final = final
        self.info = info
        self.state = PartState.IN_PROGRESS

    def write(self, data: bytes, now_ms: float) -> None:
        if self.state is not PartState.IN_PROGRESS:
            raise IllegalPartMoveError(self.hidden, self.state.value, "write to")
        self._file.write(data)
        self.info.size += len(data)
        self.info.last_updated_ms = now_ms

    def add_elements(self, records: list[Any], now_ms: float) -> None:
        """A bulk format's part: hands the records to its writer."""
        if self.state is not PartState.IN_PROGRESS or self._bulk is None:
            raise IllegalPartMoveError(self.hidden, self.state.value, "add records to")
        self._bulk.add_elements(records)
        self.info.size = self._file.tell()
        self.info.last_updated_ms = now_ms

    def close(self) -> PendingFile:
        self._move(PartState.PENDING)
        if self._bulk is not None:
            self._bulk.finish()
        self._file.flush()
        if self._local:
            os.fsync(self._file.fileno())
        self._file.close()
        return PendingFile(None, self.hidden, self.final)

    def abandon(self) -> None:
        """Closes the file without making it pending: it will never be committed."""
        if self.state is PartState.IN_PROGRESS:
            self._move(PartState.DISCARDED)
            discard = getattr(self._bulk, "discard", None)
            if discard is not None:  # a bulk writer lets go of the file before it closes
                discard()
            self._file.close()

    def _move(self, target: PartState) -> None:
        if (self.state, target) not in _MOVES:
            raise IllegalPartMoveError(self.hidden, self.state.value, f"make {target.value}")
        self.state = target


class FileSinkWriter:
    """One subtask's writer (the runtime's ``SinkWriter``); see the module docstring."""

    def set_input_type(self, type_info: Any) -> None:
        """The declared type of the records (None: undeclared), as PyFlink's encoder sees it."""
        self._encoder = self._settings.encoder.for_type(type_info)

    def __init__(self, settings: FileSinkSettings, subtask_index: int, parallelism: int,
                 clock: Clock = SYSTEM_CLOCK) -> None:
        self._settings = settings
        self._encoder = settings.encoder
        self._subtask = subtask_index
        self._parallelism = parallelism
        self._clock = clock
        self._fs, self._base = fsspec.core.url_to_fs(settings.base_path)
        self._open: dict[str, _InProgressPart] = {}  # bucket id -> its in-progress part
        self._rolled: list[PendingFile] = []  # pending, not in a checkpoint yet
        self._pending: dict[int, list[PendingFile]] = {}  # checkpoint -> its pending files
        self._counter = 0
        self._prepared: set[str] = set()  # buckets listed since this writer started
        self._owns_orphans = False  # restored with its own state: stale hidden files are ours
        self._end_rule = EndOfInputRule()

    # -- the runtime's SinkWriter contract -------------------------------------------------

    def set_checkpointing(self, enabled: bool) -> None:
        """Told by the runtime: whether checkpoints (and a final one) will come."""
        self._end_rule.set_checkpointing(enabled)

    def restore(self, state: list[Any]) -> list[PendingFile]:
        """Restores the counter and commits the restored pending files (returned)."""
        if state:
            self._end_rule.saw_checkpoint()
        own = [e.next for e in state if isinstance(e, PartCounter)
               and (e.subtask, e.parallelism) == (self._subtask, self._parallelism)]
        self._counter = max(own, default=0)
        self._owns_orphans = bool(own)
        restored = [entry for entry in state if isinstance(entry, PendingFile)]
        for entry in restored:
            commit_file(self._fs, entry)
        return restored

    def write(self, records: list[Any]) -> None:
        if not records:
            return
        now = self._clock.now_ms()
        self._roll_expired(now)
        bucket = self._settings.bucket_assigner.get_bucket_id(records[0], self._clock.wall_ms())
        if self._settings.bulk_writer_factory is not None:
            self._part(bucket, now).add_elements(records, now)
            return
        limit = self._settings.rolling_policy.part_size
        part = self._part(bucket, now)
        data = self._encoder.encode_all(records)
        if limit is None or part.info.size + len(data) < limit:
            part.write(data, now)
        else:
            self._write_one_by_one(bucket, records, now)

    def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        self._end_rule.saw_checkpoint()
        for bucket in list(self._open):
            self._roll(bucket)
        if self._rolled:
            self._pending[checkpoint_id] = [replace(p, checkpoint_id=checkpoint_id)
                                            for p in self._rolled]
            self._rolled = []
        state: list[Any] = [p for files in self._pending.values() for p in files]
        state.append(PartCounter(self._subtask, self._parallelism, self._counter))
        return state

    def commit(self, checkpoint_id: int) -> list[PendingFile]:
        """Commits the pending files of the checkpoints up to ``checkpoint_id`` (returned)."""
        committed: list[PendingFile] = []
        for cid in sorted(c for c in self._pending if c <= checkpoint_id):
            for pending in self._pending[cid]:
                commit_file(self._fs, pending)
            committed.extend(self._pending.pop(cid))
        return committed

    def end_input(self) -> list[PendingFile]:
        """Closes the in-progress parts; without checkpointing, commits everything (returned;
        with checkpointing, the final checkpoint commits them)."""
        for bucket in list(self._open):
            self._roll(bucket)
        if not self._end_rule.publish_at_end():
            return []
        rolled, self._rolled = self._rolled, []
        for pending in rolled:
            commit_file(self._fs, pending)
        return rolled

    def close(self) -> None:
        for part in self._open.values():
            part.abandon()
        self._open.clear()

    # -- rolling -----------------------------------------------------------------------------

    def _write_one_by_one(self, bucket: str, records: list[Any], now: float) -> None:
        policy, encode = self._settings.rolling_policy, self._encoder.encode
        for record in records:
            data = encode(record)
            part = self._part(bucket, now)
            if policy.should_roll_on_event(part.info, len(data)):
                self._roll(bucket)
                part = self._part(bucket, now)
            part.write(data, now)

    def _roll_expired(self, now: float) -> None:
        policy = self._settings.rolling_policy
        for bucket, part in list(self._open.items()):
            if policy.should_roll_on_processing_time(part.info, now):
                self._roll(bucket)

    def _roll(self, bucket: str) -> None:
        self._rolled.append(self._open.pop(bucket).close())

    def _part(self, bucket: str, now: float) -> _InProgressPart:
        part = self._open.get(bucket)
        if part is None:
            part = self._open[bucket] = self._new_part(bucket, now)
        return part

    def _new_part(self, bucket: str, now: float) -> _InProgressPart:
        directory = posixpath.join(self._base, bucket) if bucket else self._base
        if bucket not in self._prepared:
            self._prepare(directory)
            self._prepared.add(bucket)
        config = self._settings.output_config
        name = (f"{config.get_part_prefix()}-{self._task_infix()}{self._counter}"
                f"{config.get_part_suffix()}")
        self._counter += 1
        hidden = posixpath.join(directory, f".{name}.inprogress.{uuid.uuid4().hex}")
        final = posixpath.join(directory, name)
        return _InProgressPart(self._fs, hidden, final, PartFileInfo(bucket, now, now),
                               self._settings.bulk_writer_factory)

    def _prepare(self, directory: str) -> None:
        """First write into a bucket: create it, continue past existing counters, and (with our
        own state restored) delete our in-progress files that no checkpoint covers."""
        self._fs.makedirs(directory, exist_ok=True)
        final_re, hidden_re = self._name_patterns()
        for path in self._fs.ls(directory, detail=False):
            name = posixpath.basename(path)
            match = final_re.match(name) or hidden_re.match(name)
            if match is None:
                continue
            self._counter = max(self._counter, int(match.group(1)) + 1)
            if self._owns_orphans and name.startswith("."):
                log.info("FileSink: discarding in-progress file %s (after the checkpoint)", path)
                self._fs.rm(path)

    def _name_patterns(self) -> tuple[re.Pattern[str], re.Pattern[str]]:
        config = self._settings.output_config
        stem = (f"{re.escape(config.get_part_prefix())}-{re.escape(self._task_infix())}(\\d+)"
                f"{re.escape(config.get_part_suffix())}")
        return re.compile(stem + "$"), re.compile(r"\." + stem + r"\.inprogress\.[0-9a-f]+$")

    def _task_infix(self) -> str:
        if self._settings.task_file_names:
            return f"task-{self._subtask}-file-"
        return f"{self._subtask}-"
