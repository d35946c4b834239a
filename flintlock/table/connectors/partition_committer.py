"""The partition committer of a partitioned ``filesystem`` sink: Flink's ``PartitionCommitter``
operator, with its triggers (``ProcTimeCommitTrigger``, ``PartitionTimeCommitTrigger``).

Shape (as Flink's streaming file sink): the parallel writers (``filesystem_sink``) commit
their part files when a checkpoint completes and then send one ``PartitionCommitInfo`` each —
the checkpoint, the subtask, the number of subtasks and the partitions whose files that
commit published — to a single committer subtask (parallelism 1). When the infos of *every*
writer subtask for a checkpoint have arrived, all files of those partitions up to that
checkpoint are visible; the committer asks its trigger which pending partitions are
committable and runs the table's commit policies on them (``partition_commit``).

Triggers:

* ``process-time``: a partition is pending from the processing time the committer first hears
  of it; committable when the delay is 0, or once the processing time is past that time plus
  ``sink.partition-commit.delay``;
* ``partition-time``: committable when the watermark the committer had at that checkpoint's
  snapshot is greater than the partition's time (extracted from its values, read as a local
  time in ``sink.partition-commit.watermark-time-zone``) plus the delay.

At the end of the input (every writer's info says so) every pending partition is committed,
whatever the trigger, as Flink's ``endInput`` does. A writer whose input ended reports no later
checkpoint: those count as reported by it (``EndedWriters``, checkpointed), so writers that end
at different checkpoints hold nothing back, and only the last one's end commits everything.
The committer's state — pending partitions with their creation times, the watermark per
checkpoint and the ended writers — is checkpointed;
which writers have reported a checkpoint is not (as in Flink): after a restore the writers
report the partitions of the files they commit on restore with their next info.

The triggers are I/O-free (times are arguments); the committer runs them on its task thread
as the sink writer of a ``PartitionCommitterSink``.
"""

from __future__ import annotations

import posixpath
import sys
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from flintlock.common.clock import SYSTEM_CLOCK, Clock
from flintlock.datastream.connectors.base import Sink
from flintlock.table.connectors.partition_commit import (
    PARTITION_TIME,
    PartitionCommitContext,
    PartitionCommitSettings,
    epoch_millis,
)

END_INPUT = sys.maxsize
"""The checkpoint id of the info a writer sends at the end of its input without checkpoints
(Flink's ``Long.MAX_VALUE``)."""
NO_WATERMARK = -sys.maxsize - 1


@dataclass(frozen=True, slots=True)
class PartitionCommitInfo:
    """One writer subtask's report after a checkpoint's files were committed."""

    checkpoint_id: int
    task_id: int
    number_of_tasks: int
    partitions: tuple[str, ...]
    end_of_input: bool = False


@dataclass(frozen=True, slots=True)
class CommitterState:
    """The committer's checkpointed state."""

    pending: tuple[tuple[str, int], ...]
    watermarks: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class EndedWriters:
    """The writer subtasks whose input ended (checkpointed): they report no later checkpoint,
    so a checkpoint is complete once every other writer reported it."""

    tasks: tuple[int, ...]


def partition_values(partition: str) -> tuple[list[str], list[str]]:
    """(keys, values) of a ``k1=v1/k2=v2`` partition path, values unescaped (none for ``""``,
    the directory of a table without partitions)."""
    keys: list[str] = []
    values: list[str] = []
    for part in partition.split("/") if partition else []:
        key, _, value = part.partition("=")
        keys.append(unquote(key))
        values.append(unquote(value))
    return keys, values


class _PendingPartitions:
    """The partitions a trigger holds: partition -> processing time it was first seen."""

    def __init__(self, delay_ms: int) -> None:
        self.delay_ms = delay_ms
        self.pending: dict[str, int] = {}

    def add_partition(self, partition: str, now_ms: int) -> None:
        if partition:
            self.pending.setdefault(partition, now_ms)

    def end_input(self) -> list[str]:
        """Every pending partition (the input ended: they are complete)."""
        ready, self.pending = list(self.pending), {}
        return ready


class ProcTimeCommitTrigger(_PendingPartitions):
    """Committable from the processing time the partition was first seen plus the delay."""

    def committable(self, checkpoint_id: int, now_ms: int) -> list[str]:
        ready = [p for p, created in self.pending.items()
                 if self.delay_ms == 0 or now_ms > created + self.delay_ms]
        for partition in ready:
            del self.pending[partition]
        return ready

    def snapshot(self, checkpoint_id: int, watermark: int) -> CommitterState:
        return CommitterState(tuple(self.pending.items()), ())

    def restore(self, state: CommitterState) -> None:
        self.pending.update(state.pending)


class PartitionTimeCommitTrigger(_PendingPartitions):
    """Committable when the checkpoint's watermark passed the partition's time plus the delay."""

    def __init__(self, delay_ms: int, zone: str, extractor: Any) -> None:
        super().__init__(delay_ms)
        self.zone = zone
        self.extractor = extractor
        self.watermarks: dict[int, int] = {}

    def committable(self, checkpoint_id: int, now_ms: int) -> list[str]:
        watermark = self.watermarks.get(checkpoint_id, NO_WATERMARK)
        for cid in [c for c in self.watermarks if c <= checkpoint_id]:
            del self.watermarks[cid]
        ready = [p for p in self.pending if watermark > self._time(p) + self.delay_ms]
        for partition in ready:
            del self.pending[partition]
        return ready

    def _time(self, partition: str) -> int:
        keys, values = partition_values(partition)
        return epoch_millis(self.extractor.extract(keys, values), self.zone)

    def snapshot(self, checkpoint_id: int, watermark: int) -> CommitterState:
        self.watermarks[checkpoint_id] = watermark
        return CommitterState(tuple(self.pending.items()), tuple(self.watermarks.items()))

    def restore(self, state: CommitterState) -> None:
        self.pending.update(state.pending)
        self.watermarks.update(state.watermarks)


@dataclass(frozen=True, slots=True)
class CommitterSettings:
    """What the committer needs: where the table is, its keys, and its commit options."""

    base_path: str
    table_path: tuple[str, ...]
    partition_keys: tuple[str, ...]
    commit: PartitionCommitSettings


class PartitionCommitter:
    """The committer's sink writer (one subtask); see the module docstring."""

    def __init__(self, settings: CommitterSettings, clock: Clock = SYSTEM_CLOCK) -> None:
        self.settings = settings
        self.clock = clock
        commit = settings.commit
        self.trigger: ProcTimeCommitTrigger | PartitionTimeCommitTrigger = (
            PartitionTimeCommitTrigger(commit.delay_ms, commit.watermark_time_zone,
                                       commit.extractor())
            if commit.trigger == PARTITION_TIME else ProcTimeCommitTrigger(commit.delay_ms))
        self.policies = commit.policies()
        self.watermark = NO_WATERMARK
        self.reported: dict[int, set[int]] = {}
        self.ended: set[int] = set()

    def set_checkpointing(self, enabled: bool) -> None:
        """Either way the writers' infos drive the commits."""

    def restore(self, state: list[Any]) -> None:
        for entry in state:
            if isinstance(entry, CommitterState):
                self.trigger.restore(entry)
            elif isinstance(entry, EndedWriters):
                self.ended.update(entry.tasks)

    def process_watermark(self, timestamp: int) -> None:
        self.watermark = timestamp

    def write(self, records: list[Any]) -> None:
        for info in records:
            self._receive(info)

    def _receive(self, info: PartitionCommitInfo) -> None:
        now = int(self.clock.wall_ms())
        for partition in info.partitions:
            self.trigger.add_partition(partition, now)
        if info.end_of_input:
            self.ended.add(info.task_id)
        tasks = self.reported.setdefault(info.checkpoint_id, set())
        tasks.add(info.task_id)
        if len(tasks | self.ended) < info.number_of_tasks:
            return
        for cid in [c for c in self.reported if c <= info.checkpoint_id]:
            del self.reported[cid]
        if len(self.ended) >= info.number_of_tasks or info.checkpoint_id == END_INPUT:
            # a table without partitions (batch mode) commits its directory at the end
            self._commit(self.trigger.end_input() if self.settings.partition_keys else [""])
        else:
            self._commit(self.trigger.committable(info.checkpoint_id, now))

    def _commit(self, partitions: list[str]) -> None:
        table = self.settings.table_path
        catalog, database, name = (("default_catalog", "default_database", *table)[-3:]
                                   if len(table) < 3 else table[-3:])
        for partition in sorted(partitions):
            keys, values = partition_values(partition)
            path = (posixpath.join(self.settings.base_path, partition) if partition
                    else self.settings.base_path)
            context = PartitionCommitContext(catalog, database, name, tuple(keys),
                                             tuple(values), path)
            for policy in self.policies:
                policy.commit(context)

    def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        return [self.trigger.snapshot(checkpoint_id, self.watermark),
                EndedWriters(tuple(sorted(self.ended)))]

    def commit(self, checkpoint_id: int) -> None:
        """The committer publishes when the writers report, not on its own checkpoints."""

    def end_input(self) -> None:
        """Every writer's last info came before the end of the input."""

    def close(self) -> None:
        for policy in self.policies:
            closer = getattr(policy, "close", None)
            if closer is not None:
                closer()


class PartitionCommitterSink(Sink):
    """The committer as a sink (parallelism 1) fed by the writers' infos."""

    def __init__(self, settings: CommitterSettings) -> None:
        self.settings = settings

    def create_writer(self, subtask_index: int, parallelism: int) -> PartitionCommitter:
        return PartitionCommitter(self.settings)

    def __repr__(self) -> str:
        return f"PartitionCommitterSink({self.settings.base_path!r})"


__all__ = [
    "END_INPUT",
    "CommitterSettings",
    "CommitterState",
    "PartitionCommitInfo",
    "PartitionCommitter",
    "PartitionCommitterSink",
    "PartitionTimeCommitTrigger",
    "ProcTimeCommitTrigger",
    "partition_values",
]
